//! JSON values whose objects have unique keys. serde_json keeps the last of two equal keys without a word, so
//! `{"path":"a","path":"b"}` means whatever the last reader decides; where the contract asks for one complete
//! JSON object (tool-call arguments) a duplicate key is refused instead. Key order and number text are kept
//! (serde_json's `preserve_order` and `arbitrary_precision`, enabled by this crate).
//!
//! A number beyond the range of a double (`1e400`) is refused too: a browser reads it as `Infinity`, which
//! `JSON.stringify` writes as `null`, so the page's copy of the arguments would silently differ from the stored
//! one. Big integers and long fractions within the range keep passing with their text unchanged.
//!
//! The relay's configuration reader uses the same check through [`from_deserializer`], which reports a repeated
//! key as a [`ReadError::DuplicateKey`] holding the key, so that it can name the key in its own message and path.

use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::number::Decimal;

/// serde_json's private key for a number kept as text (`arbitrary_precision`).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Parses one JSON value (the whole text), refusing an object with a repeated key at any depth.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = UniqueKeys.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Why [`from_deserializer`] read no value.
#[derive(Debug)]
pub enum ReadError<E> {
    /// An object repeats `key` (at any depth); `error` is the deserializer's report of it (with its position).
    DuplicateKey { key: String, error: E },
    /// Anything else the deserializer refused (malformed JSON, a number that is not finite).
    Other(E),
}

/// Reads one value from `deserializer` as [`UniqueKeys`] does, telling a repeated key from every other failure
/// by type. Trailing input is the caller's to check (`serde_json::Deserializer::end`).
pub fn from_deserializer<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Value, ReadError<D::Error>> {
    let repeated = RefCell::new(None);
    Reader {
        repeated: Some(&repeated),
    }
    .deserialize(deserializer)
    .map_err(|error| match repeated.into_inner() {
        Some(key) => ReadError::DuplicateKey { key, error },
        None => ReadError::Other(error),
    })
}

/// A [`DeserializeSeed`] for a `Value` whose objects have unique keys (any depth).
#[derive(Clone, Copy)]
pub struct UniqueKeys;

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Reader { repeated: None }.deserialize(deserializer)
    }
}

/// The reader behind [`UniqueKeys`] and [`from_deserializer`]: `repeated`, when given, receives the first
/// repeated key (the read stops there, so it is the one the error reports).
#[derive(Clone, Copy)]
struct Reader<'r> {
    repeated: Option<&'r RefCell<Option<String>>>,
}

impl<'de> DeserializeSeed<'de> for Reader<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Reader<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
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
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.is_empty() && key == NUMBER_TOKEN {
                // A number serde_json kept as its text.
                let text: String = map.next_value()?;
                let number = Number::from_str(&text).map_err(de::Error::custom)?;
                if !Decimal::of(&number).within_double_range() {
                    return Err(de::Error::custom(format_args!(
                        "number {text} is outside the range of a double (JavaScript reads it as Infinity)"
                    )));
                }
                return Ok(Value::Number(number));
            }
            if object.contains_key(&key) {
                let error = de::Error::custom(format_args!("duplicate key {key:?}"));
                if let Some(repeated) = self.repeated {
                    *repeated.borrow_mut() = Some(key);
                }
                return Err(error);
            }
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}
