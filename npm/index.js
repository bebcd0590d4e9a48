// @patchbridge/agent: the agent runtime compiled to WebAssembly (controller-wasm/), loaded once per realm.
// In Node the .wasm file is read from disk; in browsers (and anything without a file: URL) it is fetched next
// to this module, and bundlers see the literal `new URL('…', import.meta.url)` and emit the .wasm as an asset.
// Top-level await means importers get a ready module; every export below is the Rust runtime.
import init, * as wasm from './pkg/patchbridge_agent.js';

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

/** `createAgentController(options)`: the stateful controller (relay endpoint or custom model). */
export const createAgentController = wasm.createAgentController;
/** `new DefaultAgentRuntime(model, { limits, ... })`: the low-level runtime (all five limits required). */
export const DefaultAgentRuntime = wasm.DefaultAgentRuntime;
/** The handle `runtime.start()` returns (for `instanceof` checks; not constructible). */
export const AgentExecution = wasm.AgentExecution;
/** The controller class `createAgentController` returns (for `instanceof` checks; not constructible). */
export const AgentController = wasm.AgentController;
export * from './errors.js';
