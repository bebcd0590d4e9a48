//! [`StrictJson`]: reads a request body under the configured byte bound (413 past it) and parses it strictly
//! (400 `INVALID_REQUEST` naming the path of the bad field; unknown keys are rejected by the wire types).

use axum::extract::{FromRequest, Request};
use http_body_util::{BodyExt, Limited};
use serde::de::DeserializeOwned;

use crate::error::RelayError;
use crate::state::AppState;

pub struct StrictJson<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for StrictJson<T> {
    type Rejection = RelayError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, RelayError> {
        let limit = usize::try_from(state.inner.limits.max_request_bytes).unwrap_or(usize::MAX);
        let bytes = read_limited(request, limit).await?;
        parse_json(&bytes).map(StrictJson)
    }
}

/// Reads the whole body, failing with `PAYLOAD_TOO_LARGE` past `limit` bytes.
pub async fn read_limited(request: Request, limit: usize) -> Result<bytes::Bytes, RelayError> {
    let too_large = || RelayError::PayloadTooLarge(format!("request body exceeds {limit} bytes"));
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
        Err(e) => Err(RelayError::InvalidRequest(format!(
            "could not read the request body: {e}"
        ))),
    }
}

/// Strict parse with the path of the first bad field in the message.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, RelayError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            RelayError::InvalidRequest(format!("invalid JSON body: {inner}"))
        } else {
            RelayError::InvalidRequest(format!("invalid JSON body at `{path}`: {inner}"))
        }
    })?;
    de.end().map_err(|e| {
        RelayError::InvalidRequest(format!("trailing data after the JSON body: {e}"))
    })?;
    Ok(value)
}
