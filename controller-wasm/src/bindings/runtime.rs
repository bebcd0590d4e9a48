//! `new DefaultAgentRuntime(model, { limits, hooks?, onHookError?, modelInterceptors?, toolInterceptors? })` and
//! the `AgentExecution` handle that `runtime.start(input, observer?)` returns.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use js_sys::{Array, Function, Promise};
use patchbridge_protocol::StreamEvent;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::error::{js_error, to_js};
use super::host::{JsModel, JsPlatform};
use super::js;
use super::options;
use super::values::{frozen, get, is_missing};
use crate::core::json::to_text;
use crate::core::{
    self, AgentError, ErrorCode, ExecutionEvent, ExecutionInput, HostToolCall, Limits, Observer,
    ToolCallResult, ToolRegistry,
};

/// The factory defaults (`DEFAULT_LIMITS` in npm/index.js).
#[wasm_bindgen(js_name = defaultLimits)]
pub fn default_limits() -> JsValue {
    frozen(&Limits::DEFAULT)
}

/// The observer given to `start`: block deltas go through a dedicated call (no JSON); every other event is its
/// JSON form, deep-frozen. An observer that throws is reported to `console.error` and does not affect the run.
pub fn observer(callback: Option<Function>) -> Observer {
    match callback {
        None => Box::new(|_: &ExecutionEvent<'_>| {}),
        Some(f) => Box::new(move |event: &ExecutionEvent<'_>| {
            let outcome = match event {
                ExecutionEvent::Stream(StreamEvent::BlockDelta { index, delta }) => {
                    js::emit_delta(&f, *index, delta)
                }
                other => f
                    .call1(
                        &JsValue::NULL,
                        &js::parse_frozen(&to_text(&other.to_json())),
                    )
                    .map(|_| ()),
            };
            if let Err(thrown) = outcome {
                let _ =
                    js::console_error2("@patchbridge/agent: an execution observer threw", &thrown);
            }
        }),
    }
}

/// Builds a frozen registry snapshot from a `tools` array of definitions.
pub fn snapshot_of(tools: &JsValue) -> Result<Rc<core::ToolRegistrySnapshot>, AgentError> {
    let mut registry = ToolRegistry::new(Rc::new(JsPlatform));
    if !is_missing(tools) {
        let tools = options::array_of(
            tools,
            "input.tools (an array of tool definitions)",
            ErrorCode::InvalidInput,
        )?;
        for def in tools {
            let (spec, handler) = options::tool(&def)?;
            registry.register(spec, handler)?;
        }
    }
    Ok(registry.snapshot())
}

/// `{ callId, name, arguments?, tool? }`: a host's tool call (`execution.callTool`, `controller.callToolInTurn`);
/// `tool` is a tool definition (as `registerTool` takes), registered into a snapshot of its own.
pub fn host_call(call: &JsValue) -> Result<HostToolCall, AgentError> {
    let bad = || {
        AgentError::new(
            ErrorCode::InvalidInput,
            "callTool expects { callId: non-empty string, name: string, arguments?: object, tool? }",
        )
    };
    if !call.is_object() {
        return Err(bad());
    }
    options::check_keys(
        call,
        &["callId", "name", "arguments", "tool"],
        "callTool",
        ErrorCode::InvalidInput,
    )?;
    let text = |key| {
        get(call, key)
            .as_string()
            .filter(|t| !t.is_empty())
            .ok_or_else(bad)
    };
    let (call_id, name) = (text("callId")?, text("name")?);
    let arguments = get(call, "arguments");
    let arguments = if is_missing(&arguments) {
        serde_json::Map::new()
    } else {
        match js::try_to_json(&arguments).and_then(|t| serde_json::from_str(&t).ok()) {
            Some(Value::Object(arguments)) => arguments,
            _ => return Err(bad()),
        }
    };
    let tool = get(call, "tool");
    let tool = if is_missing(&tool) {
        None
    } else {
        snapshot_of(&Array::of1(&tool))?.get(&name).cloned()
    };
    Ok(HostToolCall {
        call_id,
        name,
        arguments,
        tool,
    })
}

/// A host's tool call as a promise of its frozen ToolCallResult (rejects with the `AgentError`).
pub fn tool_call_promise(
    call: LocalBoxFuture<'static, Result<ToolCallResult, AgentError>>,
) -> Promise {
    js::quiet(&future_to_promise(async move {
        call.await.map(|r| frozen(&r)).map_err(|e| to_js(&e))
    }))
}

const INPUT_KEYS: [&str; 6] = [
    "messages",
    "modelState",
    "tools",
    "model",
    "conversationId",
    "traceId",
];

fn execution_input(input: &JsValue) -> Result<ExecutionInput, AgentError> {
    if !input.is_object() {
        return Err(AgentError::new(
            ErrorCode::InvalidInput,
            "input must be an object { messages, modelState, tools? }",
        ));
    }
    options::check_keys(input, &INPUT_KEYS, "input", ErrorCode::InvalidInput)?;
    let messages = options::messages(&get(input, "messages"), "input.messages")?;
    let mut exec = ExecutionInput::new(messages, snapshot_of(&get(input, "tools"))?);
    exec.model_state = options::model_state(&get(input, "modelState"), "input.modelState")?;
    exec.model = options::opt_string(input, "model", "input", ErrorCode::InvalidInput)?;
    exec.conversation_id =
        options::opt_string(input, "conversationId", "input", ErrorCode::InvalidInput)?;
    exec.trace_id = options::opt_string(input, "traceId", "input", ErrorCode::InvalidInput)?;
    Ok(exec)
}

/// The low-level runtime: all five limits required, no defaults merged.
#[wasm_bindgen(js_name = DefaultAgentRuntime)]
pub struct JsRuntime {
    inner: core::DefaultAgentRuntime,
}

#[wasm_bindgen(js_class = DefaultAgentRuntime)]
impl JsRuntime {
    /// Throws `AgentError` (`AGENT_INVALID_LIMITS` naming the key, or `AGENT_INVALID_OPTIONS`).
    #[wasm_bindgen(constructor)]
    pub fn new(model: JsValue, options: JsValue) -> Result<JsRuntime, JsValue> {
        let model = JsModel::new(model).map_err(|e| to_js(&e))?;
        let options = options::runtime_options(&options, true, "DefaultAgentRuntime options")
            .map_err(|e| to_js(&e))?;
        let inner = core::DefaultAgentRuntime::new(Rc::new(model), options, Rc::new(JsPlatform))
            .map_err(|e| to_js(&e))?;
        Ok(JsRuntime { inner })
    }

    /// `limits` (op 0) and `start(input, observer)` (op 1) in one export: `npm/adapter.js` defines the getter
    /// and the method on the prototype as calls of `__call` (`RUNTIME_MEMBERS` there).
    #[wasm_bindgen(js_name = __call)]
    pub fn call(&self, op: u32, a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
        if op == 0 {
            Ok(self.limits())
        } else {
            self.start(a, b).map(JsValue::from)
        }
    }
}

impl JsRuntime {
    /// The validated limits (frozen).
    fn limits(&self) -> JsValue {
        frozen(&self.inner.limits())
    }

    /// Starts an independent execution. `input` is `{ messages, modelState?, tools?, model?, conversationId?,
    /// traceId? }`; `observer(event)` sees draft stream events, completed messages, tool results and interrupts.
    fn start(&self, input: JsValue, observer: JsValue) -> Result<JsExecution, JsValue> {
        // Checked here, once: a non-function observer would otherwise fail (and be reported) on every event.
        let observer = if observer.is_undefined() || observer.is_null() {
            None
        } else {
            Some(observer.dyn_into::<Function>().map_err(|_| {
                js_error(
                    ErrorCode::InvalidOptions,
                    "start(input, observer): observer must be a function (or omitted)",
                )
            })?)
        };
        let input = execution_input(&input).map_err(|e| to_js(&e))?;
        let execution = self
            .inner
            .start(input, self::observer(observer))
            .map_err(|e| to_js(&e))?;
        Ok(JsExecution::new(execution))
    }
}

/// One execution: `cancel()`, `respond({ interruptId, value })`, `result`.
#[wasm_bindgen(js_name = AgentExecution)]
pub struct JsExecution {
    inner: core::AgentExecution,
    result: Promise,
}

impl JsExecution {
    pub fn new(inner: core::AgentExecution) -> Self {
        let future = inner.result();
        // The promise also drives the execution (future_to_promise spawns it). It is marked handled so that a
        // host that never reads `result` does not get an unhandled rejection; awaiting it still rejects.
        let result = js::quiet(&future_to_promise(async move {
            match future.await {
                Ok(result) => Ok(frozen(&result)),
                Err(e) => Err(to_js(&e)),
            }
        }));
        JsExecution { inner, result }
    }
}

/// The class's getters and methods, in the order of their operation codes (`EXECUTION_MEMBERS` in
/// `npm/adapter.js`, which defines each on the prototype as a call of `__call` with its index).
const ID: u32 = 0;
const RESULT: u32 = 1;
const SETTLED: u32 = 2;
const PENDING_INTERRUPT: u32 = 3;
const CANCEL: u32 = 4;
const RESPOND: u32 = 5;
const CALL_TOOL: u32 = 6;

#[wasm_bindgen(js_class = AgentExecution)]
impl JsExecution {
    /// Every getter and method in one export: `id`, `result` (a promise of `{ outcome, messages, modelState,
    /// usage }` that rejects with an `AgentError`), `settled`, `pendingInterrupt` (`{ interruptId, kind, callId,
    /// tool, arguments }`, a pending elicitation `{ interruptId, kind: 'elicitation', … }`, or null), `cancel()`
    /// (outcome `cancelled`, aborts the signal; whether this call decided the outcome) and
    /// `respond({ interruptId, value })` with `value` true/false, "approve"/"reject" or `{ approved, reason? }`
    /// for a confirmation, `{ action, content? }` for an elicitation (throws `AgentError` on a wrong id, a second
    /// answer or nothing pending), `callTool({ callId, name, arguments, tool? })` (a host's tool call in this
    /// execution, `core::AgentExecution::call_tool`: a promise of its ToolCallResult).
    #[wasm_bindgen(js_name = __call)]
    pub fn call(&self, op: u32, a: JsValue) -> Result<JsValue, JsValue> {
        Ok(match op {
            ID => JsValue::from_str(self.inner.id()),
            RESULT => self.result.clone().into(),
            SETTLED => self.inner.is_settled().into(),
            PENDING_INTERRUPT => match (
                self.inner.pending_interrupt(),
                self.inner.pending_elicitation(),
            ) {
                (Some(interrupt), _) => frozen(&interrupt),
                (None, Some(elicitation)) => frozen(&elicitation),
                (None, None) => JsValue::NULL,
            },
            CANCEL => self.inner.cancel().into(),
            RESPOND => {
                let (id, value) = parse_response(&a).map_err(|e| to_js(&e))?;
                self.inner
                    .respond_json(&id, &value)
                    .map_err(|e| to_js(&e))?;
                JsValue::UNDEFINED
            }
            CALL_TOOL => match host_call(&a) {
                Ok(call) => tool_call_promise(self.inner.call_tool(call)).into(),
                Err(e) => return Err(to_js(&e)),
            },
            _ => JsValue::UNDEFINED,
        })
    }
}

/// `{ interruptId, value }`: the id and the value as JSON (read for the pending kind by the core).
pub fn parse_response(response: &JsValue) -> Result<(String, Value), AgentError> {
    let bad = || {
        AgentError::new(
            ErrorCode::InvalidInput,
            "respond expects { interruptId: string, value }",
        )
    };
    if !response.is_object() {
        return Err(bad());
    }
    options::check_keys(
        response,
        &["interruptId", "value"],
        "respond",
        ErrorCode::InvalidInput,
    )?;
    let id = get(response, "interruptId").as_string().ok_or_else(bad)?;
    let value: Value = js::try_to_json(&get(response, "value"))
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(bad)?;
    Ok((id, value))
}
