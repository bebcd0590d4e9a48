//! Strict JSON parsing for configuration: serde_json silently keeps the last of duplicate keys, which would
//! let a forgotten second `"baseUrl"` win unnoticed. [`parse_strict`] rejects duplicate keys and trailing data
//! and reports the path of the offending field (via `serde_path_to_error`), then deserialises the typed value
//! (whose types use `deny_unknown_fields`) from the checked tree.
//!
//! Why not `patchbridge_protocol::unique` (the same check for tool-call arguments): its message quotes the key
//! with Rust's `{:?}` (`duplicate key "a"`), this one with backticks (`` duplicate key `a` ``), which the config
//! tests pin and [`parse_strict`] reads back to name the key in the error path; and the protocol crate is
//! compiled into the wasm runtime, whose size budget a configurable message would spend.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A JSON value whose objects were checked for duplicate keys while parsing.
struct NoDuplicates(Value);

impl<'de> de::Deserialize<'de> for NoDuplicates {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(NoDuplicatesVisitor)
            .map(NoDuplicates)
    }
}

struct NoDuplicatesVisitor;

impl<'de> Visitor<'de> for NoDuplicatesVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("non-finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(NoDuplicatesVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(NoDuplicates(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut seen = HashSet::new();
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            let NoDuplicates(value) = map.next_value()?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// A parse failure with the dotted path of the offending field (`models[0].baseUrl`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictJsonError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for StrictJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Parses `text` as one JSON document without duplicate keys, then as `T`.
pub fn parse_strict<T: DeserializeOwned>(text: &str) -> Result<T, StrictJsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let NoDuplicates(value) = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let mut path = e.path().to_string();
        let message = e.inner().to_string();
        // The duplicate is detected in its parent object; name the key itself in the path.
        if let Some(key) = message
            .strip_prefix("duplicate key `")
            .and_then(|rest| rest.split('`').next())
        {
            path = if path.is_empty() || path == "." {
                key.to_owned()
            } else {
                format!("{path}.{key}")
            };
        }
        StrictJsonError { path, message }
    })?;
    de.end().map_err(|e| StrictJsonError {
        path: String::new(),
        message: format!("trailing data: {e}"),
    })?;
    serde_path_to_error::deserialize(value).map_err(|e| StrictJsonError {
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        #[allow(dead_code)]
        inner: Inner,
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        #[allow(dead_code)]
        a: u32,
    }

    #[test]
    fn duplicate_key_is_rejected_with_its_path() {
        let err = parse_strict::<Outer>(r#"{"inner":{"a":1,"a":2}}"#).unwrap_err();
        assert_eq!(err.path, "inner.a");
        assert!(err.message.contains("duplicate key `a`"), "{err}");
    }

    #[test]
    fn unknown_key_is_rejected_with_its_path() {
        let err = parse_strict::<Outer>(r#"{"inner":{"a":1,"b":2}}"#).unwrap_err();
        assert_eq!(err.path, "inner.b");
    }

    #[test]
    fn trailing_document_is_rejected() {
        assert!(parse_strict::<Outer>(r#"{"inner":{"a":1}} {}"#).is_err());
    }
}
