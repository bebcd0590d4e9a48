// @patchbridge/agent: the agent runtime compiled to WebAssembly (controller-wasm/), loaded once per realm.
// In Node the .wasm file is read from disk; in browsers (and anything without a file: URL) it is fetched next
// to this module, and bundlers see the literal `new URL('…', import.meta.url)` and emit the .wasm as an asset.
// Top-level await means importers get a ready module; every export below is the Rust runtime.
import init, * as wasm from './pkg/patchbridge_agent.js';
import { AgentError } from './errors.js';
import { withMcpServers } from './mcp/lazy.js';

const wasmUrl = new URL('./pkg/patchbridge_agent_bg.wasm', import.meta.url);
let wasmSource = wasmUrl;
/** Node's `process` where there is one (typed here so that no Node typings are needed). */
const nodeProcess = /** @type {{ versions?: { node?: string } } | undefined} */ (
  /** @type {{ process?: unknown }} */ (globalThis).process);
if (wasmUrl.protocol === 'file:' && typeof nodeProcess === 'object' && nodeProcess.versions?.node) {
  // Node's fetch cannot read file: URLs. The specifier is not a literal so that browser bundlers leave this
  // Node-only branch alone instead of externalising (and warning about) Node's built-in module.
  const fsModule = 'node:fs/promises';
  const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsModule);
  wasmSource = await readFile(wasmUrl);
}
await init({ module_or_path: wasmSource });

/** The factory defaults that `runtime.limits` of createAgentController partially overrides. */
export const DEFAULT_LIMITS = wasm.defaultLimits();

/** The MCP client chunk (the official SDK bundled in), imported only once a page sets MCP servers. */
const loadMcp = () => import('./mcp-client.js');

/**
 * `createAgentController(options)`: the stateful controller (relay endpoint or custom model). `mcpServers`
 * (remote MCP servers as tool sources, ./mcp/) is taken here and never reaches the core, which sees their tools
 * in its registry like any other JavaScript-executed tool.
 * @param {any} options
 */
export function createAgentController(options) {
  const servers = options !== null && typeof options === 'object' ? options.mcpServers : undefined;
  if (servers === undefined) return wasm.createAgentController(options);
  const { mcpServers: _, ...rest } = options;
  const controller = /** @type {any} */ (wasm.createAgentController(rest));
  try {
    return withMcpServers(controller, servers, {
      load: loadMcp, AgentError, limits: rest.runtime?.limits, defaultMaxCharacters: DEFAULT_LIMITS.maxToolResultCharacters,
      Runtime: wasm.DefaultAgentRuntime, defaultLimits: DEFAULT_LIMITS, runtime: rest.runtime,
    });
  } catch (error) {
    controller.destroy();
    throw error;
  }
}

/**
 * `await createMcpToolSource(servers, { maxToolResultCharacters? })`: MCP servers as a source of tools for
 * `DefaultAgentRuntime.start({ tools })`. `tools()` waits for pending listings (bounded) and gives the tools the
 * runtime's validator accepts; a refused one is skipped and reported in `servers()`.
 * @param {unknown} servers
 * @param {{ maxToolResultCharacters?: number }} [options]
 */
export async function createMcpToolSource(servers, options = {}) {
  const chunk = await loadMcp();
  const entries = chunk.checkMcpServers(servers, AgentError, 'createMcpToolSource');
  const max = options.maxToolResultCharacters ?? DEFAULT_LIMITS.maxToolResultCharacters;
  const source = new chunk.McpToolSource(entries, { AgentError, maxCharacters: () => max });
  return Object.freeze({
    servers: () => source.servers(),
    subscribe: (/** @type {(servers: readonly any[]) => void} */ listener) => source.subscribe(listener),
    describe: (/** @type {string} */ name) => source.describe(name),
    readResource: (/** @type {string} */ server, /** @type {string} */ uri, /** @type {{ signal?: AbortSignal }} */ opts) => source.readResource(server, uri, opts ?? {}),
    callResult: (/** @type {string} */ callId) => (typeof callId === 'string' ? source.callResult(callId) : null),
    progress: () => source.progress(),
    subscribeProgress: (/** @type {(progress: Readonly<Record<string, any>>) => void} */ listener) => source.subscribeProgress(listener),
    close: () => source.close(),
    async tools() {
      await source.waiting();
      // The registry of a scratch controller is the runtime's own validator: what it refuses start() would.
      const scratch = /** @type {any} */ (wasm.createAgentController({ model: { stream: () => [] } }));
      try {
        return source.definitions().filter((tool) => {
          try { scratch.registerTool(tool); return true; } catch (error) {
            source.skip(tool.name, error instanceof Error ? error.message : String(error));
            return false;
          }
        });
      } finally {
        scratch.destroy();
      }
    },
  });
}
/** `new DefaultAgentRuntime(model, { limits, ... })`: the low-level runtime (all five limits required). */
export const DefaultAgentRuntime = wasm.DefaultAgentRuntime;
/** The handle `runtime.start()` returns (for `instanceof` checks; not constructible). */
export const AgentExecution = wasm.AgentExecution;
/** The controller class `createAgentController` returns (for `instanceof` checks; not constructible). */
export const AgentController = wasm.AgentController;
export * from './errors.js';
