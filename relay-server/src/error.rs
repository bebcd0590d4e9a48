//! The relay's one error enum. Every failure a client can see maps to a stable code of `docs/protocol.md` §4;
//! details (upstream bodies, SQL errors, paths) go to the log only, never to the client.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Every error the HTTP layer can answer with.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("authentication required")]
    Unauthenticated,
    #[error("origin not allowed")]
    ForbiddenOrigin,
    #[error("content type must be application/json")]
    UnsupportedMediaType,
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("the request body did not arrive in time")]
    RequestTimeout,
    /// A per-user storage quota (`limits.maxConversationsPerUser` / `maxStoredBytesPerUser`) would be exceeded.
    #[error("{0}")]
    QuotaExceeded(String),
    #[error("not found")]
    NotFound,
    #[error("revision conflict: current revision is {current}")]
    RevisionConflict { current: u64 },
    #[error("stored conversation is corrupt")]
    ConversationCorrupt { detail: String },
    #[error("unknown model `{0}`")]
    UnknownModel(String),
    /// An adapter refused the request (its stable code, e.g. `MODEL_STATE_FORMAT_MISMATCH`).
    #[error("{message}")]
    Adapter {
        code: &'static str,
        message: String,
        retryable: bool,
    },
    /// The ModelState entry of assistant message `message_id` does not match that message; the response names
    /// the message (`messageId`) so the client can continue in a new conversation from its messages.
    #[error("{message}")]
    ModelStateMismatch { message_id: String, message: String },
    #[error("upstream unavailable")]
    UpstreamUnavailable { detail: String },
    #[error("upstream timed out")]
    UpstreamTimeout { detail: String },
    #[error("upstream rate limited")]
    UpstreamRateLimited { detail: String },
    #[error("upstream rejected the request")]
    UpstreamRejected { detail: String },
    #[error("upstream response too large")]
    UpstreamResponseTooLarge { detail: String },
    #[error("internal error")]
    Internal { detail: String },
}

impl RelayError {
    /// The stable code of `docs/protocol.md` §4.
    pub fn code(&self) -> &'static str {
        match self {
            RelayError::Unauthenticated => "UNAUTHENTICATED",
            RelayError::ForbiddenOrigin => "FORBIDDEN_ORIGIN",
            RelayError::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            RelayError::InvalidRequest(_) => "INVALID_REQUEST",
            RelayError::PayloadTooLarge(_) => "PAYLOAD_TOO_LARGE",
            RelayError::RequestTimeout => "REQUEST_TIMEOUT",
            RelayError::QuotaExceeded(_) => "QUOTA_EXCEEDED",
            RelayError::NotFound => "NOT_FOUND",
            RelayError::RevisionConflict { .. } => "REVISION_CONFLICT",
            RelayError::ConversationCorrupt { .. } => "CONVERSATION_CORRUPT",
            RelayError::UnknownModel(_) => "UNKNOWN_MODEL",
            RelayError::Adapter { code, .. } => code,
            RelayError::ModelStateMismatch { .. } => "MODEL_STATE_MISMATCH",
            RelayError::UpstreamUnavailable { .. } => "UPSTREAM_UNAVAILABLE",
            RelayError::UpstreamTimeout { .. } => "UPSTREAM_TIMEOUT",
            RelayError::UpstreamRateLimited { .. } => "UPSTREAM_RATE_LIMITED",
            RelayError::UpstreamRejected { .. } => "UPSTREAM_REJECTED",
            RelayError::UpstreamResponseTooLarge { .. } => "UPSTREAM_RESPONSE_TOO_LARGE",
            RelayError::Internal { .. } => "INTERNAL",
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            RelayError::Unauthenticated => StatusCode::UNAUTHORIZED,
            RelayError::ForbiddenOrigin => StatusCode::FORBIDDEN,
            RelayError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            RelayError::InvalidRequest(_)
            | RelayError::UnknownModel(_)
            | RelayError::ModelStateMismatch { .. } => StatusCode::BAD_REQUEST,
            RelayError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            RelayError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            RelayError::QuotaExceeded(_) => StatusCode::FORBIDDEN,
            RelayError::NotFound => StatusCode::NOT_FOUND,
            RelayError::RevisionConflict { .. } => StatusCode::CONFLICT,
            RelayError::ConversationCorrupt { .. } | RelayError::Internal { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            RelayError::Adapter { code, .. } => match *code {
                "UPSTREAM_RATE_LIMITED" => StatusCode::TOO_MANY_REQUESTS,
                "UPSTREAM_TIMEOUT" => StatusCode::GATEWAY_TIMEOUT,
                c if c.starts_with("UPSTREAM_") => StatusCode::BAD_GATEWAY,
                "INTERNAL" => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::BAD_REQUEST,
            },
            RelayError::UpstreamUnavailable { .. }
            | RelayError::UpstreamRejected { .. }
            | RelayError::UpstreamResponseTooLarge { .. } => StatusCode::BAD_GATEWAY,
            RelayError::UpstreamTimeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            RelayError::UpstreamRateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// Whether retrying the same call later may succeed (sent as `retryable` in stream `error` events).
    pub fn retryable(&self) -> bool {
        match self {
            RelayError::UpstreamUnavailable { .. }
            | RelayError::UpstreamTimeout { .. }
            | RelayError::UpstreamRateLimited { .. } => true,
            RelayError::Adapter { retryable, .. } => *retryable,
            _ => false,
        }
    }

    /// The message a client may see: fixed text for anything whose detail could leak upstream or storage data.
    pub fn public_message(&self) -> String {
        self.to_string()
    }

    /// Detail for the log (never sent to the client).
    fn log_detail(&self) -> Option<&str> {
        match self {
            RelayError::ConversationCorrupt { detail }
            | RelayError::UpstreamUnavailable { detail }
            | RelayError::UpstreamTimeout { detail }
            | RelayError::UpstreamRateLimited { detail }
            | RelayError::UpstreamRejected { detail }
            | RelayError::UpstreamResponseTooLarge { detail }
            | RelayError::Internal { detail } => Some(detail),
            _ => None,
        }
    }

    /// Logs the error with its private detail; server-side faults at `error`, client mistakes at `info`.
    /// Detail and message can quote request or upstream text: they are escaped and bounded here, so the JSON
    /// log format gets the same length bound as the human one.
    pub fn log(&self) {
        let code = self.code();
        match self.log_detail() {
            Some(detail) if self.status().is_server_error() => {
                tracing::error!(code, detail = %crate::logging::escape(detail), "request failed")
            }
            Some(detail) => {
                tracing::warn!(code, detail = %crate::logging::escape(detail), "request failed")
            }
            None => {
                let message = self.to_string();
                tracing::info!(code, message = %crate::logging::escape(&message), "request rejected")
            }
        }
    }

    pub fn internal(detail: impl std::fmt::Display) -> Self {
        RelayError::Internal {
            detail: detail.to_string(),
        }
    }
}

impl From<sqlx::Error> for RelayError {
    fn from(e: sqlx::Error) -> Self {
        RelayError::internal(format!("database: {e}"))
    }
}

impl IntoResponse for RelayError {
    fn into_response(self) -> Response {
        self.log();
        let mut body =
            json!({ "error": { "code": self.code(), "message": self.public_message() } });
        if let RelayError::RevisionConflict { current } = self {
            body["error"]["currentRevision"] = json!(current);
        }
        if let RelayError::ModelStateMismatch { message_id, .. } = &self {
            body["error"]["messageId"] = json!(message_id);
        }
        let status = self.status();
        let mut response = (status, axum::Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
