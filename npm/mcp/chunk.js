//! The entry of the MCP client chunk (`npm/mcp-client.js`, `npm/dist/patchbridge-mcp.js`, built by
//! widget/build.mjs with the official SDK bundled in): what the package entry and the widget import on demand,
//! once a page sets `mcpServers`.
import './zod-jitless.js';
export { attachMcp } from './registry.js';
export {
  McpToolSource, LISTING_WAIT_MS, TOOLS_CACHE_MS, RETRY_AFTER_MS, MCP_APP_MIME_TYPE, MCP_RESOURCE_MAX_BYTES, MCP_CALL_RESULTS_KEPT,
} from './source.js';
export { McpAppCalls } from './app-call.js';
export { withMcpServers } from './lazy.js';
export { checkMcpServers } from './options.js';
export { toToolCallResult } from './results.js';
