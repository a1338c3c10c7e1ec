export { createRequestListener } from './request-listener.js';
