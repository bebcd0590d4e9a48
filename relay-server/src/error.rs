//! The relay's one error type. Every failure a client can see carries a [`RelayErrorCode`] of
//! `docs/protocol.md` §4 (the protocol crate owns the list of codes, each one's HTTP status and whether retrying
//! may help), a message the client may read, and, for the log only, the underlying cause as a
//! [`std::error::Error::source`]: upstream bodies, SQL errors and paths never reach the client.
//!
//! A new failure is a code of `RelayErrorCode` (a new code is a protocol change: `docs/protocol.md` §4 first)
//! and a call site: `RelayError::new(code, "what the client reads").with_source(cause)`, or
//! `RelayError::from(code)` for the code's standard text. The codes with extra wire fields have their own
//! constructors ([`RelayError::revision_conflict`], [`RelayError::model_state_mismatch`],
//! [`RelayError::spending_limit`]). axum's own extractor rejections convert through `From` (below), so a
//! handler never sees axum's plain-text answers.

use std::borrow::Cow;
use std::fmt;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use patchbridge_protocol::{ErrorEnvelope, RelayErrorCode, SpendingLimit};

use crate::store::StoreError;

/// The cause of a failure, kept for the log.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Every error the HTTP layer can answer with.
#[derive(Debug)]
pub struct RelayError {
    code: RelayErrorCode,
    /// What the client reads (`message` of the error body or stream `error` event).
    message: Cow<'static, str>,
    /// Why it happened, for the log only.
    source: Option<BoxError>,
    /// The documented extra fields of some codes.
    extra: Extra,
}

/// The extra wire fields a code carries (`docs/protocol.md` §4); each has its own constructor, so a code never
/// travels with another code's fields.
#[derive(Debug)]
enum Extra {
    None,
    /// `REVISION_CONFLICT`: `currentRevision`.
    CurrentRevision(u64),
    /// `MODEL_STATE_MISMATCH`: `messageId`, so the client can continue in a new conversation.
    MessageId(String),
    /// `SPENDING_LIMIT_REACHED`: `limit`, `retryAfterSeconds`, `retryable` and the `Retry-After` header.
    Spending(Box<SpendingLimit>, u64),
}

/// The text a client reads for `code` when the call site has nothing more precise to say. Fixed for every code
/// whose cause could leak upstream or storage data.
fn standard_message(code: RelayErrorCode) -> &'static str {
    match code {
        RelayErrorCode::Unauthenticated => "authentication required",
        RelayErrorCode::IdentityUnavailable => {
            "the identity provider cannot be reached to verify sign-ins; try again later"
        }
        RelayErrorCode::ForbiddenOrigin => "origin not allowed",
        RelayErrorCode::UnsupportedMediaType => "content type must be application/json",
        RelayErrorCode::InvalidRequest => "invalid request",
        RelayErrorCode::PayloadTooLarge => "request too large",
        RelayErrorCode::RequestTimeout => "the request body did not arrive in time",
        RelayErrorCode::QuotaExceeded => "storage quota exceeded",
        RelayErrorCode::NotFound => "not found",
        RelayErrorCode::RevisionConflict => "revision conflict",
        RelayErrorCode::ConversationCorrupt => "stored conversation is corrupt",
        RelayErrorCode::UnknownModel => "unknown model",
        RelayErrorCode::UnsupportedInput => "the model does not take this kind of input",
        RelayErrorCode::ModelStateFormatMismatch => "modelState belongs to another adapter",
        RelayErrorCode::ModelStateMismatch => "modelState does not match its message",
        RelayErrorCode::SpendingLimitReached => "spending limit reached",
        RelayErrorCode::UpstreamUnavailable => "upstream unavailable",
        RelayErrorCode::UpstreamTimeout => "upstream timed out",
        RelayErrorCode::UpstreamRateLimited => "upstream rate limited",
        RelayErrorCode::UpstreamRejected => "upstream rejected the request",
        RelayErrorCode::UpstreamProtocolError => {
            "the model provider sent a stream that could not be understood"
        }
        RelayErrorCode::UpstreamResponseTooLarge => "upstream response too large",
        RelayErrorCode::McpServerNotFound => "no such MCP server",
        RelayErrorCode::McpServerForbidden => "this MCP server is not available to this user",
        RelayErrorCode::McpConcurrencyLimit => "too many open MCP exchanges",
        RelayErrorCode::Internal => "internal error",
    }
}

impl RelayError {
    /// An error with `code` and the client-safe `message`.
    pub fn new(code: RelayErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        RelayError {
            code,
            message: message.into(),
            source: None,
            extra: Extra::None,
        }
    }

    /// Keeps `source` for the log (never sent). An error with a source is logged as the relay's or the
    /// provider's failure (`warn`, or `error` for a 5xx) with the source as `detail`; one without is a refused
    /// request (`info`).
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// `INTERNAL` with its fixed text; `source` goes to the log.
    pub fn internal(source: impl Into<BoxError>) -> Self {
        RelayError::from(RelayErrorCode::Internal).with_source(source)
    }

    /// `REVISION_CONFLICT` naming the stored revision.
    pub fn revision_conflict(current: u64) -> Self {
        RelayError {
            extra: Extra::CurrentRevision(current),
            ..RelayError::new(
                RelayErrorCode::RevisionConflict,
                format!("revision conflict: current revision is {current}"),
            )
        }
    }

    /// `MODEL_STATE_MISMATCH`: the ModelState entry of assistant message `message_id` does not match that message.
    pub fn model_state_mismatch(message_id: String, message: String) -> Self {
        RelayError {
            extra: Extra::MessageId(message_id),
            ..RelayError::new(RelayErrorCode::ModelStateMismatch, message)
        }
    }

    /// `SPENDING_LIMIT_REACHED`: one of the user's spending limits, `limit`, refuses the call (before any upstream
    /// call); a call may be admitted again in `retry_after_seconds`.
    pub fn spending_limit(limit: SpendingLimit, retry_after_seconds: u64) -> Self {
        let message = spending_message(&limit, retry_after_seconds);
        RelayError {
            extra: Extra::Spending(Box::new(limit), retry_after_seconds),
            ..RelayError::new(RelayErrorCode::SpendingLimitReached, message)
        }
    }

    /// The stable code of `docs/protocol.md` §4.
    pub fn code(&self) -> RelayErrorCode {
        self.code
    }

    /// The HTTP status of the code (`docs/protocol.md` §4).
    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code.status()).expect("every code has a valid HTTP status")
    }

    /// Whether retrying the same call later may succeed (sent as `retryable` in stream `error` events).
    pub fn retryable(&self) -> bool {
        self.code.retryable()
    }

    /// The message a client may see.
    pub fn public_message(&self) -> &str {
        &self.message
    }

    /// Logs the error with its private detail: failures with a source at `error` (5xx) or `warn`, refused
    /// requests at `info`. Detail and message can quote request or upstream text: they are escaped and bounded
    /// here, so the JSON log format gets the same length bound as the human one.
    pub fn log(&self) {
        let code = self.code.as_str();
        let message = crate::logging::escape(&self.message);
        match &self.source {
            Some(source) => {
                let detail = causes(source.as_ref());
                let detail = crate::logging::escape(&detail);
                if self.status().is_server_error() {
                    tracing::error!(code, %message, %detail, "request failed")
                } else {
                    tracing::warn!(code, %message, %detail, "request failed")
                }
            }
            None => tracing::info!(code, %message, "request rejected"),
        }
    }
}

/// `error` and its chain of sources, joined by `: `, skipping a cause whose text an outer one already quotes
/// (many errors repeat their source in their own text).
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        next = cause.source();
    }
    text
}

fn spending_message(limit: &SpendingLimit, retry_after_seconds: u64) -> String {
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
    format!("spending limit reached: {what}{model}; try again in {retry_after_seconds} s")
}

impl fmt::Display for RelayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RelayError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e.as_ref() as &(dyn std::error::Error + 'static))
    }
}

/// The code with its standard text ([`standard_message`]).
impl From<RelayErrorCode> for RelayError {
    fn from(code: RelayErrorCode) -> Self {
        RelayError::new(code, standard_message(code))
    }
}

impl From<StoreError> for RelayError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::QuotaExceeded(message) => {
                RelayError::new(RelayErrorCode::QuotaExceeded, message)
            }
            StoreError::Database(_) | StoreError::Writer(_) => RelayError::internal(e),
        }
    }
}

/// A query string `Query` cannot read (a repeated parameter, a value of the wrong type): `INVALID_REQUEST` with
/// axum's description of the problem, which quotes only the client's own query.
impl From<QueryRejection> for RelayError {
    fn from(e: QueryRejection) -> Self {
        RelayError::new(RelayErrorCode::InvalidRequest, e.body_text())
    }
}

/// A path whose parameters `Path` cannot read names nothing the relay holds (an id that is not UTF-8 after
/// percent-decoding cannot be stored): `NOT_FOUND`. A route without the parameters its handler reads is the
/// relay's own fault.
impl From<PathRejection> for RelayError {
    fn from(e: PathRejection) -> Self {
        match e {
            PathRejection::FailedToDeserializePathParams(_) => {
                RelayError::from(RelayErrorCode::NotFound)
            }
            other => RelayError::internal(other),
        }
    }
}

impl IntoResponse for RelayError {
    fn into_response(self) -> Response {
        self.log();
        let status = self.status();
        let mut body = ErrorEnvelope::new(self.code, self.message);
        let mut retry_after = None;
        match self.extra {
            Extra::None => {}
            Extra::CurrentRevision(current) => body.error.current_revision = Some(current),
            Extra::MessageId(message_id) => body.error.message_id = Some(message_id),
            Extra::Spending(limit, seconds) => {
                body.error.retryable = Some(true);
                body.error.retry_after_seconds = Some(seconds);
                retry_after = Some(axum::http::HeaderValue::from(seconds));
                body.error.limit = Some(*limit);
            }
        }
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

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    async fn answer(error: RelayError) -> (StatusCode, ErrorEnvelope) {
        let response = error.into_response();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn the_source_stays_in_the_log_and_the_client_reads_code_and_message() {
        let error = RelayError::from(RelayErrorCode::UpstreamRejected)
            .with_source("upstream status 400: key sk-secret refused");
        assert_eq!(
            std::error::Error::source(&error).unwrap().to_string(),
            "upstream status 400: key sk-secret refused"
        );
        let (status, body) = answer(error).await;
        assert_eq!(status, StatusCode::BAD_GATEWAY);
        assert_eq!(
            body,
            ErrorEnvelope::new(
                RelayErrorCode::UpstreamRejected,
                "upstream rejected the request"
            )
        );
    }

    #[tokio::test]
    async fn extra_fields_go_out_only_with_their_code() {
        let (status, body) = answer(RelayError::revision_conflict(7)).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(body.error.code, "REVISION_CONFLICT");
        assert_eq!(body.error.current_revision, Some(7));
        assert_eq!(body.error.message_id, None);
        let (status, body) = answer(RelayError::model_state_mismatch(
            "m2".into(),
            "stale".into(),
        ))
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body.error.message_id.as_deref(), Some("m2"));
        assert_eq!(body.error.current_revision, None);
    }

    #[test]
    fn logged_causes_name_each_link_of_the_chain_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("database: {0}")]
        struct Quoting(#[source] std::io::Error);
        #[derive(Debug, thiserror::Error)]
        #[error("writer gone")]
        struct Terse(#[source] std::io::Error);
        let io = || std::io::Error::other("disk full");
        assert_eq!(causes(&Quoting(io())), "database: disk full");
        assert_eq!(causes(&Terse(io())), "writer gone: disk full");
    }
}
