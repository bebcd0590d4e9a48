//! The names MCP tools have in the registry, which are the names the model sees (docs/protocol.md, "MCP tool
//! names"): `mcp__<server>__<tool>`. They are provider-safe (`[A-Za-z0-9_-]{1,64}`, what OpenAI and Anthropic
//! accept, so the relay never renames them), unique across servers (a server name has no `_`, so the first `__`
//! after the prefix ends it) and apart from page tools (a page tool named `mcp__…` clashes and the MCP tool is
//! skipped, reported in the server's status). A tool name that is already provider-safe and short enough is kept
//! as it is, so a stored call names its server and tool after a reload by reading the name alone; any other tool
//! name is written `<sanitised prefix>_<8 hex digits of its FNV-1a hash>` and found again through the server's
//! listing (the server part always reads back).

/** Server names: what the model-visible prefix can hold without ambiguity. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,23}$/;
const PREFIX = 'mcp__';
const SEPARATOR = '__';
const MAX = 64;
const SAFE = /^[A-Za-z0-9_-]+$/;

/** FNV-1a (32 bits) of the UTF-16 units of `text`, as 8 hex digits: short, stable, no dependency. @param {string} text */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The registry name of `tool` on `server` (a name SERVER_NAME accepts).
 * @param {string} server
 * @param {string} tool
 */
export function mcpToolName(server, tool) {
  const head = `${PREFIX}${server}${SEPARATOR}`;
  if (SAFE.test(tool) && head.length + tool.length <= MAX) return head + tool;
  const suffix = `_${hash(tool)}`;
  const room = MAX - head.length - suffix.length;
  return head + tool.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, Math.max(0, room)) + suffix;
}

/**
 * The server and the tool part of a registry name, or null when it is no MCP name. `tool` is the server's own
 * tool name when the name kept it verbatim (the common case); for an encoded name it is the encoded part, which
 * only the server's listing maps back (`McpToolSource.describe`).
 * @param {string} name
 * @returns {{ server: string, tool: string } | null}
 */
export function parseMcpToolName(name) {
  if (typeof name !== 'string' || !name.startsWith(PREFIX)) return null;
  const end = name.indexOf(SEPARATOR, PREFIX.length);
  if (end < 0) return null;
  const server = name.slice(PREFIX.length, end);
  const tool = name.slice(end + SEPARATOR.length);
  if (!SERVER_NAME.test(server) || tool === '') return null;
  return { server, tool };
}
