//! Sending one encoded request upstream, one attempt at a time: [`Prepared`] holds the URL, headers and body
//! built once per call, [`Prepared::send`] makes one attempt and classifies its failure as a typed
//! [`RelayError`] (the retry decision is `model/retry.rs`). Upstream error bodies are logged redacted and never
//! returned.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER,
    USER_AGENT,
};
use hyper::{Method, Request};
use patchbridge_protocol::RelayErrorCode;
use patchbridge_providers::UpstreamRequest;

use super::client::{self, UpstreamResponse};
use crate::config::{AuthScheme, ValidatedModel};
use crate::error::RelayError;
use crate::state::AppState;

/// The largest upstream error body read for the log.
const ERROR_BODY_LOG_BYTES: usize = 4096;

/// A failed attempt: the typed error, and the provider's `Retry-After` when it sent one.
#[derive(Debug)]
pub struct Failed {
    pub error: RelayError,
    pub retry_after: Option<Duration>,
}

/// The error of an upstream answer with a non-2xx `status`: 429 is rate limiting, 5xx unavailability, every
/// other status (4xx, a 3xx: redirects are never followed) a rejection.
pub fn error_for_status(status: u16) -> RelayError {
    let code = match status {
        429 => RelayErrorCode::UpstreamRateLimited,
        500..=599 => RelayErrorCode::UpstreamUnavailable,
        _ => RelayErrorCode::UpstreamRejected,
    };
    RelayError::from(code).with_source(format!("upstream status {status}"))
}

/// One call's upstream request, ready to be sent (again).
pub struct Prepared<'a> {
    model: &'a ValidatedModel,
    request: &'a UpstreamRequest,
    request_id: Option<&'a HeaderValue>,
    /// The headers of the first attempt; a retry builds its own (most calls make one attempt, and a copy
    /// kept for a retry would cost a `HeaderMap` clone per call).
    headers: Option<HeaderMap>,
    body: Bytes,
}

impl<'a> Prepared<'a> {
    /// Builds the headers (with the API key and `request_id`, the browser request's `x-request-id`, so
    /// provider-side logs can be matched with ours) and the body. The URL is the model's `endpoint`, built at
    /// start-up from the same provider path the adapter names.
    pub fn new(
        model: &'a ValidatedModel,
        request: &'a UpstreamRequest,
        request_id: Option<&'a HeaderValue>,
    ) -> Result<Self, RelayError> {
        debug_assert!(model.endpoint.path().ends_with(request.path));
        Ok(Prepared {
            model,
            request,
            request_id,
            headers: Some(build_headers(model, request, request_id)?),
            body: Bytes::from(serde_json::to_vec(&request.body).map_err(RelayError::internal)?),
        })
    }

    /// One attempt: a 2xx response whose body has not been read yet, or the failure. Waits for the response
    /// headers at most until `first_byte` after `started`, the call's arrival (the first-byte timeout, or an
    /// earlier bound when the call may fail over, `model/failover.rs`).
    pub async fn send(
        &mut self,
        state: &AppState,
        started: Instant,
        first_byte: Duration,
    ) -> Result<UpstreamResponse, Failed> {
        let failed = |error| Failed {
            error,
            retry_after: None,
        };
        let remaining = first_byte.saturating_sub(started.elapsed());
        let headers = match self.headers.take() {
            Some(headers) => headers,
            None => build_headers(self.model, self.request, self.request_id).map_err(failed)?,
        };
        let mut request = Request::new(Full::new(self.body.clone()));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.model.endpoint.clone();
        *request.headers_mut() = headers;
        let sent = state.inner.http.send(request);
        match tokio::time::timeout(remaining, sent).await {
            Err(_) => Err(failed(
                RelayError::from(RelayErrorCode::UpstreamTimeout).with_source(format!(
                    "no response headers within {} ms",
                    first_byte.as_millis()
                )),
            )),
            // Connecting (including its timeout), TLS, a proxy's refusal, a connection that closed before
            // the response head: the provider could not be reached.
            Ok(Err(e)) => Err(failed(
                RelayError::from(RelayErrorCode::UpstreamUnavailable)
                    .with_source(redact(&client::describe(&e), &self.secrets())),
            )),
            Ok(Ok(response)) if response.status().is_success() => Ok(response),
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let text = read_error_body(response).await;
                tracing::warn!(
                    model = %self.model.config.id,
                    status,
                    body = %redact(&text, &self.secrets()),
                    "upstream answered with an error"
                );
                Err(Failed {
                    error: error_for_status(status),
                    retry_after,
                })
            }
        }
    }

    fn secrets(&self) -> Vec<&str> {
        self.model.api_key.iter().map(|s| s.expose()).collect()
    }
}

fn build_headers(
    model: &ValidatedModel,
    request: &UpstreamRequest,
    request_id: Option<&HeaderValue>,
) -> Result<HeaderMap, RelayError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    headers.insert(
        USER_AGENT,
        HeaderValue::from_static(concat!("patchbridge-relay/", env!("CARGO_PKG_VERSION"))),
    );
    if let Some(id) = request_id {
        headers.insert(crate::REQUEST_ID, id.clone());
    }
    for (name, value) in &request.headers {
        let name = HeaderName::from_static(name);
        let value = HeaderValue::from_str(value).map_err(RelayError::internal)?;
        headers.insert(name, value);
    }
    if let Some(key) = &model.api_key {
        let (name, value) = match model.auth_scheme {
            AuthScheme::Bearer => (AUTHORIZATION, format!("Bearer {}", key.expose())),
            AuthScheme::XApiKey => (
                HeaderName::from_static("x-api-key"),
                key.expose().to_owned(),
            ),
            AuthScheme::None => unreachable!("validated: no key with authScheme none"),
        };
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            RelayError::internal(format!(
                "model {}: API key is not a valid header value",
                model.config.id
            ))
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}

async fn read_error_body(response: UpstreamResponse) -> String {
    let mut body = response.into_body();
    let mut out = Vec::new();
    let read = async {
        while let Some(Ok(frame)) = body.frame().await {
            if let Some(chunk) = frame.data_ref() {
                out.extend_from_slice(chunk);
            }
            if out.len() >= ERROR_BODY_LOG_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), read).await;
    out.truncate(ERROR_BODY_LOG_BYTES);
    String::from_utf8_lossy(&out).into_owned()
}

/// Longest redacted text kept for the log, in characters.
pub const REDACTED_MAX_CHARS: usize = 2000;
/// Characters of an `sk-` style key after its prefix (OpenAI `sk-proj-…`, Anthropic `sk-ant-…`).
const KEY_CHAR_MIN: usize = 8;

/// Redacts an upstream text for the log: known secrets, `sk-…` style keys (also glued to the preceding text,
/// as in `key=sk-…`) and bearer tokens are masked, a trailing piece of a known secret (the text was cut
/// before it reached us) is masked too, and only then is the text cut to [`REDACTED_MAX_CHARS`]: cutting
/// first would leave the start of a key that straddles the cut unrecognised.
pub fn redact(text: &str, secrets: &[&str]) -> String {
    // Bound the work on huge texts without cutting through anything that could still be masked: the margin
    // covers the longest secret, and an `sk-` key run is masked to its end even when it is cut here.
    let margin = secrets.iter().map(|s| s.len()).max().unwrap_or(0) + 64;
    let mut out = match text.char_indices().nth(REDACTED_MAX_CHARS + margin) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.to_owned(),
    };
    for secret in secrets {
        if secret.len() >= 4 {
            out = out.replace(secret, "<redacted>");
            mask_trailing_prefix(&mut out, secret);
        }
    }
    let out = mask_sk_keys(&out);
    let out = mask_bearer_tokens(&out);
    match out.char_indices().nth(REDACTED_MAX_CHARS) {
        Some((cut, _)) => out[..cut].to_owned(),
        None => out,
    }
}

/// The text ends with the first 4 or more bytes of `secret`: the rest was cut off before redaction.
fn mask_trailing_prefix(text: &mut String, secret: &str) {
    let longest = secret.len().min(text.len());
    for len in (4..=longest).rev() {
        if secret.is_char_boundary(len) && text.ends_with(&secret[..len]) {
            text.truncate(text.len() - len);
            text.push_str("<redacted>");
            return;
        }
    }
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// Masks every `sk-` followed by at least [`KEY_CHAR_MIN`] key characters, wherever it starts.
fn mask_sk_keys(text: &str) -> String {
    let mut result = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("sk-") {
        let after = &rest[at + 3..];
        let run = after.find(|c: char| !is_key_char(c)).unwrap_or(after.len());
        if run >= KEY_CHAR_MIN {
            result.push_str(&rest[..at]);
            result.push_str("<redacted>");
            rest = &after[run..];
        } else {
            result.push_str(&rest[..at + 3]);
            rest = after;
        }
    }
    result.push_str(rest);
    result
}

/// Masks the word after `bearer` (any case).
fn mask_bearer_tokens(text: &str) -> String {
    let mut result = String::with_capacity(text.len());
    let mut mask_next = false;
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            result.push(' ');
        }
        let trimmed = word.trim_matches(|c: char| c == '"' || c == '\'' || c == ',');
        if mask_next && !trimmed.is_empty() {
            result.push_str("<redacted>");
        } else {
            result.push_str(word);
        }
        if !trimmed.is_empty() || !mask_next {
            mask_next = trimmed.eq_ignore_ascii_case("bearer");
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_masks_keys_and_bearer_tokens() {
        let text = r#"{"error":"Incorrect API key provided: sk-proj-abcdef123456", "auth": "Bearer abc.def.ghi", "k": "mysecretvalue"}"#;
        let red = redact(text, &["mysecretvalue"]);
        assert!(!red.contains("sk-proj-abcdef123456"), "{red}");
        assert!(!red.contains("abc.def.ghi"), "{red}");
        assert!(!red.contains("mysecretvalue"), "{red}");
        assert!(red.contains("Incorrect API key provided"));
    }

    /// Every offset of a key around the cut, for an `sk-` key, one glued to the preceding text and a plain
    /// configured key: no 6-character piece of the key survives.
    #[test]
    fn keys_straddling_the_cut_are_masked_whole() {
        let sk = "sk-proj-QWERTYUIOPASDFGHJKLZXCVBNM0987654321";
        let plain = "PLAINKEYqwertyuiopasdfghjklzxcvbnm";
        let leaks = |text: &str, key: &str| {
            key.as_bytes()
                .windows(6)
                .map(|w| std::str::from_utf8(w).unwrap())
                .find(|piece| text.contains(piece) && !"<redacted>".contains(piece))
                .map(str::to_owned)
        };
        for offset in REDACTED_MAX_CHARS - 60..REDACTED_MAX_CHARS + 10 {
            for (key, glue, secrets) in [
                (sk, " ", &[][..]),
                (sk, "key=", &[][..]),
                (sk, "xx", &[][..]),
                (plain, " ", &[plain][..]),
                (plain, "x", &[plain][..]),
            ] {
                let text = format!("{}{glue}{key} tail words", "é".repeat(offset));
                let red = redact(&text, secrets);
                assert!(red.chars().count() <= REDACTED_MAX_CHARS);
                assert_eq!(
                    leaks(&red, key),
                    None,
                    "offset {offset}, glue {glue:?}: {red:?}"
                );
            }
        }
        // A text already cut inside a configured key (a bounded error body) ends with its first part.
        let cut = format!("error: {}", &plain[..20]);
        assert_eq!(leaks(&redact(&cut, &[plain]), plain), None);
    }

    #[test]
    fn ordinary_words_survive_redaction() {
        let text = "task-list is fine; ask-me too; sk-short; the bearer of news";
        assert_eq!(
            redact(text, &[]),
            "task-list is fine; ask-me too; sk-short; the bearer <redacted> news"
        );
    }
}
