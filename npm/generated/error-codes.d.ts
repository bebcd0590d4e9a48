// Generated from the Rust types by controller-wasm/src/typescript.rs; do not edit.
// After changing a type: PATCHBRIDGE_WRITE_TYPES=1 cargo test -p patchbridge-agent --lib typescript
import type { AgentErrorCode } from './types.js';

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

/** Every code keyed by itself. */
export declare const ErrorCodes: Readonly<{ [K in AgentErrorCode]: K }>;
