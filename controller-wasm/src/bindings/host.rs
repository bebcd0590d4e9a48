//! The core's host traits over JavaScript objects: [`JsPlatform`] (timers, clock, ids, console, `RegExp`), [`JsModel`]
//! (a custom `model` object), [`JsTool`] (a tool's `execute`), [`JsHook`] (a hook's `onEvent`) and the
//! `onHookError` callback. Values go to JS as deep-frozen JSON-parsed objects and come back as strict JSON text.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::stream::{self, StreamExt, TryStreamExt};
use futures::FutureExt;
use js_sys::{Function, Promise, Reflect};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::error;
use super::js;
use super::signal::mirror_signal;
use super::stream::PumpStream;
use super::values::{await_js, frozen, is_thenable, method};
use crate::core::json::{map_text, text_of};
use crate::core::{
    AbortSignal, AgentError, AgentHook, CallRequest, ElicitationRequest, ErrorCode, EventStream,
    HookContext, HookEvent, HookFailure, HostRegex, Model, OnHookError, Platform, RegexEngine,
    ToolContext, ToolHandler, ToolOutput,
};

/// Timers (`setTimeout` via gloo-timers, cleared when the future is dropped), `performance.now()`,
/// `crypto.randomUUID()`, `console.error` and the page's `RegExp`.
pub struct JsPlatform;

/// A schema pattern as the page's `RegExp` (held by its JS handle, released when the schema is dropped).
struct JsRegex(JsValue);

impl HostRegex for JsRegex {
    /// A throw while matching (a page's replaced `RegExp.prototype.exec`, an engine out of stack) is caught at
    /// the import (`catch`) and handed to the core as its text, which ends the execution with it.
    fn is_match(&self, text: &str) -> Result<bool, String> {
        js::regex_test(&self.0, text).map_err(|thrown| error::thrown_text(&thrown))
    }
}

impl RegexEngine for JsPlatform {
    fn compile_regex(&self, source: &str) -> Result<Rc<dyn HostRegex>, String> {
        let compiled = js::compile_regex(source);
        match compiled.as_string() {
            Some(reason) => Err(reason),
            None => Ok(Rc::new(JsRegex(compiled))),
        }
    }
}

impl Platform for JsPlatform {
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()> {
        gloo_timers::future::TimeoutFuture::new(ms).boxed_local()
    }

    fn now_ms(&self) -> f64 {
        js::performance_now()
    }

    fn console_error(&self, failure: &HookFailure) {
        let _ = js::console_error2(
            "@patchbridge/agent: a hook threw on the terminal event",
            &hook_failure_js(failure),
        );
    }

    fn new_id(&self) -> String {
        js::new_id()
    }
}

/// `{ hookIndex, eventType, executionId, error }` with `error` an `AgentError` instance, deep-frozen.
pub fn hook_failure_js(failure: &HookFailure) -> JsValue {
    let object = js::parse_json(&text_of(&failure));
    let _ = Reflect::set(
        &object,
        &JsValue::from_str("error"),
        &error::to_js(&failure.error),
    );
    js::deep_freeze(&object)
}

/// `onHookError(failure)` from JS. If it throws, the settled outcome still stands; the failure and its exception
/// go to `console.error` (the exception path of the contract) instead of vanishing.
pub fn on_hook_error(callback: Function) -> OnHookError {
    Rc::new(move |failure: &HookFailure| {
        let failure = hook_failure_js(failure);
        match callback.call1(&JsValue::NULL, &failure) {
            Err(thrown) => {
                let _ = js::console_error3(
                    "@patchbridge/agent: onHookError threw while reporting a hook failure",
                    &failure,
                    &thrown,
                );
            }
            // Diagnostics should be synchronous; a returned promise's rejection is logged, not left unhandled.
            Ok(returned) if is_thenable(&returned) => js::log_rejection(
                &returned,
                "@patchbridge/agent: onHookError rejected while reporting a hook failure",
                &failure,
            ),
            Ok(_) => {}
        }
    })
}

/// A hook object `{ onEvent(event, context) }`, called synchronously with deep-frozen data.
pub struct JsHook {
    object: JsValue,
    on_event: Function,
}

impl JsHook {
    /// Validates the shape (`AGENT_INVALID_OPTIONS` when `onEvent` is missing).
    pub fn new(object: JsValue, index: u32) -> Result<Self, AgentError> {
        let on_event = method(&object, "onEvent").ok_or_else(|| {
            AgentError::new(
                ErrorCode::InvalidOptions,
                format!("runtime.hooks[{index}] must be an object with an onEvent function"),
            )
        })?;
        Ok(JsHook { object, on_event })
    }
}

impl AgentHook for JsHook {
    fn on_event(&self, event: &HookEvent, ctx: &HookContext) -> Result<(), AgentError> {
        let returned = self
            .on_event
            .call2(&self.object, &frozen(event), &frozen(ctx))
            .map_err(|e| error::from_js(&e, ErrorCode::HookFailed, "hook threw"))?;
        // Hooks observe synchronously: a promise's rejection could neither fail the turn nor reach onHookError
        // in time, so returning one is itself the failure (and the promise is marked handled).
        if is_thenable(&returned) {
            let _handled = js::quiet(&js::to_promise(&returned));
            return Err(AgentError::new(
                ErrorCode::HookFailed,
                "onEvent returned a promise: hooks must be synchronous (push asynchronous work to a host queue)",
            ));
        }
        Ok(())
    }
}

/// A custom model `{ stream(request, signal) }` returning an async iterable (or a promise of one).
pub struct JsModel {
    object: JsValue,
    stream: Function,
}

impl JsModel {
    pub fn new(object: JsValue) -> Result<Self, AgentError> {
        let stream = method(&object, "stream").ok_or_else(|| {
            AgentError::new(
                ErrorCode::InvalidOptions,
                "model must be an object with a stream(request, signal) method",
            )
        })?;
        Ok(JsModel { object, stream })
    }
}

/// Turns whatever a JS stream function returned (async iterable, or a promise of one) into an [`EventStream`].
pub fn stream_from_js(
    returned: Result<JsValue, JsValue>,
    code: ErrorCode,
    what: &'static str,
) -> EventStream {
    match returned {
        Err(thrown) => stream::once(futures::future::ready(Err(error::from_js(
            &thrown, code, what,
        ))))
        .boxed_local(),
        Ok(value) if value.is_instance_of::<Promise>() => {
            let promise: Promise = value.unchecked_into();
            stream::once(async move {
                let iterable = await_js(promise, code, what).await?;
                PumpStream::new(&iterable, false, code, what)
            })
            .try_flatten()
            .boxed_local()
        }
        Ok(value) => match PumpStream::new(&value, false, code, what) {
            Ok(s) => s.boxed_local(),
            Err(e) => stream::once(futures::future::ready(Err(e))).boxed_local(),
        },
    }
}

/// A model request kept in Rust until the custom model reads a field (`lazyRequest` in adapter.js): the history
/// grows with every step of a tool loop, so copying it eagerly would make each step O(conversation).
#[wasm_bindgen]
pub struct RequestHandle {
    request: Rc<CallRequest>,
}

#[wasm_bindgen]
impl RequestHandle {
    /// The request as JSON text (read once, then the handle is freed).
    pub fn json(&self) -> String {
        text_of(&self.request)
    }
}

impl Model for JsModel {
    fn stream(&self, request: Rc<CallRequest>, signal: AbortSignal) -> EventStream {
        let js_request = js::lazy_request(RequestHandle { request }.into());
        let returned = self
            .stream
            .call2(&self.object, &js_request, &mirror_signal(&signal));
        stream_from_js(returned, ErrorCode::ModelFailed, "model.stream failed")
    }
}

/// A tool's `execute(args, { signal, callId })`.
pub struct JsTool {
    object: JsValue,
    execute: Function,
}

impl JsTool {
    pub fn new(object: JsValue, execute: Function) -> Self {
        JsTool { object, execute }
    }
}

/// Converts a tool's (or tool interceptor's) returned JS value to JSON for the core's exact-shape validation.
pub fn tool_result_json(value: &JsValue) -> Result<Value, AgentError> {
    let text = js::tool_result_json(value).ok_or_else(|| {
        AgentError::new(
            ErrorCode::InvalidToolResult,
            "tool result is not plain JSON (undefined, function or non-finite number)",
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        AgentError::new(
            ErrorCode::InvalidToolResult,
            format!("tool result is not JSON: {e}"),
        )
    })
}

impl ToolHandler for JsTool {
    fn execute(&self, input: Rc<Map<String, Value>>, ctx: ToolContext) -> ToolOutput {
        // The tool gets its own plain, mutable copy (`args.limit ??= 10` must work); hooks and interceptors see
        // frozen data, and nothing the tool does to its copy reaches the stored tool call.
        // `context.elicit(request)`: a promise of the person's answer. The function lives as long as the call's
        // output is pending; a tool that calls it later gets a thrown error (the call is over).
        let asker = ctx.asker.clone();
        let elicit = Closure::<dyn FnMut(JsValue) -> Promise>::new(move |request: JsValue| {
            let asker = asker.clone();
            js::quiet(&future_to_promise(async move {
                let request = js::try_to_json(&request)
                    .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                    .ok_or_else(|| {
                        AgentError::new(ErrorCode::InvalidInput, "elicit expects a JSON object")
                    })
                    .and_then(|value| ElicitationRequest::from_json(&value))
                    .map_err(|e| error::to_js(&e))?;
                match asker.ask(request).await {
                    Ok(response) => Ok(frozen(&response)),
                    Err(e) => Err(error::to_js(&e)),
                }
            }))
        });
        let returned = js::call_tool(
            &self.object,
            &self.execute,
            &map_text(&input),
            &mirror_signal(&ctx.signal),
            &ctx.call_id,
            elicit.as_ref(),
        );
        let output = settle_js(returned, ErrorCode::ToolFailed, "tool threw");
        async move {
            let result = output.await;
            drop(elicit);
            result
        }
        .boxed_local()
    }
}

/// What a tool (or tool interceptor) returned, as the core's raw result. A plain value is used at once; only a
/// thenable goes through a promise (most in-page tools answer synchronously, and a promise, its two
/// `wasm-bindgen-futures` callbacks and the microtask hop were a visible share of each tool-loop step). A
/// synchronous throw is the same failure as a rejection.
pub fn settle_js(
    returned: Result<JsValue, JsValue>,
    code: ErrorCode,
    what: &'static str,
) -> ToolOutput {
    match returned {
        Err(thrown) => {
            futures::future::ready(Err(error::from_js(&thrown, code, what))).boxed_local()
        }
        Ok(value) if is_thenable(&value) => {
            let promise = js::to_promise(&value);
            async move {
                let value = await_js(promise, code, what).await?;
                tool_result_json(&value)
            }
            .boxed_local()
        }
        Ok(value) => futures::future::ready(tool_result_json(&value)).boxed_local(),
    }
}
