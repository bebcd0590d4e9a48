// The public methods and getters of the runtime's classes, defined over their one `__call` export.
//
// Each class the wasm exports has one method, `__call(op, a, b)`, for all its public getters and methods: one wasm
// entry and one glue wrapper instead of one per member (docs/adr/002-json-text-across-the-boundary.md). The public
// members are defined on the glue's own classes (constructor, `free()` and `instanceof` stay the glue's) as that
// call with their index in the lists below, which is the operation code of controller-wasm/src/bindings/
// controller.rs and runtime.rs. `get x` is a getter, anything else a method.
const CONTROLLER_MEMBERS = ['subscribe', 'getState', 'send', 'retry', 'regenerate', 'editLastMessage',
  'setRuntimeOptions', 'abort', 'approveTool', 'rejectTool', 'registerTool', 'unregisterTool',
  'getToolInspectionSource', 'loadConversation', 'newConversation', 'listConversations', 'renameConversation',
  'deleteConversation', 'getModelState', 'destroy', 'answerElicitation', 'callToolInTurn', 'respond'];
const RUNTIME_MEMBERS = ['get limits', 'start'];
const EXECUTION_MEMBERS = ['get id', 'get result', 'get settled', 'get pendingInterrupt', 'cancel', 'respond', 'callTool'];

/**
 * Defines the members on the class's prototype as non-enumerable methods and getters (as class syntax would),
 * each calling `this.__call(op, a, b)` with its index.
 * @param {{ prototype: object }} cls
 * @param {string[]} members
 */
function defineCalls(cls, members) {
  members.forEach((member, op) => {
    const getter = member.startsWith('get ');
    /** @type {(this: { __call(op: number, a?: unknown, b?: unknown): unknown }, a?: unknown, b?: unknown) => unknown} */
    const call = getter ? function () { return this.__call(op); } : function (a, b) { return this.__call(op, a, b); };
    Object.defineProperty(call, 'name', { value: member });
    Object.defineProperty(cls.prototype, getter ? member.slice(4) : member,
      getter ? { get: call, configurable: true } : { value: call, writable: true, configurable: true });
  });
}

/**
 * Called once by the wasm-bindgen glue as it loads (scripts/build-wasm.sh appends the call), so every way of
 * loading the runtime (the package entry, the widget's own import of the glue) gets the same classes.
 * @param {{ prototype: object }} controller `AgentController`
 * @param {{ prototype: object }} runtime `DefaultAgentRuntime`
 * @param {{ prototype: object }} execution `AgentExecution`
 */
export function defineMembers(controller, runtime, execution) {
  defineCalls(controller, CONTROLLER_MEMBERS);
  defineCalls(runtime, RUNTIME_MEMBERS);
  defineCalls(execution, EXECUTION_MEMBERS);
}
