//! Reading the JS option objects: `runtime` options (limits, hooks, onHookError, interceptors), tool definitions
//! and execution input. Unknown keys are `AGENT_INVALID_OPTIONS` so that typos fail loudly.

use std::rc::Rc;

use js_sys::Function;
use patchbridge_protocol::{Message, ModelState};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::error;
use super::host::{on_hook_error, JsHook, JsTool};
use super::interceptors::{JsModelInterceptor, JsToolInterceptor};
use super::js;
use super::values::{from_host, get, is_missing, method};
use crate::core::{
    AgentError, AgentHook, ErrorCode, Limits, ModelInterceptor, RuntimeOptions, ToolInterceptor,
    ToolSpec,
};

fn invalid(message: String) -> AgentError {
    AgentError::new(ErrorCode::InvalidOptions, message)
}

/// Fails when `object` has an own enumerable key outside `allowed`.
pub fn check_keys(
    object: &JsValue,
    allowed: &[&str],
    what: &str,
    code: ErrorCode,
) -> Result<(), AgentError> {
    if !object.is_object() {
        return Ok(());
    }
    // A Proxy's `ownKeys` trap (or a throwing getter) is page code: its throw is the option's failure.
    let keys = js::own_keys(object).map_err(|e| error::from_js(&e, code, what))?;
    for key in keys.iter() {
        let key = key.as_string().unwrap_or_default();
        if !allowed.contains(&key.as_str()) {
            return Err(AgentError::new(
                code,
                format!(
                    "{what}: unknown option {key:?} (known: {})",
                    allowed.join(", ")
                ),
            )
            .with_details(
                patchbridge_protocol::write::Object::new()
                    .put("key", key)
                    .done(),
            ));
        }
    }
    Ok(())
}

/// The elements of the optional array `value` (`what` in errors; `code` for a value that is not an array or
/// whose reading threw: a page's getter or Proxy trap is caught at the boundary).
pub fn array_of(value: &JsValue, what: &str, code: ErrorCode) -> Result<Vec<JsValue>, AgentError> {
    if is_missing(value) {
        return Ok(Vec::new());
    }
    match js::array_copy(value) {
        Ok(Some(array)) => Ok(array.iter().collect()),
        Ok(None) => Err(AgentError::new(code, format!("{what} must be an array"))),
        Err(thrown) => Err(error::from_js(&thrown, code, what)),
    }
}

/// Adapts each element of the optional array `runtime[key]` with `make(element, index)`; the index names the
/// element in later error messages.
fn adapt_each<T>(
    options: &JsValue,
    key: &str,
    make: impl Fn(JsValue, u32) -> Result<T, AgentError>,
) -> Result<Vec<T>, AgentError> {
    array_of(
        &get(options, key),
        &format!("runtime.{key}"),
        ErrorCode::InvalidOptions,
    )?
    .into_iter()
    .enumerate()
    .map(|(i, v)| make(v, i as u32))
    .collect()
}

const RUNTIME_KEYS: [&str; 5] = [
    "limits",
    "hooks",
    "onHookError",
    "modelInterceptors",
    "toolInterceptors",
];

/// Parses runtime options. `full_limits`: `DefaultAgentRuntime` requires all five limits; the controller takes a
/// partial override of [`Limits::DEFAULT`].
pub fn runtime_options(
    options: &JsValue,
    full_limits: bool,
    what: &str,
) -> Result<RuntimeOptions, AgentError> {
    if !is_missing(options) && !options.is_object() {
        return Err(invalid(format!("{what} must be an object")));
    }
    check_keys(options, &RUNTIME_KEYS, what, ErrorCode::InvalidOptions)?;
    let raw_limits = get(options, "limits");
    let limits_json: Value = if raw_limits.is_undefined() {
        Value::Null
    } else {
        js::limits_json(&raw_limits)
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Bool(false))
    };
    let limits = if full_limits {
        Limits::from_full_json(&limits_json)?
    } else {
        Limits::from_partial_json(&limits_json)?
    };

    let hooks = adapt_each(options, "hooks", |v, i| {
        Ok(Rc::new(JsHook::new(v, i)?) as Rc<dyn AgentHook>)
    })?;
    let raw_on_error = get(options, "onHookError");
    let on_error = if is_missing(&raw_on_error) {
        None
    } else {
        let f = raw_on_error
            .dyn_into::<Function>()
            .map_err(|_| invalid("runtime.onHookError must be a function".into()))?;
        Some(on_hook_error(f))
    };
    let model_interceptors = adapt_each(options, "modelInterceptors", |v, i| {
        Ok(Rc::new(JsModelInterceptor::new(v, i)?) as Rc<dyn ModelInterceptor>)
    })?;
    let tool_interceptors = adapt_each(options, "toolInterceptors", |v, i| {
        Ok(Rc::new(JsToolInterceptor::new(v, i)?) as Rc<dyn ToolInterceptor>)
    })?;
    Ok(RuntimeOptions {
        limits,
        hooks,
        on_hook_error: on_error,
        model_interceptors,
        tool_interceptors,
    })
}

/// A tool definition `{ name, description, inputSchema, readOnly?, requireConfirmation?, validateInput?, execute }`.
pub fn tool(def: &JsValue) -> Result<(ToolSpec, Rc<JsTool>), AgentError> {
    let bad = |m: &str| AgentError::new(ErrorCode::InvalidTool, m.to_owned());
    if !def.is_object() {
        return Err(bad(
            "a tool must be an object { name, description, inputSchema, execute }",
        ));
    }
    let name = get(def, "name")
        .as_string()
        .ok_or_else(|| bad("tool.name must be a string"))?;
    let description = match get(def, "description") {
        v if is_missing(&v) => String::new(),
        v => v
            .as_string()
            .ok_or_else(|| bad("tool.description must be a string"))?,
    };
    let schema_js = get(def, "inputSchema");
    let input_schema: Value = js::try_to_json(&schema_js)
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| bad("tool.inputSchema must be a JSON object"))?;
    let flag = |key: &str| -> Result<bool, AgentError> {
        match get(def, key) {
            v if v.is_undefined() => Ok(false),
            v => v
                .as_bool()
                .ok_or_else(|| bad(&format!("tool.{key} must be a boolean"))),
        }
    };
    let read_only = flag("readOnly")?;
    let require_confirmation = flag("requireConfirmation")?;
    let validate_input = match get(def, "validateInput") {
        v if v.is_undefined() => true,
        v => v
            .as_bool()
            .ok_or_else(|| bad("tool.validateInput must be a boolean"))?,
    };
    let execute = method(def, "execute").ok_or_else(|| bad("tool.execute must be a function"))?;
    let spec = ToolSpec {
        name,
        description,
        input_schema,
        read_only,
        require_confirmation,
        validate_input,
    };
    Ok((spec, Rc::new(JsTool::new(def.clone(), execute))))
}

/// Messages given by the host (strict protocol shapes) — `AGENT_INVALID_INPUT` otherwise.
pub fn messages(value: &JsValue, what: &str) -> Result<Vec<Message>, AgentError> {
    from_host(value, what, ErrorCode::InvalidInput)
}

/// A model state (or null / absent) given by the host — `AGENT_INVALID_INPUT` when it is not one.
pub fn model_state(value: &JsValue, what: &str) -> Result<Option<ModelState>, AgentError> {
    if is_missing(value) {
        return Ok(None);
    }
    from_host(value, what, ErrorCode::InvalidInput).map(Some)
}

/// An optional string option.
pub fn opt_string(
    object: &JsValue,
    key: &str,
    what: &str,
    code: ErrorCode,
) -> Result<Option<String>, AgentError> {
    match get(object, key) {
        v if is_missing(&v) => Ok(None),
        v => v
            .as_string()
            .map(Some)
            .ok_or_else(|| AgentError::new(code, format!("{what}.{key} must be a string"))),
    }
}
