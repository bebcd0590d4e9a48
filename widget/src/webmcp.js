// Page tools from the WebMCP draft API join the controller's registry as front-end tools.
//
// A page (or a polyfill such as @mcp-b/webmcp-polyfill) registers tools on `document.modelContext`
// (`navigator.modelContext` in older drafts). We read them with `getTools()`, follow `toolchange` events, and
// register each one with the controller: the runtime then freezes them per turn like any other tool (a change
// during a turn affects the next turn only). `annotations.readOnlyHint === true` maps to `readOnly`; every other
// tool asks the user for confirmation before it runs. Calls go through `executeTool(tool, inputJson)` where the
// browser has it (Chromium's native API and the polyfill), else through the tool's own `execute`.

/**
 * The WebMCP context of this document, if any (a draft API: not in the DOM typings yet).
 * @param {any} [doc]
 * @returns {any}
 */
export function modelContextOf(doc = globalThis.document) {
  return doc?.modelContext ?? /** @type {any} */ (globalThis.navigator)?.modelContext ?? null;
}

/** A tool's result as text: a string as it is, MCP-style `{ content: [{ type: 'text', text }] }` joined. @param {any} value */
function resultText(value) {
  if (typeof value === 'string') return value;
  // MCP-style results: { content: [{ type: 'text', text }], isError? }
  if (value && Array.isArray(value.content)) {
    return value.content.map((/** @type {any} */ part) => (part && part.type === 'text' ? part.text : JSON.stringify(part))).join('\n');
  }
  return value === undefined ? '' : JSON.stringify(value);
}

/**
 * Keeps the controller's registry in step with the page's WebMCP tools until `stop()`.
 * @param {any} controller the AgentController
 * @param {(error: unknown) => void} onError
 */
export function bridgeWebMcp(controller, onError, context = modelContextOf()) {
  if (!context || typeof context.getTools !== 'function') return { stop() {}, sync: async () => {} };
  const nativeExecute = typeof context.executeTool === 'function'
    && Function.prototype.toString.call(context.executeTool).includes('[native code]');
  /** @type {Map<string, string>} name -> JSON of the definition we registered */
  const registered = new Map();
  let stopped = false;
  let generation = 0;

  const definitionOf = (/** @type {any} */ tool) => {
    const readOnly = tool.annotations?.readOnlyHint === true;
    return {
      name: String(tool.name),
      description: String(tool.description ?? ''),
      inputSchema: tool.inputSchema && typeof tool.inputSchema === 'object'
        ? tool.inputSchema
        : (typeof tool.inputSchema === 'string' ? JSON.parse(tool.inputSchema) : { type: 'object', properties: {} }),
      readOnly,
      /** @param {any} args @param {{ callId: string, signal?: AbortSignal }} context */
      async execute(args, { callId, signal }) {
        signal?.throwIfAborted?.();
        let value;
        if (typeof context.executeTool === 'function') {
          // Chromium's native executeTool takes the input object; the polyfill (following the older draft) takes
          // its JSON text. Decide by implementation, never by trying one and then the other (a tool must run once).
          value = await context.executeTool(tool, nativeExecute ? (args ?? {}) : JSON.stringify(args ?? {}));
        } else if (typeof tool.execute === 'function') {
          value = await tool.execute(args ?? {}, { signal });
        } else {
          return { toolCallId: callId, content: `The page tool ${tool.name} cannot be called.`, isError: true };
        }
        const isError = Boolean(value && typeof value === 'object' && value.isError === true);
        return { toolCallId: callId, content: resultText(value), isError };
      },
    };
  };

  const sync = async () => {
    const mine = ++generation;
    let tools;
    try {
      tools = await context.getTools();
    } catch (error) {
      onError(error);
      return;
    }
    if (stopped || mine !== generation) return;
    const seen = new Set();
    for (const tool of tools ?? []) {
      if (!tool || typeof tool.name !== 'string') continue;
      seen.add(tool.name);
      try {
        const definition = definitionOf(tool);
        const key = JSON.stringify([definition.description, definition.inputSchema, definition.readOnly]);
        if (registered.get(tool.name) === key) continue;
        if (registered.has(tool.name)) controller.unregisterTool(tool.name);
        controller.registerTool(definition);
        registered.set(tool.name, key);
      } catch (error) {
        onError(error);
      }
    }
    for (const name of [...registered.keys()]) {
      if (!seen.has(name)) {
        try { controller.unregisterTool(name); } catch (error) { onError(error); }
        registered.delete(name);
      }
    }
  };

  const onChange = () => { void sync(); };
  context.addEventListener?.('toolchange', onChange);
  const ready = sync();
  return {
    ready,
    sync,
    stop() {
      stopped = true;
      context.removeEventListener?.('toolchange', onChange);
      for (const name of registered.keys()) {
        try { controller.unregisterTool(name); } catch { /* the controller may be destroyed already */ }
      }
      registered.clear();
    },
  };
}
