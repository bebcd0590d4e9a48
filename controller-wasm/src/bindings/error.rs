//! Errors across the boundary: core [`AgentError`] → the JS `AgentError` class of `npm/errors.js`, and thrown JS
//! values → core errors (a thrown JS `AgentError` keeps its code; anything else gets the caller's code, so a tool
//! that throws becomes `AGENT_TOOL_FAILED`, a model `AGENT_MODEL_FAILED`, and so on).

use wasm_bindgen::prelude::*;

use super::js;
use crate::core::json::to_text;
use crate::core::{AgentError, ErrorCode, LimitName};

/// The JS `AgentError` instance for a core error.
pub fn to_js(error: &AgentError) -> JsValue {
    to_js_with_cause(error, &JsValue::UNDEFINED)
}

/// Like [`to_js`], keeping the original thrown value as `cause`.
pub fn to_js_with_cause(error: &AgentError, cause: &JsValue) -> JsValue {
    let details = error.details.as_ref().map(to_text);
    js::make_agent_error(
        error.code.as_str(),
        &error.message,
        error.limit.map(|l| l.as_str().to_owned()),
        details,
        cause,
    )
}

/// A core error for a value thrown by host code. `fallback` is the code when the value is not an `AgentError`
/// (or carries an unknown code); `what` prefixes the message (e.g. "tool \"x\" threw").
pub fn from_js(value: &JsValue, fallback: ErrorCode, what: &str) -> AgentError {
    let parts = js::describe_error(value);
    let code = parts.get(0).as_string().and_then(|c| ErrorCode::parse(&c));
    let text = parts.get(1).as_string().unwrap_or_default();
    match code {
        Some(code) => {
            let mut error = AgentError::new(code, text);
            error.limit = parts.get(2).as_string().and_then(|l| LimitName::parse(&l));
            error.details = parts
                .get(3)
                .as_string()
                .and_then(|d| serde_json::from_str(&d).ok());
            error
        }
        None => {
            let mut message = String::with_capacity(what.len() + text.len() + 2);
            message.push_str(what);
            message.push_str(": ");
            message.push_str(&text);
            AgentError::new(fallback, message)
        }
    }
}

/// The text of a thrown JS value (`Name: message` for an `Error`), for failures the core keeps as text.
pub fn thrown_text(value: &JsValue) -> String {
    js::describe_error(value)
        .get(1)
        .as_string()
        .unwrap_or_default()
}

/// Shorthand for a JS `AgentError` built from a code and message (argument validation in the bindings).
pub fn js_error(code: ErrorCode, message: &str) -> JsValue {
    to_js(&AgentError::new(code, message))
}
