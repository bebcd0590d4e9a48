//! `mcpServers` on a controller, without loading the MCP client until servers are set: the controller's turn
//! methods wait for the client chunk and the pending listings (at most LISTING_WAIT_MS, ./source.js) before the
//! turn starts, and the controller gets the MCP members of its API:
//!   getMcpServers()          every server's status (connecting / ready / failed, reason and message, tools, skipped)
//!   subscribeMcp(listener)   status changes; returns the unsubscribe function
//!   describeMcpTool(name)    the server and tool behind a registry name, with the server's hints (never trusted)
//!   setMcpServers(servers)   replaces the servers (validated like the option); applies from the next turn
//!   finishMcpAuth(name, code) completes a server's OAuth flow (`auth` of the entry) and connects it again
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
 *   defaultMaxCharacters: number }} options `load`: imports the client chunk (./chunk.js built)
 */
export function withMcpServers(controller, servers, { load, AgentError, limits, defaultMaxCharacters }) {
  let entries = checkMcpServers(servers, AgentError);
  let maxCharacters = limits?.maxToolResultCharacters ?? defaultMaxCharacters;
  /** @type {Set<(servers: readonly any[]) => void>} */
  const listeners = new Set();
  /** @type {{ source: any, close(): void } | null} */
  let attached = null;
  /** @type {Promise<unknown> | null} */
  let loading = null;
  /** @type {(() => void) | null} */
  let unsubscribe = null;
  /** @type {readonly any[]} */
  let loadFailure = Object.freeze([]);
  let generation = 0;

  const publish = () => {
    const snapshot = getMcpServers();
    for (const listener of [...listeners]) {
      try { listener(snapshot); } catch (error) { console.error('@patchbridge/agent: an MCP status listener threw', error); }
    }
  };
  const start = () => {
    const mine = ++generation;
    loadFailure = Object.freeze([]);
    if (entries.length === 0) { loading = null; publish(); return; }
    loading = load().then((chunk) => {
      if (mine !== generation) return;
      attached = chunk.attachMcp(controller, entries, { AgentError, maxCharacters: () => maxCharacters });
      unsubscribe = attached?.source.subscribe(publish) ?? null;
      publish();
    }, (error) => {
      if (mine !== generation) return;
      console.error('@patchbridge/agent: the MCP client did not load', error);
      loadFailure = Object.freeze(entries.map((e) => Object.freeze({
        name: e.name, url: e.url, status: 'failed', reason: 'client', message: 'the MCP client did not load', protocolVersion: null, tools: Object.freeze([]), skipped: Object.freeze([]),
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
      name: e.name, url: e.url, status: 'connecting', reason: null, message: null, protocolVersion: null, tools: Object.freeze([]), skipped: Object.freeze([]),
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
        const wait = waiting();
        return wait === null ? original.apply(controller, args) : wait.then(() => original.apply(controller, args));
      },
    });
  }
  const setRuntimeOptions = controller.setRuntimeOptions;
  controller.setRuntimeOptions = (/** @type {any} */ runtime) => {
    setRuntimeOptions.call(controller, runtime);
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
  controller.destroy = () => { stop(); listeners.clear(); return destroy.call(controller); };
  controller.getMcpServers = getMcpServers;
  controller.subscribeMcp = (/** @type {(servers: readonly any[]) => void} */ listener) => {
    if (typeof listener !== 'function') throw new AgentError('AGENT_INVALID_OPTIONS', 'subscribeMcp expects a function');
    listeners.add(listener);
    return () => { listeners.delete(listener); };
  };
  controller.describeMcpTool = (/** @type {string} */ name) => {
    const info = attached?.source.describe(name);
    if (info) return info;
    const parsed = parseMcpToolName(name);
    return parsed ? Object.freeze({ server: parsed.server, tool: parsed.tool, title: null, readOnly: false, annotations: Object.freeze({}) }) : null;
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
