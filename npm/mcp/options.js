//! The `mcpServers` option, checked as every other option is: an unknown key, a duplicate or malformed name, a
//! URL that is not http(s), a wrong type is `AGENT_INVALID_OPTIONS` naming the entry. No MCP code is loaded for
//! this (the client chunk is imported only once servers are set and valid).
//!
//! An entry: `{ name, url, headers?, tools?, readOnly? }`
//! - `name`: `[A-Za-z0-9][A-Za-z0-9-]{0,23}` (it is part of the model-visible tool names, ./names.js).
//! - `url`: the server's Streamable HTTP endpoint, http: or https: (relative to the page where there is one).
//! - `headers`: an object of header values, or a (possibly async) function returning one, called per request.
//! - `tools`: which of the server's tools the agent gets: an array (an allow-list, the same as `{ allow }`) or
//!   `{ deny: [...] }`. Absent: all of them.
//! - `readOnly`: the server's tool names the page vouches for: they run without confirmation. Every other tool
//!   asks first, whatever the server's `readOnlyHint` says.
//! - `auth`: for a server that answers 401 with the MCP authorization flow, the page's OAuth client provider
//!   (the SDK's `OAuthClientProvider`: `redirectUrl`, `clientMetadata`, `clientInformation()`, `tokens()`,
//!   `saveTokens()`, `redirectToAuthorization(url)`, `saveCodeVerifier()`, `codeVerifier()`, optionally
//!   `saveClientInformation()` for dynamic client registration); the code that comes back to the redirect URL
//!   is handed to `controller.finishMcpAuth(name, code)`.
import { SERVER_NAME } from './names.js';

const KEYS = ['name', 'url', 'headers', 'tools', 'readOnly', 'auth'];

/**
 * @typedef {Record<string, string> | Headers} McpHeaderValues
 * @typedef {{ name: string, url: string, headers: McpHeaderValues | (() => McpHeaderValues | Promise<McpHeaderValues>) | null,
 *   allow: ReadonlySet<string> | null, deny: ReadonlySet<string>, readOnly: ReadonlySet<string>, auth: object | null }} McpServerEntry
 */

/**
 * The class errors are made of: the page's AgentError, handed in (this file is also bundled into the client
 * chunk, which must not bring a second copy of the class).
 * @typedef {new (code: any, message: string, options?: { details?: unknown, cause?: unknown }) => Error} ErrorClass
 */

/**
 * An array of strings (a list of tool names), or throws naming `what`.
 * @param {unknown} value
 * @param {string} what
 * @param {(message: string) => Error} invalid
 */
function names(value, what, invalid) {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item !== '')) {
    throw invalid(`${what} must be an array of tool names (non-empty strings)`);
  }
  return new Set(/** @type {string[]} */ (value));
}

/**
 * The checked entries of `mcpServers` (frozen), or throws AGENT_INVALID_OPTIONS naming the entry.
 * @param {unknown} servers
 * @param {ErrorClass} AgentError the package's error class
 * @param {string} [what] how the option is called in messages
 * @returns {readonly McpServerEntry[]}
 */
export function checkMcpServers(servers, AgentError, what = 'options.mcpServers') {
  /** @param {string} message */
  const invalid = (message) => new AgentError('AGENT_INVALID_OPTIONS', message);
  if (!Array.isArray(servers)) throw invalid(`${what} must be an array of { name, url, headers?, tools?, readOnly? }`);
  const seen = new Set();
  return Object.freeze(servers.map((raw, index) => {
    let label = `${what}[${index}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(`${label} must be an object { name, url, headers?, tools?, readOnly? }`);
    const entry = /** @type {Record<string, unknown>} */ (raw);
    const name = entry.name;
    if (typeof name !== 'string' || !SERVER_NAME.test(name)) {
      throw invalid(`${label}.name must be 1 to 24 letters, digits or "-" (starting with a letter or digit): it is part of the tool names the model sees`);
    }
    label = `${label} ("${name}")`;
    for (const key of Object.keys(entry)) {
      if (!KEYS.includes(key)) throw invalid(`${label}: unknown key "${key}" (expected ${KEYS.join(', ')})`);
    }
    if (seen.has(name)) throw invalid(`${label}: the name "${name}" is used by an earlier entry`);
    seen.add(name);
    const rawUrl = entry.url;
    let url;
    try {
      if (typeof rawUrl !== 'string' && !(rawUrl instanceof URL)) throw new TypeError('not a string');
      url = new URL(rawUrl, /** @type {{ location?: { href?: string } }} */ (globalThis).location?.href);
    } catch {
      throw invalid(`${label}.url must be an http(s) URL of the server's MCP endpoint`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`${label}.url must be http: or https:, not ${url.protocol}`);
    const headers = entry.headers ?? null;
    if (headers !== null) {
      if (typeof headers === 'object' && !(headers instanceof Headers)) {
        for (const [key, value] of Object.entries(headers)) {
          if (typeof value !== 'string') throw invalid(`${label}.headers["${key}"] must be a string`);
        }
      } else if (typeof headers !== 'function' && !(headers instanceof Headers)) {
        throw invalid(`${label}.headers must be an object of header values or a function returning one (called per request)`);
      }
    }
    /** @type {ReadonlySet<string> | null} */
    let allow = null;
    /** @type {ReadonlySet<string>} */
    let deny = new Set();
    const tools = entry.tools;
    if (Array.isArray(tools)) {
      allow = names(tools, `${label}.tools`, invalid);
    } else if (tools !== undefined) {
      const keys = tools !== null && typeof tools === 'object' ? Object.keys(tools) : [];
      if (keys.length !== 1 || (keys[0] !== 'allow' && keys[0] !== 'deny')) {
        throw invalid(`${label}.tools must be an array of tool names (an allow-list), { allow: [...] } or { deny: [...] }`);
      }
      const list = names(/** @type {Record<string, unknown>} */ (tools)[keys[0]], `${label}.tools.${keys[0]}`, invalid);
      if (keys[0] === 'allow') allow = list; else deny = list;
    }
    const readOnly = entry.readOnly === undefined ? new Set() : names(entry.readOnly, `${label}.readOnly`, invalid);
    const auth = entry.auth ?? null;
    if (auth !== null) {
      const provider = /** @type {Record<string, unknown>} */ (auth);
      const missing = typeof auth !== 'object' ? ['an object']
        : ['tokens', 'saveTokens', 'redirectToAuthorization', 'saveCodeVerifier', 'codeVerifier', 'clientInformation'].filter((m) => typeof provider[m] !== 'function');
      if (missing.length) throw invalid(`${label}.auth must be an OAuth client provider (missing ${missing.join(', ')})`);
    }
    return Object.freeze({
      name, url: url.href, headers: /** @type {McpServerEntry['headers']} */ (headers), allow, deny, readOnly,
      auth: /** @type {object | null} */ (auth),
    });
  }));
}
