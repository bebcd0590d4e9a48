//! The state shared by one execution's handle, loop and driver: the terminal gate, the interrupt slot, the
//! stable progress, the host's queued tool calls, and the two publication paths (observer events and hook
//! events).
//!
//! Rule: nothing is published unless the gate is open, except the single terminal hook event, which is
//! published exactly once right after the gate closed. No `RefCell` borrow is held while host code runs
//! (observer, hooks, abort callbacks), so host code may call back into the execution.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::Waker;

use futures::channel::oneshot;
use patchbridge_protocol::write::Object;
use patchbridge_protocol::{Block, Message, ModelState, ToolDefinition, Usage};

use super::abort::AbortSignal;
use super::closing::close_dangling_calls;
use super::elicitation::{Elicitation, ElicitationRequest, ElicitationResponse};
use super::error::{AgentError, ErrorCode};
use super::events::{ExecutionEvent, Observer};
use super::hooks::{HookContext, HookEvent, HookFailure};
use super::interrupt::{Interrupt, InterruptKind, InterruptResponse};
use super::options::RuntimeParts;
use super::outcome::{ExecutionResult, Outcome};
use super::precheck::CheckedCall;
use super::registry::ToolRegistrySnapshot;
use super::tool_result::ToolCallResult;

/// How the gate closed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Terminal {
    /// `completed` or `max-tokens`.
    Finished(Outcome),
    /// The host or user cancelled.
    Cancelled,
    /// Any failure, including the deadline.
    Failed(AgentError),
}

/// The stable facts of the execution so far (what a cancelled result reports).
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// Shared with the requests of model calls (each model call's `CallRequest` holds the same `Rc`s).
    pub messages: Vec<Rc<Message>>,
    pub model_state: Option<Rc<ModelState>>,
    pub usage: Usage,
    pub model_calls: u64,
    pub tool_calls: u64,
    /// Results published for the running batch (cleared when its tool message becomes stable).
    pub published: Vec<ToolCallResult>,
}

/// The one pending question of an execution: a tool confirmation, or a running tool's elicitation.
enum PendingInterrupt {
    Confirmation {
        interrupt: Interrupt,
        reply: oneshot::Sender<InterruptResponse>,
    },
    Elicitation {
        elicitation: Elicitation,
        reply: oneshot::Sender<ElicitationResponse>,
    },
}

impl PendingInterrupt {
    fn id(&self) -> &str {
        match self {
            PendingInterrupt::Confirmation { interrupt, .. } => &interrupt.interrupt_id,
            PendingInterrupt::Elicitation { elicitation, .. } => &elicitation.interrupt_id,
        }
    }
}

/// What `respond` answers with: a confirmation's value or an elicitation's, decided by the pending kind.
pub(crate) enum Answer {
    Confirmation(InterruptResponse),
    Elicitation(ElicitationResponse),
}

#[derive(Default)]
struct InterruptSlot {
    pending: Option<PendingInterrupt>,
    resolved: Vec<String>,
    next_sequence: u64,
}

pub(crate) struct ExecShared {
    pub id: String,
    pub trace_id: String,
    pub runtime: Rc<RuntimeParts>,
    pub tools: Rc<ToolRegistrySnapshot>,
    pub model: Option<String>,
    pub conversation_id: Option<String>,
    /// This execution's tool definitions, computed once and shared by every model call's request.
    pub definitions: Rc<[ToolDefinition]>,
    pub signal: AbortSignal,
    pub progress: RefCell<Progress>,
    gate: RefCell<Option<Terminal>>,
    /// Whether `gate` holds a terminal: read before every streamed event is published, so it is a plain flag
    /// instead of a `RefCell` borrow (set once, with the gate, in [`close`](Self::close)).
    closed: Cell<bool>,
    gate_waker: RefCell<Option<Waker>>,
    terminal_published: Cell<bool>,
    interrupt: RefCell<InterruptSlot>,
    observer: RefCell<Option<Observer>>,
    hook_sequence: Cell<u64>,
    /// The host's tool calls waiting for the loop's next safe point (`AgentExecution::call_tool`); dropped when
    /// the gate closes, which answers each as not run.
    host_calls: RefCell<Vec<(CheckedCall, HostReply)>>,
}

/// Where a host's tool call gets its answer.
pub(crate) type HostReply = oneshot::Sender<Result<ToolCallResult, AgentError>>;

/// The internal "the gate closed under us" error. Never reaches a caller: once the gate is closed its own
/// terminal decides the result.
pub(crate) fn gate_closed() -> AgentError {
    AgentError::new(
        ErrorCode::InvalidInput,
        "internal: execution already settled",
    )
}

impl ExecShared {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: String,
        trace_id: String,
        runtime: Rc<RuntimeParts>,
        tools: Rc<ToolRegistrySnapshot>,
        model: Option<String>,
        conversation_id: Option<String>,
        progress: Progress,
        observer: Observer,
    ) -> Self {
        ExecShared {
            id,
            trace_id,
            runtime,
            definitions: tools.definitions().into(),
            tools,
            model,
            conversation_id,
            signal: AbortSignal::new(),
            progress: RefCell::new(progress),
            gate: RefCell::new(None),
            closed: Cell::new(false),
            gate_waker: RefCell::new(None),
            terminal_published: Cell::new(false),
            interrupt: RefCell::new(InterruptSlot::default()),
            observer: RefCell::new(Some(observer)),
            hook_sequence: Cell::new(0),
            host_calls: RefCell::default(),
        }
    }

    // ---- the terminal gate ----

    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// `Err(gate_closed())` once the gate is closed: the loop bails out at the next check.
    pub(crate) fn check_open(&self) -> Result<(), AgentError> {
        if self.is_closed() {
            Err(gate_closed())
        } else {
            Ok(())
        }
    }

    /// Closes the gate with `terminal` if it is still open: first the gate, then the pending confirmation wait
    /// is consumed, then (unless the run finished normally) the shared signal is aborted, then the driver is
    /// woken. Returns whether this call decided the outcome.
    pub(crate) fn close(&self, terminal: Terminal) -> bool {
        let finished = matches!(terminal, Terminal::Finished(_));
        {
            let mut gate = self.gate.borrow_mut();
            if gate.is_some() {
                return false;
            }
            *gate = Some(terminal);
            self.closed.set(true);
        }
        let consumed = self.interrupt.borrow_mut().pending.take();
        drop(consumed);
        let queued = std::mem::take(&mut *self.host_calls.borrow_mut());
        drop(queued);
        if !finished {
            self.signal.abort();
        }
        let waker = self.gate_waker.borrow_mut().take();
        if let Some(waker) = waker {
            waker.wake();
        }
        true
    }

    pub(crate) fn register_gate_waker(&self, waker: &Waker) {
        let mut slot = self.gate_waker.borrow_mut();
        match &*slot {
            Some(existing) if existing.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
    }

    pub(crate) fn terminal(&self) -> Option<Terminal> {
        self.gate.borrow().clone()
    }

    /// The value `result` settles with, from the closed gate.
    pub(crate) fn settle(&self) -> Result<ExecutionResult, AgentError> {
        let terminal = self
            .terminal()
            .expect("settle is only called after the gate closed");
        let outcome = match terminal {
            Terminal::Finished(outcome) => outcome,
            Terminal::Cancelled => Outcome::Cancelled,
            Terminal::Failed(error) => return Err(error),
        };
        let progress = self.progress.borrow();
        let mut messages: Vec<_> = progress.messages.iter().map(|m| (**m).clone()).collect();
        if outcome == Outcome::Cancelled {
            close_dangling_calls(&mut messages, &progress.published, "cancelled", || {
                format!("msg_{}", self.runtime.platform.new_id())
            });
        }
        Ok(ExecutionResult {
            outcome,
            messages,
            model_state: progress.model_state.as_deref().cloned(),
            usage: progress.usage,
        })
    }

    // ---- publication ----

    /// Passes an event to the observer if the gate is open.
    pub(crate) fn emit(&self, event: &ExecutionEvent<'_>) {
        if self.is_closed() {
            return;
        }
        // Taken out while it runs so that a re-entrant call cannot double-borrow; only the loop emits, so
        // nothing is lost.
        let taken = self.observer.borrow_mut().take();
        if let Some(mut observer) = taken {
            observer(event);
            let mut slot = self.observer.borrow_mut();
            if slot.is_none() {
                *slot = Some(observer);
            }
        }
    }

    fn hook_context(&self) -> HookContext {
        let sequence = self.hook_sequence.get() + 1;
        self.hook_sequence.set(sequence);
        HookContext {
            execution_id: self.id.clone(),
            trace_id: self.trace_id.clone(),
            sequence,
            timestamp_ms: self.runtime.platform.now_ms(),
        }
    }

    /// Dispatches a non-terminal lifecycle event to every hook in registration order. A hook error fails the
    /// turn (`AGENT_HOOK_FAILED`); a hook that closed the gate (by cancelling) stops the dispatch.
    /// [`hook`](Self::hook) with the event built only when a hook is registered: the events carry copies of
    /// tool arguments and ids, which the common no-hook case should not pay for on every step.
    pub(crate) fn hook_with(&self, make: impl FnOnce() -> HookEvent) -> Result<(), AgentError> {
        if self.runtime.options.hooks.is_empty() {
            return self.check_open();
        }
        self.hook(make())
    }

    pub(crate) fn hook(&self, event: HookEvent) -> Result<(), AgentError> {
        debug_assert!(!event.is_terminal());
        self.check_open()?;
        if self.runtime.options.hooks.is_empty() {
            return Ok(());
        }
        let ctx = self.hook_context();
        for (index, hook) in self.runtime.options.hooks.iter().enumerate() {
            self.check_open()?;
            if let Err(error) = hook.on_event(&event, &ctx) {
                return Err(AgentError::new(
                    ErrorCode::HookFailed,
                    format!(
                        "hook {index} failed on {}: {}",
                        event.type_name(),
                        error.message
                    ),
                )
                .with_details(
                    Object::new()
                        .put("hookIndex", index)
                        .put("eventType", event.type_name())
                        .put("cause", error.to_json())
                        .done(),
                ));
            }
        }
        // A hook may have closed the gate (by cancelling) while handling the event: the loop must not take
        // another step, not even a state change.
        self.check_open()
    }

    /// Publishes the terminal hook event exactly once. Every hook sees it; errors go to `onHookError` (or
    /// `console_error`) and change nothing.
    pub(crate) fn publish_terminal(&self) {
        if self.terminal_published.replace(true) {
            return;
        }
        let Some(terminal) = self.terminal() else {
            return;
        };
        let event = match terminal {
            Terminal::Finished(outcome) => {
                let progress = self.progress.borrow();
                HookEvent::ExecutionCompleted {
                    outcome,
                    usage: progress.usage,
                    model_calls: progress.model_calls,
                    tool_calls: progress.tool_calls,
                }
            }
            Terminal::Cancelled => HookEvent::ExecutionCancelled {
                usage: self.progress.borrow().usage,
            },
            Terminal::Failed(error) => HookEvent::ExecutionFailed { error },
        };
        // The observer is released: nothing may reach it after the terminal decision.
        let observer = self.observer.borrow_mut().take();
        drop(observer);
        let ctx = self.hook_context();
        for (index, hook) in self.runtime.options.hooks.iter().enumerate() {
            if let Err(error) = hook.on_event(&event, &ctx) {
                let failure = HookFailure {
                    hook_index: index,
                    event_type: event.type_name().to_string(),
                    execution_id: self.id.clone(),
                    error,
                };
                match &self.runtime.options.on_hook_error {
                    Some(report) => report(&failure),
                    None => self.runtime.platform.console_error(&failure),
                }
            }
        }
    }

    // ---- the host's tool calls ----

    /// Queues a host's call for the loop. `AGENT_BUSY` once the gate is closed (the call never starts);
    /// `AGENT_INVALID_INPUT` for an id the conversation or the queue already uses.
    pub(crate) fn queue_host_call(
        &self,
        call: CheckedCall,
    ) -> Result<oneshot::Receiver<Result<ToolCallResult, AgentError>>, AgentError> {
        if self.is_closed() {
            return Err(
                AgentError::new(ErrorCode::Busy, "the execution has settled")
                    .with_details(Object::new().put("reason", "settled").done()),
            );
        }
        let id = call.call_id.as_str();
        let used = self
            .host_calls
            .borrow()
            .iter()
            .any(|(c, _)| c.call_id == id)
            || self.progress.borrow().messages.iter().any(|m| {
                m.blocks
                    .iter()
                    .any(|b| matches!(b, Block::ToolCall { call_id, .. } if call_id == id))
            });
        if used {
            return Err(AgentError::new(
                ErrorCode::InvalidInput,
                format!("call id {id:?} is already used in this execution"),
            ));
        }
        let (reply, receiver) = oneshot::channel();
        self.host_calls.borrow_mut().push((call, reply));
        Ok(receiver)
    }

    /// The oldest queued call.
    pub(crate) fn take_host_call(&self) -> Option<(CheckedCall, HostReply)> {
        let mut queue = self.host_calls.borrow_mut();
        (!queue.is_empty()).then(|| queue.remove(0))
    }

    // ---- interrupts ----

    /// Registers a pending confirmation and returns the receiver the loop awaits.
    pub(crate) fn open_interrupt(
        &self,
        call_id: &str,
        tool: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> (Interrupt, oneshot::Receiver<InterruptResponse>) {
        let (reply, receiver) = oneshot::channel();
        let mut slot = self.interrupt.borrow_mut();
        slot.next_sequence += 1;
        let interrupt = Interrupt {
            interrupt_id: format!("{}:confirm:{}", self.id, slot.next_sequence),
            kind: InterruptKind::ToolConfirmation,
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            arguments: arguments.clone(),
        };
        slot.pending = Some(PendingInterrupt::Confirmation {
            interrupt: interrupt.clone(),
            reply,
        });
        (interrupt, receiver)
    }

    /// Registers a running tool's question and returns the receiver the tool awaits. Refused once the gate is
    /// closed (the question would never be consumed) and while another question is pending (tools of a batch
    /// run one at a time, so only a tool asking twice at once meets this).
    pub(crate) fn open_elicitation(
        &self,
        call_id: &str,
        tool: &str,
        request: ElicitationRequest,
    ) -> Result<(Elicitation, oneshot::Receiver<ElicitationResponse>), AgentError> {
        if self.is_closed() {
            return Err(AgentError::new(
                ErrorCode::InvalidInput,
                "elicit: the execution has settled",
            ));
        }
        let mut slot = self.interrupt.borrow_mut();
        if slot.pending.is_some() {
            return Err(AgentError::new(
                ErrorCode::Busy,
                "elicit: another question is pending",
            ));
        }
        let (reply, receiver) = oneshot::channel();
        slot.next_sequence += 1;
        let elicitation = Elicitation::new(
            format!("{}:elicit:{}", self.id, slot.next_sequence),
            call_id,
            tool,
            request,
        );
        slot.pending = Some(PendingInterrupt::Elicitation {
            elicitation: elicitation.clone(),
            reply,
        });
        Ok((elicitation, receiver))
    }

    pub(crate) fn pending_interrupt(&self) -> Option<Interrupt> {
        match self.interrupt.borrow().pending.as_ref() {
            Some(PendingInterrupt::Confirmation { interrupt, .. }) => Some(interrupt.clone()),
            _ => None,
        }
    }

    pub(crate) fn pending_elicitation(&self) -> Option<Elicitation> {
        match self.interrupt.borrow().pending.as_ref() {
            Some(PendingInterrupt::Elicitation { elicitation, .. }) => Some(elicitation.clone()),
            _ => None,
        }
    }

    /// Answers a pending confirmation (the controller's approve / reject).
    pub(crate) fn respond(
        &self,
        interrupt_id: &str,
        value: InterruptResponse,
    ) -> Result<(), AgentError> {
        self.answer(interrupt_id, |_| Ok(Answer::Confirmation(value)))
    }

    /// Answers the pending interrupt `interrupt_id` with `parse(kind)`, which reads the host's value for the
    /// pending kind (a confirmation's value or an elicitation's); a value of the other kind is refused.
    pub(crate) fn answer(
        &self,
        interrupt_id: &str,
        parse: impl FnOnce(InterruptKind) -> Result<Answer, AgentError>,
    ) -> Result<(), AgentError> {
        let mut slot = self.interrupt.borrow_mut();
        let already = slot.resolved.iter().any(|id| id == interrupt_id);
        let pending_id = slot.pending.as_ref().map(|p| p.id().to_owned());
        match pending_id {
            Some(id) if id == interrupt_id => {
                let kind = match slot.pending.as_ref() {
                    Some(PendingInterrupt::Elicitation { .. }) => InterruptKind::Elicitation,
                    _ => InterruptKind::ToolConfirmation,
                };
                let answer = parse(kind)?;
                let kind_mismatch = || {
                    AgentError::new(
                        ErrorCode::InvalidInput,
                        format!(
                            "interrupt {interrupt_id:?} is a {}; answer it as one",
                            kind.as_str()
                        ),
                    )
                };
                // A rejection is always accepted: its result text is cut to maxToolResultCharacters.
                match (slot.pending.take().expect("checked above"), answer) {
                    (PendingInterrupt::Confirmation { reply, .. }, Answer::Confirmation(value)) => {
                        slot.resolved.push(id);
                        drop(slot);
                        // The receiver is alive while the loop waits; if the gate closed it was consumed already.
                        let _ = reply.send(value);
                    }
                    (PendingInterrupt::Elicitation { reply, .. }, Answer::Elicitation(value)) => {
                        slot.resolved.push(id);
                        drop(slot);
                        let _ = reply.send(value);
                    }
                    (pending, _) => {
                        slot.pending = Some(pending);
                        return Err(kind_mismatch());
                    }
                }
                Ok(())
            }
            _ if already => Err(AgentError::new(
                ErrorCode::InterruptAlreadyResolved,
                format!("interrupt {interrupt_id:?} was already answered"),
            )
            .with_details(Object::new().put("interruptId", interrupt_id).done())),
            Some(id) => Err(AgentError::new(
                ErrorCode::InterruptMismatch,
                format!("interrupt {interrupt_id:?} is not the pending one ({id:?})"),
            )
            .with_details(
                Object::new()
                    .put("interruptId", interrupt_id)
                    .put("pendingInterruptId", id)
                    .done(),
            )),
            None if self.is_closed() => Err(AgentError::new(
                ErrorCode::NoPendingInterrupt,
                "the execution has settled; no interrupt is pending",
            )
            .with_details(Object::new().put("interruptId", interrupt_id).done())),
            None => Err(
                AgentError::new(ErrorCode::NoPendingInterrupt, "no interrupt is pending")
                    .with_details(Object::new().put("interruptId", interrupt_id).done()),
            ),
        }
    }
}
