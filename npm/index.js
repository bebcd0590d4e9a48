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

// Each class the wasm exports has one method, `__call(op, a, b)`, for all its public getters and methods (one
// wasm entry and one glue wrapper instead of one per method; docs/adr/002-json-text-across-the-boundary.md).
// The public members are defined here, on the class's own prototype, as that call with their index in the lists
// below: the order is the operation codes' in controller-wasm/src/bindings/controller.rs and runtime.rs. The
// classes themselves (constructor, `free()`, `instanceof`) are the glue's.
const CONTROLLER_METHODS = ['subscribe', 'getState', 'send', 'retry', 'regenerate', 'editLastMessage',
  'setRuntimeOptions', 'abort', 'approveTool', 'rejectTool', 'registerTool', 'unregisterTool',
  'getToolInspectionSource', 'loadConversation', 'newConversation', 'listConversations', 'renameConversation',
  'deleteConversation', 'getModelState', 'destroy'];
/** `get x` is a getter, anything else a method. */
const RUNTIME_MEMBERS = ['get limits', 'start'];
const EXECUTION_MEMBERS = ['get id', 'get result', 'get settled', 'get pendingInterrupt', 'cancel', 'respond'];

/**
 * Defines `members` on `prototype` as non-enumerable methods and getters (as class syntax would), each calling
 * `this.__call(op, a, b)` with its index.
 * @param {object} prototype
 * @param {string[]} members
 */
function defineMembers(prototype, members) {
  members.forEach((member, op) => {
    const getter = member.startsWith('get ');
    const name = getter ? member.slice(4) : member;
    /** @type {(this: { __call(op: number, a?: unknown, b?: unknown): unknown }, a?: unknown, b?: unknown) => unknown} */
    const call = getter ? function () { return this.__call(op); } : function (a, b) { return this.__call(op, a, b); };
    Object.defineProperty(call, 'name', { value: member });
    Object.defineProperty(prototype, name,
      getter ? { get: call, configurable: true } : { value: call, writable: true, configurable: true });
  });
}
defineMembers(wasm.AgentController.prototype, CONTROLLER_METHODS);
defineMembers(wasm.DefaultAgentRuntime.prototype, RUNTIME_MEMBERS);
defineMembers(wasm.AgentExecution.prototype, EXECUTION_MEMBERS);

/** `createAgentController(options)`: the stateful controller (relay endpoint or custom model). */
export const createAgentController = wasm.createAgentController;
/** `new DefaultAgentRuntime(model, { limits, ... })`: the low-level runtime (all five limits required). */
export const DefaultAgentRuntime = wasm.DefaultAgentRuntime;
/** The handle `runtime.start()` returns (for `instanceof` checks; not constructible). */
export const AgentExecution = wasm.AgentExecution;
/** The controller class `createAgentController` returns (for `instanceof` checks; not constructible). */
export const AgentController = wasm.AgentController;
export * from './errors.js';
