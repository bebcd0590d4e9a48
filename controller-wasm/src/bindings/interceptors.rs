//! Model and tool interceptors written in JS, and the `next` continuations handed to them.
//!
//! A model interceptor is `{ async *intercept(request, context, signal, next) }`; its `next(request)` returns an
//! async iterable over the rest of the chain (a [`RustEventStream`] behind `iterableFromRust`). A tool
//! interceptor is `{ intercept(invocation, next) }`; `next(invocation?)` returns a promise of the raw result.
//! The once-only rule of `next` lives in the core ([`ModelNext`] / [`ToolNext`]); these adapters only forward.

use std::cell::RefCell;
use std::rc::Rc;

use futures::StreamExt;
use js_sys::{Array, Function, Reflect};

use patchbridge_protocol::ModelRequest;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::error;
use super::host::{settle_js, stream_from_js};
use super::js;
use super::signal::mirror_signal;
use super::values::{frozen, method};
use crate::core::json::{text_of, to_text};
use crate::core::{
    AbortSignal, AgentError, CallRequest, ErrorCode, EventStream, ModelCallContext,
    ModelInterceptor, ModelNext, ToolInterceptor, ToolInvocation, ToolNext, ToolOutput,
};

/// A Rust event stream pulled from JS one event at a time (JSON text; `undefined` at the end).
#[wasm_bindgen]
pub struct RustEventStream {
    stream: Rc<RefCell<Option<EventStream>>>,
}

#[wasm_bindgen]
impl RustEventStream {
    /// The next event as JSON text, `undefined` at the end; rejects with an `AgentError` when the stream fails.
    pub fn next(&self) -> js_sys::Promise {
        let slot = self.stream.clone();
        future_to_promise(async move {
            let taken = slot.borrow_mut().take();
            let Some(mut stream) = taken else {
                return Ok(JsValue::UNDEFINED);
            };
            let item = stream.next().await;
            match item {
                Some(Ok(event)) => {
                    *slot.borrow_mut() = Some(stream);
                    Ok(JsValue::from_str(&text_of(&event)))
                }
                Some(Err(e)) => Err(error::to_js(&e)),
                None => Ok(JsValue::UNDEFINED),
            }
        })
    }

    /// Drops the stream (the interceptor stopped iterating).
    pub fn close(&self) {
        self.stream.borrow_mut().take();
    }
}

/// `{ intercept(request, context, signal, next) }` returning an async iterable of events.
pub struct JsModelInterceptor {
    object: JsValue,
    intercept: Function,
}

impl JsModelInterceptor {
    pub fn new(object: JsValue, index: u32) -> Result<Self, AgentError> {
        let intercept = method(&object, "intercept").ok_or_else(|| {
            AgentError::new(
                ErrorCode::InvalidOptions,
                format!("runtime.modelInterceptors[{index}] must have an intercept function"),
            )
        })?;
        Ok(JsModelInterceptor { object, intercept })
    }
}

impl ModelInterceptor for JsModelInterceptor {
    fn intercept(
        &self,
        request: Rc<CallRequest>,
        ctx: ModelCallContext,
        signal: AbortSignal,
        next: ModelNext,
    ) -> EventStream {
        let js_request = frozen(&*request);
        let js_ctx = frozen(&ctx);
        let js_signal = mirror_signal(&signal);
        // `next(request?, context?, signal?)`: the request may be replaced; context and signal are the call's own.
        let next_fn =
            Closure::<dyn FnMut(JsValue) -> Result<JsValue, JsValue>>::new(move |req: JsValue| {
                let request = if req.is_undefined() {
                    request.clone()
                } else {
                    let text = js::try_to_json(&req).ok_or_else(|| {
                        error::js_error(
                            ErrorCode::InterceptorFailed,
                            "next(request): request is not plain JSON",
                        )
                    })?;
                    let parsed: ModelRequest = serde_json::from_str(&text).map_err(|e| {
                        error::js_error(
                            ErrorCode::InterceptorFailed,
                            &format!("next(request): invalid model request: {e}"),
                        )
                    })?;
                    Rc::new(CallRequest::from_request(parsed))
                };
                let stream = next
                    .call(request, ctx.clone(), signal.clone())
                    .map_err(|e| error::to_js(&e))?;
                let handle = RustEventStream {
                    stream: Rc::new(RefCell::new(Some(stream))),
                };
                Ok(js::iterable_from_rust(handle.into()))
            });
        let args = Array::of4(&js_request, &js_ctx, &js_signal, &next_fn.into_js_value());
        let returned = self.intercept.apply(&self.object, &args);
        stream_from_js(
            returned,
            ErrorCode::InterceptorFailed,
            "model interceptor failed",
        )
    }
}

/// `{ intercept(invocation, next) }` returning (a promise of) the raw tool result.
pub struct JsToolInterceptor {
    object: JsValue,
    intercept: Function,
}

impl JsToolInterceptor {
    pub fn new(object: JsValue, index: u32) -> Result<Self, AgentError> {
        let intercept = method(&object, "intercept").ok_or_else(|| {
            AgentError::new(
                ErrorCode::InvalidOptions,
                format!("runtime.toolInterceptors[{index}] must have an intercept function"),
            )
        })?;
        Ok(JsToolInterceptor { object, intercept })
    }
}

/// `{ callId, tool, arguments, executionId, signal }`: the data deep-frozen, the live `AbortSignal` not (a frozen
/// signal could not be aborted).
fn invocation_js(invocation: &ToolInvocation) -> JsValue {
    js::with_signal(
        &js::parse_frozen(&to_text(&invocation.to_json())),
        &mirror_signal(&invocation.signal),
    )
}

impl ToolInterceptor for JsToolInterceptor {
    fn intercept(&self, invocation: ToolInvocation, next: ToolNext) -> ToolOutput {
        let js_invocation = invocation_js(&invocation);
        // `next(invocation?)`: an interceptor may pass replaced `arguments`; call id, tool and signal stay.
        let next_fn =
            Closure::<dyn FnMut(JsValue) -> Result<JsValue, JsValue>>::new(move |inv: JsValue| {
                let mut forwarded = invocation.clone();
                if !inv.is_undefined() && !inv.is_null() {
                    let arguments = Reflect::get(&inv, &JsValue::from_str("arguments"))
                        .unwrap_or(JsValue::UNDEFINED);
                    let text = js::try_to_json(&arguments).ok_or_else(|| {
                        error::js_error(
                            ErrorCode::InterceptorFailed,
                            "next(invocation): arguments are not plain JSON",
                        )
                    })?;
                    match serde_json::from_str::<Value>(&text) {
                        Ok(Value::Object(map)) => forwarded.arguments = Rc::new(map),
                        _ => {
                            return Err(error::js_error(
                                ErrorCode::InterceptorFailed,
                                "next(invocation): invocation.arguments must be a JSON object",
                            ))
                        }
                    }
                }
                let output = next.call(forwarded);
                Ok(future_to_promise(async move {
                    let value = output.await.map_err(|e| error::to_js(&e))?;
                    Ok(js::parse_frozen(&to_text(&value)))
                })
                .into())
            });
        let args = Array::of2(&js_invocation, &next_fn.into_js_value());
        settle_js(
            self.intercept.apply(&self.object, &args),
            ErrorCode::InterceptorFailed,
            "tool interceptor failed",
        )
    }
}
