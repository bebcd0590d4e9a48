//! Structural rules of a conversation's messages (pure): non-empty unique ids, blocks allowed per role (documents
//! with a valid name, type and encoding), and tool results strictly tied to a tool call of the preceding
//! assistant message.
//!
//! Used for `start` input (`AGENT_INVALID_INPUT`) and for loaded conversations (`AGENT_CONVERSATION_CORRUPT`).
//! An assistant tool call *without* a result is allowed: a cancelled turn can leave one behind.

use std::collections::HashSet;

use patchbridge_protocol::{Block, Message, Role};

use super::attachments::structure_problem;
use super::error::{AgentError, ErrorCode};

/// Checks the message rules; the `String` says what is wrong and where.
pub fn check_messages(messages: &[Message]) -> Result<(), String> {
    let mut ids = HashSet::new();
    let mut previous: Option<&Message> = None;
    for (index, message) in messages.iter().enumerate() {
        if message.id.is_empty() {
            return Err(format!("messages[{index}].id is empty"));
        }
        if !ids.insert(message.id.as_str()) {
            return Err(format!(
                "messages[{index}].id {:?} is a duplicate",
                message.id
            ));
        }
        // An assistant message may be empty (a model can stop without output); user and tool messages may not.
        if message.blocks.is_empty() && message.role != Role::Assistant {
            return Err(format!("messages[{index}] has no blocks"));
        }
        for (block_index, block) in message.blocks.iter().enumerate() {
            let allowed = match message.role {
                Role::User => matches!(
                    block,
                    Block::Text { .. } | Block::Image { .. } | Block::Document { .. }
                ),
                Role::Assistant => matches!(
                    block,
                    Block::Text { .. } | Block::Reasoning { .. } | Block::ToolCall { .. }
                ),
                Role::Tool => matches!(block, Block::ToolResult { .. }),
            };
            // Sources are what a model's text cites: a person's own text has none.
            if let (Role::User, Block::Text { sources, .. }) = (message.role, block) {
                if !sources.is_empty() {
                    return Err(format!(
                        "messages[{index}].blocks[{block_index}]: a user text block cannot carry sources"
                    ));
                }
            }
            if !allowed {
                return Err(format!(
                    "messages[{index}].blocks[{block_index}]: a {:?} message cannot carry this block type",
                    message.role
                ));
            }
            if let Some(problem) = structure_problem(block) {
                return Err(format!(
                    "messages[{index}].blocks[{block_index}]: {problem}"
                ));
            }
        }
        if message.role == Role::Tool {
            let calls: Vec<&str> = match previous {
                Some(prev) if prev.role == Role::Assistant => prev
                    .blocks
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolCall { call_id, .. } => Some(call_id.as_str()),
                        _ => None,
                    })
                    .collect(),
                _ => {
                    return Err(format!(
                        "messages[{index}]: a tool message must follow an assistant message"
                    ))
                }
            };
            let mut answered = HashSet::new();
            for block in &message.blocks {
                if let Block::ToolResult { call_id, .. } = block {
                    if !calls.contains(&call_id.as_str()) {
                        return Err(format!(
                            "messages[{index}]: tool result for {call_id:?} answers no tool call of the preceding assistant message"
                        ));
                    }
                    if !answered.insert(call_id.as_str()) {
                        return Err(format!(
                            "messages[{index}]: two tool results for {call_id:?}"
                        ));
                    }
                }
            }
        }
        previous = Some(message);
    }
    Ok(())
}

/// [`check_messages`] for execution input: `AGENT_INVALID_INPUT`; also requires at least one message.
pub fn validate_messages(messages: &[Message]) -> Result<(), AgentError> {
    if messages.is_empty() {
        return Err(AgentError::new(
            ErrorCode::InvalidInput,
            "input.messages must not be empty",
        ));
    }
    check_messages(messages).map_err(|problem| {
        AgentError::new(
            ErrorCode::InvalidInput,
            format!("input.messages: {problem}"),
        )
    })
}
