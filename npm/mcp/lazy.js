//! `mcpServers` on a controller, without loading the MCP client until servers are set: the controller's turn
//! methods wait for the client chunk and the pending listings (at most LISTING_WAIT_MS, ./source.js) before the
//! turn starts, and the controller gets the MCP members of its API:
//!   getMcpServers()          every server's status (connecting / ready / failed, reason and message, tools, skipped)
//!   subscribeMcp(listener)   status changes; returns the unsubscribe function
//!   describeMcpTool(name)    the server and tool behind a registry name, with the server's hints (never trusted)
//!   setMcpServers(servers)   replaces the servers (validated like the option); applies from the next turn
//!   finishMcpAuth(name, code) completes a server's OAuth flow (`auth` of the entry) and connects it again
//!   progress and MCP Apps members (ADR-016, ADR-019)  forwarded to the chunk's `members` (./registry.js)
//! The status lives here, on the JavaScript side of the controller, not in `getState()`: it is the state of a
//! JavaScript client (the SDK) that the Rust core never reads, no rule of the runtime depends on it, and it
//! never enters a conversation; the registry is the one place where MCP meets the core.
import { parseMcpToolName } from './names.js';
import { checkMcpServers } from './options.js';

/** How long a turn waits for the client chunk and the listings before it goes on without MCP tools. */
const WAIT_MS = 5_000;
const TURN_METHODS = ['send', 'retry', 'regenerate', 'editLastMessage'];

/** @param {number} ms */
const delay = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/**
 * @param {any} controller an AgentController (its methods are wrapped on the instance)
 * @param {unknown} servers the `mcpServers` option (checked here; AGENT_INVALID_OPTIONS names the entry)
 * @param {{ load: () => Promise<any>, AgentError: import('./options.js').ErrorClass, limits?: { maxToolResultCharacters?: number } | undefined,
 *   defaultMaxCharacters: number, Runtime?: any, defaultLimits?: object, runtime?: any }} options `load`: imports
 *   the client chunk (./chunk.js built); `Runtime` (DefaultAgentRuntime), `defaultLimits` and `runtime` (the
 *   controller's runtime options) are what app calls run with
 */
export function withMcpServers(controller, servers, { load, AgentError, limits, defaultMaxCharacters, Runtime, defaultLimits, runtime }) {
  let entries = checkMcpServers(servers, AgentError);
  let runtimeOptions = runtime;
  /** @type {Record<string, Set<(value: any) => void>>} listeners of the chunk's events, kept across setMcpServers */
  const hubs = { status: new Set(), progress: new Set(), appCall: new Set() };
  /** @param {string} kind @param {unknown} value */
  const emit = (kind, value) => {
    for (const listener of [...hubs[kind]]) {
      try { listener(value); } catch (error) { console.error(`@patchbridge/agent: an MCP ${kind} listener threw`, error); }
    }
  };
  /** @param {string} kind @param {string} what */
  const listen = (kind, what) => (/** @type {unknown} */ listener) => {
    if (typeof listener !== 'function') throw new AgentError('AGENT_INVALID_OPTIONS', `${what} expects a function`);
    hubs[kind].add(/** @type {(value: any) => void} */ (listener));
    return () => { hubs[kind].delete(/** @type {(value: any) => void} */ (listener)); };
  };
  let maxCharacters = limits?.maxToolResultCharacters ?? defaultMaxCharacters;
  /** @type {{ source: any, apps: any, members: Record<string, Function>, close(): void } | null} */
  let attached = null;
  /** @type {Promise<unknown> | null} */
  let loading = null;
  /** @type {(() => void) | null} */
  let unsubscribe = null;
  /** @type {readonly any[]} */
  let loadFailure = Object.freeze([]);
  let generation = 0;

  const publish = () => { emit('status', getMcpServers()); };
  const start = () => {
    const mine = ++generation;
    loadFailure = Object.freeze([]);
    if (entries.length === 0) { loading = null; publish(); return; }
    loading = load().then((chunk) => {
      if (mine !== generation) return;
      attached = chunk.attachMcp(controller, entries, {
        AgentError, maxCharacters: () => maxCharacters, emit, Runtime, defaultLimits, runtimeOptions: () => runtimeOptions,
      });
      unsubscribe = attached?.source.subscribe(publish) ?? null;
      publish();
    }, (error) => {
      if (mine !== generation) return;
      console.error('@patchbridge/agent: the MCP client did not load', error);
      loadFailure = Object.freeze(entries.map((e) => Object.freeze({
        name: e.name, url: e.url, status: 'failed', reason: 'client', message: 'the MCP client did not load', protocolVersion: null, tools: Object.freeze([]), appTools: Object.freeze([]), skipped: Object.freeze([]),
      })));
      publish();
    }).finally(() => { if (mine === generation) loading = null; });
  };
  const stop = () => {
    generation += 1;
    unsubscribe?.();
    unsubscribe = null;
    attached?.close();
    attached = null;
  };

  function getMcpServers() {
    if (attached) return attached.source.servers();
    if (loadFailure.length) return loadFailure;
    return Object.freeze(entries.map((e) => Object.freeze({
      name: e.name, url: e.url, status: 'connecting', reason: null, message: null, protocolVersion: null, tools: Object.freeze([]), appTools: Object.freeze([]), skipped: Object.freeze([]),
    })));
  }

  /** What a turn awaits first, or null (then it starts at once, as without MCP). */
  const waiting = () => {
    if (loading) return Promise.race([loading.then(() => attached?.source.waiting(WAIT_MS)), delay(WAIT_MS)]);
    return attached?.source.waiting(WAIT_MS) ?? null;
  };

  for (const method of TURN_METHODS) {
    const original = controller[method];
    if (typeof original !== 'function') continue;
    Object.defineProperty(controller, method, {
      configurable: true, writable: true,
      value: (/** @type {unknown[]} */ ...args) => {
        if (attached?.apps.running()) {
          return Promise.reject(new AgentError('AGENT_BUSY', `${method}: an MCP app's tool call is running`, { details: { reason: 'app-call' } }));
        }
        const wait = waiting();
        return wait === null ? original.apply(controller, args) : wait.then(() => original.apply(controller, args));
      },
    });
  }
  const setRuntimeOptions = controller.setRuntimeOptions;
  controller.setRuntimeOptions = (/** @type {any} */ runtime) => {
    setRuntimeOptions.call(controller, runtime);
    runtimeOptions = runtime;
    maxCharacters = runtime?.limits?.maxToolResultCharacters ?? defaultMaxCharacters;
  };
  const inspect = controller.getToolInspectionSource;
  controller.getToolInspectionSource = () => {
    const inspection = inspect.call(controller);
    const tools = inspection.snapshot.tools.map((/** @type {any} */ tool) => {
      const info = attached?.source.describe(tool.name);
      const parsed = info ? { server: info.server, tool: info.tool } : parseMcpToolName(tool.name);
      return parsed ? Object.freeze({ ...tool, mcp: Object.freeze(parsed) }) : tool;
    });
    return Object.freeze({ ...inspection, snapshot: Object.freeze({ ...inspection.snapshot, tools: Object.freeze(tools) }) });
  };
  const destroy = controller.destroy;
  controller.destroy = () => { stop(); for (const hub of Object.values(hubs)) hub.clear(); return destroy.call(controller); };
  const abort = controller.abort;
  controller.abort = () => {
    const app = attached?.apps.cancel() ?? false;
    return abort.call(controller) || app;
  };
  /** @type {Record<string, unknown>} */
  const nothing = { getMcpProgress: Object.freeze({}), getMcpCallResult: null, getMcpAppCall: null };
  for (const [name, none] of Object.entries(nothing)) {
    controller[name] = (/** @type {unknown[]} */ ...args) => (attached ? attached.members[name](...args) : none);
  }
  for (const name of ['readMcpResource', 'callToolFromApp']) {
    controller[name] = async (/** @type {unknown[]} */ ...args) => {
      if (loading) await Promise.race([loading, delay(WAIT_MS)]);
      if (!attached) throw new AgentError('AGENT_INVALID_INPUT', `${name}: the MCP client is not running`);
      return attached.members[name](...args);
    };
  }
  controller.respondMcpAppCall = (/** @type {unknown} */ response) => {
    if (!attached) throw new AgentError('AGENT_NO_PENDING_INTERRUPT', 'respondMcpAppCall: no app call is waiting');
    attached.members.respondMcpAppCall(response);
  };
  controller.subscribeMcpProgress = listen('progress', 'subscribeMcpProgress');
  controller.subscribeMcpAppCall = listen('appCall', 'subscribeMcpAppCall');
  controller.getMcpServers = getMcpServers;
  controller.subscribeMcp = listen('status', 'subscribeMcp');
  controller.describeMcpTool = (/** @type {string} */ name) => {
    const info = attached?.source.describe(name);
    if (info) return info;
    const parsed = parseMcpToolName(name);
    return parsed ? Object.freeze({ server: parsed.server, tool: parsed.tool, title: null, readOnly: false, annotations: Object.freeze({}), ui: null }) : null;
  };
  controller.finishMcpAuth = async (/** @type {string} */ name, /** @type {string} */ code) => {
    if (typeof name !== 'string' || typeof code !== 'string' || code === '') {
      throw new AgentError('AGENT_INVALID_INPUT', 'finishMcpAuth expects a server name and the authorization code');
    }
    if (loading) await loading;
    if (!attached) throw new AgentError('AGENT_INVALID_INPUT', 'finishMcpAuth: the MCP client is not running');
    await attached.source.authorize(name, code);
  };
  controller.setMcpServers = (/** @type {unknown} */ next) => {
    const checked = checkMcpServers(next, AgentError, 'setMcpServers');
    stop();
    entries = checked;
    start();
  };
  start();
  return controller;
}
