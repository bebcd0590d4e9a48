//! The [`Controller`]: the stateful, UI-facing owner of one conversation. It keeps stable messages, the
//! provider's ModelState, the in-flight draft, status, the pending confirmation, the last outcome and error,
//! the conversation's id and revision, and the one [`ToolRegistry`]; each `send` freezes a registry snapshot
//! and runs one execution of the [`DefaultAgentRuntime`].
//!
//! Persistence: after `completed` and `max-tokens` turns the whole `{ messages, modelState }` is saved through
//! the [`ConversationStore`] as one revision (create on the first save, then save by expected revision). A
//! cancelled or failed turn keeps its stable messages in memory but saves nothing; tool calls it left without
//! results are answered (with the already published result, or an `isError` "did not complete" result) so the
//! next request stays valid for providers. A revision conflict or a
//! corrupt stored conversation is an explicit error; nothing is overwritten and no other history is shown.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use futures::future::{FutureExt, LocalBoxFuture};
use patchbridge_protocol::{
    Block, ConversationContext, ConversationSnapshot, Message, ModelState, Role, StreamEvent,
};
use serde::Serialize;
use serde_json::{json, Value};

use super::aggregate::DraftBlock;
use super::error::{AgentError, ErrorCode};
use super::execution::{
    AgentExecution, ExecutionEvent, ExecutionInput, Interrupt, InterruptResponse, Outcome,
};
use super::host::{ConversationStore, ToolHandler};
use super::messages::check_messages;
use super::registry::{ToolRegistry, ToolRegistrySnapshot, ToolSpec};
use super::runtime::DefaultAgentRuntime;
use super::tool_result::ToolCallResult;

/// What the controller is doing (closed set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Ready for `send`.
    Idle,
    /// Loading a conversation from the store.
    Loading,
    /// An execution is running.
    Running,
    /// The execution waits for `approve_tool` / `reject_tool`.
    AwaitingConfirmation,
    /// Saving the finished turn.
    Saving,
    /// `destroy` was called; every method fails with `AGENT_DESTROYED`.
    Destroyed,
}

impl Status {
    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Loading => "loading",
            Status::Running => "running",
            Status::AwaitingConfirmation => "awaiting-confirmation",
            Status::Saving => "saving",
            Status::Destroyed => "destroyed",
        }
    }
}

/// The assistant message being streamed (never persisted).
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// The message id.
    pub id: String,
    /// Blocks so far (tool-call buffers hold raw argument JSON).
    pub blocks: Vec<DraftBlock>,
}

/// The stored conversation this controller is attached to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationInfo {
    /// Conversation id.
    pub id: String,
    /// Title.
    pub title: String,
    /// The revision the in-memory state corresponds to.
    pub revision: u64,
}

/// A cheap-to-clone projection of the controller (shared `Rc`s; cloning copies no messages).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerState {
    /// Activity.
    pub status: Status,
    /// Stable messages, oldest first.
    pub messages: Rc<Vec<Message>>,
    /// The assistant message being streamed, if any.
    pub draft: Option<Rc<Draft>>,
    /// Validated tool results of the running batch (before its tool message becomes stable).
    pub tool_results: Rc<Vec<ToolCallResult>>,
    /// The pending `tool-confirmation`, if any.
    pub pending_confirmation: Option<Interrupt>,
    /// Outcome of the last finished turn.
    pub last_outcome: Option<Outcome>,
    /// The last error (cleared when a new turn or load starts).
    pub error: Option<AgentError>,
    /// The attached stored conversation.
    pub conversation: Option<ConversationInfo>,
    /// The tool registry's current revision.
    pub tool_revision: u64,
}

impl ControllerState {
    fn initial() -> Self {
        ControllerState {
            status: Status::Idle,
            messages: Rc::new(Vec::new()),
            draft: None,
            tool_results: Rc::new(Vec::new()),
            pending_confirmation: None,
            last_outcome: None,
            error: None,
            conversation: None,
            tool_revision: 0,
        }
    }

    /// The state as JSON (camelCase; the draft as `{ id, role: "assistant", blocks: [...] }` with each block's
    /// `type`, `text` (or `callId`, `name`, `argumentsText`) and `complete`).
    pub fn to_json(&self) -> Value {
        let draft = self.draft.as_ref().map(|draft| {
            let blocks: Vec<Value> = draft
                .blocks
                .iter()
                .map(|block| match &block.kind {
                    patchbridge_protocol::BlockKind::Text => json!({ "type": "text", "text": block.buffer, "complete": block.stopped }),
                    patchbridge_protocol::BlockKind::Reasoning => {
                        json!({ "type": "reasoning", "text": block.buffer, "complete": block.stopped })
                    }
                    patchbridge_protocol::BlockKind::ToolCall { call_id, name } => json!({
                        "type": "tool-call", "callId": call_id, "name": name, "argumentsText": block.buffer,
                        "complete": block.stopped,
                    }),
                })
                .collect();
            json!({ "id": draft.id, "role": "assistant", "blocks": blocks })
        });
        json!({
            "status": self.status,
            "messages": &*self.messages,
            "draft": draft,
            "toolResults": &*self.tool_results,
            "pendingConfirmation": self.pending_confirmation,
            "lastOutcome": self.last_outcome,
            "error": self.error,
            "conversation": self.conversation,
            "toolRevision": self.tool_revision,
        })
    }
}

/// Which tool set an inspector should show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InspectionSource {
    /// A turn is running: its frozen snapshot (what the model was actually given).
    CurrentExecution,
    /// Idle: the registry as it is now (what the next turn will get).
    CurrentRegistry,
}

/// The answer of [`Controller::tool_inspection_source`].
#[derive(Debug, Clone)]
pub struct ToolInspection {
    /// Where the snapshot comes from.
    pub source: InspectionSource,
    /// The tools.
    pub snapshot: Rc<ToolRegistrySnapshot>,
}

/// Controller construction options.
#[derive(Clone, Default)]
pub struct ControllerOptions {
    /// Where conversations are stored (none: nothing is persisted).
    pub store: Option<Rc<dyn ConversationStore>>,
    /// Model id sent with each request (`None` = the relay default).
    pub model: Option<String>,
}

/// A state listener.
pub type Listener = Rc<dyn Fn(&ControllerState)>;

struct Inner {
    runtime: DefaultAgentRuntime,
    options: ControllerOptions,
    state: RefCell<ControllerState>,
    model_state: RefCell<Option<ModelState>>,
    registry: RefCell<ToolRegistry>,
    execution: RefCell<Option<AgentExecution>>,
    listeners: RefCell<Vec<(u64, Listener)>>,
    next_listener: Cell<u64>,
}

/// The controller. Cloning gives another handle to the same controller.
#[derive(Clone)]
pub struct Controller {
    inner: Rc<Inner>,
}

fn destroyed() -> AgentError {
    AgentError::new(ErrorCode::Destroyed, "the controller was destroyed")
}

fn ready<T: 'static>(
    value: Result<T, AgentError>,
) -> LocalBoxFuture<'static, Result<T, AgentError>> {
    futures::future::ready(value).boxed_local()
}

impl Controller {
    /// A controller over `runtime` (whose limits are the controller's limits).
    pub fn new(runtime: DefaultAgentRuntime, options: ControllerOptions) -> Controller {
        Controller {
            inner: Rc::new(Inner {
                runtime,
                options,
                state: RefCell::new(ControllerState::initial()),
                model_state: RefCell::new(None),
                registry: RefCell::new(ToolRegistry::new()),
                execution: RefCell::new(None),
                listeners: RefCell::new(Vec::new()),
                next_listener: Cell::new(1),
            }),
        }
    }

    /// The current state (cheap clone).
    pub fn state(&self) -> ControllerState {
        self.inner.state.borrow().clone()
    }

    /// The provider state that goes with the stable messages (never part of display state).
    pub fn model_state(&self) -> Option<ModelState> {
        self.inner.model_state.borrow().clone()
    }

    /// Adds a listener called synchronously after every state change; returns its id for
    /// [`Controller::unsubscribe`].
    pub fn subscribe(&self, listener: Box<dyn Fn(&ControllerState)>) -> u64 {
        let id = self.inner.next_listener.get();
        self.inner.next_listener.set(id + 1);
        self.inner
            .listeners
            .borrow_mut()
            .push((id, Rc::from(listener)));
        id
    }

    /// Removes a listener; returns whether it was subscribed.
    pub fn unsubscribe(&self, id: u64) -> bool {
        let mut listeners = self.inner.listeners.borrow_mut();
        let before = listeners.len();
        listeners.retain(|(lid, _)| *lid != id);
        listeners.len() != before
    }

    fn is_destroyed(&self) -> bool {
        self.inner.state.borrow().status == Status::Destroyed
    }

    /// Registers a tool (affects the next turn only).
    pub fn register_tool(
        &self,
        spec: ToolSpec,
        handler: Rc<dyn ToolHandler>,
    ) -> Result<u64, AgentError> {
        if self.is_destroyed() {
            return Err(destroyed());
        }
        let revision = self.inner.registry.borrow_mut().register(spec, handler)?;
        self.update(|s| s.tool_revision = revision);
        Ok(revision)
    }

    /// Unregisters a tool by name (affects the next turn only); returns whether it existed.
    pub fn unregister_tool(&self, name: &str) -> Result<bool, AgentError> {
        if self.is_destroyed() {
            return Err(destroyed());
        }
        let removed = self.inner.registry.borrow_mut().unregister(name);
        if removed {
            let revision = self.inner.registry.borrow().revision();
            self.update(|s| s.tool_revision = revision);
        }
        Ok(removed)
    }

    /// `current-execution` (the running turn's frozen snapshot) while a turn runs, else `current-registry`.
    pub fn tool_inspection_source(&self) -> ToolInspection {
        if let Some(execution) = &*self.inner.execution.borrow() {
            return ToolInspection {
                source: InspectionSource::CurrentExecution,
                snapshot: execution.tools(),
            };
        }
        ToolInspection {
            source: InspectionSource::CurrentRegistry,
            snapshot: self.inner.registry.borrow_mut().snapshot(),
        }
    }

    /// Sends a user message with plain text.
    pub fn send_text(&self, text: &str) -> LocalBoxFuture<'static, Result<Outcome, AgentError>> {
        self.send(vec![Block::Text {
            text: text.to_string(),
        }])
    }

    /// Sends a user message (text and image blocks) and runs one turn. The checks and the state change to
    /// `running` happen synchronously; the returned future drives the turn (and the save) to its end and
    /// resolves with the outcome, or the error that failed the turn or its save.
    pub fn send(&self, blocks: Vec<Block>) -> LocalBoxFuture<'static, Result<Outcome, AgentError>> {
        match self.begin_turn(blocks) {
            Ok(execution) => {
                let controller = self.clone();
                async move { controller.finish_turn(execution).await }.boxed_local()
            }
            Err(error) => ready(Err(error)),
        }
    }

    fn begin_turn(&self, blocks: Vec<Block>) -> Result<AgentExecution, AgentError> {
        let status = self.inner.state.borrow().status;
        match status {
            Status::Destroyed => return Err(destroyed()),
            Status::Idle => {}
            other => {
                return Err(AgentError::new(
                    ErrorCode::Busy,
                    format!("the controller is busy ({})", other.as_str()),
                ))
            }
        }
        if blocks.is_empty()
            || blocks
                .iter()
                .any(|b| !matches!(b, Block::Text { .. } | Block::Image { .. }))
        {
            return Err(AgentError::new(
                ErrorCode::InvalidInput,
                "a user message needs at least one block, only text and image blocks",
            ));
        }
        if blocks
            .iter()
            .all(|b| matches!(b, Block::Text { text } if text.trim().is_empty()))
        {
            return Err(AgentError::new(
                ErrorCode::InvalidInput,
                "the message is empty",
            ));
        }
        let platform = self.inner.runtime.platform();
        let user = Message {
            id: format!("msg_{}", platform.new_id()),
            role: Role::User,
            blocks,
        };
        let mut messages: Vec<Message> = (*self.inner.state.borrow().messages).clone();
        messages.push(user);
        let tools = self.inner.registry.borrow_mut().snapshot();
        let input = ExecutionInput {
            messages: messages.clone(),
            model_state: self.inner.model_state.borrow().clone(),
            tools,
            model: self.inner.options.model.clone(),
            conversation_id: self
                .inner
                .state
                .borrow()
                .conversation
                .as_ref()
                .map(|c| c.id.clone()),
            trace_id: None,
        };
        let weak = Rc::downgrade(&self.inner);
        let execution = self
            .inner
            .runtime
            .start(input, Box::new(move |event| observe(&weak, event)))?;
        *self.inner.execution.borrow_mut() = Some(execution.clone());
        self.update(|s| {
            s.status = Status::Running;
            s.messages = Rc::new(messages);
            s.draft = None;
            s.tool_results = Rc::new(Vec::new());
            s.pending_confirmation = None;
            s.error = None;
        });
        Ok(execution)
    }

    async fn finish_turn(self, execution: AgentExecution) -> Result<Outcome, AgentError> {
        let settled = execution.result().await;
        self.inner.execution.borrow_mut().take();
        if self.is_destroyed() {
            return settled.map(|r| r.outcome);
        }
        match settled {
            Ok(result) => {
                *self.inner.model_state.borrow_mut() = result.model_state.clone();
                let outcome = result.outcome;
                let save = outcome != Outcome::Cancelled && self.inner.options.store.is_some();
                let mut messages = result.messages.clone();
                if outcome == Outcome::Cancelled {
                    self.close_dangling_calls(&mut messages, "cancelled");
                }
                self.update(|s| {
                    s.messages = Rc::new(messages);
                    s.draft = None;
                    s.tool_results = Rc::new(Vec::new());
                    s.pending_confirmation = None;
                    s.last_outcome = Some(outcome);
                    s.status = if save { Status::Saving } else { Status::Idle };
                });
                if save {
                    let context = ConversationContext {
                        messages: result.messages,
                        model_state: result.model_state,
                    };
                    let saved = self.persist(context).await;
                    if self.is_destroyed() {
                        return saved.map(|_| outcome);
                    }
                    match saved {
                        Ok(snapshot) => self.update(|s| {
                            s.conversation = Some(info_of(&snapshot));
                            s.status = Status::Idle;
                        }),
                        Err(error) => {
                            self.update(|s| {
                                s.error = Some(error.clone());
                                s.status = Status::Idle;
                            });
                            return Err(error);
                        }
                    }
                }
                Ok(outcome)
            }
            Err(error) => {
                // Keep the stable messages the turn produced (in memory only, like a cancelled turn).
                let mut stable = execution.stable_context();
                self.close_dangling_calls(&mut stable.messages, error.code.as_str());
                *self.inner.model_state.borrow_mut() = stable.model_state;
                self.update(|s| {
                    s.messages = Rc::new(stable.messages);
                    s.draft = None;
                    s.tool_results = Rc::new(Vec::new());
                    s.pending_confirmation = None;
                    s.error = Some(error.clone());
                    s.status = Status::Idle;
                });
                Err(error)
            }
        }
    }

    /// After a cancelled or failed turn the last stable message can be an assistant message whose tool calls
    /// never got results; sent as is, providers reject the next request. Each such call is answered with the
    /// result that was already published for it, or else an `isError` result saying it did not complete, so
    /// the conversation stays resumable and the model learns what happened.
    fn close_dangling_calls(&self, messages: &mut Vec<Message>, why: &str) {
        let Some(last) = messages.last() else { return };
        if last.role != Role::Assistant {
            return;
        }
        let published = self.inner.state.borrow().tool_results.clone();
        let blocks: Vec<Block> = last
            .blocks
            .iter()
            .filter_map(|block| match block {
                Block::ToolCall { call_id, name, .. } => Some(match published.iter().find(|r| &r.tool_call_id == call_id) {
                    Some(result) => Block::ToolResult {
                        call_id: call_id.clone(),
                        content: result.content.clone(),
                        is_error: result.is_error,
                    },
                    None => Block::ToolResult {
                        call_id: call_id.clone(),
                        content: format!("The call to {name} did not complete: the turn ended ({why})."),
                        is_error: true,
                    },
                }),
                _ => None,
            })
            .collect();
        if blocks.is_empty() {
            return;
        }
        let id = format!("msg_{}", self.inner.runtime.platform().new_id());
        messages.push(Message { id, role: Role::Tool, blocks });
    }

    async fn persist(
        &self,
        context: ConversationContext,
    ) -> Result<ConversationSnapshot, AgentError> {
        let store = self
            .inner
            .options
            .store
            .clone()
            .expect("persist is only called with a store");
        let conversation = self.inner.state.borrow().conversation.clone();
        match conversation {
            Some(info) => store.save(&info.id, info.revision, &context).await,
            None => {
                let title = title_of(&context.messages);
                store.create(&title, &context).await
            }
        }
    }

    /// Cancels the running turn (outcome `cancelled`; nothing saved). Returns whether a turn was cancelled.
    pub fn abort(&self) -> bool {
        let execution = self.inner.execution.borrow().clone();
        execution.map(|e| e.cancel()).unwrap_or(false)
    }

    /// Approves the pending confirmation.
    pub fn approve_tool(&self) -> Result<(), AgentError> {
        self.respond(InterruptResponse::Approve)
    }

    /// Rejects the pending confirmation; the model sees an error tool result (with `reason`).
    pub fn reject_tool(&self, reason: Option<String>) -> Result<(), AgentError> {
        self.respond(InterruptResponse::Reject { reason })
    }

    fn respond(&self, response: InterruptResponse) -> Result<(), AgentError> {
        if self.is_destroyed() {
            return Err(destroyed());
        }
        let pending = self.inner.state.borrow().pending_confirmation.clone();
        let execution = self.inner.execution.borrow().clone();
        match (pending, execution) {
            (Some(interrupt), Some(execution)) => {
                execution.respond(&interrupt.interrupt_id, response)
            }
            _ => Err(AgentError::new(
                ErrorCode::NoPendingInterrupt,
                "no tool confirmation is pending",
            )),
        }
    }

    /// Loads a stored conversation (idle only). A corrupt one fails with `AGENT_CONVERSATION_CORRUPT` and
    /// leaves an empty, detached state: no other history is shown in its place.
    pub fn load_conversation(&self, id: &str) -> LocalBoxFuture<'static, Result<(), AgentError>> {
        if let Err(error) = self.idle_check() {
            return ready(Err(error));
        }
        let Some(store) = self.inner.options.store.clone() else {
            return ready(Err(AgentError::new(
                ErrorCode::InvalidOptions,
                "no conversation store is configured",
            )));
        };
        self.update(|s| {
            s.status = Status::Loading;
            s.error = None;
        });
        let loading = store.load(id);
        let controller = self.clone();
        async move {
            let loaded = loading.await.and_then(|snapshot| {
                check_messages(&snapshot.context.messages)
                    .map_err(|problem| {
                        AgentError::new(
                            ErrorCode::ConversationCorrupt,
                            format!("stored conversation is corrupt: {problem}"),
                        )
                    })
                    .map(|_| snapshot)
            });
            if controller.is_destroyed() {
                return loaded.map(|_| ());
            }
            match loaded {
                Ok(snapshot) => {
                    *controller.inner.model_state.borrow_mut() =
                        snapshot.context.model_state.clone();
                    controller.update(|s| {
                        s.conversation = Some(info_of(&snapshot));
                        s.messages = Rc::new(snapshot.context.messages);
                        s.last_outcome = None;
                        s.status = Status::Idle;
                    });
                    Ok(())
                }
                Err(error) => {
                    *controller.inner.model_state.borrow_mut() = None;
                    controller.update(|s| {
                        s.conversation = None;
                        s.messages = Rc::new(Vec::new());
                        s.last_outcome = None;
                        s.error = Some(error.clone());
                        s.status = Status::Idle;
                    });
                    Err(error)
                }
            }
        }
        .boxed_local()
    }

    /// Starts a new, empty, unsaved conversation (idle only); the first completed turn creates it in the store.
    pub fn new_conversation(&self) -> Result<(), AgentError> {
        self.idle_check()?;
        *self.inner.model_state.borrow_mut() = None;
        self.update(|s| {
            s.conversation = None;
            s.messages = Rc::new(Vec::new());
            s.last_outcome = None;
            s.error = None;
        });
        Ok(())
    }

    fn idle_check(&self) -> Result<(), AgentError> {
        match self.inner.state.borrow().status {
            Status::Idle => Ok(()),
            Status::Destroyed => Err(destroyed()),
            other => Err(AgentError::new(
                ErrorCode::Busy,
                format!("the controller is busy ({})", other.as_str()),
            )),
        }
    }

    /// Cancels any running turn, drops listeners and marks the controller destroyed (idempotent).
    pub fn destroy(&self) {
        if self.is_destroyed() {
            return;
        }
        self.abort();
        self.update(|s| s.status = Status::Destroyed);
        self.inner.listeners.borrow_mut().clear();
    }

    /// Applies a change and notifies listeners (no borrow is held while they run).
    fn update(&self, change: impl FnOnce(&mut ControllerState)) {
        update_inner(&self.inner, change);
    }
}

fn update_inner(inner: &Inner, change: impl FnOnce(&mut ControllerState)) {
    let snapshot = {
        let mut state = inner.state.borrow_mut();
        change(&mut state);
        state.clone()
    };
    let listeners: Vec<Listener> = inner
        .listeners
        .borrow()
        .iter()
        .map(|(_, l)| l.clone())
        .collect();
    for listener in listeners {
        listener(&snapshot);
    }
}

/// Projects execution events into the state. Deltas append to the draft in place: `Rc::make_mut` copies only
/// if a listener kept an old state alive.
fn observe(weak: &Weak<Inner>, event: &ExecutionEvent<'_>) {
    let Some(inner) = weak.upgrade() else { return };
    if inner.state.borrow().status == Status::Destroyed {
        return;
    }
    update_inner(&inner, |s| match event {
        ExecutionEvent::MessageStarted { id, .. } => {
            s.draft = Some(Rc::new(Draft {
                id: id.to_string(),
                blocks: Vec::new(),
            }));
        }
        ExecutionEvent::Stream(stream) => {
            if let Some(draft) = &mut s.draft {
                let draft = Rc::make_mut(draft);
                match stream {
                    StreamEvent::BlockStart { block, .. } => draft.blocks.push(DraftBlock {
                        kind: block.clone(),
                        buffer: String::new(),
                        stopped: false,
                        arguments: None,
                    }),
                    StreamEvent::BlockDelta { delta, .. } => {
                        if let Some(last) = draft.blocks.last_mut() {
                            last.buffer.push_str(delta);
                        }
                    }
                    StreamEvent::BlockStop { .. } => {
                        if let Some(last) = draft.blocks.last_mut() {
                            last.stopped = true;
                        }
                    }
                    _ => {}
                }
            }
        }
        ExecutionEvent::MessageCompleted(message) => {
            Rc::make_mut(&mut s.messages).push((*message).clone());
            match message.role {
                Role::Tool => s.tool_results = Rc::new(Vec::new()),
                _ => s.draft = None,
            }
        }
        ExecutionEvent::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            Rc::make_mut(&mut s.tool_results).push(ToolCallResult {
                tool_call_id: call_id.to_string(),
                content: content.to_string(),
                is_error: *is_error,
            });
        }
        ExecutionEvent::Interrupt(interrupt) => {
            s.pending_confirmation = Some((*interrupt).clone());
            s.status = Status::AwaitingConfirmation;
        }
        ExecutionEvent::InterruptResolved { .. } => {
            s.pending_confirmation = None;
            s.status = Status::Running;
        }
    });
}

fn info_of(snapshot: &ConversationSnapshot) -> ConversationInfo {
    ConversationInfo {
        id: snapshot.conversation.id.clone(),
        title: snapshot.conversation.title.clone(),
        revision: snapshot.conversation.revision,
    }
}

/// The first user text, trimmed to 80 characters, or "New conversation".
fn title_of(messages: &[Message]) -> String {
    let first = messages
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| {
            m.blocks.iter().find_map(|b| match b {
                Block::Text { text } if !text.trim().is_empty() => Some(text.trim()),
                _ => None,
            })
        });
    match first {
        Some(text) => text.chars().take(80).collect(),
        None => "New conversation".to_string(),
    }
}
