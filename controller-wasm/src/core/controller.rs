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
use patchbridge_protocol::write::Object;
use patchbridge_protocol::ToValue;
use patchbridge_protocol::{
    Block, ConversationContext, ConversationPage, ConversationSnapshot, Message, ModelState, Role,
};

use super::attachments::{check_conversation_size, check_new_message, AttachmentLimits};
use super::controller_state::{
    apply_event, ControllerState, ConversationInfo, InspectionSource, Status, ToolInspection,
};
use super::elicitation::ElicitationResponse;
use super::error::{AgentError, ErrorCode};
use super::events::ExecutionEvent;
use super::execution::{AgentExecution, ExecutionInput, HostToolCall};
use super::host::{ConversationStore, ToolHandler};
use super::interrupt::InterruptResponse;
use super::json::to_text;
use super::messages::check_messages;
use super::options::RuntimeOptions;
use super::outcome::Outcome;
use super::registry::{ToolRegistry, ToolSpec};
use super::runtime::DefaultAgentRuntime;
use super::tool_result::ToolCallResult;

/// Controller construction options.
#[derive(Clone, Default)]
pub struct ControllerOptions {
    /// Where conversations are stored (none: nothing is persisted).
    pub store: Option<Rc<dyn ConversationStore>>,
    /// Model id sent with each request (`None` = the relay default).
    pub model: Option<String>,
    /// The sizes of attached files and of the conversation, checked on `send` / `editLastMessage`.
    pub attachments: AttachmentLimits,
}

/// A state listener.
pub type Listener = Rc<dyn Fn(&ControllerState)>;

struct Inner {
    /// Replaced by [`Controller::set_runtime_options`]; each turn clones the runtime it starts with, so a
    /// replacement applies from the next turn and never changes a running one.
    runtime: RefCell<DefaultAgentRuntime>,
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
        let registry = ToolRegistry::new(runtime.platform());
        Controller {
            inner: Rc::new(Inner {
                runtime: RefCell::new(runtime),
                options,
                state: RefCell::new(ControllerState::initial()),
                model_state: RefCell::new(None),
                registry: RefCell::new(registry),
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
        self.send(vec![Block::text(text.to_string())])
    }

    /// Sends a user message (text, image and document blocks) and runs one turn. Attached files are checked
    /// first (`attachments`: type, name, encoding, sizes), then the size of the conversation with the message;
    /// a refusal sends nothing and adds nothing. The checks and the state change to
    /// `running` happen synchronously; the returned future drives the turn (and the save) to its end and
    /// resolves with the outcome, or the error that failed the turn or its save.
    pub fn send(&self, blocks: Vec<Block>) -> LocalBoxFuture<'static, Result<Outcome, AgentError>> {
        self.run(TurnStart::Send(blocks))
    }

    /// Answers the last user message again: every message after it is dropped and the turn runs from there. The
    /// rewritten conversation is saved whole as the next revision (stored revisions are never edited in place).
    /// Refused while a turn runs (`AGENT_BUSY`) and when there is no user message (`AGENT_INVALID_INPUT`).
    pub fn regenerate(&self) -> LocalBoxFuture<'static, Result<Outcome, AgentError>> {
        self.run(TurnStart::Regenerate)
    }

    /// Replaces the last user message (and everything after it) with a new user message of `blocks` (a new id)
    /// and runs the turn; saved like [`Controller::regenerate`], with the same refusals.
    pub fn edit_last_message(
        &self,
        blocks: Vec<Block>,
    ) -> LocalBoxFuture<'static, Result<Outcome, AgentError>> {
        self.run(TurnStart::EditLast(blocks))
    }

    fn run(&self, start: TurnStart) -> LocalBoxFuture<'static, Result<Outcome, AgentError>> {
        match self.begin_turn(start) {
            Ok(execution) => {
                let controller = self.clone();
                async move { controller.finish_turn(execution).await }.boxed_local()
            }
            Err(error) => ready(Err(error)),
        }
    }

    /// Runs the turn again from the stable messages, without a new user message: after a failed turn (a
    /// network error, a limit) the person's message is already the last stable one, and sending it again would
    /// repeat it. Only possible when the model is the one to speak next (the last message is a user or tool
    /// message); otherwise `AGENT_INVALID_INPUT`.
    pub fn retry(&self) -> LocalBoxFuture<'static, Result<Outcome, AgentError>> {
        self.run(TurnStart::Retry)
    }

    /// Replaces the runtime options (limits already merged with the defaults, hooks, interceptors). A running
    /// turn keeps the options it started with; the next turn uses these. Fails (and changes nothing) on invalid
    /// limits or after `destroy`.
    pub fn set_runtime_options(&self, options: RuntimeOptions) -> Result<(), AgentError> {
        if self.is_destroyed() {
            return Err(destroyed());
        }
        let next = self.inner.runtime.borrow().with_options(options)?;
        *self.inner.runtime.borrow_mut() = next;
        Ok(())
    }

    /// A user message from `send`'s blocks: at least one block, only text, images and documents, not all blank,
    /// its files within the attachment rules.
    fn user_message(&self, blocks: Vec<Block>) -> Result<Message, AgentError> {
        if blocks.is_empty()
            || blocks.iter().any(|b| {
                !matches!(
                    b,
                    Block::Text { .. } | Block::Image { .. } | Block::Document { .. }
                )
            })
        {
            return Err(AgentError::new(
                ErrorCode::InvalidInput,
                "a user message needs at least one block, only text, image and document blocks",
            ));
        }
        check_new_message(&blocks, &self.inner.options.attachments)?;
        if blocks
            .iter()
            .all(|b| matches!(b, Block::Text { text, .. } if text.trim().is_empty()))
        {
            return Err(AgentError::new(
                ErrorCode::InvalidInput,
                "the message is empty",
            ));
        }
        let platform = self.inner.runtime.borrow().platform();
        Ok(Message {
            id: format!("msg_{}", platform.new_id()),
            role: Role::User,
            blocks,
        })
    }

    /// The conversation as it would be saved (`{ messages, modelState }`, the relay's measure) within
    /// `maxConversationBytes`.
    fn check_conversation_size(&self, messages: &[Message]) -> Result<(), AgentError> {
        // `{"messages":[…],"modelState":…}`, written message by message rather than cloned whole.
        let separators = messages.len().saturating_sub(1);
        let state = match &*self.inner.model_state.borrow() {
            Some(state) => to_text(&state.to_value()).len(),
            None => "null".len(),
        };
        let bytes = messages
            .iter()
            .map(|m| to_text(&m.to_value()).len())
            .sum::<usize>()
            + separators
            + r#"{"messages":[],"modelState":}"#.len()
            + state;
        check_conversation_size(bytes as u64, &self.inner.options.attachments)
    }

    fn begin_turn(&self, start: TurnStart) -> Result<AgentExecution, AgentError> {
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
        let mut messages: Vec<Message> = (*self.inner.state.borrow().messages).clone();
        let adds_message = matches!(start, TurnStart::Send(_) | TurnStart::EditLast(_));
        match start {
            TurnStart::Send(blocks) => messages.push(self.user_message(blocks)?),
            TurnStart::Retry => {
                if !matches!(messages.last(), Some(m) if m.role == Role::User || m.role == Role::Tool)
                {
                    return Err(AgentError::new(
                        ErrorCode::InvalidInput,
                        "nothing to retry: the last message is not a user or tool message",
                    ));
                }
            }
            TurnStart::Regenerate => {
                let last_user = last_user_index(&messages, "regenerate")?;
                messages.truncate(last_user + 1);
            }
            TurnStart::EditLast(blocks) => {
                let message = self.user_message(blocks)?;
                let last_user = last_user_index(&messages, "editLastMessage")?;
                messages.truncate(last_user);
                messages.push(message);
            }
        }

        if adds_message {
            self.check_conversation_size(&messages)?;
        }
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
        let runtime = self.inner.runtime.borrow().clone();
        let execution = runtime.start(input, Box::new(move |event| observe(&weak, event)))?;
        *self.inner.execution.borrow_mut() = Some(execution.clone());
        self.update(|s| {
            s.status = Status::Running;
            s.messages = Rc::new(messages);
            s.draft = None;
            s.tool_results = Rc::new(Vec::new());
            s.pending_confirmation = None;
            s.pending_elicitation = None;
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
                // A cancelled execution's messages already close the tool calls it left open (`closing`).
                let messages = result.messages.clone();
                self.update(|s| {
                    s.messages = Rc::new(messages);
                    s.draft = None;
                    s.tool_results = Rc::new(Vec::new());
                    s.pending_confirmation = None;
                    s.pending_elicitation = None;
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
                let stable = execution.stable_context();
                *self.inner.model_state.borrow_mut() = stable.model_state;
                self.update(|s| {
                    s.messages = Rc::new(stable.messages);
                    s.draft = None;
                    s.tool_results = Rc::new(Vec::new());
                    s.pending_confirmation = None;
                    s.pending_elicitation = None;
                    s.error = Some(error.clone());
                    s.status = Status::Idle;
                });
                Err(error)
            }
        }
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
            Some(info) => store.save(&info.id, info.revision, None, &context).await,
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

    /// Adds the host's tool call (an MCP App's) to the running turn's execution
    /// ([`AgentExecution::call_tool`]: the turn's snapshot, confirmation, limits and cancellation; never part of
    /// the messages). Its confirmation is the state's `pending_confirmation` (its `call_id` is the host's, in no
    /// message). `AGENT_INVALID_INPUT` when no turn runs.
    pub fn call_tool_in_turn(
        &self,
        call: HostToolCall,
    ) -> LocalBoxFuture<'static, Result<ToolCallResult, AgentError>> {
        match &*self.inner.execution.borrow() {
            Some(execution) => execution.call_tool(call),
            None => ready(Err(AgentError::new(
                ErrorCode::InvalidInput,
                "no turn is running",
            ))),
        }
    }

    /// Answers the running turn's pending interrupt `interrupt_id` with the host's JSON value, as
    /// [`AgentExecution::respond_json`] (its shapes and errors); `AGENT_NO_PENDING_INTERRUPT` when no turn runs.
    pub fn respond_json(
        &self,
        interrupt_id: &str,
        value: &serde_json::Value,
    ) -> Result<(), AgentError> {
        match &*self.inner.execution.borrow() {
            Some(execution) => execution.respond_json(interrupt_id, value),
            None => Err(AgentError::new(
                ErrorCode::NoPendingInterrupt,
                "no turn is running",
            )),
        }
    }

    /// Approves the pending confirmation.
    pub fn approve_tool(&self) -> Result<(), AgentError> {
        self.respond(InterruptResponse::Approve)
    }

    /// Rejects the pending confirmation; the model sees an error tool result (with `reason`).
    pub fn reject_tool(&self, reason: Option<String>) -> Result<(), AgentError> {
        self.respond(InterruptResponse::Reject { reason })
    }

    /// Answers the pending elicitation (a running tool's question): `{ action: "accept", content }`,
    /// `{ action: "decline" }` or `{ action: "cancel" }`. `AGENT_NO_PENDING_INTERRUPT` when none is pending.
    pub fn answer_elicitation(&self, value: &serde_json::Value) -> Result<(), AgentError> {
        if self.is_destroyed() {
            return Err(destroyed());
        }
        let response = ElicitationResponse::from_json(value)?;
        let pending = self.inner.state.borrow().pending_elicitation.clone();
        let execution = self.inner.execution.borrow().clone();
        match (pending, execution) {
            (Some(elicitation), Some(execution)) => {
                execution.respond_json(&elicitation.interrupt_id, &response.to_value())
            }
            _ => Err(AgentError::new(
                ErrorCode::NoPendingInterrupt,
                "no elicitation is pending",
            )),
        }
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

    /// Starts a new, unsaved conversation (idle only); the first completed turn creates it in the store.
    /// `keep_messages: false` empties the messages. `keep_messages: true` keeps the current stable messages but
    /// drops the ModelState: the way forward when the relay refuses a conversation's stored provider state
    /// (`MODEL_STATE_MISMATCH`) — providers accept the history without their private state, and the stored
    /// conversation stays as it was.
    pub fn new_conversation(&self, keep_messages: bool) -> Result<(), AgentError> {
        self.idle_check()?;
        *self.inner.model_state.borrow_mut() = None;
        self.update(|s| {
            s.conversation = None;
            if !keep_messages {
                s.messages = Rc::new(Vec::new());
            }
            s.last_outcome = None;
            s.error = None;
        });
        Ok(())
    }

    fn store(&self) -> Result<Rc<dyn ConversationStore>, AgentError> {
        if self.is_destroyed() {
            return Err(destroyed());
        }
        self.inner.options.store.clone().ok_or_else(|| {
            AgentError::new(
                ErrorCode::InvalidOptions,
                "no conversation store is configured",
            )
        })
    }

    /// One page of the stored conversations (`limit` 1..=100, `cursor` from the previous page). Works in any
    /// status: it reads only.
    pub fn list_conversations(
        &self,
        limit: Option<u32>,
        cursor: Option<&str>,
    ) -> LocalBoxFuture<'static, Result<ConversationPage, AgentError>> {
        match self.store() {
            Ok(store) => store.list(limit, cursor),
            Err(error) => ready(Err(error)),
        }
    }

    /// Whether a change to stored conversation `id` must wait: the open conversation while it is not idle
    /// (a turn runs or saves, so its next save would race the change), and any conversation while one loads
    /// (the load could return the revision the change is about to replace). Returns whether `id` is open.
    fn claim_stored(&self, id: &str) -> Result<bool, AgentError> {
        let state = self.inner.state.borrow();
        let open = state.conversation.as_ref().is_some_and(|c| c.id == id);
        match state.status {
            Status::Destroyed => Err(destroyed()),
            Status::Loading => Err(AgentError::new(
                ErrorCode::Busy,
                "the controller is busy (loading)",
            )),
            Status::Idle => Ok(open),
            _ if !open => Ok(false),
            other => Err(AgentError::new(
                ErrorCode::Busy,
                format!(
                    "the conversation is busy ({}); abort the turn or wait for it",
                    other.as_str()
                ),
            )),
        }
    }

    /// Renames a stored conversation: reads its snapshot and writes it back unchanged with the new title (the
    /// relay has no partial update), so the revision goes up by one. For the open conversation the controller
    /// is `saving` meanwhile, the write expects the revision the controller holds (a conversation changed
    /// elsewhere fails with `AGENT_REVISION_CONFLICT` and nothing is written), and `state.conversation` takes the
    /// new revision and title so the next turn's save does not conflict. `AGENT_BUSY` while a turn of that
    /// conversation runs or saves, or while any conversation loads.
    pub fn rename_conversation(
        &self,
        id: &str,
        title: &str,
    ) -> LocalBoxFuture<'static, Result<ConversationInfo, AgentError>> {
        let store = match self.store() {
            Ok(store) => store,
            Err(error) => return ready(Err(error)),
        };
        let open = match self.claim_stored(id) {
            Ok(open) => open,
            Err(error) => return ready(Err(error)),
        };
        let held_revision = if open {
            let revision = self
                .inner
                .state
                .borrow()
                .conversation
                .as_ref()
                .map(|c| c.revision);
            self.update(|s| s.status = Status::Saving);
            revision
        } else {
            None
        };
        let controller = self.clone();
        let id = id.to_owned();
        let title = title.to_owned();
        async move {
            let renamed = async {
                let snapshot = store.load(&id).await?;
                let current = snapshot.conversation.revision;
                if let Some(held) = held_revision.filter(|held| *held != current) {
                    return Err(AgentError::new(
                        ErrorCode::RevisionConflict,
                        format!(
                            "renaming the conversation failed: it was changed elsewhere (revision {current}, this \
                             page holds {held})"
                        ),
                    )
                    .with_details(Object::new().put("currentRevision", current).done()));
                }
                store
                    .save(&id, current, Some(&title), &snapshot.context)
                    .await
            }
            .await
            .map(|snapshot| info_of(&snapshot));
            if open && !controller.is_destroyed() {
                controller.update(|s| {
                    if let Ok(info) = &renamed {
                        s.conversation = Some(info.clone());
                    }
                    s.status = Status::Idle;
                });
            }
            renamed
        }
        .boxed_local()
    }

    /// Deletes a stored conversation; resolves only when the store confirmed it. Deleting the open conversation
    /// is refused with `AGENT_BUSY` while its turn runs, awaits confirmation or saves (abort first); while idle the
    /// controller is `saving` during the request and, once deleted, starts a new empty conversation. A failure
    /// leaves the state as it was. `AGENT_BUSY` too while any conversation loads.
    pub fn delete_conversation(&self, id: &str) -> LocalBoxFuture<'static, Result<(), AgentError>> {
        let store = match self.store() {
            Ok(store) => store,
            Err(error) => return ready(Err(error)),
        };
        let open = match self.claim_stored(id) {
            Ok(open) => open,
            Err(error) => return ready(Err(error)),
        };
        if open {
            self.update(|s| s.status = Status::Saving);
        }
        let deleting = store.delete(id);
        let controller = self.clone();
        async move {
            let deleted = deleting.await;
            if open && !controller.is_destroyed() {
                if deleted.is_ok() {
                    *controller.inner.model_state.borrow_mut() = None;
                }
                controller.update(|s| {
                    if deleted.is_ok() {
                        s.conversation = None;
                        s.messages = Rc::new(Vec::new());
                        s.draft = None;
                        s.tool_results = Rc::new(Vec::new());
                        s.pending_confirmation = None;
                        s.pending_elicitation = None;
                        s.last_outcome = None;
                        s.error = None;
                    }
                    s.status = Status::Idle;
                });
            }
            deleted
        }
        .boxed_local()
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
/// Projects execution events into the state and notifies listeners.
fn observe(weak: &Weak<Inner>, event: &ExecutionEvent<'_>) {
    let Some(inner) = weak.upgrade() else { return };
    if inner.state.borrow().status == Status::Destroyed {
        return;
    }
    update_inner(&inner, |s| apply_event(s, event));
}

fn info_of(snapshot: &ConversationSnapshot) -> ConversationInfo {
    ConversationInfo {
        id: snapshot.conversation.id.clone(),
        title: snapshot.conversation.title.clone(),
        revision: snapshot.conversation.revision,
    }
}

/// The first user text (else the first document's name), trimmed to 80 characters, or "New conversation".
fn title_of(messages: &[Message]) -> String {
    let first = messages
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| {
            // The person's first words, else the first file they sent ("report.pdf").
            m.blocks
                .iter()
                .find_map(|b| match b {
                    Block::Text { text, .. } if !text.trim().is_empty() => Some(text.trim()),
                    _ => None,
                })
                .or_else(|| {
                    m.blocks.iter().find_map(|b| match b {
                        Block::Document { name, .. } => Some(name.as_str()),
                        _ => None,
                    })
                })
        });
    match first {
        Some(text) => text.chars().take(80).collect(),
        None => "New conversation".to_string(),
    }
}

/// How a turn starts: a new user message, the same messages again, or a rewritten tail.
enum TurnStart {
    Send(Vec<Block>),
    Retry,
    Regenerate,
    EditLast(Vec<Block>),
}

/// The index of the last user message, or `AGENT_INVALID_INPUT` naming `what` when there is none.
fn last_user_index(messages: &[Message], what: &str) -> Result<usize, AgentError> {
    messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .ok_or_else(|| {
            AgentError::new(
                ErrorCode::InvalidInput,
                format!("nothing to {what}: the conversation has no user message"),
            )
        })
}
