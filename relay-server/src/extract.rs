//! The relay's request extractors, each answering a bad request with a [`RelayError`] (the documented JSON error
//! body), never axum's plain text: [`Query`] and [`Path`] are axum's, with their rejections converted by
//! `From` in `error.rs`.
//!
//! [`StrictJson`]: reads a request body under the configured byte bound (413 past it) and time bound
//! (`limits.requestBodyTimeoutMs`, 408 past it: a client that sends its body slowly cannot hold a connection
//! and a task for ever) and parses it strictly (400 `INVALID_REQUEST` naming the path of the bad field;
//! unknown keys are rejected by the wire types). Large bodies are parsed off the async workers.

use axum::extract::{FromRequest, FromRequestParts, Request};
use http_body_util::{BodyExt, Limited};
use patchbridge_protocol::RelayErrorCode;
use serde::de::DeserializeOwned;

use crate::error::RelayError;
use crate::state::AppState;

/// `axum::extract::Query`, rejecting with `INVALID_REQUEST` (`From<QueryRejection> for RelayError`).
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(RelayError))]
pub struct Query<T>(pub T);

/// `axum::extract::Path`, rejecting with `NOT_FOUND` (`From<PathRejection> for RelayError`).
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(RelayError))]
pub struct Path<T>(pub T);

pub struct StrictJson<T>(pub T);

impl<T: DeserializeOwned + Send + 'static> FromRequest<AppState> for StrictJson<T> {
    type Rejection = RelayError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, RelayError> {
        let limits = state.inner.limits;
        let limit = usize::try_from(limits.max_request_bytes).unwrap_or(usize::MAX);
        let timeout = std::time::Duration::from_millis(limits.request_body_timeout_ms);
        let bytes = tokio::time::timeout(timeout, read_limited(request, limit))
            .await
            .map_err(|_| RelayError::from(RelayErrorCode::RequestTimeout))??;
        if fits_inline(bytes.len()) {
            return parse_json(&bytes).map(StrictJson);
        }
        state
            .heavy(move || parse_json(&bytes))
            .await?
            .map(StrictJson)
    }
}

/// Bodies up to this size are parsed in place (well under a millisecond); larger ones on the blocking pool.
const INLINE_PARSE_BYTES: usize = 64 * 1024;

/// Whether work linear in a body of `len` bytes (parsing it, encoding it for a provider) is small enough to do
/// in place on the async worker: a hop to the blocking pool costs two thread wake-ups, tens of microseconds,
/// more than such work itself.
fn fits_inline(len: usize) -> bool {
    len <= INLINE_PARSE_BYTES
}

/// [`fits_inline`] for a request whose body was already read: by its declared `Content-Length` (a body sent
/// without one counts as large).
pub fn is_small_body(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(fits_inline)
}

/// Reads the whole body, failing with `PAYLOAD_TOO_LARGE` past `limit` bytes.
pub async fn read_limited(request: Request, limit: usize) -> Result<bytes::Bytes, RelayError> {
    let too_large = || {
        RelayError::new(
            RelayErrorCode::PayloadTooLarge,
            format!("request body exceeds {limit} bytes"),
        )
    };
    if let Some(len) = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    {
        if len > limit as u64 {
            return Err(too_large());
        }
    }
    match Limited::new(request.into_body(), limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(too_large())
        }
        Err(e) => Err(RelayError::new(
            RelayErrorCode::InvalidRequest,
            format!("could not read the request body: {e}"),
        )),
    }
}

/// Strict parse with the path of the first bad field in the message.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, RelayError> {
    // The plain parse accepts exactly what the path-tracking one accepts and costs less; the second parse, only
    // for a body that fails, is what names the path of the bad field.
    if let Ok(value) = serde_json::from_slice(bytes) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = if path.is_empty() || path == "." {
            format!("invalid JSON body: {inner}")
        } else {
            format!("invalid JSON body at `{path}`: {inner}")
        };
        RelayError::new(RelayErrorCode::InvalidRequest, message)
    })?;
    de.end().map_err(|e| {
        RelayError::new(
            RelayErrorCode::InvalidRequest,
            format!("trailing data after the JSON body: {e}"),
        )
    })?;
    Ok(value)
}
