export { main } from './main.js';
export { RESOURCE_TEMPLATES } from './resources.js';
export { buildTools, createMcpServer, listedTool, type McpServerOptions } from './server.js';
export { inputOf, type ToolSpec, toolNameOf, toolOf } from './tools.js';
export {
  CLASSES,
  DEFAULT_TOOLSETS,
  type Effect,
  NEVER_TOOLS,
  parseToolsets,
  TOOLSET_DESCRIPTIONS,
  TOOLSETS,
  type Toolset,
} from './toolsets.js';
