//! The one way the runtime's JSON values become text. The values themselves are built by hand
//! (`patchbridge_protocol::ToValue`, implemented by the wire types and by the runtime's own data): serde's derived
//! `Serialize`, instantiated for serde_json's value serializer, compiled one serializer per type and one
//! `serialize_field` per field type into the wasm.
//!
//! Writing a `Value` as text cannot fail (`serde_json` fails only on non-string map keys or a failing
//! hand-written `Serialize`, and a `Value` has neither). A failure would therefore be a bug, and it stops the
//! program where it happens instead of reaching a host as a `null` it would take for data.

use patchbridge_protocol::ToValue;
use serde_json::{Map, Value};

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

/// A core or wire value (its hand-written [`ToValue`]) as compact JSON text.
pub fn text_of<T: ToValue + ?Sized>(value: &T) -> String {
    to_text(&value.to_value())
}
