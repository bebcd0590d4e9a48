// Generated from the Rust types by controller-wasm/src/typescript/; do not edit.
// After changing a type: PATCHBRIDGE_WRITE_TYPES=1 cargo test -p patchbridge-agent --lib typescript
import type { AgentErrorCode } from './types.js';

/**
 * `maxDurationMs` elapsed before the execution settled.
 */
export declare const AGENT_EXECUTION_TIMEOUT: 'AGENT_EXECUTION_TIMEOUT';

/**
 * A limit was exceeded while running; the error's `limit` names it.
 */
export declare const AGENT_LIMIT_EXCEEDED: 'AGENT_LIMIT_EXCEEDED';

/**
 * Limits given at construction are invalid (not a safe positive integer, unknown key, out of range).
 */
export declare const AGENT_INVALID_LIMITS: 'AGENT_INVALID_LIMITS';

/**
 * Options other than limits are invalid (for example a hook that is not an object).
 */
export declare const AGENT_INVALID_OPTIONS: 'AGENT_INVALID_OPTIONS';

/**
 * The model stream broke the event protocol of `docs/protocol.md` §3.
 */
export declare const AGENT_PROTOCOL_ERROR: 'AGENT_PROTOCOL_ERROR';

/**
 * The whole-batch tool precheck rejected an assistant message's tool calls; zero tools ran.
 */
export declare const AGENT_TOOL_PRECHECK_FAILED: 'AGENT_TOOL_PRECHECK_FAILED';

/**
 * A tool returned something that is not exactly `{ toolCallId, content, isError }` for its call.
 */
export declare const AGENT_INVALID_TOOL_RESULT: 'AGENT_INVALID_TOOL_RESULT';

/**
 * A tool threw or rejected.
 */
export declare const AGENT_TOOL_FAILED: 'AGENT_TOOL_FAILED';

/**
 * The model adapter threw, rejected or its stream failed.
 */
export declare const AGENT_MODEL_FAILED: 'AGENT_MODEL_FAILED';

/**
 * A model or tool interceptor threw or rejected.
 */
export declare const AGENT_INTERCEPTOR_FAILED: 'AGENT_INTERCEPTOR_FAILED';

/**
 * An interceptor called `next` a second time.
 */
export declare const AGENT_NEXT_CALLED_TWICE: 'AGENT_NEXT_CALLED_TWICE';

/**
 * A hook threw on a non-terminal lifecycle event.
 */
export declare const AGENT_HOOK_FAILED: 'AGENT_HOOK_FAILED';

/**
 * `respond` was called but no interrupt is pending.
 */
export declare const AGENT_NO_PENDING_INTERRUPT: 'AGENT_NO_PENDING_INTERRUPT';

/**
 * `respond` named another interrupt than the pending one.
 */
export declare const AGENT_INTERRUPT_MISMATCH: 'AGENT_INTERRUPT_MISMATCH';

/**
 * `respond` was called a second time for the same interrupt.
 */
export declare const AGENT_INTERRUPT_ALREADY_RESOLVED: 'AGENT_INTERRUPT_ALREADY_RESOLVED';

/**
 * The controller is already running a turn (or loading).
 */
export declare const AGENT_BUSY: 'AGENT_BUSY';

/**
 * The controller was destroyed.
 */
export declare const AGENT_DESTROYED: 'AGENT_DESTROYED';

/**
 * The conversation store holds a newer revision than the one this controller loaded.
 */
export declare const AGENT_REVISION_CONFLICT: 'AGENT_REVISION_CONFLICT';

/**
 * The stored conversation no longer parses or violates the message rules.
 */
export declare const AGENT_CONVERSATION_CORRUPT: 'AGENT_CONVERSATION_CORRUPT';

/**
 * The relay answered with an error (HTTP error or an `error` stream event).
 */
export declare const AGENT_RELAY_ERROR: 'AGENT_RELAY_ERROR';

/**
 * The relay refused the model call: one of the user's spending limits is reached (`details` names the
 * limit and `retryAfterSeconds`).
 */
export declare const AGENT_SPENDING_LIMIT_REACHED: 'AGENT_SPENDING_LIMIT_REACHED';

/**
 * A tool definition is invalid (empty name, duplicate, schema not an object).
 */
export declare const AGENT_INVALID_TOOL: 'AGENT_INVALID_TOOL';

/**
 * Input given to `send` / `start` / `respond` is invalid.
 */
export declare const AGENT_INVALID_INPUT: 'AGENT_INVALID_INPUT';

/**
 * An attached file's media type is not in the closed list, or travels in the wrong source (`details`:
 * `name` or `image`, `mediaType`). Nothing was sent.
 */
export declare const AGENT_ATTACHMENT_TYPE: 'AGENT_ATTACHMENT_TYPE';

/**
 * An attached file is malformed: a document name that is empty, over 255 characters or a path, or data
 * that is not standard base64 (of a PDF, for a PDF). Nothing was sent.
 */
export declare const AGENT_ATTACHMENT_INVALID: 'AGENT_ATTACHMENT_INVALID';

/**
 * An attached file is over `maxFileBytes` (`details`: `name` or `image`, `bytes`, `limit`). Nothing was
 * sent.
 */
export declare const AGENT_ATTACHMENT_TOO_LARGE: 'AGENT_ATTACHMENT_TOO_LARGE';

/**
 * The files of one message together are over `maxMessageBytes` (`details`: `bytes`, `limit`). Nothing
 * was sent.
 */
export declare const AGENT_MESSAGE_TOO_LARGE: 'AGENT_MESSAGE_TOO_LARGE';

/**
 * With the new message the conversation would be over `maxConversationBytes` (`details`: `bytes`,
 * `limit`): nothing was sent; start a new conversation.
 */
export declare const AGENT_CONVERSATION_TOO_LARGE: 'AGENT_CONVERSATION_TOO_LARGE';

/**
 * `<patchbridge-agent>` could not load the WebAssembly runtime. The element reports it (as an
 * `AgentError` whose `cause` is the reason); the runtime itself never produces it.
 */
export declare const AGENT_RUNTIME_LOAD_FAILED: 'AGENT_RUNTIME_LOAD_FAILED';

/**
 * An MCP server's UI resource (`readMcpResource`, `ui://` only) is over 2 MiB (2097152 bytes) of UTF-8
 * text (`details`: `server`, `uri`, `bytes`, `limit`). The package's MCP client reports it; the core
 * never produces it.
 */
export declare const AGENT_MCP_RESOURCE_TOO_LARGE: 'AGENT_MCP_RESOURCE_TOO_LARGE';

/**
 * An MCP server's UI resource could not be read: the server is not connected, refused the read, sent
 * no text, the transport failed or the caller's signal aborted (`details`: `server`, `uri`, `reason`).
 * The package's MCP client reports it; the core never produces it.
 */
export declare const AGENT_MCP_RESOURCE_FAILED: 'AGENT_MCP_RESOURCE_FAILED';

/** Every code keyed by itself. */
export declare const ErrorCodes: Readonly<{ [K in AgentErrorCode]: K }>;
