//! JSON values of the runtime's own data, and the one way they become text.
//!
//! Serialising that data cannot fail: every type is plain data with string keys (`serde_json` fails only on
//! non-string map keys or a failing hand-written `Serialize`). A failure would therefore be a bug in this
//! crate, and it stops the program where it happens instead of reaching a host as a `null` it would take for
//! data.

use serde::Serialize;
use serde_json::{Map, Value};

/// `value` as a JSON value.
///
/// # Panics
/// When `value`'s `Serialize` fails, which the runtime's types never do (see the module documentation).
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Value {
    match serde_json::to_value(value) {
        Ok(value) => value,
        Err(error) => panic!("the runtime's own data failed to serialise: {error}"),
    }
}

/// `value` as compact JSON text. Every JSON text the runtime writes goes through here (or [`map_text`], which
/// shares its serializer): `Value`'s `Display` would add a second compact writer behind a `fmt::Write` adapter
/// plus the pretty printer for `{:#}`, so using both would link three writers where one does.
///
/// # Panics
/// Never in practice: a `Value` always serialises (see the module documentation).
pub fn to_text(value: &Value) -> String {
    match serde_json::to_string(value) {
        Ok(text) => text,
        Err(error) => panic!("a JSON value failed to serialise: {error}"),
    }
}

/// A JSON object as compact text, written from the map itself (no `Value` copy of it first).
///
/// # Panics
/// Never in practice, as [`to_text`].
pub fn map_text(map: &Map<String, Value>) -> String {
    match serde_json::to_string(map) {
        Ok(text) => text,
        Err(error) => panic!("a JSON object failed to serialise: {error}"),
    }
}

/// A serialisable value as compact JSON text. Always through its `Value` (one serializer instantiation per
/// type, and only `Value` is ever written as text): this keeps the wasm small.
pub fn text_of<T: Serialize + ?Sized>(value: &T) -> String {
    to_text(&to_value(value))
}
