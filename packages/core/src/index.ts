export * from './config.js';
export * from './errors.js';
export * from './ports/clock.js';
export * from './ports/ephemeral.js';
export * from './ports/logger.js';
export * from './ports/queue.js';
export * from './transport.js';
export * from './web/body.js';
