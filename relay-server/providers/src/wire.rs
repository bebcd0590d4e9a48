//! Reading provider events, shared by the three decoders: one parse of an SSE message's JSON, the event's type,
//! and lenient field access (an absent or mistyped optional field reads as empty; what must be present is
//! checked where it is used).

use serde_json::Value;

use crate::AdapterError;

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
