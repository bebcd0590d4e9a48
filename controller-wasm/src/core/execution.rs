//! One execution's public face: the [`ExecutionInput`] it starts from and the [`AgentExecution`] handle
//! (cancel / respond / result). The handle reads and closes the execution's shared state (the terminal gate,
//! the interrupt slot, the progress), which lives one layer below in `state`.

use std::rc::Rc;

use futures::future::{FutureExt, LocalBoxFuture, Shared};
use patchbridge_protocol::{ConversationContext, Message, ModelState};
use serde_json::Value;

use super::abort::AbortSignal;
use super::closing::close_dangling_calls;
use super::elicitation::{Elicitation, ElicitationResponse};
use super::error::AgentError;
use super::interrupt::{Interrupt, InterruptKind, InterruptResponse};
use super::outcome::ExecutionResult;
use super::registry::ToolRegistrySnapshot;
use super::state::{Answer, ExecShared, Terminal};

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
