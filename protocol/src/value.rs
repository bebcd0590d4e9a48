//! Reading wire values out of an already parsed `serde_json::Value` ([`FromValue`]): the fields of a tagged
//! enum's variant (`tagged.rs` reads the object once into `(key, Value)` pairs), and the structs and enums found
//! inside them (`ModelState`, `Usage`, an image `source`, a `block-start`'s `block`).
//!
//! Values are converted by plain matches rather than through serde_json's `Value` deserializer: each type read
//! that way (`String`, `bool`, their `Option`s, `StopReason`'s enum access) was its own instance of that
//! deserializer in the wasm bundle, and with exact number text (`arbitrary_precision`) its number handling
//! carries float parsing and formatting into it. The error texts are the ones that deserializer gives for the
//! same value (`tests/tagged_equivalence.rs`).

use serde::de;
use serde_json::{Map, Value};

/// A wire value read from a `Value`, failing with serde's error text for the same input.
pub trait FromValue: Sized {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E>;
}

/// How serde names a `Value` it did not expect (numbers as "number", whatever their kind).
pub(crate) fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
        Value::Number(_) => de::Unexpected::Other("number"),
    }
}

/// The "invalid type" error a visitor expecting `expected` gives for `value` when it is read with
/// `deserialize_any` (numbers named by their kind and text, as serde words them).
pub(crate) fn invalid_type_any<E: de::Error>(value: &Value, expected: &dyn de::Expected) -> E {
    let Value::Number(n) = value else {
        return E::invalid_type(unexpected(value), expected);
    };
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => E::invalid_type(de::Unexpected::Unsigned(u), expected),
        (None, Some(i)) => E::invalid_type(de::Unexpected::Signed(i), expected),
        _ => E::custom(format_args!(
            "invalid type: floating point `{n}`, expected {expected}"
        )),
    }
}

/// Walks an object's fields in document order: a repeated key fails at once, an unknown key too unless
/// `lenient` (then it is skipped: events and usage come from the relay or a model, and a newer relay may add
/// keys, docs/protocol.md "Forward compatibility"); `set(i, value)` stores (and type-checks) the value of declared
/// field `i`. The setter is a `dyn` so that the walk is compiled once per error type, not once per type read.
pub fn walk<E: de::Error>(
    fields: Vec<(String, Value)>,
    names: &'static [&'static str],
    lenient: bool,
    set: &mut dyn FnMut(usize, Value) -> Result<(), E>,
) -> Result<(), E> {
    let mut seen = 0u32;
    for (key, value) in fields {
        let Some(i) = names.iter().position(|name| *name == key) else {
            if lenient {
                continue;
            }
            return Err(E::unknown_field(&key, names));
        };
        if seen & (1 << i) != 0 {
            return Err(E::duplicate_field(names[i]));
        }
        seen |= 1 << i;
        set(i, value)?;
    }
    Ok(())
}

/// A struct's object as its fields ("invalid type: …, expected struct X" for anything else).
pub fn object_value<E: de::Error>(
    value: Value,
    expecting: &'static str,
) -> Result<Vec<(String, Value)>, E> {
    match value {
        Value::Object(map) => Ok(map.into_iter().collect()),
        other => Err(E::invalid_type(unexpected(&other), &expecting)),
    }
}

/// A non-negative integer of at most `max` ("u32", "u64" in the errors).
fn unsigned<E: de::Error>(value: &Value, max: u64, expected: &'static str) -> Result<u64, E> {
    match value {
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) if u <= max => Ok(u),
            (Some(u), _) => Err(E::invalid_value(de::Unexpected::Unsigned(u), &expected)),
            (None, Some(i)) => Err(E::invalid_value(de::Unexpected::Signed(i), &expected)),
            _ => Err(invalid_type_any(value, &expected)),
        },
        other => Err(E::invalid_type(unexpected(other), &expected)),
    }
}

impl FromValue for String {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        match value {
            Value::String(text) => Ok(text),
            other => Err(E::invalid_type(unexpected(&other), &"a string")),
        }
    }
}

impl FromValue for bool {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(E::invalid_type(unexpected(&other), &"a boolean")),
        }
    }
}

impl FromValue for u32 {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        unsigned(&value, u32::MAX as u64, "u32").map(|u| u as u32)
    }
}

impl FromValue for u64 {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        unsigned(&value, u64::MAX, "u64")
    }
}

/// `null` is `None`, anything else is read as `T`.
impl<T: FromValue> FromValue for Option<T> {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// Pass-through JSON (`ModelState.data`), moved as it is.
impl FromValue for Value {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        Ok(value)
    }
}

/// A JSON object (tool-call `input`), moved rather than read again value by value.
impl FromValue for Map<String, Value> {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        match value {
            Value::Object(map) => Ok(map),
            other => Err(E::invalid_type(unexpected(&other), &"a map")),
        }
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        match value {
            Value::Array(items) => items.into_iter().map(T::from_value).collect(),
            other => Err(E::invalid_type(unexpected(&other), &"a sequence")),
        }
    }
}
