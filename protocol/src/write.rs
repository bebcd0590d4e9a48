//! [`ToValue`]: the wire types as JSON values, built by plain map inserts instead of serde's `Serialize`.
//!
//! The browser runtime writes every JSON it sends through a `serde_json::Value`; the derived `Serialize`,
//! instantiated for serde_json's value serializer, compiles one serializer per type plus one `serialize_field`
//! per field type, which was a large share of the wasm. Here each wire shape is one small function over
//! [`Object`], whose insert is compiled once. The relay keeps the derives (it writes text directly).
//!
//! The result is exactly the derive's: keys in the derive's order (an internally tagged enum's `type` first),
//! the same `skip_serializing_if` rules, `null` for an absent `Option` that is not skipped.
//! `tests/write_equivalence.rs` compares both, value and text, on generated values of every type here.

use serde_json::{Map, Value};

use crate::event::StopReason;
use crate::message::Role;

/// A wire value as JSON, equal to `serde_json::to_value` of its derived `Serialize`.
pub trait ToValue {
    /// The value as JSON.
    fn to_value(&self) -> Value;
}

/// A JSON object under construction, keys in insertion order.
#[derive(Default)]
pub struct Object(Map<String, Value>);

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object(Map::new())
    }

    /// An object whose first key is `type` (an internally tagged enum's variant).
    pub fn tagged(tag: &str) -> Object {
        let mut object = Object::new();
        object.put("type", tag);
        object
    }

    /// Appends `key: value`.
    pub fn put(&mut self, key: &str, value: impl Into<Value>) -> &mut Object {
        self.insert(key, value.into())
    }

    fn insert(&mut self, key: &str, value: Value) -> &mut Object {
        self.0.insert(key.to_owned(), value);
        self
    }

    /// Appends `key: value` when `value` is `Some` (`skip_serializing_if = "Option::is_none"`).
    pub fn put_some(&mut self, key: &str, value: Option<impl Into<Value>>) -> &mut Object {
        if let Some(value) = value {
            self.put(key, value);
        }
        self
    }

    /// The object as a JSON value.
    pub fn done(&mut self) -> Value {
        Value::Object(std::mem::take(&mut self.0))
    }
}

impl<T: ToValue> ToValue for [T] {
    fn to_value(&self) -> Value {
        array(self.len(), &|i| self[i].to_value())
    }
}

/// `len` items as an array: the loop is compiled once, whatever the item type (only the closure is per type).
fn array(len: usize, item: &dyn Fn(usize) -> Value) -> Value {
    Value::Array((0..len).map(item).collect())
}

impl<T: ToValue> ToValue for Vec<T> {
    fn to_value(&self) -> Value {
        self[..].to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, T::to_value)
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue + ?Sized> ToValue for std::rc::Rc<T> {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::String(self.clone())
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::String(self.to_owned())
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}

macro_rules! numbers {
    ($($ty:ty),*) => {$(
        impl ToValue for $ty {
            fn to_value(&self) -> Value {
                Value::from(*self)
            }
        }
    )*};
}

// `f64` as serde_json writes it (`null` when not finite).
numbers!(u32, u64, usize, f64);

/// Pass-through JSON, as it is.
impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl ToValue for Map<String, Value> {
    fn to_value(&self) -> Value {
        Value::Object(self.clone())
    }
}

fn text(value: &str) -> Value {
    Value::String(value.to_owned())
}

impl ToValue for Role {
    fn to_value(&self) -> Value {
        text(match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        })
    }
}

impl ToValue for StopReason {
    fn to_value(&self) -> Value {
        text(self.as_str())
    }
}
