//! Reading provider events, shared by the three decoders: one parse of an SSE message's JSON, the event's type,
//! and lenient field access (an absent or mistyped optional field reads as empty; what must be present is
//! checked where it is used).

use serde_json::Value;

use crate::{AdapterError, UpstreamFailure};

/// An [`AdapterError::UpstreamProtocol`]: the provider broke its own wire format.
pub(crate) fn protocol(msg: impl Into<String>) -> AdapterError {
    AdapterError::UpstreamProtocol(msg.into())
}

/// Parses the `data:` of one SSE message of `provider`'s stream.
pub(crate) fn parse(provider: &str, event: &str, data: &str) -> Result<Value, AdapterError> {
    serde_json::from_str(data)
        .map_err(|e| protocol(format!("malformed JSON in {provider} event {event:?}: {e}")))
}

/// The event's `type`; the SSE `event:` name when the JSON has none.
pub(crate) fn event_type<'a>(value: &'a Value, event: &'a str) -> &'a str {
    value.get("type").and_then(Value::as_str).unwrap_or(event)
}

/// A string field, `""` when absent.
pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An index field, 0 when absent (providers omit the index of the only item).
pub(crate) fn index_field(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The error a provider reported inside its stream, from any of the shapes providers use: fields nested under
/// `error` (OpenAI Responses `error` events as they really arrive, Anthropic `error` events, Chat Completions
/// error chunks) or at the top level (the Responses reference's flat `error` event, `response.error`). The kind
/// comes from `code`, then `type` when the code says nothing classifiable (OpenAI sends `code: null` with
/// `type: "server_error"`); a numeric `code` is an HTTP status (OpenRouter).
pub(crate) fn provider_error(value: &Value) -> AdapterError {
    let error = match value.get("error") {
        Some(nested) if nested.is_object() => nested,
        _ => value,
    };
    let code = error.get("code");
    let kind = str_field(error, "type");
    let by_status = code.and_then(Value::as_u64).map(|status| match status {
        429 => UpstreamFailure::RateLimited,
        500..=599 => UpstreamFailure::Unavailable,
        _ => UpstreamFailure::Rejected,
    });
    let code_text = code.and_then(Value::as_str).unwrap_or("");
    let failure = by_status.unwrap_or_else(|| match UpstreamFailure::classify(code_text) {
        UpstreamFailure::Rejected => UpstreamFailure::classify(kind),
        found => found,
    });
    let label = match code {
        Some(Value::String(c)) if !c.is_empty() => c.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => kind.to_owned(),
    };
    AdapterError::Upstream {
        failure,
        detail: format!("{label}: {}", str_field(error, "message")),
    }
}
