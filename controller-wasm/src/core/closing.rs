//! Closing tool calls an execution left without results (pure). A cancelled or failed execution can end after
//! an assistant message asked for tools and before its tool message became stable; sent as is, providers refuse
//! the next request. The runtime answers each such call itself: with the result already published for it
//! (the tool ran), or else with a **not-run result** — `isError: true` and content starting with
//! [`NOT_RUN_PREFIX`], which tools may not use, so a reader can always tell it from a tool's own result.
//!
//! One rule everywhere: a cancelled execution's `ExecutionResult.messages` (and a failed one's stable context)
//! already end with this closing tool message, the controller shows exactly those messages, and, as the turn
//! was cancelled, nothing is saved then; the next completed turn saves the conversation the model saw, closing
//! message included.

use patchbridge_protocol::{Block, Message, Role};

use super::tool_result::{ToolCallResult, NOT_RUN_PREFIX};

/// The not-run result text for tool `name` after the turn ended for `why` (`cancelled`, or an error code).
pub fn not_run_text(name: &str, why: &str) -> String {
    format!("{NOT_RUN_PREFIX}The call to {name} did not complete: the turn ended ({why}).")
}

/// Appends the closing tool message when the last message is an assistant message with tool calls: one result
/// per call in call order, the `published` one when there is one, else a not-run result. `new_id` names it.
pub fn close_dangling_calls(
    messages: &mut Vec<Message>,
    published: &[ToolCallResult],
    why: &str,
    new_id: impl FnOnce() -> String,
) {
    let Some(last) = messages.last() else { return };
    if last.role != Role::Assistant {
        return;
    }
    let blocks: Vec<Block> = last
        .blocks
        .iter()
        .filter_map(|block| match block {
            Block::ToolCall { call_id, name, .. } => Some(
                match published.iter().find(|r| &r.tool_call_id == call_id) {
                    Some(result) => Block::ToolResult {
                        call_id: call_id.clone(),
                        content: result.content.clone(),
                        is_error: result.is_error,
                    },
                    None => Block::ToolResult {
                        call_id: call_id.clone(),
                        content: not_run_text(name, why),
                        is_error: true,
                    },
                },
            ),
            _ => None,
        })
        .collect();
    if blocks.is_empty() {
        return;
    }
    messages.push(Message {
        id: new_id(),
        role: Role::Tool,
        blocks,
    });
}
