export * from './connectors.js';
export * from './health.js';
export * from './observe.js';
export * from './ranges.js';
export * from './scanner.js';
