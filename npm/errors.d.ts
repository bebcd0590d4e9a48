/** Stable error codes of @patchbridge/agent (compare `error.code` against these). */
export type AgentErrorCode =
  | 'AGENT_EXECUTION_TIMEOUT'
  | 'AGENT_LIMIT_EXCEEDED'
  | 'AGENT_INVALID_LIMITS'
  | 'AGENT_INVALID_OPTIONS'
  | 'AGENT_PROTOCOL_ERROR'
  | 'AGENT_TOOL_PRECHECK_FAILED'
  | 'AGENT_INVALID_TOOL_RESULT'
  | 'AGENT_TOOL_FAILED'
  | 'AGENT_MODEL_FAILED'
  | 'AGENT_INTERCEPTOR_FAILED'
  | 'AGENT_NEXT_CALLED_TWICE'
  | 'AGENT_HOOK_FAILED'
  | 'AGENT_NO_PENDING_INTERRUPT'
  | 'AGENT_INTERRUPT_MISMATCH'
  | 'AGENT_INTERRUPT_ALREADY_RESOLVED'
  | 'AGENT_BUSY'
  | 'AGENT_DESTROYED'
  | 'AGENT_REVISION_CONFLICT'
  | 'AGENT_CONVERSATION_CORRUPT'
  | 'AGENT_RELAY_ERROR'
  | 'AGENT_SPENDING_LIMIT_REACHED'
  | 'AGENT_INVALID_TOOL'
  | 'AGENT_INVALID_INPUT'
  | 'AGENT_RUNTIME_LOAD_FAILED';

/** The five limit names (`AgentError.limit` for AGENT_LIMIT_EXCEEDED / AGENT_INVALID_LIMITS). */
export type LimitName =
  | 'maxModelCalls'
  | 'maxToolCalls'
  | 'maxDurationMs'
  | 'maxModelOutputCharacters'
  | 'maxToolResultCharacters';

export declare const AGENT_EXECUTION_TIMEOUT: 'AGENT_EXECUTION_TIMEOUT';
export declare const AGENT_LIMIT_EXCEEDED: 'AGENT_LIMIT_EXCEEDED';
export declare const AGENT_INVALID_LIMITS: 'AGENT_INVALID_LIMITS';
export declare const AGENT_INVALID_OPTIONS: 'AGENT_INVALID_OPTIONS';
export declare const AGENT_PROTOCOL_ERROR: 'AGENT_PROTOCOL_ERROR';
export declare const AGENT_TOOL_PRECHECK_FAILED: 'AGENT_TOOL_PRECHECK_FAILED';
export declare const AGENT_INVALID_TOOL_RESULT: 'AGENT_INVALID_TOOL_RESULT';
export declare const AGENT_TOOL_FAILED: 'AGENT_TOOL_FAILED';
export declare const AGENT_MODEL_FAILED: 'AGENT_MODEL_FAILED';
export declare const AGENT_INTERCEPTOR_FAILED: 'AGENT_INTERCEPTOR_FAILED';
export declare const AGENT_NEXT_CALLED_TWICE: 'AGENT_NEXT_CALLED_TWICE';
export declare const AGENT_HOOK_FAILED: 'AGENT_HOOK_FAILED';
export declare const AGENT_NO_PENDING_INTERRUPT: 'AGENT_NO_PENDING_INTERRUPT';
export declare const AGENT_INTERRUPT_MISMATCH: 'AGENT_INTERRUPT_MISMATCH';
export declare const AGENT_INTERRUPT_ALREADY_RESOLVED: 'AGENT_INTERRUPT_ALREADY_RESOLVED';
export declare const AGENT_BUSY: 'AGENT_BUSY';
export declare const AGENT_DESTROYED: 'AGENT_DESTROYED';
export declare const AGENT_REVISION_CONFLICT: 'AGENT_REVISION_CONFLICT';
export declare const AGENT_CONVERSATION_CORRUPT: 'AGENT_CONVERSATION_CORRUPT';
export declare const AGENT_RELAY_ERROR: 'AGENT_RELAY_ERROR';
export declare const AGENT_SPENDING_LIMIT_REACHED: 'AGENT_SPENDING_LIMIT_REACHED';
export declare const AGENT_INVALID_TOOL: 'AGENT_INVALID_TOOL';
export declare const AGENT_INVALID_INPUT: 'AGENT_INVALID_INPUT';
/** `<patchbridge-agent>` could not load the WebAssembly runtime (the element reports it; the runtime never does). */
export declare const AGENT_RUNTIME_LOAD_FAILED: 'AGENT_RUNTIME_LOAD_FAILED';

/** Every code keyed by itself. */
export declare const ErrorCodes: Readonly<{ [K in AgentErrorCode]: K }>;

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

/** A relay spending limit (docs/protocol.md §4, `SPENDING_LIMIT_REACHED`). */
export interface SpendingLimit {
  /** 'calls' | 'inputTokens' | 'outputTokens' | 'concurrentCalls' (a newer relay may add kinds). */
  readonly kind: string;
  readonly max: number;
  /** The window's length; absent for 'concurrentCalls'. */
  readonly windowSeconds?: number;
  /** Whether the window slides (the last `windowSeconds`) or resets at multiples of it (UTC). */
  readonly sliding?: boolean;
  /** Present when the limit is one model's own. */
  readonly model?: string;
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
