export { parseConfig, type ServiceConfig } from './config.js';
export { createLogger } from './logger.js';
export { createMetrics, type ServerMetrics } from './metrics.js';
export { createRequestListener } from './request-listener.js';
export { type RunningServer, type StartOptions, startServer } from './start.js';
export { startTlsServer, type TlsServer, type TlsServerOptions } from './tls-server.js';
