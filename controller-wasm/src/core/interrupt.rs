//! Human-in-the-loop questions (pure data): the pending [`Interrupt`] a confirmation raises and the
//! [`InterruptResponse`] that answers it. The slot that holds them lives in the execution's state.

use serde_json::{Map, Value};

use super::error::{AgentError, ErrorCode};

patchbridge_protocol::string_enum! {
    /// The kind of an interrupt (closed set).
    pub enum InterruptKind {
        /// A tool call awaits approval.
        ToolConfirmation = "tool-confirmation",
        /// A running tool asks the person a question (`super::elicitation`).
        Elicitation = "elicitation",
    }
}

patchbridge_protocol::wire! {
    written, ts(test);
    /// A pending human-in-the-loop question.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Interrupt {
        /// Stable id to pass to `respond`.
        pub interrupt_id: String = "interruptId",
        /// Always `tool-confirmation`.
        pub kind: InterruptKind = "kind",
        /// The tool call awaiting approval.
        pub call_id: String = "callId",
        /// The tool name.
        pub tool: String = "tool",
        /// The validated arguments.
        #[cfg_attr(test, ts(type = "JsonObject"))]
        pub arguments: Map<String, Value> = "arguments",
    }
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
