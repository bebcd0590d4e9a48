// The one error class of @patchbridge/agent. Every failure the runtime reports (construction errors, rejected
// `result` promises, thrown controller calls) is an AgentError whose `code` is one of the stable strings below;
// the Rust core owns the closed set (controller-wasm/src/core), this file only names it for JavaScript.

/** @typedef {import('./errors.js').AgentErrorCode} AgentErrorCode */
/** @typedef {import('./errors.js').LimitName} LimitName */

/** Stable error codes (string constants, safe to compare and to log). */
export const AGENT_EXECUTION_TIMEOUT = 'AGENT_EXECUTION_TIMEOUT';
export const AGENT_LIMIT_EXCEEDED = 'AGENT_LIMIT_EXCEEDED';
export const AGENT_INVALID_LIMITS = 'AGENT_INVALID_LIMITS';
export const AGENT_INVALID_OPTIONS = 'AGENT_INVALID_OPTIONS';
export const AGENT_PROTOCOL_ERROR = 'AGENT_PROTOCOL_ERROR';
export const AGENT_TOOL_PRECHECK_FAILED = 'AGENT_TOOL_PRECHECK_FAILED';
export const AGENT_INVALID_TOOL_RESULT = 'AGENT_INVALID_TOOL_RESULT';
export const AGENT_TOOL_FAILED = 'AGENT_TOOL_FAILED';
export const AGENT_MODEL_FAILED = 'AGENT_MODEL_FAILED';
export const AGENT_INTERCEPTOR_FAILED = 'AGENT_INTERCEPTOR_FAILED';
export const AGENT_NEXT_CALLED_TWICE = 'AGENT_NEXT_CALLED_TWICE';
export const AGENT_HOOK_FAILED = 'AGENT_HOOK_FAILED';
export const AGENT_NO_PENDING_INTERRUPT = 'AGENT_NO_PENDING_INTERRUPT';
export const AGENT_INTERRUPT_MISMATCH = 'AGENT_INTERRUPT_MISMATCH';
export const AGENT_INTERRUPT_ALREADY_RESOLVED = 'AGENT_INTERRUPT_ALREADY_RESOLVED';
export const AGENT_BUSY = 'AGENT_BUSY';
export const AGENT_DESTROYED = 'AGENT_DESTROYED';
export const AGENT_REVISION_CONFLICT = 'AGENT_REVISION_CONFLICT';
export const AGENT_CONVERSATION_CORRUPT = 'AGENT_CONVERSATION_CORRUPT';
export const AGENT_RELAY_ERROR = 'AGENT_RELAY_ERROR';
export const AGENT_SPENDING_LIMIT_REACHED = 'AGENT_SPENDING_LIMIT_REACHED';
export const AGENT_INVALID_TOOL = 'AGENT_INVALID_TOOL';
export const AGENT_INVALID_INPUT = 'AGENT_INVALID_INPUT';
export const AGENT_RUNTIME_LOAD_FAILED = 'AGENT_RUNTIME_LOAD_FAILED';

/** All codes, keyed by themselves: `ErrorCodes.AGENT_BUSY === 'AGENT_BUSY'`. */
export const ErrorCodes = Object.freeze({
  AGENT_EXECUTION_TIMEOUT, AGENT_LIMIT_EXCEEDED, AGENT_INVALID_LIMITS, AGENT_INVALID_OPTIONS,
  AGENT_PROTOCOL_ERROR, AGENT_TOOL_PRECHECK_FAILED, AGENT_INVALID_TOOL_RESULT, AGENT_TOOL_FAILED,
  AGENT_MODEL_FAILED, AGENT_INTERCEPTOR_FAILED, AGENT_NEXT_CALLED_TWICE, AGENT_HOOK_FAILED,
  AGENT_NO_PENDING_INTERRUPT, AGENT_INTERRUPT_MISMATCH, AGENT_INTERRUPT_ALREADY_RESOLVED, AGENT_BUSY,
  AGENT_DESTROYED, AGENT_REVISION_CONFLICT, AGENT_CONVERSATION_CORRUPT, AGENT_RELAY_ERROR,
  AGENT_SPENDING_LIMIT_REACHED, AGENT_INVALID_TOOL, AGENT_INVALID_INPUT, AGENT_RUNTIME_LOAD_FAILED,
});

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
