//! An MCP App's own tool call (`callToolFromApp`, SEP-1865 `tools/call` from the view), part of the client
//! chunk. It goes through the runtime's rules, not around them: a bounded execution of its own (a
//! DefaultAgentRuntime, the Rust core) whose only step is this one call, with
//!   - the same tool definition the model would get (./source.js `appDefinition`): the server's inputSchema
//!     checked by the runtime's validator before any confirmation, confirmation unless the page listed the tool
//!     in `readOnly`, results cut to maxToolResultCharacters;
//!   - the controller's limits (factory defaults + `runtime.limits`; `maxDurationMs` is the deadline) and the
//!     page's `toolInterceptors`; no hooks or model interceptors run, since no model is called;
//!   - cancellation by the caller's signal, `controller.abort()`, destroy and setMcpServers.
//! The execution's "model" only hands the runtime the app's call as a tool call, once; the call's ToolCallResult
//! ends the execution (it is cancelled right after, so no second model call is made or counted). Nothing enters
//! the conversation. While it runs, `current()` shows the call with the execution's pending interrupt (the
//! confirmation, or a server's elicitation), answered with `respond({ interruptId, value })`.
//! During a turn the call runs inside that turn's execution instead (`controller.callToolInTurn`, the core's
//! `AgentExecution::call_tool`): the turn's snapshot (or this definition for a tool meant for apps only), its
//! confirmation slot (`state.pendingConfirmation`, whose callId is this call's `app_…` id and in no message),
//! its maxToolCalls, deadline and cancellation; its result never enters the conversation. `current()` then
//! shows the turn's pending interrupt when it is this call's, answered through `controller.respond`. The
//! caller's signal can no longer take the call out of the turn: it rejects the call's confirmation instead.
//! One app call at a time; none while a conversation loads (AGENT_BUSY).

/** @typedef {import('./options.js').ErrorClass} ErrorClass */

const REQUEST_KEYS = new Set(['server', 'name', 'arguments', 'signal']);

/** An id for the app's call, unique enough within a page session (no secure context needed). */
function appCallId() {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return `app_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** @param {any} value */
const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

export class McpAppCalls {
  #source;
  #options;
  /** @type {{ execution: any, view: any, withdraw?: () => void } | null} */
  #current = null;
  /** @type {Set<(call: any) => void>} */
  #listeners = new Set();

  /**
   * @param {import('./source.js').McpToolSource} source
   * @param {{ AgentError: ErrorClass, Runtime: any, runtimeOptions: () => any, controller: any }} options
   *   `Runtime`: the DefaultAgentRuntime class; `runtimeOptions()`: `{ limits, toolInterceptors? }` now;
   *   `controller`: the AgentController whose running turn takes the call
   */
  constructor(source, options) {
    this.#source = source;
    this.#options = options;
  }

  /** The running app call with its pending interrupt, or null (frozen). */
  current() { return this.#current?.view ?? null; }

  /** Whether an app call runs in an execution of its own. */
  running() { return this.#current?.execution != null; }

  /** @param {(call: any) => void} listener @returns {() => void} */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  /** Cancels the running app call (its result is the runtime's not-run result); true if one was cancelled. */
  cancel() {
    const current = this.#current;
    if (!current) return false;
    if (current.execution) return current.execution.cancel() === true;
    current.withdraw?.();
    return false;
  }

  /**
   * Answers the app call's pending confirmation or elicitation (as `execution.respond`).
   * @param {unknown} response
   */
  respond(response) {
    if (!this.#current) throw new this.#options.AgentError('AGENT_NO_PENDING_INTERRUPT', 'respondMcpAppCall: no app call is waiting');
    (this.#current.execution ?? this.#options.controller).respond(response);
  }

  /**
   * @param {unknown} request `{ server, name, arguments?, signal? }`
   * @returns {Promise<any>} the raw CallToolResult, or the runtime's error result when the call did not run
   */
  async call(request) {
    const { AgentError, Runtime, runtimeOptions, controller } = this.#options;
    if (!isPlainObject(request)) throw new AgentError('AGENT_INVALID_INPUT', 'callToolFromApp expects { server, name, arguments, signal }');
    const input = /** @type {Record<string, unknown>} */ (request);
    for (const key of Object.keys(input)) {
      if (!REQUEST_KEYS.has(key)) throw new AgentError('AGENT_INVALID_INPUT', `callToolFromApp: unknown key "${key}"`);
    }
    const args = input.arguments === undefined ? {} : input.arguments;
    if (!isPlainObject(args)) throw new AgentError('AGENT_INVALID_INPUT', 'callToolFromApp: arguments must be a JSON object');
    const signal = input.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new AgentError('AGENT_INVALID_INPUT', 'callToolFromApp: signal must be an AbortSignal');
    if (typeof Runtime !== 'function') {
      throw new AgentError('AGENT_INVALID_OPTIONS', 'callToolFromApp needs the runtime: withMcpServers(controller, servers, { Runtime: DefaultAgentRuntime, defaultLimits, runtime })');
    }
    const { definition, name, readOnly } = this.#source.appDefinition(/** @type {string} */ (input.server), /** @type {string} */ (input.name));
    if (this.#current) throw new AgentError('AGENT_BUSY', 'callToolFromApp: another app call is running', { details: { reason: 'app-call' } });
    const status = controller.getState().status;
    if (status === 'loading') throw new AgentError('AGENT_BUSY', 'callToolFromApp: a conversation is loading', { details: { reason: 'loading' } });

    const callId = appCallId();
    if (status === 'running' || status === 'awaiting-confirmation') {
      return this.#inTurn({ callId, server: /** @type {string} */ (input.server), tool: /** @type {string} */ (input.name), name, arguments: JSON.parse(JSON.stringify(args)), readOnly }, definition, signal);
    }
    let executed = false;
    const tool = {
      ...definition,
      /** @param {any} a @param {any} context */
      execute: async (a, context) => {
        const result = await definition.execute(a, context);
        executed = true;
        return result;
      },
    };
    /** @type {{ toolCallId: string, content: string, isError: boolean } | null} */
    let published = null;
    let asked = false;
    const model = {
      /** The app's call as the one tool call of the one model message; a second model call never comes (see above). */
      async *stream() {
        if (asked) return;
        asked = true;
        yield { type: 'message-start' };
        yield { type: 'block-start', index: 0, block: { type: 'tool-call', callId, name } };
        yield { type: 'block-delta', index: 0, delta: JSON.stringify(args) };
        yield { type: 'block-stop', index: 0 };
        yield { type: 'message-stop', stopReason: 'tool-use', modelState: null };
      },
    };
    const { limits, toolInterceptors } = runtimeOptions();
    const runtime = new Runtime(model, toolInterceptors ? { limits, toolInterceptors } : { limits });
    /** @type {any} */
    let execution = null;
    const base = { callId, server: /** @type {string} */ (input.server), tool: /** @type {string} */ (input.name), name, arguments: JSON.parse(JSON.stringify(args)), readOnly };
    const show = () => {
      if (!this.#current || this.#current.execution !== execution) return;
      this.#current.view = deepFreeze({ ...base, pendingInterrupt: execution.pendingInterrupt ?? null });
      this.#publish();
    };
    /** @param {any} event */
    const observe = (event) => {
      if (event.type === 'tool-result' && event.result?.toolCallId === callId) {
        published = event.result;
        // Its result is all this execution is for: end it before a second model call.
        queueMicrotask(() => { execution?.cancel(); });
      } else if (event.type === 'interrupt' || event.type === 'interrupt-resolved' || event.type === 'elicitation' || event.type === 'elicitation-resolved') {
        queueMicrotask(show);
      }
    };
    try {
      execution = runtime.start({
        messages: [{ id: `${callId}_request`, role: 'user', blocks: [{ type: 'text', text: `An MCP app calls ${name}.` }] }],
        tools: [tool],
      }, observe);
    } catch (error) {
      runtime.free?.();
      throw error;
    }
    this.#current = { execution, view: deepFreeze({ ...base, pendingInterrupt: null }) };
    this.#publish();
    const onAbort = () => { execution.cancel(); };
    if (signal?.aborted) execution.cancel();
    else signal?.addEventListener('abort', onAbort, { once: true });

    /** @type {any} */
    let outcome = null;
    /** @type {unknown} */
    let failure = null;
    try {
      outcome = await execution.result;
    } catch (error) {
      failure = error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#current = null;
      this.#publish();
    }
    try { execution.free?.(); runtime.free?.(); } catch { /* already freed */ }

    const finished = /** @type {{ toolCallId: string, content: string, isError: boolean } | null} */ (published);
    if (finished && executed) {
      const raw = this.#source.callResult(callId);
      if (raw) return raw;
    }
    if (finished) return deepFreeze({ content: [{ type: 'text', text: finished.content }], isError: true });
    if (failure) throw failure;
    // Cancelled before the call ran: the closing tool message's not-run result.
    const closing = outcome?.messages?.flatMap((/** @type {any} */ m) => m.blocks).find((/** @type {any} */ b) => b.type === 'tool-result' && b.callId === callId);
    return deepFreeze({ content: [{ type: 'text', text: closing?.content ?? '[not run] the app call was cancelled' }], isError: true });
  }

  /**
   * The app's call inside the running turn's execution (see the header).
   * @param {{ callId: string, server: string, tool: string, name: string, arguments: any, readOnly: boolean }} base
   * @param {any} definition @param {AbortSignal | undefined} signal
   */
  async #inTurn(base, definition, signal) {
    const { controller } = this.#options;
    const { callId } = base;
    let withdrawn = false;
    /** @type {any} */
    let shown = null;
    const current = { execution: null, view: deepFreeze({ ...base, pendingInterrupt: null }), withdraw: () => { withdrawn = true; show(); } };
    const show = () => {
      if (this.#current !== current) return;
      const state = controller.getState();
      const pending = [state.pendingConfirmation, state.pendingElicitation].find((p) => p?.callId === callId) ?? null;
      if (pending && (withdrawn || signal?.aborted) && pending.kind === 'tool-confirmation') {
        // The card went away: the call it asked for does not run.
        try { controller.respond({ interruptId: pending.interruptId, value: false }); } catch { /* answered meanwhile */ }
        return;
      }
      if ((pending?.interruptId ?? null) === (shown?.interruptId ?? null)) return;
      shown = pending;
      current.view = deepFreeze({ ...base, pendingInterrupt: pending });
      this.#publish();
    };
    this.#current = current;
    this.#publish();
    const unsubscribe = controller.subscribe(show);
    signal?.addEventListener('abort', show, { once: true });
    try {
      const calling = controller.callToolInTurn({ callId, name: base.name, arguments: base.arguments, tool: definition });
      show();
      const result = await calling;
      return this.#source.callResult(callId) ?? deepFreeze({ content: [{ type: 'text', text: result.content }], isError: result.isError });
    } finally {
      unsubscribe();
      signal?.removeEventListener('abort', show);
      this.#current = null;
      this.#publish();
    }
  }

  #publish() {
    const call = this.current();
    for (const listener of [...this.#listeners]) {
      try { listener(call); } catch (error) { console.error('@patchbridge/agent: an MCP app call listener threw', error); }
    }
  }
}

/** @param {any} value */
function deepFreeze(value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
