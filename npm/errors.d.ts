// Declarations of `@patchbridge/agent/errors`: the error class. The codes (the `AgentErrorCode` union, one constant
// per code and `ErrorCodes`), `LimitName` and the relay's error details are generated from the Rust core into
// generated/ (controller-wasm/src/typescript/).

import type { AgentErrorCode, LimitName, RelayErrorDetails } from './generated/types.js';

export type { AgentErrorCode, LimitName, RelayErrorDetails, SpendingLimit } from './generated/types.js';
export * from './generated/error-codes.js';

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
