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
//! - MCP Apps (SEP-1865): a tool's `_meta.ui` (`resourceUri`, `visibility`; the legacy `_meta["ui/resourceUri"]`)
//!   is kept and shown by `describe(name).ui`; a tool whose visibility lacks "model" is never a definition (not
//!   in the model's snapshot) but stays callable by its app (`appDefinition`, ./app-call.js). `readResource`
//!   reads a `ui://` resource (bounded, cached per server and URI until the connection is replaced);
//!   `callResult(id)` is the raw CallToolResult of the last MCP_CALL_RESULTS_KEPT calls (memory only).
//! - Progress: every call sends a progress token; the server's notifications are kept per toolCallId
//!   (`progress()`, `subscribeProgress()`) while the call runs and dropped when it ends (answer, failure,
//!   stop, deadline) or the source closes; one arriving after that is never published.
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
/** The MIME type SEP-1865 gives an MCP App's view (`text/html;profile=mcp-app`). */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** The most UTF-8 bytes of text `readResource` hands out (AGENT_MCP_RESOURCE_TOO_LARGE above). */
export const MCP_RESOURCE_MAX_BYTES = 2 * 1024 * 1024;
/** How many raw CallToolResults `callResult` keeps (least recently used dropped first). */
export const MCP_CALL_RESULTS_KEPT = 50;

/**
 * @typedef {import('./options.js').McpServerEntry} McpServerEntry
 * @typedef {import('./options.js').ErrorClass} ErrorClass
 * @typedef {{ name: string, url: string, status: 'connecting' | 'ready' | 'failed', reason: string | null,
 *   message: string | null, protocolVersion: string | null, tools: string[], appTools: string[],
 *   skipped: { tool: string, reason: string }[] }} McpServerStatus
 * @typedef {{ server: string, tool: string, title: string | null, readOnly: boolean,
 *   annotations: { readOnlyHint?: boolean, destructiveHint?: boolean, idempotentHint?: boolean, openWorldHint?: boolean } }} McpToolInfo
 * @typedef {{ progress: number, total?: number, message?: string }} McpProgress
 */

/** @param {number} ms */
const delay = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** @param {unknown} value @returns {any} a deep-frozen JSON copy */
function frozenCopy(value) {
  const copy = value === undefined ? undefined : JSON.parse(JSON.stringify(value));
  /** @param {any} v */
  const freeze = (v) => { if (v && typeof v === 'object') { Object.values(v).forEach(freeze); Object.freeze(v); } return v; };
  return freeze(copy);
}

/**
 * A tool's MCP Apps metadata (SEP-1865, ext-apps 2.0 `McpUiToolMeta`): `_meta.ui.resourceUri` (or the legacy
 * `_meta["ui/resourceUri"]`), a `ui://` URI or null, and `visibility` (default both). Null without either key.
 * @param {any} tool
 * @returns {Readonly<{ resourceUri: string | null, visibility: readonly ('model' | 'app')[] }> | null}
 */
export function uiOf(tool) {
  const meta = tool?._meta;
  if (!meta || typeof meta !== 'object') return null;
  const ui = meta.ui && typeof meta.ui === 'object' && !Array.isArray(meta.ui) ? meta.ui : null;
  const legacy = typeof meta['ui/resourceUri'] === 'string' ? meta['ui/resourceUri'] : null;
  if (!ui && legacy === null) return null;
  const uri = typeof ui?.resourceUri === 'string' ? ui.resourceUri : legacy;
  const visibility = Array.isArray(ui?.visibility)
    ? [...new Set(ui.visibility.filter((/** @type {unknown} */ v) => v === 'model' || v === 'app'))]
    : ['model', 'app'];
  return Object.freeze({ resourceUri: uri !== null && uri.startsWith('ui://') ? uri : null, visibility: Object.freeze(visibility) });
}

/** Whether the model may see `tool` (no `_meta.ui.visibility`, or one that includes "model"). @param {any} tool */
const forModel = (tool) => uiOf(tool)?.visibility.includes('model') ?? true;
/** Whether its app may call `tool`. @param {any} tool */
const forApp = (tool) => uiOf(tool)?.visibility.includes('app') ?? true;

/** The resource's `_meta.ui` (ext-apps 2.0 `McpUiResourceMeta`), known keys of the right types only. @param {any} ui */
function resourceMetaOf(ui) {
  /** @type {Record<string, unknown>} */
  const meta = {};
  if (!ui || typeof ui !== 'object') return Object.freeze(meta);
  const strings = (/** @type {unknown} */ v) => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : null);
  if (ui.csp && typeof ui.csp === 'object') {
    /** @type {Record<string, string[]>} */
    const csp = {};
    for (const key of ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains']) {
      const list = strings(ui.csp[key]);
      if (list) csp[key] = list;
    }
    meta.csp = csp;
  }
  if (ui.permissions && typeof ui.permissions === 'object') {
    /** @type {Record<string, {}>} */
    const permissions = {};
    for (const key of ['camera', 'microphone', 'geolocation', 'clipboardWrite']) {
      if (ui.permissions[key] && typeof ui.permissions[key] === 'object') permissions[key] = {};
    }
    meta.permissions = permissions;
  }
  if (typeof ui.domain === 'string') meta.domain = ui.domain;
  if (typeof ui.prefersBorder === 'boolean') meta.prefersBorder = ui.prefersBorder;
  return frozenCopy(meta);
}

/** UTF-8 bytes of `text`. @param {string} text */
const utf8Bytes = (text) => new TextEncoder().encode(text).length;

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
    /** @type {{ connection: unknown, reads: Map<string, Promise<any>> }} ui:// reads of the current connection */
    this.resources = { connection: null, reads: new Map() };
    /** @type {McpServerStatus} */
    this.status = {
      name: entry.name, url: entry.url, status: 'connecting', reason: null, message: null, protocolVersion: null, tools: [], appTools: [], skipped: [],
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
  /** @type {Map<string, Readonly<McpProgress>>} toolCallId -> the latest progress of that running call */
  #progress = new Map();
  /** @type {Readonly<Record<string, Readonly<McpProgress>>>} */
  #progressSnapshot = Object.freeze({});
  /** @type {Set<(progress: Readonly<Record<string, Readonly<McpProgress>>>) => void>} */
  #progressListeners = new Set();
  /** @type {Map<string, any>} toolCallId -> raw CallToolResult (deep-frozen), least recently used first */
  #results = new Map();

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

  /** The progress of every running call by toolCallId (frozen; a new object after each change). */
  progress() { return this.#progressSnapshot; }

  /** @param {(progress: Readonly<Record<string, Readonly<McpProgress>>>) => void} listener @returns {() => void} */
  subscribeProgress(listener) {
    this.#progressListeners.add(listener);
    return () => { this.#progressListeners.delete(listener); };
  }

  /**
   * Sets (an update) or drops (null) the progress of one call and tells the listeners.
   * @param {string} callId
   * @param {McpProgress | null} update
   */
  #setProgress(callId, update) {
    if (update === null) { if (!this.#progress.delete(callId)) return; } else this.#progress.set(callId, Object.freeze({ ...update }));
    this.#progressSnapshot = Object.freeze(Object.fromEntries(this.#progress));
    const snapshot = this.#progressSnapshot;
    for (const listener of [...this.#progressListeners]) {
      try { listener(snapshot); } catch (error) { console.error('@patchbridge/agent: an MCP progress listener threw', error); }
    }
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
    for (const [name, { server, tool }] of this.#byName) if (forModel(tool)) tools.push(this.#definition(name, server, tool));
    return tools;
  }

  /**
   * The definition an app's own call of `toolName` on `serverName` runs with (./app-call.js): the same one the
   * model would get, for a tool the server lists, the page's allow/deny-list lets through and whose visibility
   * includes "app". AGENT_INVALID_INPUT otherwise.
   * @param {string} serverName
   * @param {string} toolName the server's own tool name
   */
  appDefinition(serverName, toolName) {
    const { AgentError } = this.#options;
    const server = typeof serverName === 'string' ? this.#servers.get(serverName) : undefined;
    if (!server) throw new AgentError('AGENT_INVALID_INPUT', `callToolFromApp: no MCP server named "${String(serverName)}"`);
    const tool = server.listed.find((t) => t.name === toolName);
    if (!tool) {
      throw new AgentError('AGENT_INVALID_INPUT', `callToolFromApp: MCP server "${serverName}" has no tool "${String(toolName)}" the page allows`,
        { details: { server: serverName, tool: String(toolName), reason: 'unknown-tool' } });
    }
    if (!forApp(tool)) {
      throw new AgentError('AGENT_INVALID_INPUT', `callToolFromApp: the tool "${toolName}" of MCP server "${serverName}" is not callable by apps (visibility)`,
        { details: { server: serverName, tool: toolName, reason: 'not-for-app' } });
    }
    const name = mcpToolName(serverName, toolName);
    return { definition: this.#definition(name, server, tool), name, readOnly: server.entry.readOnly.has(toolName) };
  }

  /**
   * The raw CallToolResult of a call of this page session (null when unknown or dropped).
   * @param {string} callId
   */
  callResult(callId) {
    if (!this.#results.has(callId)) return null;
    const result = this.#results.get(callId);
    this.#results.delete(callId);
    this.#results.set(callId, result);
    return result;
  }

  /** @param {string} callId @param {any} raw */
  #keepResult(callId, raw) {
    const kept = frozenCopy({
      content: Array.isArray(raw?.content) ? raw.content : [],
      ...(raw?.structuredContent !== undefined ? { structuredContent: raw.structuredContent } : {}),
      ...(raw?._meta !== undefined ? { _meta: raw._meta } : {}),
      ...(typeof raw?.isError === 'boolean' ? { isError: raw.isError } : {}),
    });
    this.#results.delete(callId);
    this.#results.set(callId, kept);
    while (this.#results.size > MCP_CALL_RESULTS_KEPT) this.#results.delete(/** @type {string} */ (this.#results.keys().next().value));
  }

  /**
   * Reads a `ui://` resource of a server (`resources/read`): `{ uri, mimeType, text, meta }`, at most
   * MCP_RESOURCE_MAX_BYTES of text, cached per server and URI for the server's current connection. A caller's
   * `signal` ends its own wait only (a read other callers share goes on).
   * @param {string} serverName
   * @param {string} uri
   * @param {{ signal?: AbortSignal }} [options]
   */
  async readResource(serverName, uri, options = {}) {
    const { AgentError } = this.#options;
    const server = typeof serverName === 'string' ? this.#servers.get(serverName) : undefined;
    if (!server) throw new AgentError('AGENT_INVALID_INPUT', `readMcpResource: no MCP server named "${String(serverName)}"`);
    if (typeof uri !== 'string' || !uri.startsWith('ui://')) {
      throw new AgentError('AGENT_INVALID_INPUT', 'readMcpResource reads ui:// resources only', { details: { server: serverName, uri: String(uri) } });
    }
    const signal = options?.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new AgentError('AGENT_INVALID_INPUT', 'readMcpResource: signal must be an AbortSignal');
    /** @param {string} reason @param {string} message @param {unknown} [cause] */
    const failed = (reason, message, cause) => new AgentError('AGENT_MCP_RESOURCE_FAILED', `MCP server "${serverName}", resource ${uri}: ${message}`,
      { details: { server: serverName, uri, reason }, cause });
    if (signal?.aborted) throw failed('aborted', 'the read was aborted');
    if (!server.connection && server.pending) await Promise.race([server.pending, delay(LISTING_WAIT_MS)]);
    const connection = server.connection;
    if (!connection || this.#closed) throw failed('not-connected', `the server is not connected (${server.status.message ?? server.status.status})`);
    if (server.resources.connection !== connection) server.resources = { connection, reads: new Map() };
    const { reads } = server.resources;
    let read = reads.get(uri);
    if (!read) {
      read = this.#read(connection, serverName, uri, failed);
      reads.set(uri, read);
      read.catch(() => { if (reads.get(uri) === read) reads.delete(uri); });
    }
    if (!signal) return read;
    /** @type {() => void} */
    let onAbort = () => {};
    const aborted = new Promise((_, reject) => { onAbort = () => reject(failed('aborted', 'the read was aborted')); signal.addEventListener('abort', onAbort, { once: true }); });
    try {
      return await Promise.race([read, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * @param {NonNullable<Server['connection']>} connection
   * @param {string} serverName
   * @param {string} uri
   * @param {(reason: string, message: string, cause?: unknown) => Error} failed
   */
  async #read(connection, serverName, uri, failed) {
    const { AgentError } = this.#options;
    let answer;
    try {
      answer = await connection.readResource(uri);
    } catch (error) {
      const failure = /** @type {{ failure?: { reason: string, message: string } }} */ (error).failure ?? { reason: 'protocol', message: String(error) };
      throw failed(failure.reason, failure.message, error);
    }
    const contents = Array.isArray(answer?.contents) ? answer.contents : [];
    /** @type {any} */
    const content = contents.find((/** @type {any} */ c) => c?.uri === uri) ?? contents[0];
    const tooLarge = (/** @type {number} */ bytes) => new AgentError('AGENT_MCP_RESOURCE_TOO_LARGE',
      `MCP server "${serverName}", resource ${uri}: ${bytes} bytes, over ${MCP_RESOURCE_MAX_BYTES}`,
      { details: { server: serverName, uri, bytes, limit: MCP_RESOURCE_MAX_BYTES } });
    let text;
    if (typeof content?.text === 'string') {
      text = content.text;
      // A UTF-16 unit is at least one UTF-8 byte: a text this long is over the bound without counting.
      if (text.length > MCP_RESOURCE_MAX_BYTES) throw tooLarge(utf8Bytes(text));
    } else if (typeof content?.blob === 'string') {
      const bytes = Math.floor((content.blob.replace(/=+$/, '').length * 3) / 4);
      if (bytes > MCP_RESOURCE_MAX_BYTES) throw tooLarge(bytes);
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0)));
      } catch (error) {
        throw failed('protocol', 'its blob is not base64 of UTF-8 text', error);
      }
    } else {
      throw failed('empty', 'the server sent no text content');
    }
    const bytes = utf8Bytes(text);
    if (bytes > MCP_RESOURCE_MAX_BYTES) throw tooLarge(bytes);
    return Object.freeze({
      uri: typeof content.uri === 'string' ? content.uri : uri,
      mimeType: typeof content.mimeType === 'string' ? content.mimeType : null,
      text,
      meta: resourceMetaOf(content._meta?.ui),
    });
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
      ui: uiOf(tool),
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
    status.appTools = status.appTools.filter((t) => t !== found.tool.name);
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
    this.#results.clear();
    for (const callId of [...this.#progress.keys()]) this.#setProgress(callId, null);
    this.#progressListeners.clear();
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
      server.status = {
        ...server.status, skipped: [],
        tools: server.listed.filter(forModel).map((tool) => tool.name),
        appTools: server.listed.filter((tool) => !forModel(tool)).map((tool) => tool.name),
      };
    }
    this.#publish();
    try { this.#options.onTools?.(); } catch { /* the controller reports its own failures */ }
  }

  #publish() {
    this.#snapshot = Object.freeze([...this.#servers.values()].map((s) => Object.freeze({
      ...s.status, tools: Object.freeze([...s.status.tools]), appTools: Object.freeze([...s.status.appTools]), skipped: Object.freeze(s.status.skipped.map((x) => Object.freeze({ ...x }))),
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
        let running = true;
        /** @param {McpProgress} update */
        const onProgress = (update) => { if (running && !signal.aborted && !this.#closed) this.#setProgress(callId, update); };
        // Stop and the deadline drop the progress at once, before the SDK's rejection arrives.
        const dropProgress = () => { running = false; this.#setProgress(callId, null); };
        signal.addEventListener('abort', dropProgress, { once: true });
        try {
          const onResult = (/** @type {any} */ raw) => { if (!signal.aborted && !this.#closed) this.#keepResult(callId, raw); };
          return await connection.call(tool.name, args, { callId, signal, maxCharacters: maxCharacters(), elicit, onProgress, onResult });
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
        } finally {
          signal.removeEventListener('abort', dropProgress);
          dropProgress();
        }
      },
    };
  }
}
