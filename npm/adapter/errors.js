// Errors across the boundary, JavaScript side: the package's `AgentError` for a core error (details arrive as JSON
// text), and any thrown value described for Rust without throwing again (bindings/error.rs).
import { AgentError } from '../errors.js';
import { parseFrozen } from './freezing.js';

/** @typedef {import('../errors.js').AgentErrorCode} AgentErrorCode */
/** @typedef {import('../errors.js').LimitName} LimitName */

/**
 * Builds the error class instance for the Rust side (details arrive as JSON text).
 * @param {string} code one of the core's codes
 * @param {string} message
 * @param {string | null | undefined} limit
 * @param {string | null | undefined} detailsJson
 * @param {unknown} cause
 */
export function makeAgentError(code, message, limit, detailsJson, cause) {
  /** @type {{ limit?: LimitName; details?: unknown; cause?: unknown }} */
  const options = {};
  if (limit !== undefined && limit !== null) options.limit = /** @type {LimitName} */ (limit);
  if (detailsJson !== undefined && detailsJson !== null) options.details = parseFrozen(detailsJson);
  if (cause !== undefined && cause !== null) options.cause = cause;
  return new AgentError(/** @type {AgentErrorCode} */ (code), message, options);
}

/**
 * Describes a thrown value for Rust: `[code|null, message, limit|null, detailsJson|null]`.
 * @param {unknown} error
 * @returns {[string | null, string, string | null, string | null]}
 */
export function describeError(error) {
  // Any thrown value reaches here, a hostile one too (a Proxy whose traps throw, an Error whose `message` getter
  // throws): reading it must not throw in turn, or the exception would unwind through the wasm that asked.
  try {
    if (error instanceof AgentError) {
      /** @type {string | null} */
      let details = null;
      try { details = error.details == null ? null : JSON.stringify(error.details); } catch { details = null; }
      const limit = error.limit ?? null;
      return [String(error.code), String(error.message), limit === null ? null : String(limit), details];
    }
    if (error instanceof Error) return [null, `${String(error.name)}: ${String(error.message)}`, null, null];
    return [null, String(error), null, null];
  } catch {
    return [null, 'a thrown value that cannot be read (reading it threw)', null, null];
  }
}
