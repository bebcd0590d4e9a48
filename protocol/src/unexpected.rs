//! How a reader names the JSON value it did not expect (`invalid type: <this>, expected …`), the same words
//! serde's derived readers use. A leaf: the hand-written readers of `tagged` and `source` both use it.

use serde::de;
use serde_json::Value;

/// `value` as serde's [`de::Unexpected`] (numbers as `number`: their text is checked elsewhere).
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
