//! Errors on the wire (`docs/protocol.md` §4): the stable codes, the status and retry advice each one carries,
//! and the JSON body of every non-2xx answer.

crate::string_enum! {
    /// The relay's stable error codes (`docs/protocol.md` §4), in HTTP error bodies and in stream `error` events.
    pub enum RelayErrorCode {
        /// 401: no identity could be resolved; the response has `WWW-Authenticate: Bearer`.
        Unauthenticated = "UNAUTHENTICATED",
        /// 503: the identity provider's key set is unavailable (never fetched, or stale past its bound).
        IdentityUnavailable = "IDENTITY_UNAVAILABLE",
        /// 403: a POST/PUT/DELETE without an allowed `Origin`.
        ForbiddenOrigin = "FORBIDDEN_ORIGIN",
        /// 415: a POST/PUT whose `Content-Type` is not `application/json`.
        UnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE",
        /// 400: malformed JSON, unknown or missing keys, bad query parameters, a request an adapter cannot express.
        InvalidRequest = "INVALID_REQUEST",
        /// 413: a request body over `limits.maxRequestBytes`, or a context over `limits.maxConversationBytes`.
        PayloadTooLarge = "PAYLOAD_TOO_LARGE",
        /// 408: the request body did not arrive within `limits.requestBodyTimeoutMs`.
        RequestTimeout = "REQUEST_TIMEOUT",
        /// 403: a per-user storage quota would be exceeded (nothing is stored).
        QuotaExceeded = "QUOTA_EXCEEDED",
        /// 404: no such conversation for this user, unknown path.
        NotFound = "NOT_FOUND",
        /// 409: stale `expectedRevision`; the error has `currentRevision`.
        RevisionConflict = "REVISION_CONFLICT",
        /// 500: the stored context no longer parses.
        ConversationCorrupt = "CONVERSATION_CORRUPT",
        /// 400: `model` is not an id of `GET {base}/models`.
        UnknownModel = "UNKNOWN_MODEL",
        /// 400: the request carries an input kind (a PDF document, an image) the model does not take
        /// (`capabilities.inputs`), refused before any upstream call.
        UnsupportedInput = "UNSUPPORTED_INPUT",
        /// 400: the request's `modelState.format` belongs to another adapter.
        ModelStateFormatMismatch = "MODEL_STATE_FORMAT_MISMATCH",
        /// 400: the `modelState` entry of an assistant message no longer matches it; the error has `messageId`.
        ModelStateMismatch = "MODEL_STATE_MISMATCH",
        /// 429: one of the user's spending limits (`spending` in the relay's configuration) refuses the call, before
        /// any upstream call; the error has `limit` and `retryAfterSeconds`, the answer a `Retry-After` header.
        SpendingLimitReached = "SPENDING_LIMIT_REACHED",
        /// 502: connection failure or provider 5xx (after the one retry), or a provider overload event.
        UpstreamUnavailable = "UPSTREAM_UNAVAILABLE",
        /// 504: no upstream headers / bytes in time, or the call passed `limits.maxStreamDurationMs`.
        UpstreamTimeout = "UPSTREAM_TIMEOUT",
        /// 429: the provider answered 429 twice, or sent a rate-limit error event.
        UpstreamRateLimited = "UPSTREAM_RATE_LIMITED",
        /// 502: the provider refused the request (4xx other than 429, or a 3xx; never retried).
        UpstreamRejected = "UPSTREAM_REJECTED",
        /// 502: the provider's stream broke its own wire format or ended without its final event.
        UpstreamProtocolError = "UPSTREAM_PROTOCOL_ERROR",
        /// 502: the upstream body or event count passed the relay's bounds.
        UpstreamResponseTooLarge = "UPSTREAM_RESPONSE_TOO_LARGE",
        /// 404: `{base}/mcp/{name}` names no server of the relay's `mcp.servers`.
        McpServerNotFound = "MCP_SERVER_NOT_FOUND",
        /// 403: the user is not among the `users` of that MCP server.
        McpServerForbidden = "MCP_SERVER_FORBIDDEN",
        /// 429: the user already has `mcp.maxConcurrentPerUser` MCP exchanges open.
        McpConcurrencyLimit = "MCP_CONCURRENCY_LIMIT",
        /// 500: anything else (details only in the relay's log).
        Internal = "INTERNAL",
    }
}

impl RelayErrorCode {
    /// The HTTP status of an error answer with this code (`docs/protocol.md` §4).
    pub const fn status(self) -> u16 {
        match self {
            RelayErrorCode::Unauthenticated => 401,
            RelayErrorCode::IdentityUnavailable => 503,
            RelayErrorCode::ForbiddenOrigin
            | RelayErrorCode::QuotaExceeded
            | RelayErrorCode::McpServerForbidden => 403,
            RelayErrorCode::UnsupportedMediaType => 415,
            RelayErrorCode::InvalidRequest
            | RelayErrorCode::UnknownModel
            | RelayErrorCode::UnsupportedInput
            | RelayErrorCode::ModelStateFormatMismatch
            | RelayErrorCode::ModelStateMismatch => 400,
            RelayErrorCode::PayloadTooLarge => 413,
            RelayErrorCode::RequestTimeout => 408,
            RelayErrorCode::NotFound | RelayErrorCode::McpServerNotFound => 404,
            RelayErrorCode::RevisionConflict => 409,
            RelayErrorCode::ConversationCorrupt | RelayErrorCode::Internal => 500,
            RelayErrorCode::UpstreamUnavailable
            | RelayErrorCode::UpstreamRejected
            | RelayErrorCode::UpstreamProtocolError
            | RelayErrorCode::UpstreamResponseTooLarge => 502,
            RelayErrorCode::UpstreamTimeout => 504,
            RelayErrorCode::UpstreamRateLimited
            | RelayErrorCode::SpendingLimitReached
            | RelayErrorCode::McpConcurrencyLimit => 429,
        }
    }

    /// Whether the same call may succeed when made again later (`retryable` of stream `error` events): provider
    /// outages, timeouts, rate limits, and a spending limit (once its window has moved on).
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            RelayErrorCode::SpendingLimitReached
                | RelayErrorCode::McpConcurrencyLimit
                | RelayErrorCode::UpstreamUnavailable
                | RelayErrorCode::UpstreamTimeout
                | RelayErrorCode::UpstreamRateLimited
        )
    }
}

crate::wire! {
    lenient;
    /// `{ "error": { "code", "message", … } }`: the body of every non-2xx JSON answer (`docs/protocol.md` §4).
    #[derive(Debug, Clone, PartialEq)]
    pub struct ErrorEnvelope {
        /// The error.
        pub error: ErrorBody = "error",
    }
}

crate::wire! {
    lenient;
    /// The error of an [`ErrorEnvelope`]: a stable code, human text, and the documented extra fields. The code is
    /// kept as text when read, so a client still reports codes newer than it knows.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ErrorBody {
        /// A [`RelayErrorCode`]'s text.
        pub code: String = "code",
        /// Human-readable text (not stable).
        pub message: String = "message" default,
        /// `REVISION_CONFLICT` only: the stored revision.
        pub current_revision: Option<u64> = "currentRevision" optional,
        /// `MODEL_STATE_MISMATCH` only: the message whose stored provider state was refused.
        pub message_id: Option<String> = "messageId" optional,
        /// Whether retrying may help, when the relay says so.
        pub retryable: Option<bool> = "retryable" optional,
        /// `SPENDING_LIMIT_REACHED` only: the limit that refused the call.
        pub limit: Option<SpendingLimit> = "limit" optional,
        /// `SPENDING_LIMIT_REACHED` only: whole seconds until a call may be admitted again (the `Retry-After`
        /// header).
        pub retry_after_seconds: Option<u64> = "retryAfterSeconds" optional,
    }
}

crate::string_enum! {
    /// What a spending limit counts (`limit.kind` of a `SPENDING_LIMIT_REACHED` error).
    pub enum SpendingLimitKind {
        /// Model calls started in the window.
        Calls = "calls",
        /// Input tokens the provider reported in the window.
        InputTokens = "inputTokens",
        /// Output tokens the provider reported in the window.
        OutputTokens = "outputTokens",
        /// Model calls running at the same time (no window).
        ConcurrentCalls = "concurrentCalls",
    }
}

crate::wire! {
    lenient, ts(feature = "ts");
    /// The `limit` of a `SPENDING_LIMIT_REACHED` error. `kind` is kept as text when read, so a client still reports a
    /// kind newer than it knows.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SpendingLimit {
        /// A spending limit kind's text: `calls`, `inputTokens`, `outputTokens` or `concurrentCalls` (a newer relay
        /// may add kinds).
        pub kind: String = "kind",
        /// The configured maximum.
        pub max: u64 = "max",
        /// The window's length in seconds (absent for `concurrentCalls`).
        pub window_seconds: Option<u64> = "windowSeconds" optional,
        /// Whether the window slides (usage of the last `windowSeconds`) or is fixed (resets at multiples of
        /// `windowSeconds` since the Unix epoch, UTC). Absent for `concurrentCalls`.
        pub sliding: Option<bool> = "sliding" optional,
        /// Set when the limit is one model's own (`spending.models`), absent for the limits of all models together.
        pub model: Option<String> = "model" optional,
    }
}

impl SpendingLimit {
    /// The kind, when it is one this crate knows.
    pub fn known_kind(&self) -> Option<SpendingLimitKind> {
        SpendingLimitKind::parse(&self.kind)
    }
}

impl ErrorEnvelope {
    /// An error answer with `code` and `message` and no extra fields.
    pub fn new(code: RelayErrorCode, message: impl Into<String>) -> Self {
        ErrorEnvelope {
            error: ErrorBody {
                code: code.as_str().to_owned(),
                message: message.into(),
                current_revision: None,
                message_id: None,
                retryable: None,
                limit: None,
                retry_after_seconds: None,
            },
        }
    }
}

impl ErrorBody {
    /// The code, when it is one this crate knows.
    pub fn known_code(&self) -> Option<RelayErrorCode> {
        RelayErrorCode::parse(&self.code)
    }
}
