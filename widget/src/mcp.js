// The element's MCP servers (`mcpServers` property): the client chunk (npm/mcp/, the official SDK bundled in)
// is imported only when a page sets servers, so the widget's first load is unchanged without them. Each
// server's status is shown in the dock (connecting, ready with its tool count, failed and why), and a pending
// confirmation of an MCP tool names its server and the hints the server declares, which are never trusted.
import { AgentError } from '../../npm/errors.js';
import { h } from './dom.js';
import { loadRuntime } from './runtime.js';

/** @type {Promise<any> | null} */
let chunk = null;

/** The MCP client chunk, imported at most once (retried after a failed load). */
export function loadMcp() {
  if (!chunk) {
    // @ts-ignore: replaced at build time by a string literal.
    const url = globalThis.PATCHBRIDGE_MCP_URL ?? new URL(__PB_MCP_PATH__, import.meta.url);
    chunk = import(/* @vite-ignore */ String(url));
    chunk.catch(() => { chunk = null; });
  }
  return chunk;
}

/**
 * Gives `controller` the element's servers: the first time through the chunk's `withMcpServers`, later through
 * `setMcpServers`. Resolves once the controller has them (the first messages wait for this, bounded by the
 * listing's own wait); rejects with the option's AGENT_INVALID_OPTIONS or the chunk's load failure.
 * @param {any} controller
 * @param {unknown[]} servers
 * @param {{ maxToolResultCharacters?: number } | undefined} limits
 * @param {number} defaultMaxCharacters
 * @param {any} [runtime] the element's runtimeOptions (an MCP App's own tool calls run under them)
 */
export async function applyMcpServers(controller, servers, limits, defaultMaxCharacters, runtime) {
  if (typeof controller.setMcpServers === 'function') { controller.setMcpServers(servers); return; }
  if (servers.length === 0) return;
  const [mcp, glue] = await Promise.all([loadMcp(), loadRuntime()]);
  mcp.withMcpServers(controller, servers, { load: async () => mcp, AgentError, limits, defaultMaxCharacters, Runtime: glue.DefaultAgentRuntime, defaultLimits: glue.defaultLimits?.(), runtime });
}

/**
 * The description a confirmation shows for an MCP tool: the server, the tool, the server's description and
 * its declared hints (shown as the server's claims); `undefined` for other tools.
 * @param {any} controller
 * @param {string} name
 * @param {string | undefined} description
 * @param {import('./model.js').Translate} t
 */
export function mcpConfirmationText(controller, name, description, t) {
  const info = typeof controller?.describeMcpTool === 'function' ? controller.describeMcpTool(name) : null;
  if (!info) return undefined;
  const hints = [];
  if (info.annotations.readOnlyHint === true) hints.push(t('mcpHintReadOnly'));
  if (info.annotations.destructiveHint === true) hints.push(t('mcpHintDestructive'));
  return [t('mcpToolOf', info.tool, info.server), description, hints.length ? t('mcpHints', hints.join(', ')) : ''].filter(Boolean).join(' ');
}

/** The dock's list of servers and their status, with "Connect <server>" for one waiting for sign-in. */
export class McpStatusList {
  el = h('ul', { className: 'mcp-servers', part: 'mcp-servers', role: 'status', hidden: true });

  /**
   * @param {readonly { name: string, status: string, reason: string | null, message: string | null, tools: readonly string[] }[]} servers
   * @param {import('./model.js').Translate} t
   * @param {(name: string) => (() => void) | null} [connect] the way to sign in to a server, when it has one
   */
  render(servers, t, connect) {
    this.el.hidden = servers.length === 0;
    this.el.replaceChildren(...servers.map((server) => {
      const text = server.status === 'ready' ? t('mcpReady', server.tools.length)
        : server.status === 'failed' ? t('mcpFailed', server.message ?? server.reason ?? '')
          : t('mcpConnecting');
      const open = server.status === 'failed' && server.reason === 'unauthorized' ? connect?.(server.name) : null;
      const button = open ? h('button', { type: 'button', part: 'mcp-connect', onclick: open }, t('mcpConnect', server.name)) : null;
      return h('li', { 'data-server': server.name, 'data-status': server.status }, h('strong', {}, server.name), ` ${text}`, button ? ' ' : null, button);
    }));
  }
}

/** The message a page's OAuth callback posts to the element's window: `{ type, code, state }`. */
export const AUTH_MESSAGE = 'patchbridge-mcp-auth';

/**
 * The element's own OAuth client for an entry with `auth: { popup: callbackUrl }`: tokens, the PKCE verifier
 * and the registered client in sessionStorage per server (never in the conversation); the authorization URL the
 * SDK wants opened is kept until the person presses "Connect <server>" (a popup needs their gesture). The
 * callback page posts `{ type: AUTH_MESSAGE, code, state }` to its opener.
 * @param {string} name
 * @param {string} callback
 * @param {() => void} onAsk the server needs the person to connect it
 */
export function popupAuth(name, callback, onAsk) {
  const redirect = new URL(callback, globalThis.location?.href).href;
  const key = (/** @type {string} */ part) => `patchbridge-mcp:${name}:${part}`;
  const read = (/** @type {string} */ part) => {
    try { const text = globalThis.sessionStorage?.getItem(key(part)); return text ? JSON.parse(text) : undefined; } catch { return undefined; }
  };
  const write = (/** @type {string} */ part, /** @type {unknown} */ value) => {
    try { globalThis.sessionStorage?.setItem(key(part), JSON.stringify(value)); } catch { /* storage refused: this tab signs in again */ }
  };
  const state = `${name}:${globalThis.crypto?.randomUUID?.() ?? Math.random().toString(36).slice(2)}`;
  const provider = {
    /** @type {URL | null} the authorization URL waiting for the person */
    pending: /** @type {URL | null} */ (null),
    state: () => state,
    redirectUrl: redirect,
    clientMetadata: { redirect_uris: [redirect], client_name: 'PatchBridge Agent', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    clientInformation: () => read('client'),
    saveClientInformation: (/** @type {unknown} */ info) => write('client', info),
    tokens: () => read('tokens'),
    saveTokens: (/** @type {unknown} */ tokens) => write('tokens', tokens),
    codeVerifier: () => read('verifier') ?? '',
    saveCodeVerifier: (/** @type {string} */ verifier) => write('verifier', verifier),
    redirectToAuthorization: (/** @type {URL} */ url) => { provider.pending = url; onAsk(); },
  };
  return provider;
}

/**
 * The element's entries with `auth: { popup }` given their OAuth client (other entries as they are), and the
 * clients by server name.
 * @param {unknown[]} servers
 * @param {() => void} onAsk
 */
export function withPopupAuth(servers, onAsk) {
  /** @type {Map<string, ReturnType<typeof popupAuth>>} */
  const clients = new Map();
  const entries = servers.map((entry) => {
    const auth = /** @type {any} */ (entry)?.auth;
    if (!auth || typeof auth !== 'object' || typeof auth.popup !== 'string' || Object.keys(auth).length !== 1) return entry;
    const name = String(/** @type {any} */ (entry).name);
    const client = popupAuth(name, auth.popup, onAsk);
    clients.set(name, client);
    return { .../** @type {object} */ (entry), auth: client };
  });
  return { entries, clients };
}
