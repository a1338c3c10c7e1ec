export * from './mechanisms.js';
export * from './software.js';
