export * from './connection-loss.js';
export * from './ephemeral-contract.js';
export * from './fuzz.js';
export * from './hostile-keys.js';
export * from './people-contract.js';
export * from './queue-contract.js';
export * from './storage-contract.js';
export * from './tcp-relay.js';
