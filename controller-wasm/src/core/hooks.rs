//! Hooks: synchronous observers of *stable* lifecycle events (never token deltas, never ModelState).
//!
//! Event data is plain JSON-shaped data (written by hand as `ToValue`, equal to the derived `Serialize`) so the
//! bindings can hand each hook a deep-frozen copy. The dispatch rules (registration order, failing the turn on a
//! non-terminal throw, routing terminal throws to `onHookError` / `console_error`) live in the execution's
//! dispatcher.

use std::rc::Rc;

use patchbridge_protocol::{StopReason, Usage};
use serde_json::{Map, Value};

use super::error::AgentError;
use super::outcome::Outcome;
use patchbridge_protocol::ToValue;

patchbridge_protocol::wire! {
    written, ts(test);
    /// A stable lifecycle event (closed set), serialised as `{ "type": "...", ...camelCase fields }`.
    #[derive(Debug, Clone, PartialEq)]
    pub enum HookEvent {
        /// The execution began.
        ExecutionStarted = "execution-started" {
            /// Registry revision of the tool snapshot frozen for this turn.
            tool_revision: u64 = "toolRevision",
            /// Number of input messages.
            message_count: usize = "messageCount",
        },
        /// A model call is about to start (1-based `modelCall`).
        ModelCallStarted = "model-call-started" {
            /// 1-based index of the model call within the execution.
            model_call: u64 = "modelCall",
        },
        /// A model call sealed its message.
        ModelCallCompleted = "model-call-completed" {
            /// 1-based index of the model call.
            model_call: u64 = "modelCall",
            /// The sealed assistant message's id.
            message_id: String = "messageId",
            /// Why the model stopped.
            stop_reason: StopReason = "stopReason",
            /// This call's usage.
            #[cfg_attr(test, ts(type = "Required<Usage>"))]
            usage: Usage = "usage",
            /// Milliseconds from the call's start to its first `block-delta` (null when it produced none).
            time_to_first_token_ms: Option<f64> = "timeToFirstTokenMs",
            /// Milliseconds from the first `block-delta` to `message-stop` (0 when there was no delta).
            output_duration_ms: f64 = "outputDurationMs",
            /// Characters counted against `maxModelOutputCharacters` for this call.
            output_characters: u64 = "outputCharacters",
        },
        /// A tool call is about to run (after precheck and any approval).
        ToolCallStarted = "tool-call-started" {
            /// The call id.
            call_id: String = "callId",
            /// The tool name.
            tool: String = "tool",
            /// The validated arguments (a copy: hooks cannot change what the tool receives).
            #[cfg_attr(test, ts(type = "JsonObject"))]
            arguments: Map<String, Value> = "arguments",
        },
        /// A tool call produced a valid result (which the model will see).
        ToolCallCompleted = "tool-call-completed" {
            /// The call id.
            call_id: String = "callId",
            /// The tool name.
            tool: String = "tool",
            /// Whether the result is an error result.
            is_error: bool = "isError",
            /// Characters of the result content.
            content_characters: u64 = "contentCharacters",
            /// Whether the result came from a user rejection rather than running the tool.
            rejected: bool = "rejected",
            /// Whether the runtime refused the call because its arguments do not match the tool's `inputSchema`
            /// (the tool was neither confirmed nor run; the result starts with `[invalid arguments] `).
            invalid_arguments: bool = "invalidArguments",
        },
        /// A `tool-confirmation` interrupt was raised.
        ConfirmationRequested = "confirmation-requested" {
            /// Stable interrupt id.
            interrupt_id: String = "interruptId",
            /// The call awaiting confirmation.
            call_id: String = "callId",
            /// The tool name.
            tool: String = "tool",
            /// The validated arguments.
            #[cfg_attr(test, ts(type = "JsonObject"))]
            arguments: Map<String, Value> = "arguments",
        },
        /// The interrupt was answered.
        ConfirmationResolved = "confirmation-resolved" {
            /// Stable interrupt id.
            interrupt_id: String = "interruptId",
            /// The call it was about.
            call_id: String = "callId",
            /// Whether the user approved.
            approved: bool = "approved",
        },
        /// Terminal: outcome `completed` or `max-tokens`.
        ExecutionCompleted = "execution-completed" {
            /// `completed` or `max-tokens`.
            #[cfg_attr(test, ts(type = "Exclude<Outcome, 'cancelled'>"))]
            outcome: Outcome = "outcome",
            /// Usage summed over all model calls.
            #[cfg_attr(test, ts(type = "Required<Usage>"))]
            usage: Usage = "usage",
            /// Model calls made.
            model_calls: u64 = "modelCalls",
            /// Tool calls accepted.
            tool_calls: u64 = "toolCalls",
        },
        /// Terminal: the host or user cancelled.
        ExecutionCancelled = "execution-cancelled" {
            /// Usage summed over the model calls that completed.
            #[cfg_attr(test, ts(type = "Required<Usage>"))]
            usage: Usage = "usage",
        },
        /// Terminal: the execution failed (`result` rejects with this error).
        ExecutionFailed = "execution-failed" {
            /// The error `result` rejects with.
            #[cfg_attr(test, ts(inline))]
            error: AgentError = "error",
        },
    }
}

impl HookEvent {
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

patchbridge_protocol::wire! {
    written, ts(test);
    /// Facts about where an event comes from.
    #[derive(Debug, Clone, PartialEq)]
    pub struct HookContext {
        /// The execution's id.
        pub execution_id: String = "executionId",
        /// Trace id (the input's, or the execution id).
        pub trace_id: String = "traceId",
        /// 1-based sequence number of the event within the execution.
        pub sequence: u64 = "sequence",
        /// Platform clock at dispatch, in milliseconds.
        pub timestamp_ms: f64 = "timestampMs",
    }
}

patchbridge_protocol::wire! {
    written, ts(test);
    /// A hook threw on the terminal event: reported to `onHookError` (or the console), never changes the outcome.
    #[derive(Debug, Clone, PartialEq)]
    pub struct HookFailure {
        /// Index of the hook in registration order.
        pub hook_index: usize = "hookIndex",
        /// The event type it failed on.
        #[cfg_attr(test, ts(type = "HookEvent['type']"))]
        pub event_type: String = "eventType",
        /// The execution's id.
        pub execution_id: String = "executionId",
        /// What the hook threw.
        #[cfg_attr(test, ts(type = "AgentError"))]
        pub error: AgentError = "error",
    }
}

/// A lifecycle observer. Called synchronously in registration order; must not block.
pub trait AgentHook {
    /// Observes one event. `Err` on a non-terminal event fails the turn with `AGENT_HOOK_FAILED`; on the
    /// terminal event it is reported and ignored.
    fn on_event(&self, event: &HookEvent, ctx: &HookContext) -> Result<(), AgentError>;
}

/// The `onHookError` callback.
pub type OnHookError = Rc<dyn Fn(&HookFailure)>;
