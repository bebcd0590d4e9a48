// Declarations of `@patchbridge/agent/errors`: the error class and the relay's error details. The codes (the
// `AgentErrorCode` union, one constant per code and `ErrorCodes`) and `LimitName` are generated from the Rust core
// into generated/ (controller-wasm/src/typescript.rs).

import type { AgentErrorCode, LimitName, SpendingLimit } from './generated/types.js';

export type { AgentErrorCode, LimitName, SpendingLimit } from './generated/types.js';
export * from './generated/error-codes.js';

/**
 * `details` of every relay failure (AGENT_RELAY_ERROR, and the relay's AGENT_REVISION_CONFLICT /
 * AGENT_CONVERSATION_CORRUPT / AGENT_SPENDING_LIMIT_REACHED), the same shape whether the relay answered with an HTTP error or sent an `error`
 * event inside the model stream.
 */
export interface RelayErrorDetails {
  /** The relay's stable code (docs/protocol.md §4), e.g. 'UPSTREAM_RATE_LIMITED'; '' when an HTTP error body was not a relay error. */
  readonly relayCode: string;
  /** The HTTP status; present only for HTTP error answers (an in-stream error arrives on a 200 stream). */
  readonly status?: number;
  /** Present only when the relay said whether retrying may help (in-stream error events carry it). */
  readonly retryable?: boolean;
  /** Present only for AGENT_REVISION_CONFLICT: the stored revision. */
  readonly currentRevision?: number;
  /**
   * Present only for relayCode 'MODEL_STATE_MISMATCH': the message whose stored provider state the relay refused.
   * `controller.newConversation({ keepMessages: true })` continues from the messages without that state.
   */
  readonly messageId?: string;
  /** Present only for AGENT_SPENDING_LIMIT_REACHED: whole seconds until a model call may be admitted again. */
  readonly retryAfterSeconds?: number;
  /** Present only for AGENT_SPENDING_LIMIT_REACHED: the relay's limit that refused the call. */
  readonly limit?: SpendingLimit;
}

/** The one error class: every rejection and throw of the runtime is an AgentError with a stable `code`. */
export declare class AgentError extends Error {
  constructor(
    code: AgentErrorCode,
    message: string,
    options?: { limit?: LimitName | null; details?: unknown; cause?: unknown },
  );
  readonly name: 'AgentError';
  /** Stable string code. */
  readonly code: AgentErrorCode;
  /** The limit concerned, for AGENT_LIMIT_EXCEEDED and AGENT_INVALID_LIMITS; otherwise null. */
  readonly limit: LimitName | null;
  /** Frozen structured facts (offending call id, …) or null; for relay failures a {@link RelayErrorDetails}. */
  readonly details: unknown;
}

/** True when `value` is an AgentError (with `code`, when given). */
export declare function isAgentError(value: unknown, code?: AgentErrorCode): value is AgentError;
