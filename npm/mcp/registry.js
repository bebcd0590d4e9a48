//! A controller's registry kept in step with its MCP servers' tools (part of the client chunk). Like the
//! WebMCP bridge (widget/src/webmcp.js) it registers JavaScript-executed tools and follows changes, but whether
//! a tool runs without confirmation is the page's word (`readOnly` of the entry), never the server's hint. A
//! tool the registry refuses (a schema the validator cannot compile, a name a page tool already has) is skipped
//! and reported in the server's status; the server stays ready.
//! It also holds the controller's app calls (./app-call.js), which run the source's tools in the running turn's
//! execution or in executions of their own.
import { McpAppCalls } from './app-call.js';
import { McpToolSource } from './source.js';

/**
 * @param {any} controller an AgentController
 * @param {readonly import('./options.js').McpServerEntry[]} entries
 * @param {{ AgentError: import('./options.js').ErrorClass, maxCharacters: () => number, Runtime?: any,
 *   defaultLimits?: object, runtimeOptions?: () => any, emit?: (kind: 'progress' | 'appCall', value: unknown) => void }} options
 *   `Runtime` (DefaultAgentRuntime), `defaultLimits` and `runtimeOptions()` (the controller's `runtime` now) for
 *   app calls; `emit` hears the progress and app-call changes
 * @returns the source, the app calls, the controller `members` the package entry forwards to, and `close`
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
  const apps = new McpAppCalls(source, {
    AgentError: options.AgentError,
    Runtime: options.Runtime,
    runtimeOptions: () => {
      const runtime = options.runtimeOptions?.();
      return {
        limits: { ...options.defaultLimits, ...runtime?.limits },
        ...(Array.isArray(runtime?.toolInterceptors) ? { toolInterceptors: runtime.toolInterceptors } : {}),
      };
    },
    controller,
  });
  const emit = options.emit ?? (() => {});
  source.subscribeProgress((progress) => { emit('progress', progress); });
  apps.subscribe((call) => { emit('appCall', call); });
  return {
    source,
    apps,
    members: {
      getMcpProgress: () => source.progress(),
      getMcpCallResult: (/** @type {unknown} */ callId) => (typeof callId === 'string' ? source.callResult(callId) : null),
      getMcpAppCall: () => apps.current(),
      respondMcpAppCall: (/** @type {unknown} */ response) => apps.respond(response),
      readMcpResource: (/** @type {string} */ server, /** @type {string} */ uri, /** @type {any} */ opts) => source.readResource(server, uri, opts ?? {}),
      callToolFromApp: (/** @type {unknown} */ request) => apps.call(request),
    },
    close() {
      closed = true;
      apps.cancel();
      source.close();
      for (const name of registered.keys()) {
        try { controller.unregisterTool(name); } catch { /* destroyed already */ }
      }
      registered.clear();
    },
  };
}
