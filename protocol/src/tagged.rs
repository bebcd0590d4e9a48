//! Hand-written `Deserialize` for the internally tagged enums ([`Block`], [`ImageSource`], [`DocumentSource`],
//! [`StreamEvent`], [`BlockKind`]). serde's derive for `#[serde(tag = "type")]` buffers every object into its private `Content`
//! tree before choosing the variant; that machinery, instantiated per type and per input format, was a large
//! share of the browser runtime's wasm. Here an object is read once into its tag plus `(key, Value)` pairs in
//! document order, then each variant converts its fields.
//!
//! What is accepted and every error text (including serde_json's line/column) are the same as the derive's —
//! `tests/tagged_equivalence.rs` pins that against reference types that keep the original derives:
//! - the tag is read when met: a non-string is "expected variant identifier", an unknown name
//!   `unknown_variant`, a second tag `duplicate_field`; no tag at all is `missing_field("type")`;
//! - the variant's fields are checked in document order, each failing at once (`unknown_field` with the
//!   variant's field list, `duplicate_field`, or the value's own type error), then missing required fields in
//!   declaration order; optional fields default as the derive's `#[serde(default)]` did;
//! - unit variants (`BlockKind::Text`, `BlockKind::Reasoning`) ignore other keys, as serde's internally tagged
//!   unit variants do even under `deny_unknown_fields`.
//!
//! One deliberate difference: serde's derive also accepted the undocumented sequence form `["text", "hi"]`;
//! the protocol only has objects, so a sequence is now "invalid type: sequence, expected internally tagged enum …".

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::event::{BlockKind, StopReason, StreamEvent};
use crate::message::{Block, DocumentSource, ImageSource, ModelState, Usage};
use crate::unexpected::unexpected;

/// One tagged object: the variant (index into the tag names) and its other fields in document order.
struct Tagged {
    variant: usize,
    fields: Vec<(String, Value)>,
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

/// [`read_tagged`] for an object already parsed into a `Value` (an image `source` inside a block, a `block` inside
/// a `block-start`): the same rules and error texts, without handing the `Value` to serde_json's `Value`
/// deserializer. That deserializer's `deserialize_any` (with exact number text, `arbitrary_precision`) parses every
/// number as a float and prints it back to compare, which linked core's float parser (with its tables, most of
/// 27 KB) into the wasm bundle for this one use.
fn tagged_value<E: de::Error>(
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

/// Walks a variant's fields in document order: a repeated key fails at once, an unknown key too unless
/// `lenient` (then it is skipped: events and usage come from the relay or a model, and a newer relay may add
/// keys, docs/protocol.md "Forward compatibility"); `set(i, value)` stores (and type-checks) the value of declared
/// field `i`. The setter is a `dyn` so that the walk is compiled once per error type, not once per variant.
fn walk<E: de::Error>(
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

const STRICT: bool = false;
const LENIENT: bool = true;

// Field values are converted by plain matches rather than through serde_json's `Value` deserializer: each type
// read that way (`String`, `bool`, their `Option`s, `StopReason`'s enum access) was its own instance of that
// deserializer in the wasm bundle. The error texts are the ones that deserializer gives for the same value.

/// A string field: "invalid type: …, expected a string" for anything else.
fn string<E: de::Error>(value: Value) -> Result<String, E> {
    match value {
        Value::String(text) => Ok(text),
        other => Err(E::invalid_type(unexpected(&other), &"a string")),
    }
}

/// A boolean field: "invalid type: …, expected a boolean" for anything else.
fn boolean<E: de::Error>(value: Value) -> Result<bool, E> {
    match value {
        Value::Bool(b) => Ok(b),
        other => Err(E::invalid_type(unexpected(&other), &"a boolean")),
    }
}

/// An `Option` field: `null` is `None`, anything else is read by `read`.
fn nullable<T, E>(value: Value, read: fn(Value) -> Result<T, E>) -> Result<Option<T>, E> {
    match value {
        Value::Null => Ok(None),
        other => read(other).map(Some),
    }
}

/// `stopReason` as serde's derived enum reads it from a `Value`: a variant name, or an object whose one key is
/// a variant name and whose value is `null` (the externally tagged form of a unit variant).
fn stop_reason<E: de::Error>(value: Value) -> Result<StopReason, E> {
    let (name, content) = match value {
        Value::String(name) => (name, Value::Null),
        Value::Object(map) if map.len() == 1 => map.into_iter().next().unwrap_or_default(),
        Value::Object(_) => {
            return Err(E::invalid_value(
                de::Unexpected::Map,
                &"map with a single key",
            ))
        }
        other => return Err(E::invalid_type(unexpected(&other), &"string or map")),
    };
    let Some(i) = StopReason::NAMES.iter().position(|n| *n == name) else {
        return Err(E::unknown_variant(&name, StopReason::NAMES));
    };
    if !content.is_null() {
        return Err(E::invalid_type(unexpected(&content), &"unit"));
    }
    Ok(StopReason::ALL[i])
}

/// A non-negative integer read without serde_json's `Value`-to-number deserializer: with exact number text
/// (`arbitrary_precision`) that deserializer carries float parsing and formatting into the wasm bundle. The
/// error texts are serde's for the same input (`expected` names the type, e.g. "u32").
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

/// The "invalid type" error a visitor expecting `expected` gives for `value` when it is read with
/// `deserialize_any` (numbers named by their kind and text, as serde words them).
fn invalid_type_any<E: de::Error>(value: &Value, expected: &dyn de::Expected) -> E {
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

/// A JSON object field (tool-call `input`), moved rather than deserialised again value by value.
fn object<E: de::Error>(value: Value) -> Result<Map<String, Value>, E> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(E::invalid_type(unexpected(&other), &"a map")),
    }
}

/// `modelState`: null or `{ format, data }` (exactly these keys: it is stored and sent back verbatim, so a
/// stray key is refused rather than dropped). `data` is moved as it is.
fn model_state<E: de::Error>(state: Value) -> Result<Option<ModelState>, E> {
    let map = match state {
        Value::Null => return Ok(None),
        Value::Object(map) => map,
        other => return Err(E::invalid_type(unexpected(&other), &"struct ModelState")),
    };
    let (mut format, mut data) = (None, None);
    walk(
        map.into_iter().collect(),
        &["format", "data"],
        STRICT,
        &mut |i, v| {
            match i {
                0 => format = Some(string(v)?),
                _ => data = Some(v),
            }
            Ok(())
        },
    )?;
    Ok(Some(ModelState {
        format: required(format, "format")?,
        data: required(data, "data")?,
    }))
}

fn block_index<E: de::Error>(value: Value) -> Result<u32, E> {
    unsigned(&value, u32::MAX as u64, "u32").map(|u| u as u32)
}

/// `usage`: an object of optional counts; keys this version does not know are ignored (a newer relay may
/// report more kinds of tokens).
fn usage<E: de::Error>(value: Value) -> Result<Usage, E> {
    let Value::Object(map) = value else {
        return Err(E::invalid_type(
            match &value {
                Value::Null => de::Unexpected::Unit,
                Value::Bool(b) => de::Unexpected::Bool(*b),
                Value::String(s) => de::Unexpected::Str(s),
                Value::Array(_) => de::Unexpected::Seq,
                _ => de::Unexpected::Other("number"),
            },
            &"struct Usage",
        ));
    };
    let mut usage = Usage::default();
    for (key, value) in &map {
        let slot = match key.as_str() {
            "inputTokens" => &mut usage.input_tokens,
            "outputTokens" => &mut usage.output_tokens,
            "reasoningTokens" => &mut usage.reasoning_tokens,
            "cacheReadTokens" => &mut usage.cache_read_tokens,
            "cacheWriteTokens" => &mut usage.cache_write_tokens,
            _ => continue,
        };
        *slot = unsigned(value, u64::MAX, "u64")?;
    }
    Ok(usage)
}

fn required<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}

const BLOCK_TAGS: &[&str] = &[
    "text",
    "image",
    "reasoning",
    "tool-call",
    "tool-result",
    "document",
];

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Tagged { variant, fields } =
            read_tagged(deserializer, "internally tagged enum Block", BLOCK_TAGS)?;
        match variant {
            0 => {
                let (mut text, mut sources) = (None, None);
                walk(fields, &["text", "sources"], STRICT, &mut |i, v| {
                    match i {
                        0 => text = Some(string(v)?),
                        _ => sources = Some(crate::source::sources_value(v)?),
                    }
                    Ok(())
                })?;
                Ok(Block::Text {
                    text: required(text, "text")?,
                    sources: sources.unwrap_or_default(),
                })
            }
            2 => {
                let mut text = None;
                walk(fields, &["text"], STRICT, &mut |_, v| {
                    text = Some(string(v)?);
                    Ok(())
                })?;
                Ok(Block::Reasoning {
                    text: required(text, "text")?,
                })
            }
            1 => {
                let mut source = None;
                walk(fields, &["source"], STRICT, &mut |_, v| {
                    source = Some(image_source_value(v)?);
                    Ok(())
                })?;
                Ok(Block::Image {
                    source: required(source, "source")?,
                })
            }
            3 => {
                let (mut call_id, mut name, mut input) = (None, None, None::<Map<String, Value>>);
                walk(fields, &["callId", "name", "input"], STRICT, &mut |i, v| {
                    match i {
                        0 => call_id = Some(string(v)?),
                        1 => name = Some(string(v)?),
                        _ => input = Some(object(v)?),
                    }
                    Ok(())
                })?;
                Ok(Block::ToolCall {
                    call_id: required(call_id, "callId")?,
                    name: required(name, "name")?,
                    input: required(input, "input")?,
                })
            }
            5 => {
                let (mut name, mut source) = (None, None);
                walk(fields, &["name", "source"], STRICT, &mut |i, v| {
                    match i {
                        0 => name = Some(string(v)?),
                        _ => source = Some(document_source_value(v)?),
                    }
                    Ok(())
                })?;
                Ok(Block::Document {
                    name: required(name, "name")?,
                    source: required(source, "source")?,
                })
            }
            _ => {
                let (mut call_id, mut content, mut is_error) = (None, None, None);
                walk(
                    fields,
                    &["callId", "content", "isError"],
                    STRICT,
                    &mut |i, v| {
                        match i {
                            0 => call_id = Some(string(v)?),
                            1 => content = Some(string(v)?),
                            _ => is_error = Some(boolean(v)?),
                        }
                        Ok(())
                    },
                )?;
                Ok(Block::ToolResult {
                    call_id: required(call_id, "callId")?,
                    content: required(content, "content")?,
                    is_error: required(is_error, "isError")?,
                })
            }
        }
    }
}

const IMAGE_SOURCE: &str = "internally tagged enum ImageSource";
const IMAGE_SOURCE_TAGS: &[&str] = &["url", "base64"];

impl<'de> Deserialize<'de> for ImageSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        image_source(read_tagged(deserializer, IMAGE_SOURCE, IMAGE_SOURCE_TAGS)?)
    }
}

/// A block's `source` field (already a `Value`).
fn image_source_value<E: de::Error>(value: Value) -> Result<ImageSource, E> {
    image_source(tagged_value(value, IMAGE_SOURCE, IMAGE_SOURCE_TAGS)?)
}

fn image_source<E: de::Error>(Tagged { variant, fields }: Tagged) -> Result<ImageSource, E> {
    if variant == 0 {
        let mut url = None;
        walk(fields, &["url"], STRICT, &mut |_, v| {
            url = Some(string(v)?);
            Ok(())
        })?;
        return Ok(ImageSource::Url {
            url: required(url, "url")?,
        });
    }
    let (mut media_type, mut data) = (None, None);
    walk(fields, &["mediaType", "data"], STRICT, &mut |i, v| {
        match i {
            0 => media_type = Some(string(v)?),
            _ => data = Some(string(v)?),
        }
        Ok(())
    })?;
    Ok(ImageSource::Base64 {
        media_type: required(media_type, "mediaType")?,
        data: required(data, "data")?,
    })
}

const DOCUMENT_SOURCE: &str = "internally tagged enum DocumentSource";
const DOCUMENT_SOURCE_TAGS: &[&str] = &["base64", "text"];

impl<'de> Deserialize<'de> for DocumentSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        document_source(read_tagged(
            deserializer,
            DOCUMENT_SOURCE,
            DOCUMENT_SOURCE_TAGS,
        )?)
    }
}

/// A document block's `source` field (already a `Value`).
fn document_source_value<E: de::Error>(value: Value) -> Result<DocumentSource, E> {
    document_source(tagged_value(value, DOCUMENT_SOURCE, DOCUMENT_SOURCE_TAGS)?)
}

fn document_source<E: de::Error>(Tagged { variant, fields }: Tagged) -> Result<DocumentSource, E> {
    let keys: &'static [&'static str] = if variant == 0 {
        &["mediaType", "data"]
    } else {
        &["mediaType", "text"]
    };
    let (mut media_type, mut content) = (None, None);
    walk(fields, keys, STRICT, &mut |i, v| {
        match i {
            0 => media_type = Some(string(v)?),
            _ => content = Some(string(v)?),
        }
        Ok(())
    })?;
    let media_type = required(media_type, "mediaType")?;
    let content = required(content, keys[1])?;
    Ok(if variant == 0 {
        DocumentSource::Base64 {
            media_type,
            data: content,
        }
    } else {
        DocumentSource::Text {
            media_type,
            text: content,
        }
    })
}

const BLOCK_KIND: &str = "internally tagged enum BlockKind";
const BLOCK_KIND_TAGS: &[&str] = &["text", "reasoning", "tool-call"];

impl<'de> Deserialize<'de> for BlockKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        block_kind(read_tagged(deserializer, BLOCK_KIND, BLOCK_KIND_TAGS)?)
    }
}

/// A `block-start` event's `block` field (already a `Value`).
fn block_kind_value<E: de::Error>(value: Value) -> Result<BlockKind, E> {
    block_kind(tagged_value(value, BLOCK_KIND, BLOCK_KIND_TAGS)?)
}

fn block_kind<E: de::Error>(Tagged { variant, fields }: Tagged) -> Result<BlockKind, E> {
    match variant {
        // Unit variants ignore other keys (as serde's derive did).
        0 => Ok(BlockKind::Text),
        1 => Ok(BlockKind::Reasoning),
        _ => {
            let (mut call_id, mut name) = (None, None);
            walk(fields, &["callId", "name"], LENIENT, &mut |i, v| {
                match i {
                    0 => call_id = Some(string(v)?),
                    _ => name = Some(string(v)?),
                }
                Ok(())
            })?;
            Ok(BlockKind::ToolCall {
                call_id: required(call_id, "callId")?,
                name: required(name, "name")?,
            })
        }
    }
}

const EVENT_TAGS: &[&str] = &[
    "message-start",
    "block-start",
    "block-delta",
    "block-stop",
    "message-stop",
    "error",
];

impl<'de> Deserialize<'de> for StreamEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Tagged { variant, fields } = read_tagged(
            deserializer,
            "internally tagged enum StreamEvent",
            EVENT_TAGS,
        )?;
        match variant {
            0 => {
                let (mut id, mut model) = (None, None);
                walk(fields, &["id", "model"], LENIENT, &mut |i, v| {
                    match i {
                        0 => id = Some(nullable(v, string)?),
                        _ => model = Some(nullable(v, string)?),
                    }
                    Ok(())
                })?;
                Ok(StreamEvent::MessageStart {
                    id: id.flatten(),
                    model: model.flatten(),
                })
            }
            1 => {
                let (mut index, mut block) = (None, None);
                walk(fields, &["index", "block"], LENIENT, &mut |i, v| {
                    match i {
                        0 => index = Some(block_index(v)?),
                        _ => block = Some(block_kind_value(v)?),
                    }
                    Ok(())
                })?;
                Ok(StreamEvent::BlockStart {
                    index: required(index, "index")?,
                    block: required(block, "block")?,
                })
            }
            2 => {
                let (mut index, mut delta) = (None, None);
                walk(fields, &["index", "delta"], LENIENT, &mut |i, v| {
                    match i {
                        0 => index = Some(block_index(v)?),
                        _ => delta = Some(string(v)?),
                    }
                    Ok(())
                })?;
                Ok(StreamEvent::BlockDelta {
                    index: required(index, "index")?,
                    delta: required(delta, "delta")?,
                })
            }
            3 => {
                let (mut index, mut sources) = (None, None);
                walk(fields, &["index", "sources"], LENIENT, &mut |i, v| {
                    match i {
                        0 => index = Some(block_index(v)?),
                        _ => sources = Some(crate::source::sources_value(v)?),
                    }
                    Ok(())
                })?;
                Ok(StreamEvent::BlockStop {
                    index: required(index, "index")?,
                    sources: sources.unwrap_or_default(),
                })
            }
            4 => {
                let (mut stop_reason, mut usage, mut model_state) = (None, None, None);
                walk(
                    fields,
                    &["stopReason", "usage", "modelState"],
                    LENIENT,
                    &mut |i, v| {
                        match i {
                            0 => stop_reason = Some(self::stop_reason(v)?),
                            1 => usage = Some(self::usage(v)?),
                            _ => model_state = Some(self::model_state(v)?),
                        }
                        Ok(())
                    },
                )?;
                Ok(StreamEvent::MessageStop {
                    stop_reason: required(stop_reason, "stopReason")?,
                    usage: usage.unwrap_or_default(),
                    // Required key, null allowed: a forgotten modelState must not silently clear state.
                    model_state: required(model_state, "modelState")?,
                })
            }
            _ => {
                let (mut code, mut message, mut retryable) = (None, None, None);
                walk(
                    fields,
                    &["code", "message", "retryable"],
                    LENIENT,
                    &mut |i, v| {
                        match i {
                            0 => code = Some(string(v)?),
                            1 => message = Some(string(v)?),
                            _ => retryable = Some(nullable(v, boolean)?),
                        }
                        Ok(())
                    },
                )?;
                Ok(StreamEvent::Error {
                    code: required(code, "code")?,
                    message: required(message, "message")?,
                    retryable: retryable.flatten(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stop reasons' table (`StopReason::ALL` / `NAMES`) is written out; it must stay the derive's.
    #[test]
    fn the_stop_reason_table_is_the_derived_enum() {
        for (reason, name) in StopReason::ALL.iter().zip(StopReason::NAMES) {
            assert_eq!(reason.as_str(), *name);
            let value = Value::String((*name).into());
            assert_eq!(stop_reason::<serde_json::Error>(value).unwrap(), *reason);
        }
        assert_eq!(StopReason::ALL.len(), StopReason::NAMES.len());
        for value in [
            serde_json::json!("finished"),
            serde_json::json!({"tool-use": 1}),
            serde_json::json!({}),
            serde_json::json!(7),
        ] {
            let derived = serde_json::from_value::<StopReason>(value.clone()).unwrap_err();
            let by_hand = stop_reason::<serde_json::Error>(value).unwrap_err();
            assert_eq!(by_hand.to_string(), derived.to_string());
        }
    }
}
