//! The runtime's one error type: [`AgentError`] with a stable [`ErrorCode`] and, for limit failures, the
//! [`LimitName`] that was exceeded or invalid.

use std::fmt;

use serde_json::Value;

use patchbridge_protocol::ToValue;

patchbridge_protocol::string_enum! {
    /// Stable error codes (closed set). [`ErrorCode::as_str`] gives the string JavaScript sees as `error.code`;
    /// the npm package's constants and `AgentErrorCode` are generated from this list (`src/typescript/`).
    pub enum ErrorCode {
        /// `maxDurationMs` elapsed before the execution settled.
        ExecutionTimeout = "AGENT_EXECUTION_TIMEOUT",
        /// A limit was exceeded while running; the error's `limit` names it.
        LimitExceeded = "AGENT_LIMIT_EXCEEDED",
        /// Limits given at construction are invalid (not a safe positive integer, unknown key, out of range).
        InvalidLimits = "AGENT_INVALID_LIMITS",
        /// Options other than limits are invalid (for example a hook that is not an object).
        InvalidOptions = "AGENT_INVALID_OPTIONS",
        /// The model stream broke the event protocol of `docs/protocol.md` §3.
        ProtocolError = "AGENT_PROTOCOL_ERROR",
        /// The whole-batch tool precheck rejected an assistant message's tool calls; zero tools ran.
        ToolPrecheckFailed = "AGENT_TOOL_PRECHECK_FAILED",
        /// A tool returned something that is not exactly `{ toolCallId, content, isError }` for its call.
        InvalidToolResult = "AGENT_INVALID_TOOL_RESULT",
        /// A tool threw or rejected.
        ToolFailed = "AGENT_TOOL_FAILED",
        /// The model adapter threw, rejected or its stream failed.
        ModelFailed = "AGENT_MODEL_FAILED",
        /// A model or tool interceptor threw or rejected.
        InterceptorFailed = "AGENT_INTERCEPTOR_FAILED",
        /// An interceptor called `next` a second time.
        NextCalledTwice = "AGENT_NEXT_CALLED_TWICE",
        /// A hook threw on a non-terminal lifecycle event.
        HookFailed = "AGENT_HOOK_FAILED",
        /// `respond` was called but no interrupt is pending.
        NoPendingInterrupt = "AGENT_NO_PENDING_INTERRUPT",
        /// `respond` named another interrupt than the pending one.
        InterruptMismatch = "AGENT_INTERRUPT_MISMATCH",
        /// `respond` was called a second time for the same interrupt.
        InterruptAlreadyResolved = "AGENT_INTERRUPT_ALREADY_RESOLVED",
        /// The controller is already running a turn (or loading).
        Busy = "AGENT_BUSY",
        /// The controller was destroyed.
        Destroyed = "AGENT_DESTROYED",
        /// The conversation store holds a newer revision than the one this controller loaded.
        RevisionConflict = "AGENT_REVISION_CONFLICT",
        /// The stored conversation no longer parses or violates the message rules.
        ConversationCorrupt = "AGENT_CONVERSATION_CORRUPT",
        /// The relay answered with an error (HTTP error or an `error` stream event).
        RelayError = "AGENT_RELAY_ERROR",
        /// The relay refused the model call: one of the user's spending limits is reached (`details` names the
        /// limit and `retryAfterSeconds`).
        SpendingLimitReached = "AGENT_SPENDING_LIMIT_REACHED",
        /// A tool definition is invalid (empty name, duplicate, schema not an object).
        InvalidTool = "AGENT_INVALID_TOOL",
        /// Input given to `send` / `start` / `respond` is invalid.
        InvalidInput = "AGENT_INVALID_INPUT",
        /// An attached file's media type is not in the closed list, or travels in the wrong source (`details`:
        /// `name` or `image`, `mediaType`). Nothing was sent.
        AttachmentType = "AGENT_ATTACHMENT_TYPE",
        /// An attached file is malformed: a document name that is empty, over 255 characters or a path, or data
        /// that is not standard base64 (of a PDF, for a PDF). Nothing was sent.
        AttachmentInvalid = "AGENT_ATTACHMENT_INVALID",
        /// An attached file is over `maxFileBytes` (`details`: `name` or `image`, `bytes`, `limit`). Nothing was
        /// sent.
        AttachmentTooLarge = "AGENT_ATTACHMENT_TOO_LARGE",
        /// The files of one message together are over `maxMessageBytes` (`details`: `bytes`, `limit`). Nothing
        /// was sent.
        MessageTooLarge = "AGENT_MESSAGE_TOO_LARGE",
        /// With the new message the conversation would be over `maxConversationBytes` (`details`: `bytes`,
        /// `limit`): nothing was sent; start a new conversation.
        ConversationTooLarge = "AGENT_CONVERSATION_TOO_LARGE",
        /// `<patchbridge-agent>` could not load the WebAssembly runtime. The element reports it (as an
        /// `AgentError` whose `cause` is the reason); the runtime itself never produces it.
        RuntimeLoadFailed = "AGENT_RUNTIME_LOAD_FAILED",
        /// An MCP server's UI resource (`readMcpResource`, `ui://` only) is over 2 MiB (2097152 bytes) of UTF-8
        /// text (`details`: `server`, `uri`, `bytes`, `limit`). The package's MCP client reports it; the core
        /// never produces it.
        McpResourceTooLarge = "AGENT_MCP_RESOURCE_TOO_LARGE",
        /// An MCP server's UI resource could not be read: the server is not connected, refused the read, sent
        /// no text, the transport failed or the caller's signal aborted (`details`: `server`, `uri`, `reason`).
        /// The package's MCP client reports it; the core never produces it.
        McpResourceFailed = "AGENT_MCP_RESOURCE_FAILED",
    }
}

patchbridge_protocol::string_enum! {
    /// The five limits by their public (camelCase) names (closed set), in their documented order.
    pub enum LimitName {
        /// `maxModelCalls`: model calls per execution.
        MaxModelCalls = "maxModelCalls",
        /// `maxToolCalls`: tool calls accepted per execution (cumulative).
        MaxToolCalls = "maxToolCalls",
        /// `maxDurationMs`: wall time of the whole execution, including confirmation waits.
        MaxDurationMs = "maxDurationMs",
        /// `maxModelOutputCharacters`: text + reasoning + tool-argument characters of one model call.
        MaxModelOutputCharacters = "maxModelOutputCharacters",
        /// `maxToolResultCharacters`: characters of one tool result's `content`.
        MaxToolResultCharacters = "maxToolResultCharacters",
    }
}

patchbridge_protocol::wire! {
    written, ts(test);
    /// A runtime failure: what `result` rejects with and what the bindings turn into the JS `AgentError` class.
    #[derive(Debug, Clone, PartialEq)]
    pub struct AgentError {
        /// The stable code.
        pub code: ErrorCode = "code",
        /// Human-readable text (not stable; do not match on it).
        pub message: String = "message",
        /// For `AGENT_LIMIT_EXCEEDED` and `AGENT_INVALID_LIMITS`: which limit.
        pub limit: Option<LimitName> = "limit" optional,
        /// Structured extra facts (JSON), e.g. the offending call id or the relay's error code.
        #[cfg_attr(test, ts(type = "JsonValue"))]
        pub details: Option<Value> = "details" optional,
    }
}

impl AgentError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AgentError {
            code,
            message: message.into(),
            limit: None,
            details: None,
        }
    }

    /// `AGENT_LIMIT_EXCEEDED` for `limit`.
    pub fn limit_exceeded(limit: LimitName, message: impl Into<String>) -> Self {
        AgentError {
            code: ErrorCode::LimitExceeded,
            message: message.into(),
            limit: Some(limit),
            details: None,
        }
    }

    /// `AGENT_INVALID_LIMITS` naming `limit` (None when the key itself is unknown).
    pub fn invalid_limits(limit: Option<LimitName>, message: impl Into<String>) -> Self {
        AgentError {
            code: ErrorCode::InvalidLimits,
            message: message.into(),
            limit,
            details: None,
        }
    }

    /// Attaches structured details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The error as a JSON value (`{ code, message, limit?, details? }`).
    pub fn to_json(&self) -> Value {
        self.to_value()
    }
}

/// `details` of every relay failure (`AGENT_RELAY_ERROR`, and the relay's `AGENT_REVISION_CONFLICT` /
/// `AGENT_CONVERSATION_CORRUPT`), whether it came as an HTTP error answer or as an `error` event inside the model
/// stream, so hosts read one shape:
/// `{ relayCode, status?, retryable?, currentRevision?, messageId? }`.
/// - `relayCode`: the relay's stable code (`UPSTREAM_RATE_LIMITED`, …; `""` when an HTTP error body was not a
///   relay error);
/// - `status`: the HTTP status, only for HTTP error answers (an in-stream error arrives on a `200` stream);
/// - `retryable`: only when the relay said so (in-stream `error` events carry it);
/// - `currentRevision`: only for a revision conflict;
/// - `messageId`: only for `MODEL_STATE_MISMATCH`: the message whose stored provider state the relay refused.
pub fn relay_error_details(
    relay_code: &str,
    status: Option<u32>,
    retryable: Option<bool>,
    current_revision: Option<Value>,
    message_id: Option<String>,
) -> Value {
    let mut details = serde_json::Map::new();
    details.insert("relayCode".into(), Value::from(relay_code));
    if let Some(status) = status {
        details.insert("status".into(), Value::from(status));
    }
    if let Some(retryable) = retryable {
        details.insert("retryable".into(), Value::from(retryable));
    }
    if let Some(current) = current_revision {
        details.insert("currentRevision".into(), current);
    }
    if let Some(message_id) = message_id {
        details.insert("messageId".into(), Value::from(message_id));
    }
    Value::Object(details)
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for AgentError {}
