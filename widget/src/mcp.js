// The element's MCP servers (`mcpServers` property): the client chunk (npm/mcp/, the official SDK bundled in)
// is imported only when a page sets servers, so the widget's first load is unchanged without them. Each
// server's status is shown in the dock (connecting, ready with its tool count, failed and why), and a pending
// confirmation of an MCP tool names its server and the hints the server declares, which are never trusted.
import { AgentError } from '../../npm/errors.js';
import { h } from './dom.js';

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
 */
export async function applyMcpServers(controller, servers, limits, defaultMaxCharacters) {
  if (typeof controller.setMcpServers === 'function') { controller.setMcpServers(servers); return; }
  if (servers.length === 0) return;
  const mcp = await loadMcp();
  mcp.withMcpServers(controller, servers, { load: async () => mcp, AgentError, limits, defaultMaxCharacters });
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

/** The dock's list of servers and their status. */
export class McpStatusList {
  el = h('ul', { className: 'mcp-servers', part: 'mcp-servers', role: 'status', hidden: true });

  /**
   * @param {readonly { name: string, status: string, reason: string | null, message: string | null, tools: readonly string[] }[]} servers
   * @param {import('./model.js').Translate} t
   */
  render(servers, t) {
    this.el.hidden = servers.length === 0;
    this.el.replaceChildren(...servers.map((server) => {
      const text = server.status === 'ready' ? t('mcpReady', server.tools.length)
        : server.status === 'failed' ? t('mcpFailed', server.message ?? server.reason ?? '')
          : t('mcpConnecting');
      return h('li', { 'data-server': server.name, 'data-status': server.status }, h('strong', {}, server.name), ` ${text}`);
    }));
  }
}
