//! The whole-batch tool precheck (pure). Runs on a sealed assistant message before any of its tools runs;
//! any failure means zero tools of the batch execute.
//!
//! Checks, in order: stop reason (tool calls only with `tool-use`, and `tool-use` needs at least one call),
//! unique call ids, every tool in this turn's snapshot, arguments a complete JSON object, then the budgets:
//! `maxToolCalls` (cumulative accepted calls) and `maxModelCalls` (a tool batch is always followed by a model
//! call, so a batch that could never be answered is refused before side effects happen).

use std::collections::HashSet;
use std::rc::Rc;

use patchbridge_protocol::write::Object;
use patchbridge_protocol::{Block, Message, Role, StopReason};
use serde_json::{Map, Value};

use super::aggregate::{SealedBlock, SealedMessage};
use super::error::{AgentError, ErrorCode, LimitName};
use super::limits::Limits;
use super::registry::{RegisteredTool, ToolRegistrySnapshot};

/// A call that passed the precheck, routed to its snapshot tool.
#[derive(Debug, Clone)]
pub struct CheckedCall {
    /// Call id.
    pub call_id: String,
    /// Validated arguments.
    pub input: Rc<Map<String, Value>>,
    /// The snapshot tool (definition + handler).
    pub tool: RegisteredTool,
}

/// Budgets already used by the execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Model calls made so far (including the one that produced this message).
    pub model_calls: u64,
    /// Tool calls accepted so far.
    pub tool_calls: u64,
}

pub(crate) fn failed(check: &str, message: String, call_id: Option<&str>) -> AgentError {
    AgentError::new(ErrorCode::ToolPrecheckFailed, message).with_details(
        Object::new()
            .put("check", check)
            .put("callId", call_id)
            .done(),
    )
}

/// `maxToolCalls` for `requested` more calls when `used` were accepted: the model's batches and the host's calls
/// (`AgentExecution::call_tool`) meet the same limit error.
pub(crate) fn tool_budget(requested: usize, used: u64, limits: &Limits) -> Result<(), AgentError> {
    if used.saturating_add(requested as u64) > limits.max_tool_calls {
        return Err(AgentError::limit_exceeded(
            LimitName::MaxToolCalls,
            format!(
                "{requested} more tool call(s) would exceed maxToolCalls ({}); {used} already accepted",
                limits.max_tool_calls
            ),
        )
        .with_details(
            Object::new()
                .put("check", "budget")
                .put("requested", requested)
                .put("used", used)
                .done(),
        ));
    }
    Ok(())
}

/// Prechecks the message's tool calls and, on success, returns the stable message and the routed calls
/// (empty when the message has no tool calls and does not stop for tool use).
pub fn precheck(
    sealed: SealedMessage,
    snapshot: &ToolRegistrySnapshot,
    budget: Budget,
    limits: &Limits,
) -> Result<(Message, Vec<CheckedCall>), AgentError> {
    let call_count = sealed
        .blocks
        .iter()
        .filter(|b| matches!(b, SealedBlock::ToolCall { .. }))
        .count();
    let reason = sealed.stop_reason;
    if call_count > 0 && reason != StopReason::ToolUse {
        return Err(failed(
            "stop-reason",
            format!(
                "the message has {call_count} tool call(s) but stopped with {:?}, not tool-use",
                reason.as_str()
            ),
            None,
        ));
    }
    if call_count == 0 && reason == StopReason::ToolUse {
        return Err(failed(
            "stop-reason",
            "the message stopped with tool-use but has no tool calls".into(),
            None,
        ));
    }

    let mut seen = HashSet::new();
    for block in &sealed.blocks {
        if let SealedBlock::ToolCall { call_id, .. } = block {
            if !seen.insert(call_id.as_str()) {
                return Err(failed(
                    "unique-call-id",
                    format!("call id {call_id:?} appears twice in one message"),
                    Some(call_id),
                ));
            }
        }
    }
    let mut routed = Vec::with_capacity(call_count);
    for block in &sealed.blocks {
        if let SealedBlock::ToolCall { call_id, name, .. } = block {
            match snapshot.get(name) {
                Some(tool) => routed.push(tool.clone()),
                None => {
                    return Err(failed(
                        "known-tool",
                        format!("call {call_id:?} names tool {name:?}, which is not in this turn's snapshot (revision {})", snapshot.revision),
                        Some(call_id),
                    ))
                }
            }
        }
    }
    for block in &sealed.blocks {
        if let SealedBlock::ToolCall {
            call_id,
            input: Err(problem),
            ..
        } = block
        {
            return Err(failed(
                "arguments",
                format!("call {call_id:?}: {problem}"),
                Some(call_id),
            ));
        }
    }
    if call_count > 0 {
        tool_budget(call_count, budget.tool_calls, limits)?;
        if budget.model_calls >= limits.max_model_calls {
            return Err(AgentError::limit_exceeded(
                LimitName::MaxModelCalls,
                format!(
                    "the tool results could not be sent back: maxModelCalls ({}) is used up",
                    limits.max_model_calls
                ),
            )
            .with_details(
                Object::new()
                    .put("check", "budget")
                    .put("used", budget.model_calls)
                    .done(),
            ));
        }
    }

    let mut calls = Vec::with_capacity(call_count);
    let mut routed = routed.into_iter();
    let blocks = sealed
        .blocks
        .into_iter()
        .map(|block| match block {
            SealedBlock::Text(text, sources) => Block::Text { text, sources },
            SealedBlock::Reasoning(text) => Block::Reasoning { text },
            SealedBlock::ToolCall {
                call_id,
                name,
                input,
            } => {
                let input = input.expect("arguments checked above");
                calls.push(CheckedCall {
                    call_id: call_id.clone(),
                    input: Rc::new(input.clone()),
                    tool: routed.next().expect("one routed tool per call"),
                });
                Block::ToolCall {
                    call_id,
                    name,
                    input,
                }
            }
        })
        .collect();
    Ok((
        Message {
            id: sealed.id,
            role: Role::Assistant,
            blocks,
        },
        calls,
    ))
}
