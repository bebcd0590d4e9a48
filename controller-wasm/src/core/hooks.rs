//! Hooks: synchronous observers of *stable* lifecycle events (never token deltas, never ModelState).
//!
//! Event data is plain JSON-shaped data (written by hand as `ToValue`, equal to the derived `Serialize`) so the
//! bindings can hand each hook a deep-frozen copy. The dispatch rules (registration order, failing the turn on a
//! non-terminal throw, routing terminal throws to `onHookError` / `console_error`) live in the execution's
//! dispatcher.

use std::rc::Rc;

use patchbridge_protocol::{StopReason, Usage};
use serde::Serialize;
use serde_json::{Map, Value};

use super::error::AgentError;
use super::outcome::Outcome;
use patchbridge_protocol::write::Object;
use patchbridge_protocol::ToValue;

/// A stable lifecycle event (closed set), serialised as `{ "type": "...", ...camelCase fields }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum HookEvent {
    /// The execution began.
    #[serde(rename_all = "camelCase")]
    ExecutionStarted {
        /// Registry revision of the tool snapshot frozen for this turn.
        tool_revision: u64,
        /// Number of input messages.
        message_count: usize,
    },
    /// A model call is about to start (1-based `modelCall`).
    #[serde(rename_all = "camelCase")]
    ModelCallStarted {
        /// 1-based index of the model call within the execution.
        model_call: u64,
    },
    /// A model call sealed its message.
    #[serde(rename_all = "camelCase")]
    ModelCallCompleted {
        /// 1-based index of the model call.
        model_call: u64,
        /// The sealed assistant message's id.
        message_id: String,
        /// Why the model stopped.
        stop_reason: StopReason,
        /// This call's usage.
        #[cfg_attr(test, ts(type = "Required<Usage>"))]
        usage: Usage,
        /// Milliseconds from the call's start to its first `block-delta` (null when it produced none).
        time_to_first_token_ms: Option<f64>,
        /// Milliseconds from the first `block-delta` to `message-stop` (0 when there was no delta).
        output_duration_ms: f64,
        /// Characters counted against `maxModelOutputCharacters` for this call.
        output_characters: u64,
    },
    /// A tool call is about to run (after precheck and any approval).
    #[serde(rename_all = "camelCase")]
    ToolCallStarted {
        /// The call id.
        call_id: String,
        /// The tool name.
        tool: String,
        /// The validated arguments (a copy: hooks cannot change what the tool receives).
        #[cfg_attr(test, ts(type = "JsonObject"))]
        arguments: Map<String, Value>,
    },
    /// A tool call produced a valid result (which the model will see).
    #[serde(rename_all = "camelCase")]
    ToolCallCompleted {
        /// The call id.
        call_id: String,
        /// The tool name.
        tool: String,
        /// Whether the result is an error result.
        is_error: bool,
        /// Characters of the result content.
        content_characters: u64,
        /// Whether the result came from a user rejection rather than running the tool.
        rejected: bool,
        /// Whether the runtime refused the call because its arguments do not match the tool's `inputSchema`
        /// (the tool was neither confirmed nor run; the result starts with `[invalid arguments] `).
        invalid_arguments: bool,
    },
    /// A `tool-confirmation` interrupt was raised.
    #[serde(rename_all = "camelCase")]
    ConfirmationRequested {
        /// Stable interrupt id.
        interrupt_id: String,
        /// The call awaiting confirmation.
        call_id: String,
        /// The tool name.
        tool: String,
        /// The validated arguments.
        #[cfg_attr(test, ts(type = "JsonObject"))]
        arguments: Map<String, Value>,
    },
    /// The interrupt was answered.
    #[serde(rename_all = "camelCase")]
    ConfirmationResolved {
        /// Stable interrupt id.
        interrupt_id: String,
        /// The call it was about.
        call_id: String,
        /// Whether the user approved.
        approved: bool,
    },
    /// Terminal: outcome `completed` or `max-tokens`.
    #[serde(rename_all = "camelCase")]
    ExecutionCompleted {
        /// `completed` or `max-tokens`.
        #[cfg_attr(test, ts(type = "Exclude<Outcome, 'cancelled'>"))]
        outcome: Outcome,
        /// Usage summed over all model calls.
        #[cfg_attr(test, ts(type = "Required<Usage>"))]
        usage: Usage,
        /// Model calls made.
        model_calls: u64,
        /// Tool calls accepted.
        tool_calls: u64,
    },
    /// Terminal: the host or user cancelled.
    #[serde(rename_all = "camelCase")]
    ExecutionCancelled {
        /// Usage summed over the model calls that completed.
        #[cfg_attr(test, ts(type = "Required<Usage>"))]
        usage: Usage,
    },
    /// Terminal: the execution failed (`result` rejects with this error).
    #[serde(rename_all = "camelCase")]
    ExecutionFailed {
        /// The error `result` rejects with.
        #[cfg_attr(test, ts(inline))]
        error: AgentError,
    },
}

impl HookEvent {
    /// The event's `type` string.
    pub fn type_name(&self) -> &'static str {
        match self {
            HookEvent::ExecutionStarted { .. } => "execution-started",
            HookEvent::ModelCallStarted { .. } => "model-call-started",
            HookEvent::ModelCallCompleted { .. } => "model-call-completed",
            HookEvent::ToolCallStarted { .. } => "tool-call-started",
            HookEvent::ToolCallCompleted { .. } => "tool-call-completed",
            HookEvent::ConfirmationRequested { .. } => "confirmation-requested",
            HookEvent::ConfirmationResolved { .. } => "confirmation-resolved",
            HookEvent::ExecutionCompleted { .. } => "execution-completed",
            HookEvent::ExecutionCancelled { .. } => "execution-cancelled",
            HookEvent::ExecutionFailed { .. } => "execution-failed",
        }
    }

    /// Whether this is the execution's terminal event (exactly one per execution, always last).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            HookEvent::ExecutionCompleted { .. }
                | HookEvent::ExecutionCancelled { .. }
                | HookEvent::ExecutionFailed { .. }
        )
    }

    /// The event as JSON.
    pub fn to_json(&self) -> Value {
        self.to_value()
    }
}

/// `{ type, ...camelCase fields }`, as the derive writes it (`tests/write_equivalence.rs` compares the two).
impl ToValue for HookEvent {
    fn to_value(&self) -> Value {
        let mut object = Object::tagged(self.type_name());
        match self {
            HookEvent::ExecutionStarted {
                tool_revision,
                message_count,
            } => object
                .put("toolRevision", *tool_revision)
                .put("messageCount", *message_count),
            HookEvent::ModelCallStarted { model_call } => object.put("modelCall", *model_call),
            HookEvent::ModelCallCompleted {
                model_call,
                message_id,
                stop_reason,
                usage,
                time_to_first_token_ms,
                output_duration_ms,
                output_characters,
            } => object
                .put("modelCall", *model_call)
                .put("messageId", message_id.as_str())
                .put("stopReason", stop_reason.to_value())
                .put("usage", usage.to_value())
                .put("timeToFirstTokenMs", *time_to_first_token_ms)
                .put("outputDurationMs", *output_duration_ms)
                .put("outputCharacters", *output_characters),
            HookEvent::ToolCallStarted {
                call_id,
                tool,
                arguments,
            } => object
                .put("callId", call_id.as_str())
                .put("tool", tool.as_str())
                .put("arguments", arguments.clone()),
            HookEvent::ToolCallCompleted {
                call_id,
                tool,
                is_error,
                content_characters,
                rejected,
                invalid_arguments,
            } => object
                .put("callId", call_id.as_str())
                .put("tool", tool.as_str())
                .put("isError", *is_error)
                .put("contentCharacters", *content_characters)
                .put("rejected", *rejected)
                .put("invalidArguments", *invalid_arguments),
            HookEvent::ConfirmationRequested {
                interrupt_id,
                call_id,
                tool,
                arguments,
            } => object
                .put("interruptId", interrupt_id.as_str())
                .put("callId", call_id.as_str())
                .put("tool", tool.as_str())
                .put("arguments", arguments.clone()),
            HookEvent::ConfirmationResolved {
                interrupt_id,
                call_id,
                approved,
            } => object
                .put("interruptId", interrupt_id.as_str())
                .put("callId", call_id.as_str())
                .put("approved", *approved),
            HookEvent::ExecutionCompleted {
                outcome,
                usage,
                model_calls,
                tool_calls,
            } => object
                .put("outcome", outcome.to_value())
                .put("usage", usage.to_value())
                .put("modelCalls", *model_calls)
                .put("toolCalls", *tool_calls),
            HookEvent::ExecutionCancelled { usage } => object.put("usage", usage.to_value()),
            HookEvent::ExecutionFailed { error } => object.put("error", error.to_value()),
        };
        object.done()
    }
}

impl ToValue for HookContext {
    fn to_value(&self) -> Value {
        Object::new()
            .put("executionId", self.execution_id.as_str())
            .put("traceId", self.trace_id.as_str())
            .put("sequence", self.sequence)
            .put("timestampMs", self.timestamp_ms)
            .done()
    }
}

impl ToValue for HookFailure {
    fn to_value(&self) -> Value {
        Object::new()
            .put("hookIndex", self.hook_index)
            .put("eventType", self.event_type.as_str())
            .put("executionId", self.execution_id.as_str())
            .put("error", self.error.to_value())
            .done()
    }
}

/// Facts about where an event comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HookContext {
    /// The execution's id.
    pub execution_id: String,
    /// Trace id (the input's, or the execution id).
    pub trace_id: String,
    /// 1-based sequence number of the event within the execution.
    pub sequence: u64,
    /// Platform clock at dispatch, in milliseconds.
    pub timestamp_ms: f64,
}

/// A hook threw on the terminal event: reported to `onHookError` (or the console), never changes the outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HookFailure {
    /// Index of the hook in registration order.
    pub hook_index: usize,
    /// The event type it failed on.
    #[cfg_attr(test, ts(type = "HookEvent['type']"))]
    pub event_type: String,
    /// The execution's id.
    pub execution_id: String,
    /// What the hook threw.
    #[cfg_attr(test, ts(type = "AgentError"))]
    pub error: AgentError,
}

/// A lifecycle observer. Called synchronously in registration order; must not block.
pub trait AgentHook {
    /// Observes one event. `Err` on a non-terminal event fails the turn with `AGENT_HOOK_FAILED`; on the
    /// terminal event it is reported and ignored.
    fn on_event(&self, event: &HookEvent, ctx: &HookContext) -> Result<(), AgentError>;
}

/// The `onHookError` callback.
pub type OnHookError = Rc<dyn Fn(&HookFailure)>;
