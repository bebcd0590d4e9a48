//! JSON values of the runtime's own data.
//!
//! Serialising that data cannot fail: every type is plain data with string keys (`serde_json` fails only on
//! non-string map keys or a failing hand-written `Serialize`). A failure would therefore be a bug in this
//! crate, and it stops the program where it happens instead of reaching a host as a `null` it would take for
//! data.

use serde::Serialize;
use serde_json::Value;

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
