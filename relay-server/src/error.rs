//! The relay's one error enum. Every failure a client can see has a typed [`RelayErrorCode`] of
//! `docs/protocol.md` §4, which decides its HTTP status and whether retrying may help; details (upstream
//! bodies, SQL errors, paths) go to the log only, never to the client.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use patchbridge_protocol::{ErrorEnvelope, RelayErrorCode};

use crate::store::StoreError;

/// Every error the HTTP layer can answer with.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("authentication required")]
    Unauthenticated,
    /// The identity provider's key set is unavailable (not fetched, or past `identity.jwksMaxStaleSeconds`).
    #[error("the identity provider cannot be reached to verify sign-ins; try again later")]
    IdentityUnavailable,
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
    /// An adapter refused the request or the upstream stream (its code, e.g. `MODEL_STATE_FORMAT_MISMATCH`).
    #[error("{message}")]
    Adapter {
        code: RelayErrorCode,
        message: String,
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
    /// One of the user's spending limits refuses the call (before any upstream call).
    #[error("{}", spending_message(.0))]
    SpendingLimitReached(Box<crate::spending::Refusal>),
}

fn spending_message(refusal: &crate::spending::Refusal) -> String {
    let limit = &refusal.limit;
    let what = match (&limit.window_seconds, limit.sliding) {
        (None, _) => format!("at most {} model calls running at once", limit.max),
        (Some(seconds), Some(true)) => {
            format!("at most {} {} in any {seconds} s", limit.max, limit.kind)
        }
        (Some(seconds), _) => format!(
            "at most {} {} per {seconds} s window",
            limit.max, limit.kind
        ),
    };
    let model = limit
        .model
        .as_ref()
        .map_or(String::new(), |m| format!(" of model `{m}`"));
    format!(
        "spending limit reached: {what}{model}; try again in {} s",
        refusal.retry_after_seconds
    )
}

impl RelayError {
    /// The stable code of `docs/protocol.md` §4.
    pub fn code(&self) -> RelayErrorCode {
        match self {
            RelayError::Unauthenticated => RelayErrorCode::Unauthenticated,
            RelayError::IdentityUnavailable => RelayErrorCode::IdentityUnavailable,
            RelayError::ForbiddenOrigin => RelayErrorCode::ForbiddenOrigin,
            RelayError::UnsupportedMediaType => RelayErrorCode::UnsupportedMediaType,
            RelayError::InvalidRequest(_) => RelayErrorCode::InvalidRequest,
            RelayError::PayloadTooLarge(_) => RelayErrorCode::PayloadTooLarge,
            RelayError::RequestTimeout => RelayErrorCode::RequestTimeout,
            RelayError::QuotaExceeded(_) => RelayErrorCode::QuotaExceeded,
            RelayError::NotFound => RelayErrorCode::NotFound,
            RelayError::RevisionConflict { .. } => RelayErrorCode::RevisionConflict,
            RelayError::ConversationCorrupt { .. } => RelayErrorCode::ConversationCorrupt,
            RelayError::UnknownModel(_) => RelayErrorCode::UnknownModel,
            RelayError::Adapter { code, .. } => *code,
            RelayError::ModelStateMismatch { .. } => RelayErrorCode::ModelStateMismatch,
            RelayError::UpstreamUnavailable { .. } => RelayErrorCode::UpstreamUnavailable,
            RelayError::UpstreamTimeout { .. } => RelayErrorCode::UpstreamTimeout,
            RelayError::UpstreamRateLimited { .. } => RelayErrorCode::UpstreamRateLimited,
            RelayError::UpstreamRejected { .. } => RelayErrorCode::UpstreamRejected,
            RelayError::UpstreamResponseTooLarge { .. } => RelayErrorCode::UpstreamResponseTooLarge,
            RelayError::Internal { .. } => RelayErrorCode::Internal,
            RelayError::SpendingLimitReached(_) => RelayErrorCode::SpendingLimitReached,
        }
    }

    /// The HTTP status of the code (`docs/protocol.md` §4).
    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code().status()).expect("every code has a valid HTTP status")
    }

    /// Whether retrying the same call later may succeed (sent as `retryable` in stream `error` events).
    pub fn retryable(&self) -> bool {
        self.code().retryable()
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
        let code = self.code().as_str();
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

impl From<StoreError> for RelayError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::QuotaExceeded(message) => RelayError::QuotaExceeded(message),
            StoreError::Database(_) | StoreError::Writer(_) => RelayError::internal(e),
        }
    }
}

impl IntoResponse for RelayError {
    fn into_response(self) -> Response {
        self.log();
        let mut body = ErrorEnvelope::new(self.code(), self.public_message());
        if let RelayError::RevisionConflict { current } = self {
            body.error.current_revision = Some(current);
        }
        if let RelayError::ModelStateMismatch { message_id, .. } = &self {
            body.error.message_id = Some(message_id.clone());
        }
        let mut retry_after = None;
        if let RelayError::SpendingLimitReached(refusal) = &self {
            body.error.retryable = Some(true);
            body.error.limit = Some(refusal.limit.clone());
            body.error.retry_after_seconds = Some(refusal.retry_after_seconds);
            retry_after = Some(axum::http::HeaderValue::from(refusal.retry_after_seconds));
        }
        let status = self.status();
        let mut response = (status, axum::Json(body)).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds);
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
