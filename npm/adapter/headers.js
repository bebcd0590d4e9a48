// The host's `headers` option for each relay request: an object, a `Headers`, or a (possibly async) function
// returning one. A provider that throws or rejects rejects the request (AGENT_RELAY_ERROR in Rust).
import { AgentError } from '../errors.js';

/** @typedef {Record<string, string> | Headers} HeaderValues */

/**
 * The host's `headers` option for one request: an object, or a (possibly async) function returning one.
 * @param {HeaderValues | (() => HeaderValues | Promise<HeaderValues>) | null | undefined} provider
 * @returns {Promise<Record<string, string>>}
 */
export async function resolveHeaders(provider) {
  if (provider == null) return {};
  const value = typeof provider === 'function' ? await provider() : provider;
  if (value == null) return {};
  if (typeof value !== 'object') throw new AgentError('AGENT_INVALID_OPTIONS', 'headers provider must return an object of header values');
  return value instanceof Headers ? Object.fromEntries(value.entries()) : { ...value };
}
