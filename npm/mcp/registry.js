//! A controller's registry kept in step with its MCP servers' tools (part of the client chunk). Like the
//! WebMCP bridge (widget/src/webmcp.js) it registers JavaScript-executed tools and follows changes, but whether
//! a tool runs without confirmation is the page's word (`readOnly` of the entry), never the server's hint. A
//! tool the registry refuses (a schema the validator cannot compile, a name a page tool already has) is skipped
//! and reported in the server's status; the server stays ready.
import { McpToolSource } from './source.js';

/**
 * @param {any} controller an AgentController
 * @param {readonly import('./options.js').McpServerEntry[]} entries
 * @param {{ AgentError: import('./options.js').ErrorClass, maxCharacters: () => number }} options
 */
export function attachMcp(controller, entries, options) {
  /** @type {Map<string, string>} registry name -> key of the definition registered */
  const registered = new Map();
  let closed = false;
  const sync = () => {
    if (closed) return;
    const seen = new Set();
    for (const definition of source.definitions()) {
      seen.add(definition.name);
      const key = JSON.stringify([definition.description, definition.inputSchema, definition.readOnly]);
      if (registered.get(definition.name) === key) continue;
      try {
        if (registered.has(definition.name)) { controller.unregisterTool(definition.name); registered.delete(definition.name); }
        controller.registerTool(definition);
        registered.set(definition.name, key);
      } catch (error) {
        source.skip(definition.name, error instanceof Error ? error.message : String(error));
      }
    }
    for (const name of [...registered.keys()]) {
      if (!seen.has(name)) {
        try { controller.unregisterTool(name); } catch { /* destroyed meanwhile */ }
        registered.delete(name);
      }
    }
  };
  const source = new McpToolSource(entries, { ...options, onTools: sync });
  return {
    source,
    close() {
      closed = true;
      source.close();
      for (const name of registered.keys()) {
        try { controller.unregisterTool(name); } catch { /* destroyed already */ }
      }
      registered.clear();
    },
  };
}
