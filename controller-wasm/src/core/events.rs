//! What an execution's observer sees: [`ExecutionEvent`] (draft stream events, stable messages, tool results,
//! interrupts) and the [`Observer`] callback type. Events are published only while the terminal gate is open.

use patchbridge_protocol::write::Object;
use patchbridge_protocol::{Message, StreamEvent, ToValue};
use serde_json::Value;

use super::elicitation::{Elicitation, ElicitationAction};
use super::interrupt::Interrupt;

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
    /// A running tool asks the person (an elicitation interrupt is pending).
    Elicitation(&'a Elicitation),
    /// The pending elicitation was answered.
    ElicitationResolved {
        /// Its id.
        interrupt_id: &'a str,
        /// The call that asked.
        call_id: &'a str,
        /// The person's answer.
        action: ElicitationAction,
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
            ExecutionEvent::Elicitation(_) => "elicitation",
            ExecutionEvent::ElicitationResolved { .. } => "elicitation-resolved",
        }
    }

    /// The event as JSON: `{ type, ...camelCase fields }`; stream events keep their protocol shape.
    pub fn to_json(&self) -> Value {
        match self {
            ExecutionEvent::MessageStarted { id, model_call } => Object::tagged("message-started")
                .put("id", *id)
                .put("modelCall", *model_call)
                .done(),
            ExecutionEvent::Stream(event) => event.to_value(),
            ExecutionEvent::MessageCompleted(message) => Object::tagged("message-completed")
                .put("message", message.to_value())
                .done(),
            ExecutionEvent::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let result = Object::new()
                    .put("toolCallId", *call_id)
                    .put("content", *content)
                    .put("isError", *is_error)
                    .done();
                Object::tagged("tool-result").put("result", result).done()
            }
            ExecutionEvent::Interrupt(interrupt) => {
                let mut value = interrupt.to_value();
                if let Value::Object(map) = &mut value {
                    map.insert("type".into(), Value::String("interrupt".into()));
                }
                value
            }
            ExecutionEvent::InterruptResolved {
                interrupt_id,
                call_id,
                approved,
            } => Object::tagged("interrupt-resolved")
                .put("interruptId", *interrupt_id)
                .put("callId", *call_id)
                .put("approved", *approved)
                .done(),
            ExecutionEvent::Elicitation(elicitation) => {
                let mut value = elicitation.to_value();
                if let Value::Object(map) = &mut value {
                    map.insert("type".into(), Value::String("elicitation".into()));
                }
                value
            }
            ExecutionEvent::ElicitationResolved {
                interrupt_id,
                call_id,
                action,
            } => Object::tagged("elicitation-resolved")
                .put("interruptId", *interrupt_id)
                .put("callId", *call_id)
                .put("action", action.to_value())
                .done(),
        }
    }
}

/// The observer callback given to `start`.
pub type Observer = Box<dyn FnMut(&ExecutionEvent<'_>)>;
