//! The controller's observable state (pure data): [`ControllerState`] with its [`Status`], the streaming
//! [`Draft`], [`ConversationInfo`], the inspector's [`ToolInspection`], and how execution events project into it.

use std::rc::Rc;

use patchbridge_protocol::write::Object;
use patchbridge_protocol::{Message, Role, ToValue};
use serde_json::Value;

use super::draft::Draft;
use super::elicitation::Elicitation;
use super::error::AgentError;
use super::events::ExecutionEvent;
use super::interrupt::Interrupt;
use super::outcome::Outcome;
use super::registry::ToolRegistrySnapshot;
use super::tool_result::ToolCallResult;

patchbridge_protocol::string_enum! {
    /// What the controller is doing (closed set).
    pub enum Status {
        /// Ready for `send`.
        Idle = "idle",
        /// Loading a conversation from the store.
        Loading = "loading",
        /// An execution is running.
        Running = "running",
        /// The execution waits for `approve_tool` / `reject_tool`.
        AwaitingConfirmation = "awaiting-confirmation",
        /// Saving the finished turn.
        Saving = "saving",
        /// `destroy` was called; every method fails with `AGENT_DESTROYED`.
        Destroyed = "destroyed",
    }
}

patchbridge_protocol::wire! {
    written, ts(test);
    /// The stored conversation this controller is attached to.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ConversationInfo {
        /// Conversation id.
        pub id: String = "id",
        /// Title.
        pub title: String = "title",
        /// The revision the in-memory state corresponds to.
        pub revision: u64 = "revision",
    }
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
    /// The pending `elicitation` (a running tool's question to the person), if any.
    pub pending_elicitation: Option<Elicitation>,
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
    pub(crate) fn initial() -> Self {
        ControllerState {
            status: Status::Idle,
            messages: Rc::new(Vec::new()),
            draft: None,
            tool_results: Rc::new(Vec::new()),
            pending_confirmation: None,
            pending_elicitation: None,
            last_outcome: None,
            error: None,
            conversation: None,
            tool_revision: 0,
        }
    }

    /// The state as JSON (camelCase; the draft as `{ id, role: "assistant", blocks: [...] }` with each block's
    /// `type`, `text` (or `callId`, `name`, `argumentsText`) and `complete`).
    pub fn to_json(&self) -> Value {
        let draft = self.draft.as_ref().map(|draft| draft.to_json());
        Object::new()
            .put("status", self.status.to_value())
            .put("messages", self.messages.to_value())
            .put("draft", draft)
            .put("toolResults", self.tool_results.to_value())
            .put("pendingConfirmation", self.pending_confirmation.to_value())
            .put("pendingElicitation", self.pending_elicitation.to_value())
            .put("lastOutcome", self.last_outcome.to_value())
            .put("error", self.error.to_value())
            .put("conversation", self.conversation.to_value())
            .put("toolRevision", self.tool_revision)
            .done()
    }
}

patchbridge_protocol::string_enum! {
    /// Which tool set an inspector should show.
    pub enum InspectionSource {
        /// A turn is running: its frozen snapshot (what the model was actually given).
        CurrentExecution = "current-execution",
        /// Idle: the registry as it is now (what the next turn will get).
        CurrentRegistry = "current-registry",
    }
}

/// The answer of [`Controller::tool_inspection_source`].
#[derive(Debug, Clone)]
pub struct ToolInspection {
    /// Where the snapshot comes from.
    pub source: InspectionSource,
    /// The tools.
    pub snapshot: Rc<ToolRegistrySnapshot>,
}

/// Projects one execution event into the state (pure). Deltas append to the draft in place: `Rc::make_mut`
/// copies only if someone still holds an older state.
pub(crate) fn apply_event(s: &mut ControllerState, event: &ExecutionEvent<'_>) {
    match event {
        ExecutionEvent::MessageStarted { id, .. } => {
            s.draft = Some(Rc::new(Draft::new(id.to_string())));
        }
        ExecutionEvent::Stream(stream) => {
            if let Some(draft) = &mut s.draft {
                Rc::make_mut(draft).apply(stream);
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
        // The status stays `running`: the tool is running, and asks through it.
        ExecutionEvent::Elicitation(elicitation) => {
            s.pending_elicitation = Some((*elicitation).clone());
        }
        ExecutionEvent::ElicitationResolved { .. } => {
            s.pending_elicitation = None;
        }
    }
}
