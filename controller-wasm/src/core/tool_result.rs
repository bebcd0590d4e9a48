//! Tool-result validation (pure): a raw result must be exactly `{ toolCallId, content, isError }` with
//! `toolCallId` equal to the call id, a string `content` within `maxToolResultCharacters` (Unicode scalar
//! values) and a boolean `isError`. No nulls, no loose types, no extra fields.

use patchbridge_protocol::write::Object;
use serde_json::Value;

use super::error::{AgentError, ErrorCode, LimitName};

/// The start of every result the runtime writes for a call that never ran (reserved: a tool result starting
/// with it is refused, so a reader can always tell the runtime's not-run results from a tool's own).
pub const NOT_RUN_PREFIX: &str = "[not run] ";

/// The start of every result the runtime writes for a call the person rejected (reserved like
/// [`NOT_RUN_PREFIX`]), so the decision stays readable from the stored conversation after a reload.
pub const REJECTED_PREFIX: &str = "[rejected] ";

/// Whether `content` starts with one of the prefixes only the runtime may write.
pub fn has_reserved_prefix(content: &str) -> bool {
    content.starts_with(NOT_RUN_PREFIX) || content.starts_with(REJECTED_PREFIX)
}

/// The start of every result the runtime writes for a call whose arguments do not match the tool's
/// `inputSchema` (reserved like [`NOT_RUN_PREFIX`]; the format is in `arguments`).
pub const INVALID_ARGUMENTS_PREFIX: &str = "[invalid arguments] ";

patchbridge_protocol::wire! {
    written, ts(test);
    /// A validated tool result (what the model will see).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ToolCallResult {
        /// The call it answers.
        pub tool_call_id: String = "toolCallId",
        /// Result text.
        pub content: String = "content",
        /// Whether it is an error result (the loop continues either way).
        pub is_error: bool = "isError",
    }
}

fn invalid(call_id: &str, problem: &str) -> AgentError {
    AgentError::new(
        ErrorCode::InvalidToolResult,
        format!("tool call {call_id:?} returned an invalid result: {problem}"),
    )
    .with_details(
        Object::new()
            .put("callId", call_id)
            .put("problem", problem)
            .done(),
    )
}

/// Validates a raw result for `call_id`.
pub fn validate_tool_result(
    raw: Value,
    call_id: &str,
    max_characters: u64,
) -> Result<ToolCallResult, AgentError> {
    let Value::Object(mut map) = raw else {
        return Err(invalid(
            call_id,
            "expected an object { toolCallId, content, isError }",
        ));
    };
    if let Some(extra) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "toolCallId" | "content" | "isError"))
    {
        return Err(invalid(call_id, &format!("unexpected field {extra:?}")));
    }
    let tool_call_id = match map.remove("toolCallId") {
        Some(Value::String(id)) => id,
        Some(_) => return Err(invalid(call_id, "toolCallId must be a string")),
        None => return Err(invalid(call_id, "toolCallId is missing")),
    };
    if tool_call_id != call_id {
        return Err(invalid(
            call_id,
            &format!("toolCallId {tool_call_id:?} does not equal the call id"),
        ));
    }
    let content = match map.remove("content") {
        Some(Value::String(content)) => content,
        Some(_) => return Err(invalid(call_id, "content must be a string")),
        None => return Err(invalid(call_id, "content is missing")),
    };
    let is_error = match map.remove("isError") {
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(invalid(call_id, "isError must be a boolean")),
        None => return Err(invalid(call_id, "isError is missing")),
    };
    if has_reserved_prefix(&content) {
        return Err(invalid(
            call_id,
            "content must not start with \"[not run] \" or \"[rejected] \" (reserved for results the runtime writes for calls that never ran or that the person rejected)",
        ));
    }
    if content.starts_with(INVALID_ARGUMENTS_PREFIX) {
        return Err(invalid(
            call_id,
            "content must not start with \"[invalid arguments] \" (reserved for results the runtime writes for calls it refused)",
        ));
    }
    let characters = content.chars().count() as u64;
    if characters > max_characters {
        return Err(AgentError::limit_exceeded(
            LimitName::MaxToolResultCharacters,
            format!("tool call {call_id:?} returned {characters} characters, over maxToolResultCharacters ({max_characters})"),
        )
        .with_details(
            Object::new()
                .put("callId", call_id)
                .put("characters", characters)
                .done(),
        ));
    }
    Ok(ToolCallResult {
        tool_call_id,
        content,
        is_error,
    })
}
