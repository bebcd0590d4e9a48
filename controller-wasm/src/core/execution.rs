//! One execution's public face: [`ExecutionInput`], [`AgentExecution`] (cancel / respond / result),
//! [`ExecutionResult`] with its [`Outcome`], the observer's [`ExecutionEvent`]s and the confirmation
//! [`Interrupt`] / [`InterruptResponse`] pair.
//!
//! The state behind it (gate, interrupt slot, progress) lives in [`super::state`]; the loop in
//! [`super::agent_loop`]; the driver that races the loop against the gate and the deadline in
//! [`super::driver`].

use std::rc::Rc;

use futures::future::{FutureExt, LocalBoxFuture, Shared};
use patchbridge_protocol::{Message, ModelState, StreamEvent, Usage};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::abort::AbortSignal;
use super::error::{AgentError, ErrorCode};
use super::registry::ToolRegistrySnapshot;
use super::state::ExecShared;

/// What one execution starts from.
#[derive(Debug, Clone)]
pub struct ExecutionInput {
    /// The conversation so far, oldest first (must not be empty).
    pub messages: Vec<Message>,
    /// Provider state from the last message-stop (or the store), passed through verbatim.
    pub model_state: Option<ModelState>,
    /// This turn's frozen tool snapshot.
    pub tools: Rc<ToolRegistrySnapshot>,
    /// Model id for the relay (`None` = the relay's default).
    pub model: Option<String>,
    /// Conversation id, forwarded to the model request for logs only.
    pub conversation_id: Option<String>,
    /// Trace id for hooks and interceptors (defaults to the execution id).
    pub trace_id: Option<String>,
}

impl ExecutionInput {
    /// Input with the given messages and tools, no model state and no ids.
    pub fn new(messages: Vec<Message>, tools: Rc<ToolRegistrySnapshot>) -> Self {
        ExecutionInput {
            messages,
            model_state: None,
            tools,
            model: None,
            conversation_id: None,
            trace_id: None,
        }
    }
}

/// The non-error end of an execution (closed set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The model ended naturally (`end-turn`, `stop-sequence`, `refusal`, `other`).
    Completed,
    /// The provider sealed the message at its token limit; the message is kept (and saved by the controller).
    MaxTokens,
    /// The host or user cancelled; nothing of the turn is saved.
    Cancelled,
}

impl Outcome {
    /// `completed`, `max-tokens` or `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::MaxTokens => "max-tokens",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// What `result` resolves with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionResult {
    /// The outcome.
    pub outcome: Outcome,
    /// The whole conversation: input messages plus every message that became stable (never a draft).
    pub messages: Vec<Message>,
    /// The provider state after the last stable message (verbatim).
    pub model_state: Option<ModelState>,
    /// Usage summed over the model calls that completed.
    pub usage: Usage,
}

/// The result future: shared, so every clone resolves to the same value. Polling it also drives the
/// execution.
pub type ResultFuture = Shared<LocalBoxFuture<'static, Result<ExecutionResult, AgentError>>>;

/// The kind of an interrupt (closed set; only tool confirmation today).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InterruptKind {
    /// A tool call awaits approval.
    ToolConfirmation,
}

/// A pending human-in-the-loop question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// Stable id to pass to `respond`.
    pub interrupt_id: String,
    /// Always `tool-confirmation`.
    pub kind: InterruptKind,
    /// The tool call awaiting approval.
    pub call_id: String,
    /// The tool name.
    pub tool: String,
    /// The validated arguments.
    pub arguments: Map<String, Value>,
}

/// The answer to a `tool-confirmation` interrupt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterruptResponse {
    /// Run the tool.
    Approve,
    /// Do not run it; the model sees an error tool result (with the reason, if any).
    Reject {
        /// Optional reason shown to the model.
        reason: Option<String>,
    },
}

impl InterruptResponse {
    /// Parses the JS `value`: `true` / `false`, `"approve"` / `"reject"`, or `{ approved: bool, reason?: string }`.
    pub fn from_json(value: &Value) -> Result<InterruptResponse, AgentError> {
        let invalid = || {
            AgentError::new(
                ErrorCode::InvalidInput,
                "respond value must be true/false, \"approve\"/\"reject\" or { approved: boolean, reason?: string }",
            )
        };
        match value {
            Value::Bool(true) => Ok(InterruptResponse::Approve),
            Value::Bool(false) => Ok(InterruptResponse::Reject { reason: None }),
            Value::String(s) if s == "approve" => Ok(InterruptResponse::Approve),
            Value::String(s) if s == "reject" => Ok(InterruptResponse::Reject { reason: None }),
            Value::Object(map) => {
                if map.keys().any(|k| k != "approved" && k != "reason") {
                    return Err(invalid());
                }
                let approved = map
                    .get("approved")
                    .and_then(Value::as_bool)
                    .ok_or_else(invalid)?;
                let reason = match map.get("reason") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err(invalid()),
                };
                if approved {
                    if reason.is_some() {
                        return Err(invalid());
                    }
                    Ok(InterruptResponse::Approve)
                } else {
                    Ok(InterruptResponse::Reject { reason })
                }
            }
            _ => Err(invalid()),
        }
    }

    /// Whether this approves.
    pub fn is_approve(&self) -> bool {
        matches!(self, InterruptResponse::Approve)
    }
}

/// What the observer passed to `start` sees, in order. Only published while the terminal gate is open.
///
/// Model block events are passed through by reference (no copy per delta); `message-start` and
/// `message-stop` are replaced by [`ExecutionEvent::MessageStarted`] (with the resolved id) and
/// [`ExecutionEvent::MessageCompleted`] (the stable message).
#[derive(Debug, Clone, Copy)]
pub enum ExecutionEvent<'a> {
    /// A model call began streaming an assistant message (id from `message-start`, or generated).
    MessageStarted {
        /// The message id.
        id: &'a str,
        /// 1-based model call index.
        model_call: u64,
    },
    /// A validated `block-start`, `block-delta` or `block-stop` of the draft.
    Stream(&'a StreamEvent),
    /// A message became stable (assistant after message-stop and precheck; tool message after its batch).
    MessageCompleted(&'a Message),
    /// One validated tool result (before its batch's tool message is complete).
    ToolResult {
        /// The call it answers.
        call_id: &'a str,
        /// Result content.
        content: &'a str,
        /// Whether it is an error result.
        is_error: bool,
    },
    /// A confirmation interrupt is pending.
    Interrupt(&'a Interrupt),
    /// The pending interrupt was answered.
    InterruptResolved {
        /// Its id.
        interrupt_id: &'a str,
        /// The call it was about.
        call_id: &'a str,
        /// Whether it was approved.
        approved: bool,
    },
}

impl ExecutionEvent<'_> {
    /// The event's `type` string.
    pub fn type_name(&self) -> &'static str {
        match self {
            ExecutionEvent::MessageStarted { .. } => "message-started",
            ExecutionEvent::Stream(StreamEvent::BlockStart { .. }) => "block-start",
            ExecutionEvent::Stream(StreamEvent::BlockDelta { .. }) => "block-delta",
            ExecutionEvent::Stream(StreamEvent::BlockStop { .. }) => "block-stop",
            ExecutionEvent::Stream(_) => "stream",
            ExecutionEvent::MessageCompleted(_) => "message-completed",
            ExecutionEvent::ToolResult { .. } => "tool-result",
            ExecutionEvent::Interrupt(_) => "interrupt",
            ExecutionEvent::InterruptResolved { .. } => "interrupt-resolved",
        }
    }

    /// The event as JSON: `{ type, ...camelCase fields }`; stream events keep their protocol shape.
    pub fn to_json(&self) -> Value {
        match self {
            ExecutionEvent::MessageStarted { id, model_call } => {
                json!({ "type": "message-started", "id": id, "modelCall": model_call })
            }
            ExecutionEvent::Stream(event) => serde_json::to_value(event).unwrap_or(Value::Null),
            ExecutionEvent::MessageCompleted(message) => {
                json!({ "type": "message-completed", "message": message })
            }
            ExecutionEvent::ToolResult {
                call_id,
                content,
                is_error,
            } => json!({
                "type": "tool-result",
                "result": { "toolCallId": call_id, "content": content, "isError": is_error },
            }),
            ExecutionEvent::Interrupt(interrupt) => {
                let mut value = serde_json::to_value(interrupt).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut value {
                    map.insert("type".into(), Value::String("interrupt".into()));
                }
                value
            }
            ExecutionEvent::InterruptResolved {
                interrupt_id,
                call_id,
                approved,
            } => json!({
                "type": "interrupt-resolved", "interruptId": interrupt_id, "callId": call_id, "approved": approved,
            }),
        }
    }
}

/// The observer callback given to `start`.
pub type Observer = Box<dyn FnMut(&ExecutionEvent<'_>)>;

/// One running execution. Independent of every other: own signal, interrupt slot, budget and result.
/// Cloning gives another handle to the same execution.
#[derive(Clone)]
pub struct AgentExecution {
    pub(crate) shared: Rc<ExecShared>,
    pub(crate) result: ResultFuture,
}

impl AgentExecution {
    /// The execution id.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// Cancels: closes the terminal gate (outcome `cancelled`) and then aborts the signal. Returns whether this
    /// call decided the outcome (false if the execution had already settled or been cancelled).
    pub fn cancel(&self) -> bool {
        self.shared.close(super::state::Terminal::Cancelled)
    }

    /// Answers the pending interrupt. Fails with `AGENT_NO_PENDING_INTERRUPT` (nothing pending, or the
    /// execution settled), `AGENT_INTERRUPT_MISMATCH` (another id is pending) or
    /// `AGENT_INTERRUPT_ALREADY_RESOLVED` (this id was answered before).
    pub fn respond(&self, interrupt_id: &str, value: InterruptResponse) -> Result<(), AgentError> {
        self.shared.respond(interrupt_id, value)
    }

    /// The pending interrupt, if any.
    pub fn pending_interrupt(&self) -> Option<Interrupt> {
        self.shared.pending_interrupt()
    }

    /// The shared result future (polling it drives the execution).
    pub fn result(&self) -> ResultFuture {
        self.result.clone()
    }

    /// A future that drives the execution to its end, for `spawn_local`. Same work as awaiting `result()`.
    pub fn driver(&self) -> LocalBoxFuture<'static, ()> {
        self.result.clone().map(|_| ()).boxed_local()
    }

    /// Whether the terminal gate has closed (the outcome is decided).
    pub fn is_settled(&self) -> bool {
        self.shared.is_closed()
    }

    /// The execution's abort signal (aborted after cancel, deadline or failure).
    pub fn signal(&self) -> AbortSignal {
        self.shared.signal.clone()
    }

    /// The stable messages and ModelState so far (input plus every message that became stable; never the
    /// draft). After a failure this is what the controller keeps in memory.
    pub fn stable_context(&self) -> patchbridge_protocol::ConversationContext {
        let progress = self.shared.progress.borrow();
        let mut messages: Vec<Message> = progress.messages.iter().map(|m| (**m).clone()).collect();
        if let Some(super::state::Terminal::Failed(error)) = self.shared.terminal() {
            super::closing::close_dangling_calls(
                &mut messages,
                &progress.published,
                error.code.as_str(),
                || format!("msg_{}", self.shared.runtime.platform.new_id()),
            );
        }
        patchbridge_protocol::ConversationContext {
            messages,
            model_state: progress.model_state.as_deref().cloned(),
        }
    }

    /// The frozen tool snapshot this execution runs with.
    pub fn tools(&self) -> Rc<ToolRegistrySnapshot> {
        self.shared.tools.clone()
    }
}
