//! The MCP servers of one controller (or one DefaultAgentRuntime user) as a source of tools, with each
//! server's status. Part of the client chunk (./chunk.js).
//!
//! - Listing: every server connects and lists as soon as the source exists. `waiting()` is what a turn awaits
//!   before it starts: the pending listings, at most LISTING_WAIT_MS; a server still listing then is left out
//!   of that turn (its tools join a later one).
//! - Changes: a server's `notifications/tools/list_changed`, or a listing older than TOOLS_CACHE_MS when a turn
//!   starts, lists it again; the registry takes the new tools, which the runtime's per-turn snapshot keeps out of
//!   a running turn. A failed server is tried again when a turn starts, RETRY_AFTER_MS after its failure.
//! - Tools: `mcp__<server>__<tool>` (./names.js), the server's description and inputSchema, `readOnly` only
//!   when the page listed the tool in the entry's `readOnly` (the server's `readOnlyHint` / `destructiveHint`
//!   are kept for the confirmation to show, never trusted); the `tools` allow- or deny-list filters.
//! - Calls: ./client.js; a failure that ends the turn is `AGENT_TOOL_FAILED` with
//!   `details: { server, tool, reason }`, and a transport failure also marks the server failed.
import { connect, finishAuth } from './client.js';
import { mcpToolName } from './names.js';

/** How long a turn waits for a pending listing before it goes on without that server. */
export const LISTING_WAIT_MS = 5_000;
/** How long a listing is used before a turn's start lists again (list_changed lists again at once). */
export const TOOLS_CACHE_MS = 5 * 60_000;
/** How long after a failure a turn's start tries a failed server again. */
export const RETRY_AFTER_MS = 30_000;
/** Longest wait for the connection or one listing page. */
const CONNECT_TIMEOUT_MS = 20_000;

/**
 * @typedef {import('./options.js').McpServerEntry} McpServerEntry
 * @typedef {import('./options.js').ErrorClass} ErrorClass
 * @typedef {{ name: string, url: string, status: 'connecting' | 'ready' | 'failed', reason: string | null,
 *   message: string | null, protocolVersion: string | null, tools: string[],
 *   skipped: { tool: string, reason: string }[] }} McpServerStatus
 * @typedef {{ server: string, tool: string, title: string | null, readOnly: boolean,
 *   annotations: { readOnlyHint?: boolean, destructiveHint?: boolean, idempotentHint?: boolean, openWorldHint?: boolean } }} McpToolInfo
 */

/** @param {number} ms */
const delay = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** The hints a confirmation shows, copied as booleans only. @param {any} annotations */
function hintsOf(annotations) {
  /** @type {McpToolInfo['annotations']} */
  const hints = {};
  for (const key of /** @type {const} */ (['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])) {
    if (typeof annotations?.[key] === 'boolean') hints[key] = annotations[key];
  }
  return hints;
}

class Server {
  /** @param {McpServerEntry} entry */
  constructor(entry) {
    this.entry = entry;
    /** @type {Awaited<ReturnType<typeof connect>> | null} */
    this.connection = null;
    /** @type {Promise<void> | null} */
    this.pending = null;
    /** @type {any[]} */
    this.listed = [];
    this.listedAt = 0;
    this.failedAt = 0;
    this.again = false;
    /** @type {McpServerStatus} */
    this.status = {
      name: entry.name, url: entry.url, status: 'connecting', reason: null, message: null, protocolVersion: null, tools: [], skipped: [],
    };
  }
}

export class McpToolSource {
  /** @type {Map<string, Server>} */
  #servers = new Map();
  /** @type {Set<(servers: readonly any[]) => void>} */
  #listeners = new Set();
  /** @type {Map<string, { server: Server, tool: any }>} registry name -> tool */
  #byName = new Map();
  #closed = false;
  #options;
  /** @type {readonly Readonly<McpServerStatus>[] | readonly any[]} */
  #snapshot = Object.freeze([]);

  /**
   * @param {readonly McpServerEntry[]} entries
   * @param {{ AgentError: ErrorClass, maxCharacters: () => number, onTools?: () => void }} options
   *   `onTools`: the tools changed (the controller re-syncs its registry)
   */
  constructor(entries, options) {
    this.#options = options;
    for (const entry of entries) this.#servers.set(entry.name, new Server(entry));
    this.#publish();
    for (const server of this.#servers.values()) this.#list(server);
  }

  /** Every server's status (frozen; a new array after each change). */
  servers() { return this.#snapshot; }

  /** @param {(servers: readonly any[]) => void} listener @returns {() => void} */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  /**
   * What a turn awaits before it starts (null when nothing is pending): refreshes stale listings and failed
   * servers due for a retry, then waits for pending listings at most `timeoutMs`.
   */
  waiting(timeoutMs = LISTING_WAIT_MS) {
    if (this.#closed) return null;
    const now = Date.now();
    for (const server of this.#servers.values()) {
      if (server.pending) continue;
      const s = server.status.status;
      if ((s === 'ready' && now - server.listedAt > TOOLS_CACHE_MS) || (s === 'failed' && now - server.failedAt > RETRY_AFTER_MS)) this.#list(server);
    }
    const pending = [...this.#servers.values()].map((s) => s.pending).filter((p) => p !== null);
    if (pending.length === 0) return null;
    return Promise.race([Promise.allSettled(pending), delay(timeoutMs)]).then(() => undefined);
  }

  /**
   * The tools of every ready server, as AgentTool definitions (fresh objects on each call).
   * @returns {import('../index.js').AgentTool[]}
   */
  definitions() {
    const tools = [];
    for (const [name, { server, tool }] of this.#byName) tools.push(this.#definition(name, server, tool));
    return tools;
  }

  /**
   * The server and tool behind a registry name, with the hints the server declares (shown, never trusted).
   * @param {string} name
   * @returns {McpToolInfo | null}
   */
  describe(name) {
    const found = this.#byName.get(name);
    if (!found) return null;
    const { server, tool } = found;
    return Object.freeze({
      server: server.entry.name, tool: tool.name, title: typeof tool.title === 'string' ? tool.title : (tool.annotations?.title ?? null),
      readOnly: server.entry.readOnly.has(tool.name), annotations: Object.freeze(hintsOf(tool.annotations)),
    });
  }

  /**
   * Records that the registry refused a tool (its schema, a name clash): it stays out, the server stays ready.
   * @param {string} name registry name
   * @param {string} reason
   */
  skip(name, reason) {
    const found = this.#byName.get(name);
    if (!found) return;
    this.#byName.delete(name);
    const status = found.server.status;
    status.tools = status.tools.filter((t) => t !== found.tool.name);
    status.skipped = [...status.skipped, { tool: found.tool.name, reason }];
    this.#publish();
  }

  /**
   * Completes a server's authorization with the code from the page's redirect URL, then connects and lists it
   * again; resolves once that listing ended (the status says how).
   * @param {string} name
   * @param {string} code
   */
  async authorize(name, code) {
    const server = this.#servers.get(name);
    if (!server) throw new this.#options.AgentError('AGENT_INVALID_INPUT', `finishMcpAuth: no MCP server named "${name}"`);
    try {
      await finishAuth(server.entry, code);
    } catch (error) {
      const failure = /** @type {{ failure?: { reason: string, message: string } }} */ (error).failure;
      server.status = { ...server.status, status: 'failed', reason: failure?.reason ?? 'unauthorized', message: failure?.message ?? 'authorization failed' };
      this.#publish();
      return;
    }
    await server.pending;
    this.#list(server);
    await server.pending;
  }

  /** Closes every connection (sessions are ended); the source lists nothing any more. */
  close() {
    this.#closed = true;
    for (const server of this.#servers.values()) {
      server.connection?.close().catch(() => {});
      server.connection = null;
    }
    this.#byName.clear();
  }

  /** @param {Server} server */
  #list(server) {
    if (server.pending) { server.again = true; return; }
    server.pending = (async () => {
      try {
        if (!server.connection) {
          server.status = { ...server.status, status: 'connecting', reason: null, message: null };
          this.#publish();
          const connection = await connect(server.entry, { onToolsChanged: () => { if (!this.#closed) this.#list(server); }, timeoutMs: CONNECT_TIMEOUT_MS });
          if (this.#closed) { void connection.close(); return; }
          server.connection = connection;
        }
        const listed = await server.connection.listTools();
        if (this.#closed) return;
        const { allow, deny } = server.entry;
        server.listed = listed.filter((tool) => tool && typeof tool.name === 'string'
          && (allow === null || allow.has(tool.name)) && !deny.has(tool.name));
        server.listedAt = Date.now();
        server.status = {
          ...server.status, status: 'ready', reason: null, message: null,
          protocolVersion: server.connection.protocolVersion, skipped: [],
        };
      } catch (error) {
        if (this.#closed) return;
        const failure = /** @type {{ failure?: { reason: string, message: string } }} */ (error).failure
          ?? { reason: 'protocol', message: error instanceof Error ? error.message : String(error) };
        server.connection?.close().catch(() => {});
        server.connection = null;
        server.listed = [];
        server.failedAt = Date.now();
        server.status = { ...server.status, status: 'failed', reason: failure.reason, message: failure.message, skipped: [] };
      } finally {
        server.pending = null;
      }
      this.#rebuild();
      if (server.again && !this.#closed) { server.again = false; this.#list(server); }
    })();
  }

  #rebuild() {
    this.#byName.clear();
    for (const server of this.#servers.values()) {
      for (const tool of server.listed) this.#byName.set(mcpToolName(server.entry.name, tool.name), { server, tool });
      // The registry's refusals are reported again by the sync that follows (`skip`).
      server.status = { ...server.status, tools: server.listed.map((tool) => tool.name), skipped: [] };
    }
    this.#publish();
    try { this.#options.onTools?.(); } catch { /* the controller reports its own failures */ }
  }

  #publish() {
    this.#snapshot = Object.freeze([...this.#servers.values()].map((s) => Object.freeze({
      ...s.status, tools: Object.freeze([...s.status.tools]), skipped: Object.freeze(s.status.skipped.map((x) => Object.freeze({ ...x }))),
    })));
    for (const listener of [...this.#listeners]) {
      try { listener(this.#snapshot); } catch (error) { console.error('@patchbridge/agent: an MCP status listener threw', error); }
    }
  }

  /**
   * @param {string} name
   * @param {Server} server
   * @param {any} tool
   */
  #definition(name, server, tool) {
    const { AgentError, maxCharacters } = this.#options;
    const readOnly = server.entry.readOnly.has(tool.name);
    const serverName = server.entry.name;
    return {
      name,
      description: typeof tool.description === 'string' ? tool.description : (typeof tool.title === 'string' ? tool.title : ''),
      inputSchema: tool.inputSchema && typeof tool.inputSchema === 'object' ? tool.inputSchema : { type: 'object' },
      readOnly,
      requireConfirmation: !readOnly,
      /** @param {Record<string, unknown>} args @param {import('../index.js').ToolContext} context */
      execute: async (args, { signal, callId, elicit }) => {
        const connection = server.connection;
        if (!connection) {
          throw new AgentError('AGENT_TOOL_FAILED', `MCP server "${serverName}" is not connected (${server.status.message ?? 'closed'})`,
            { details: { server: serverName, tool: tool.name, reason: server.status.reason ?? 'closed' } });
        }
        try {
          return await connection.call(tool.name, args, { callId, signal, maxCharacters: maxCharacters(), elicit });
        } catch (error) {
          if (signal.aborted) throw error;
          const failure = /** @type {{ failure?: { reason: string, message: string } }} */ (error).failure
            ?? { reason: 'protocol', message: error instanceof Error ? error.message : String(error) };
          if (failure.reason !== 'timeout' && server.connection === connection) {
            connection.close().catch(() => {});
            server.connection = null;
            server.failedAt = Date.now();
            server.status = { ...server.status, status: 'failed', reason: failure.reason, message: failure.message };
            server.listed = [];
            this.#rebuild();
          }
          throw new AgentError('AGENT_TOOL_FAILED', `MCP server "${serverName}", tool ${tool.name}: ${failure.message}`,
            { details: { server: serverName, tool: tool.name, reason: failure.reason }, cause: error });
        }
      },
    };
  }
}
