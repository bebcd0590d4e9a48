//! One execution's public face: the [`ExecutionInput`] it starts from and the [`AgentExecution`] handle
//! (cancel / respond / result / a host's tool call). The handle reads and closes the execution's shared state (the terminal gate,
//! the interrupt slot, the progress), which lives one layer below in `state`.

use std::rc::Rc;

use futures::future::{FutureExt, LocalBoxFuture, Shared};
use patchbridge_protocol::{ConversationContext, Message, ModelState};
use serde_json::{Map, Value};

use super::abort::AbortSignal;
use super::closing::{close_dangling_calls, not_run_text};
use super::elicitation::{Elicitation, ElicitationResponse};
use super::error::AgentError;
use super::interrupt::{Interrupt, InterruptKind, InterruptResponse};
use super::outcome::ExecutionResult;
use super::precheck::{failed, CheckedCall};
use super::registry::{RegisteredTool, ToolRegistrySnapshot};
use super::state::{Answer, ExecShared, Terminal};
use super::tool_result::ToolCallResult;

/// A tool call the host adds to a running execution ([`AgentExecution::call_tool`]): an MCP App's call from
/// its view. It is not the model's: it never enters the messages.
#[derive(Debug, Clone)]
pub struct HostToolCall {
    /// Its id, unique in the conversation (the package's app calls use `app_` and 24 hex digits): the id its
    /// confirmation's interrupt and the hook events carry.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, checked against the tool's `inputSchema` before any confirmation.
    pub arguments: Map<String, Value>,
    /// The tool to run when the turn's snapshot has none named `name` (a tool meant for apps only, never shown
    /// to the model), registered like any tool (the same schema compiler and policy); the snapshot's wins.
    pub tool: Option<RegisteredTool>,
}

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

/// The result future: shared, so every clone resolves to the same value. Polling it also drives the
/// execution.
pub type ResultFuture = Shared<LocalBoxFuture<'static, Result<ExecutionResult, AgentError>>>;

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
        self.shared.close(Terminal::Cancelled)
    }

    /// Answers the pending interrupt. Fails with `AGENT_NO_PENDING_INTERRUPT` (nothing pending, or the
    /// execution settled), `AGENT_INTERRUPT_MISMATCH` (another id is pending) or
    /// `AGENT_INTERRUPT_ALREADY_RESOLVED` (this id was answered before).
    pub fn respond(&self, interrupt_id: &str, value: InterruptResponse) -> Result<(), AgentError> {
        self.shared.respond(interrupt_id, value)
    }

    /// Answers the pending interrupt with the host's JSON `value`, read for the pending kind: a confirmation's
    /// (`true`/`false`, `"approve"`/`"reject"`, `{ approved, reason? }`) or an elicitation's (`{ action,
    /// content? }`). A value that is neither fails with `AGENT_INVALID_INPUT` before the id is looked at (as
    /// before elicitations existed); one of the other kind fails with it too. Id failures as in `respond`.
    pub fn respond_json(&self, interrupt_id: &str, value: &Value) -> Result<(), AgentError> {
        let confirmation = InterruptResponse::from_json(value);
        let elicitation = ElicitationResponse::from_json(value);
        if let (Err(error), Err(_)) = (&confirmation, &elicitation) {
            return Err(error.clone());
        }
        self.shared.answer(interrupt_id, |kind| match kind {
            InterruptKind::Elicitation => elicitation.map(Answer::Elicitation),
            InterruptKind::ToolConfirmation => confirmation.map(Answer::Confirmation),
        })
    }

    /// Adds the host's tool call to this execution. The loop takes it at its next safe point (before a model
    /// call, or before it finishes), then treats it as the model's calls: the arguments checked against the
    /// tool's schema (an `[invalid arguments]` result, not run), confirmation through this execution's interrupt
    /// slot unless the tool is read-only (a rejection's `[rejected]` result), `maxToolCalls` (over it: the limit
    /// error, not run), tool interceptors and hooks, the deadline and cancellation. Its result resolves the
    /// future and nothing else: no event and no message carries it. When the execution ends first (cancelled,
    /// failed, timed out) it resolves with the `[not run]` result. Fails at once with `AGENT_TOOL_PRECHECK_FAILED`
    /// (no such tool), `AGENT_INVALID_INPUT` (an id already used) or `AGENT_BUSY` (the execution settled); an
    /// error of the call itself (a tool that throws, an invalid result) fails the call, not the execution.
    pub fn call_tool(
        &self,
        call: HostToolCall,
    ) -> LocalBoxFuture<'static, Result<ToolCallResult, AgentError>> {
        let shared = self.shared.clone();
        let (call_id, name) = (call.call_id, call.name);
        let queued = match shared.tools.get(&name).cloned().or(call.tool) {
            Some(tool) if tool.spec.name == name => shared.queue_host_call(CheckedCall {
                call_id: call_id.clone(),
                input: Rc::new(call.arguments),
                tool,
            }),
            _ => Err(failed(
                "known-tool",
                format!("call {call_id:?} names tool {name:?}, which is neither in this turn's snapshot nor given"),
                Some(&call_id),
            )),
        };
        async move {
            match queued?.await {
                Ok(answer) => answer,
                // The gate closed before the call had its answer.
                Err(_) => Ok(ToolCallResult {
                    content: not_run_text(
                        &name,
                        match shared.terminal() {
                            Some(Terminal::Failed(error)) => error.code.as_str(),
                            _ => "cancelled",
                        },
                    ),
                    tool_call_id: call_id,
                    is_error: true,
                }),
            }
        }
        .boxed_local()
    }

    /// The pending interrupt, if any.
    pub fn pending_interrupt(&self) -> Option<Interrupt> {
        self.shared.pending_interrupt()
    }

    /// The pending elicitation (a running tool's question), if any.
    pub fn pending_elicitation(&self) -> Option<Elicitation> {
        self.shared.pending_elicitation()
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
    pub fn stable_context(&self) -> ConversationContext {
        let progress = self.shared.progress.borrow();
        let mut messages: Vec<Message> = progress.messages.iter().map(|m| (**m).clone()).collect();
        if let Some(Terminal::Failed(error)) = self.shared.terminal() {
            close_dangling_calls(
                &mut messages,
                &progress.published,
                error.code.as_str(),
                || format!("msg_{}", self.shared.runtime.platform.new_id()),
            );
        }
        ConversationContext {
            messages,
            model_state: progress.model_state.as_deref().cloned(),
        }
    }

    /// The frozen tool snapshot this execution runs with.
    pub fn tools(&self) -> Rc<ToolRegistrySnapshot> {
        self.shared.tools.clone()
    }
}
