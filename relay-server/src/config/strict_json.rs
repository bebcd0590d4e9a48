//! Strict JSON parsing for configuration: serde_json silently keeps the last of duplicate keys, which would
//! let a forgotten second `"baseUrl"` win unnoticed. [`parse_strict`] rejects duplicate keys (with
//! `patchbridge_protocol::unique`, the check tool-call arguments get) and trailing data and reports the path of
//! the offending field (via `serde_path_to_error`), then deserialises the typed value (whose types use
//! `deny_unknown_fields`) from the checked tree.

use std::fmt;

use patchbridge_protocol::unique;
use serde::de::DeserializeOwned;

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
    let mut track = serde_path_to_error::Track::new();
    let value =
        unique::from_deserializer(serde_path_to_error::Deserializer::new(&mut de, &mut track))
            .map_err(|e| {
                let path = track.path().to_string();
                match e {
                    // The duplicate is detected in its parent object; the path names the key itself.
                    unique::ReadError::DuplicateKey { key, error } => {
                        // Where serde_json's own message would say it.
                        let at = match error.line() {
                            0 => String::new(),
                            line => format!(" at line {line} column {}", error.column()),
                        };
                        StrictJsonError {
                            message: format!("duplicate key `{key}`{at}"),
                            path: if path.is_empty() || path == "." {
                                key
                            } else {
                                format!("{path}.{key}")
                            },
                        }
                    }
                    unique::ReadError::Other(error) => StrictJsonError {
                        path,
                        message: error.to_string(),
                    },
                }
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
        assert_eq!(err.message, "duplicate key `a` at line 1 column 19");
        let err = parse_strict::<Outer>("{\"inner\":{},\n\"inner\":{}}").unwrap_err();
        assert_eq!(err.path, "inner");
        assert_eq!(err.message, "duplicate key `inner` at line 2 column 7");
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
