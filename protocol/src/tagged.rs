//! The one reader of the internally tagged enums (`Block`, `ImageSource`, `StreamEvent`, `BlockKind`), whose
//! `Deserialize` [`wire!`](crate::wire) generates over it. serde's derive for `#[serde(tag = "type")]` buffers
//! every object into its private `Content` tree before choosing the variant; that machinery, instantiated per type
//! and per input format, was a large share of the browser runtime's wasm. Here an object is read once into its
//! tag plus `(key, Value)` pairs in document order, then the variant converts its fields ([`FromTagged`], with
//! `value.rs`).
//!
//! What is accepted and every error text (including serde_json's line/column) are the same as the derive's —
//! `tests/tagged_equivalence.rs` pins that against reference types that keep the original derives:
//! - the tag is read when met: a non-string is "expected variant identifier", an unknown name
//!   `unknown_variant`, a second tag `duplicate_field`; no tag at all is `missing_field("type")`;
//! - the variant's fields are checked in document order, each failing at once (`unknown_field` with the
//!   variant's field list, `duplicate_field`, or the value's own type error), then missing required fields in
//!   declaration order; optional fields default as the derive's `#[serde(default)]` did;
//! - variants without fields (`BlockKind::Text`, `BlockKind::Reasoning`) ignore other keys, as serde's internally
//!   tagged unit variants do even under `deny_unknown_fields`.
//!
//! One deliberate difference: serde's derive also accepted the undocumented sequence form `["text", "hi"]`;
//! the protocol only has objects, so a sequence is now "invalid type: sequence, expected internally tagged enum …".

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::value::{invalid_type_any, unexpected};

/// A variant's fields other than `type`, in document order.
pub type Fields = Vec<(String, Value)>;

/// An internally tagged enum, built from its variant (an index into [`FromTagged::TAGS`]) and its fields.
pub trait FromTagged: Sized {
    /// What a non-object is refused for ("internally tagged enum Block").
    const EXPECTING: &'static str;
    /// The variants' `type` names.
    const TAGS: &'static [&'static str];
    fn from_tagged<E: de::Error>(variant: usize, fields: Fields) -> Result<Self, E>;
}

/// Reads a tagged enum from `deserializer` (see the module docs for the rules).
pub fn tagged<'de, T: FromTagged, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    let Tagged { variant, fields } = read_tagged(deserializer, T::EXPECTING, T::TAGS)?;
    T::from_tagged(variant, fields)
}

/// Reads a tagged enum from an object already parsed into a `Value` (an image `source` inside a block, a `block`
/// inside a `block-start`), with the same rules and error texts.
pub fn tagged_value<T: FromTagged, E: de::Error>(value: Value) -> Result<T, E> {
    let Tagged { variant, fields } = tagged_object(value, T::EXPECTING, T::TAGS)?;
    T::from_tagged(variant, fields)
}

/// One tagged object: the variant (index into the tag names) and its other fields in document order.
struct Tagged {
    variant: usize,
    fields: Fields,
}

/// Reads a tagged object (see the module docs for the rules).
fn read_tagged<'de, D: Deserializer<'de>>(
    deserializer: D,
    expecting: &'static str,
    variants: &'static [&'static str],
) -> Result<Tagged, D::Error> {
    deserializer.deserialize_any(TaggedVisitor {
        expecting,
        variants,
    })
}

struct TaggedVisitor {
    expecting: &'static str,
    variants: &'static [&'static str],
}

impl<'de> Visitor<'de> for TaggedVisitor {
    type Value = Tagged;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tagged, A::Error> {
        let mut variant = None;
        let mut fields = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "type" {
                if variant.is_some() {
                    return Err(de::Error::duplicate_field("type"));
                }
                variant = Some(map.next_value_seed(TagSeed(self.variants))?);
            } else if key == "input" {
                // Tool-call arguments: one complete JSON object, so a repeated key is refused (any depth).
                fields.push((key, map.next_value_seed(crate::unique::UniqueKeys)?));
            } else {
                fields.push((key, map.next_value::<Value>()?));
            }
        }
        let variant = variant.ok_or_else(|| de::Error::missing_field("type"))?;
        Ok(Tagged { variant, fields })
    }
}

/// [`read_tagged`] for an object already parsed into a `Value`: the same rules and error texts, without handing
/// the `Value` to serde_json's `Value` deserializer. That deserializer's `deserialize_any` (with exact number text, `arbitrary_precision`) parses every
/// number as a float and prints it back to compare, which linked core's float parser (with its tables, most of
/// 27 KB) into the wasm bundle for this one use.
fn tagged_object<E: de::Error>(
    value: Value,
    expecting: &'static str,
    variants: &'static [&'static str],
) -> Result<Tagged, E> {
    let map = match value {
        Value::Object(map) => map,
        other => return Err(invalid_type_any(&other, &expecting)),
    };
    let mut variant = None;
    let mut fields = Vec::new();
    // A `Map` has unique keys already, so neither a second tag nor a repeated `input` key can occur here.
    for (key, value) in map {
        if key == "type" {
            variant = Some(match value {
                Value::String(name) => TagSeed(variants).visit_str::<E>(&name)?,
                other => return Err(E::invalid_type(unexpected(&other), &"variant identifier")),
            });
        } else {
            fields.push((key, value));
        }
    }
    let variant = variant.ok_or_else(|| E::missing_field("type"))?;
    Ok(Tagged { variant, fields })
}

/// The tag's value: a variant name, read as an identifier like the derive's variant visitor.
struct TagSeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for TagSeed {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for TagSeed {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("variant identifier")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|name| *name == value)
            .ok_or_else(|| E::unknown_variant(value, self.0))
    }
}
