export * from './config.js';
export * from './custody.js';
export { ckrName, tokenFailure } from './errors.js';
