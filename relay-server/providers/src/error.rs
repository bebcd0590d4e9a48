//! The one error enum of the providers crate, with stable string codes (`docs/protocol.md` §4).

use std::fmt;

use patchbridge_protocol::RelayErrorCode;

/// Which upstream failure an in-stream provider error event reported. Closed set: it decides the code and
/// whether a retry can help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamFailure {
    /// The provider refused the request (bad request, auth, policy, invalid state): retrying cannot help.
    Rejected,
    /// The provider is rate limiting (`rate_limit_error`, HTTP 429 semantics).
    RateLimited,
    /// The provider is overloaded or failed internally (`overloaded_error`, `api_error`, `server_error`).
    Unavailable,
}

/// Everything that can go wrong while translating. `message()` is safe to show to the browser; the `detail`
/// fields carry upstream text for (redacted) logs only, because upstream error bodies are never echoed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdapterError {
    /// The request carries a ModelState of another adapter's format; the state is never dropped silently.
    ModelStateFormatMismatch {
        expected: &'static str,
        found: String,
    },
    /// The neutral request cannot be expressed for this provider.
    InvalidRequest(String),
    /// The ModelState entry of assistant message `message_id` does not describe that message's blocks (the
    /// message was edited, or the state was not produced for it). The conversation can always continue from its
    /// messages with `modelState: null`, which every adapter accepts (`docs/protocol.md` §3.1).
    ModelStateMismatch { message_id: String, detail: String },
    /// The upstream stream broke the provider's own wire format (malformed JSON, events out of order, stream
    /// ended without its final event, tool arguments that are not a JSON object).
    UpstreamProtocol(String),
    /// The provider reported an error inside the stream.
    Upstream {
        failure: UpstreamFailure,
        detail: String,
    },
}

impl AdapterError {
    /// The stable code of `docs/protocol.md` §4.
    pub fn code(&self) -> RelayErrorCode {
        match self {
            AdapterError::ModelStateFormatMismatch { .. } => {
                RelayErrorCode::ModelStateFormatMismatch
            }
            AdapterError::InvalidRequest(_) => RelayErrorCode::InvalidRequest,
            AdapterError::ModelStateMismatch { .. } => RelayErrorCode::ModelStateMismatch,
            AdapterError::UpstreamProtocol(_) => RelayErrorCode::UpstreamProtocolError,
            AdapterError::Upstream { failure, .. } => match failure {
                UpstreamFailure::Rejected => RelayErrorCode::UpstreamRejected,
                UpstreamFailure::RateLimited => RelayErrorCode::UpstreamRateLimited,
                UpstreamFailure::Unavailable => RelayErrorCode::UpstreamUnavailable,
            },
        }
    }

    /// Whether calling again later may succeed (rate limits and provider outages only): the code decides.
    pub fn retryable(&self) -> bool {
        self.code().retryable()
    }

    /// Human text that is safe to send to the browser (never contains upstream bodies).
    pub fn message(&self) -> String {
        match self {
            AdapterError::ModelStateFormatMismatch { expected, found } => format!(
                "the conversation's modelState has format \"{found}\" but this model needs \"{expected}\"; \
                 continue it with a model of the original provider or start a new conversation"
            ),
            AdapterError::InvalidRequest(why) => why.clone(),
            AdapterError::ModelStateMismatch { message_id, detail } => format!(
                "the modelState entry of message `{message_id}` does not match that message ({detail}); \
                 continue in a new conversation from these messages (with modelState null)"
            ),
            AdapterError::UpstreamProtocol(_) => "the model provider sent a stream that could not be understood".into(),
            AdapterError::Upstream { failure: UpstreamFailure::Rejected, .. } => "the model provider rejected the request".into(),
            AdapterError::Upstream { failure: UpstreamFailure::RateLimited, .. } => "the model provider is rate limiting requests".into(),
            AdapterError::Upstream { failure: UpstreamFailure::Unavailable, .. } => "the model provider is unavailable".into(),
        }
    }
}

/// Full text for logs: includes upstream detail (the relay redacts before logging).
impl fmt::Display for AdapterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdapterError::UpstreamProtocol(detail) | AdapterError::Upstream { detail, .. } => {
                write!(f, "{}: {}", self.code(), detail)
            }
            _ => write!(f, "{}: {}", self.code(), self.message()),
        }
    }
}

impl std::error::Error for AdapterError {}

impl AdapterError {
    /// The assistant message whose ModelState entry failed to match (only for `MODEL_STATE_MISMATCH`).
    pub fn message_id(&self) -> Option<&str> {
        match self {
            AdapterError::ModelStateMismatch { message_id, .. } => Some(message_id),
            _ => None,
        }
    }
}

impl UpstreamFailure {
    /// Classifies a provider error `type`/`code` string (Anthropic `error.type`, OpenAI `error.code` or
    /// `error.type`). Unknown kinds are rejections: retrying an unknown failure could repeat a side effect.
    pub(crate) fn classify(kind: &str) -> UpstreamFailure {
        match kind {
            "rate_limit_error" | "rate_limit_exceeded" | "rate_limited" | "too_many_requests" => {
                UpstreamFailure::RateLimited
            }
            "overloaded_error"
            | "api_error"
            | "server_error"
            | "internal_error"
            | "service_unavailable"
            | "overloaded"
            | "timeout" => UpstreamFailure::Unavailable,
            _ => UpstreamFailure::Rejected,
        }
    }
}

/// The error for a block in a message of a role that cannot carry it (`docs/protocol.md` §1).
pub(crate) fn misplaced(block: &patchbridge_protocol::Block, role: &str, id: &str) -> AdapterError {
    use patchbridge_protocol::Block;
    let kind = match block {
        Block::Text { .. } => "text",
        Block::Image { .. } => "image",
        Block::Reasoning { .. } => "reasoning",
        Block::ToolCall { .. } => "tool-call",
        Block::ToolResult { .. } => "tool-result",
        Block::Document { .. } => "document",
    };
    AdapterError::InvalidRequest(format!(
        "message {id}: a {kind} block cannot appear in a {role} message"
    ))
}

/// A document block checked against the protocol's rules (`patchbridge_protocol::document`): a name, a media
/// type of the closed list in its source kind, base64 that decodes (a PDF's starting with `%PDF-`). Whatever the
/// runtime would refuse on `send` is refused here too, before any upstream call (`INVALID_REQUEST`).
pub(crate) fn checked_document(
    name: &str,
    source: &patchbridge_protocol::DocumentSource,
    id: &str,
) -> Result<(), AdapterError> {
    use patchbridge_protocol::document::{check_document, DocumentProblem};
    let problem = match check_document(name, source) {
        Ok(_) => return Ok(()),
        Err(DocumentProblem::Name) => "its name is empty, longer than 255 characters, or holds a path or control character".to_owned(),
        Err(DocumentProblem::Type) => format!(
            "media type {:?} is not one the protocol takes in this source (application/pdf as base64; text/plain, text/markdown, text/csv, application/json as text)",
            source.media_type()
        ),
        Err(DocumentProblem::Encoding) => "its data is not standard base64 of a PDF".to_owned(),
    };
    Err(AdapterError::InvalidRequest(format!(
        "message {id}: document {name:?}: {problem}"
    )))
}
