//! Interceptors wrap exactly one model call ([`ModelInterceptor`]) or one tool call ([`ToolInterceptor`]).
//!
//! The continuation handles [`ModelNext`] / [`ToolNext`] may be called once. A second call fails with
//! `AGENT_NEXT_CALLED_TWICE` *and* poisons the call, so the execution fails even if the interceptor swallows the
//! error (a duplicate call could mean duplicate billing or a duplicate side effect).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use patchbridge_protocol::write::Object;
use serde_json::{Map, Value};

use super::abort::AbortSignal;
use super::error::{AgentError, ErrorCode};
use super::host::{EventStream, ToolOutput};
use super::request::CallRequest;

patchbridge_protocol::wire! {
    written, ts(test);
    /// Facts about the model call being intercepted.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ModelCallContext {
        /// The execution's id.
        pub execution_id: String = "executionId",
        /// Trace id (the input's, or the execution id).
        pub trace_id: String = "traceId",
        /// 1-based index of this model call within the execution.
        pub model_call: u64 = "modelCall",
    }
}

/// One tool call as a tool interceptor sees it.
#[derive(Debug, Clone)]
pub struct ToolInvocation {
    /// The call id (the result's `toolCallId` must equal the original call id).
    pub call_id: String,
    /// The tool name.
    pub tool: String,
    /// Validated arguments.
    pub arguments: Rc<Map<String, Value>>,
    /// The execution's abort signal.
    pub signal: AbortSignal,
    /// The execution's id.
    pub execution_id: String,
}

impl ToolInvocation {
    /// `{ callId, tool, arguments, executionId }` as JSON (the signal is passed separately to JS).
    pub fn to_json(&self) -> Value {
        Object::new()
            .put("callId", self.call_id.as_str())
            .put("tool", self.tool.as_str())
            .put("arguments", (*self.arguments).clone())
            .put("executionId", self.execution_id.as_str())
            .done()
    }
}

/// Wraps one model call.
pub trait ModelInterceptor {
    /// Returns the events of this call, normally by forwarding `next.call(request, ctx, signal)`.
    fn intercept(
        &self,
        request: Rc<CallRequest>,
        ctx: ModelCallContext,
        signal: AbortSignal,
        next: ModelNext,
    ) -> EventStream;
}

/// Wraps one tool call.
pub trait ToolInterceptor {
    /// Returns the raw tool result, normally by forwarding `next.call(invocation)`.
    fn intercept(&self, invocation: ToolInvocation, next: ToolNext) -> ToolOutput;
}

type ModelContinuation =
    Box<dyn FnOnce(Rc<CallRequest>, ModelCallContext, AbortSignal) -> EventStream>;
type ToolContinuation = Box<dyn FnOnce(ToolInvocation) -> ToolOutput>;

/// Shared "a continuation was called twice" flag of one model or tool call.
#[derive(Clone, Default, Debug)]
pub(crate) struct Poison(Rc<Cell<bool>>);

impl Poison {
    pub(crate) fn set(&self) {
        self.0.set(true);
    }
    pub(crate) fn is_set(&self) -> bool {
        self.0.get()
    }
}

pub(crate) fn next_called_twice() -> AgentError {
    AgentError::new(
        ErrorCode::NextCalledTwice,
        "an interceptor called next() a second time for the same call",
    )
}

/// The rest of the model-call chain. Clones share the once-only state.
#[derive(Clone)]
pub struct ModelNext {
    slot: Rc<RefCell<Option<ModelContinuation>>>,
    poison: Poison,
}

impl ModelNext {
    pub(crate) fn new(continuation: ModelContinuation, poison: Poison) -> Self {
        ModelNext {
            slot: Rc::new(RefCell::new(Some(continuation))),
            poison,
        }
    }

    /// Calls the rest of the chain. A second call fails with `AGENT_NEXT_CALLED_TWICE` (and fails the call).
    pub fn call(
        &self,
        request: Rc<CallRequest>,
        ctx: ModelCallContext,
        signal: AbortSignal,
    ) -> Result<EventStream, AgentError> {
        let continuation = self.slot.borrow_mut().take();
        match continuation {
            Some(f) => Ok(f(request, ctx, signal)),
            None => {
                self.poison.set();
                Err(next_called_twice())
            }
        }
    }
}

/// The rest of the tool-call chain. Clones share the once-only state.
#[derive(Clone)]
pub struct ToolNext {
    slot: Rc<RefCell<Option<ToolContinuation>>>,
    poison: Poison,
}

impl ToolNext {
    pub(crate) fn new(continuation: ToolContinuation, poison: Poison) -> Self {
        ToolNext {
            slot: Rc::new(RefCell::new(Some(continuation))),
            poison,
        }
    }

    /// Calls the rest of the chain. A second call resolves to `AGENT_NEXT_CALLED_TWICE` (and fails the call).
    pub fn call(&self, invocation: ToolInvocation) -> ToolOutput {
        let continuation = self.slot.borrow_mut().take();
        match continuation {
            Some(f) => f(invocation),
            None => {
                self.poison.set();
                Box::pin(futures::future::ready(Err(next_called_twice())))
            }
        }
    }
}
