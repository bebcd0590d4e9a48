//! Values across the boundary, in both directions: core data as JSON text or deep-frozen JS values, host values
//! as strictly parsed core types, and the small reads every adapter needs (properties, methods, thenables,
//! awaiting a promise with a typed error).

use js_sys::{Function, Promise, Reflect};
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::error;
use super::js;
use crate::core::json::text_of;
use crate::core::{AgentError, ErrorCode};

/// A core or wire value (its hand-written `ToValue`) as a deep-frozen JS value.
pub fn frozen<T: patchbridge_protocol::ToValue + ?Sized>(value: &T) -> JsValue {
    js::parse_frozen(&text_of(value))
}

/// Awaits a JS promise, mapping a rejection with [`error::from_js`].
pub async fn await_js(
    promise: Promise,
    code: ErrorCode,
    what: &str,
) -> Result<JsValue, AgentError> {
    JsFuture::from(promise)
        .await
        .map_err(|e| error::from_js(&e, code, what))
}

/// `object[key]`, `undefined` when absent or when `object` is not an object.
pub fn get(object: &JsValue, key: &str) -> JsValue {
    if !object.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// `undefined` or `null`: an option that was not given.
pub fn is_missing(value: &JsValue) -> bool {
    value.is_undefined() || value.is_null()
}

/// Reads `object[key]` as a function, or None when absent/not callable.
pub fn method(object: &JsValue, key: &str) -> Option<Function> {
    Reflect::get(object, &JsValue::from_str(key))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
}

/// A promise, or any object or function with a callable `then` (what `await` would assimilate); one JS call
/// (`isThenable` in adapter.js), since every tool result is checked.
pub fn is_thenable(value: &JsValue) -> bool {
    js::is_thenable(value)
}

/// A host value (`value`, described as `what` in errors) as a core type: strict JSON text first (no `undefined`
/// members, functions or non-finite numbers), then the type's own strict parse. Either failure is `code`.
pub fn from_host<T: DeserializeOwned>(
    value: &JsValue,
    what: &str,
    code: ErrorCode,
) -> Result<T, AgentError> {
    let text = js::try_to_json(value)
        .ok_or_else(|| AgentError::new(code, format!("{what} must be plain JSON")))?;
    serde_json::from_str(&text).map_err(|e| AgentError::new(code, format!("{what}: {e}")))
}
