export { main } from './main.js';
export { buildTools, createMcpServer } from './server.js';
export { inputOf, type ToolSpec, toolNameOf, toolOf } from './tools.js';
