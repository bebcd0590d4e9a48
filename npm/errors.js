// The one error class of @patchbridge/agent. Every failure the runtime reports (construction errors, rejected
// `result` promises, thrown controller calls) is an AgentError whose `code` is one of the stable strings of
// generated/error-codes.js, which is generated from the closed set the Rust core owns (controller-wasm/src/core).

/** @typedef {import('./errors.js').AgentErrorCode} AgentErrorCode */
/** @typedef {import('./errors.js').LimitName} LimitName */

export * from './generated/error-codes.js';

/**
 * A runtime failure with a stable `code`. `limit` names the exceeded limit for AGENT_LIMIT_EXCEEDED /
 * AGENT_INVALID_LIMITS; `details` is frozen extra data (for example the relay's status and error code);
 * `cause` is the original thrown value when a host callback (tool, hook, interceptor, model) failed.
 */
export class AgentError extends Error {
  /**
   * @param {AgentErrorCode} code
   * @param {string} message
   * @param {{ limit?: LimitName | null; details?: unknown; cause?: unknown }} [options]
   */
  constructor(code, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentError';
    this.code = code;
    this.limit = options.limit ?? null;
    this.details = options.details ?? null;
  }
}

/**
 * True for an AgentError, optionally with the given code.
 * @param {unknown} value
 * @param {AgentErrorCode} [code]
 * @returns {value is AgentError}
 */
export function isAgentError(value, code) {
  return value instanceof AgentError && (code === undefined || value.code === code);
}
