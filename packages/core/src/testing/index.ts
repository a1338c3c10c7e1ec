export * from './ephemeral-contract.js';
export * from './queue-contract.js';
