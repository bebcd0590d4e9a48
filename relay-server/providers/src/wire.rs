//! Reading provider events, shared by the three decoders: one parse of an SSE message's JSON, the event's type,
//! and lenient field access (an absent or mistyped optional field reads as empty; what must be present is
//! checked where it is used). `typed`: the field types the decoders' fast paths read their common events with.

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

/// Typed reading for the decoders' fast paths (`openai_chat/text_chunk.rs`, `anthropic/block_delta.rs`): field
/// types that accept exactly what [`parse`] accepts for them, so a fast path never takes an event the general
/// path would refuse as malformed.
pub(crate) mod typed {
    use std::borrow::Cow;
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::value::MapAccessDeserializer;
    use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
    use serde::Deserialize;

    /// A string, borrowed from the event's text when it holds no escapes.
    #[derive(Deserialize)]
    #[serde(transparent)]
    pub(crate) struct Str<'a>(#[serde(borrow)] pub Cow<'a, str>);

    /// A struct read only from a JSON object. serde's derived structs also take the array form (`["a"]` as the
    /// struct's first field), which the general path never reads as fields (`Value::get` of an array is `None`),
    /// so every struct a fast path reads is wrapped in this.
    pub(crate) struct Object<T>(pub T);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Fields<T>(PhantomData<T>);

            impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
                type Value = T;

                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }

                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                    T::deserialize(MapAccessDeserializer::new(map))
                }
            }

            deserializer
                .deserialize_map(Fields(PhantomData))
                .map(Object)
        }
    }

    /// Accepts nothing: as `Option<Null>`, a field that may only be null or absent.
    pub(crate) struct Null;

    impl<'de> Deserialize<'de> for Null {
        fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
            Err(serde::de::Error::custom("not null"))
        }
    }

    /// Any JSON value, read past and kept nowhere, for a field the general path ignores. Unlike
    /// `serde::de::IgnoredAny` it reads the value the way [`super::parse`] does (through `deserialize_any`):
    /// strings are decoded (a lone surrogate escape is an error), nesting is limited to the same depth, and an
    /// object keyed by serde_json's private number token is read as `Value` reads it (below), so it accepts
    /// exactly the values a `Value` parse accepts.
    pub(crate) struct Skip;

    /// The key by which serde_json hands a number over as its text under `arbitrary_precision` (a one-entry map),
    /// and by which `Value` reads any object whose first key it is as a number.
    const NUMBER_TOKEN: &str = "$serde_json::private::Number";
    /// serde_json's other private token (`raw_value`): an object whose first key it is becomes a raw value.
    const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

    /// The first key of an object read by [`Skip`]: whether it is one of serde_json's private tokens.
    enum FirstKey {
        Number,
        RawValue,
        Other,
    }

    impl<'de> Deserialize<'de> for FirstKey {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let key = Str::deserialize(deserializer)?.0;
            Ok(match key.as_ref() {
                NUMBER_TOKEN => FirstKey::Number,
                RAW_VALUE_TOKEN => FirstKey::RawValue,
                _ => FirstKey::Other,
            })
        }
    }

    impl<'de> Deserialize<'de> for Skip {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(Skip)
        }
    }

    impl<'de> Visitor<'de> for Skip {
        type Value = Skip;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }

        fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_unit<E>(self) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
            while seq.next_element::<Skip>()?.is_some() {}
            Ok(Skip)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
            match map.next_key::<FirstKey>()? {
                None => return Ok(Skip),
                // As `Value` reads it with `arbitrary_precision` (which the protocol crate turns on): a number
                // whose text is the value, and the object must end there (serde_json then refuses any other
                // entry). Without the feature `Value` would take it as an object: refusing more is only slower.
                Some(FirstKey::Number) => {
                    let text = map.next_value::<Str<'de>>()?.0;
                    text.parse::<serde_json::Number>()
                        .map_err(serde::de::Error::custom)?;
                    return Ok(Skip);
                }
                // Only with `raw_value`, which nothing here turns on: refused, the general path reads it.
                Some(FirstKey::RawValue) => {
                    return Err(serde::de::Error::custom("serde_json's raw value token"))
                }
                Some(FirstKey::Other) => {
                    map.next_value::<Skip>()?;
                }
            }
            while map.next_key::<Skip>()?.is_some() {
                map.next_value::<Skip>()?;
            }
            Ok(Skip)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::typed::{Skip, Str};
    use serde::Deserialize;

    #[test]
    fn str_borrows_unescaped_text_even_inside_an_option() {
        let read: Option<Str<'_>> = serde_json::from_str(r#""plain""#).unwrap();
        assert!(matches!(read, Some(Str(Cow::Borrowed("plain")))));
        let read: Option<Str<'_>> = serde_json::from_str(r#""a\"b""#).unwrap();
        assert!(matches!(read, Some(Str(Cow::Owned(s))) if s == "a\"b"));
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Holder {
        field: Skip,
    }

    #[test]
    fn skip_accepts_exactly_what_a_value_parse_accepts() {
        let mut values: Vec<String> = [
            "null",
            "true",
            "0",
            "-0",
            "1.5e-3",
            "1e999",
            "-1e999",
            "18446744073709551616",
            "\"a\"",
            "\"\\ud83d\\ude00\"",
            "\"\\ud800\"",
            "\"\\udc00x\"",
            "\"\\u00zz\"",
            "\"\u{1}\"",
            "{\"a\":1,\"a\":2}",
            "{\"\\ud800\":1}",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "nul",
            // serde_json's private number token, which `Value` reads as a number when it is the first key.
            "{\"$serde_json::private::Number\":\"5\"}",
            "{\"$serde_json::private::Number\":\"-1.5e3\"}",
            "{\"$serde_json::private::Number\":\"x\"}",
            "{\"$serde_json::private::Number\":\"\"}",
            "{\"$serde_json::private::Number\":5}",
            "{\"$serde_json::private::Number\":null}",
            "{\"$serde_json::private::Number\":\"5\",\"a\":1}",
            "{\"\\u0024serde_json::private::Number\":\"x\"}",
            "{\"a\":1,\"$serde_json::private::Number\":\"x\"}",
            "[{\"$serde_json::private::Number\":[]}]",
        ]
        .iter()
        .map(|v| (*v).to_owned())
        .collect();
        for depth in 124..=130 {
            values.push(format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            values.push(format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)));
        }
        for value in values {
            let data = format!("{{\"field\":{value}}}");
            assert_eq!(
                serde_json::from_str::<Holder>(&data).is_ok(),
                serde_json::from_str::<serde_json::Value>(&data).is_ok(),
                "{data}"
            );
        }
    }
}
