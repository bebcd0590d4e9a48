//! Anthropic prompt caching: `cache_control` breakpoints on the stable prefix of a Messages request.
//!
//! Anthropic caches the prefix of a request (tools, then system, then messages) up to each block marked with
//! `cache_control`, and a later request whose prefix matches reads it at a tenth of the price. A request may
//! carry at most four breakpoints. Each request of a conversation marks:
//! 1. the last tool definition (the tools rarely change within a conversation),
//! 2. the system prompt,
//! 3. the last block of the newest message: the whole conversation so far, which the next call of a tool loop
//!    (or the next turn) starts with, and
//! 4. the last block of the message before the newest assistant message: where the previous call put its third
//!    breakpoint, so this call reads what that one wrote even when the newest turn added many blocks.
//!
//! Thinking and redacted thinking blocks cannot carry `cache_control`, and raw server tool blocks go back
//! verbatim, so a breakpoint goes on the message's last text, image, tool use or tool result block. A prefix
//! shorter than the model's minimum cacheable length is simply not cached (no error).

use serde_json::{json, Map, Value};

/// The breakpoint marker (the default five-minute cache).
fn marker() -> Value {
    json!({ "type": "ephemeral" })
}

/// Adds the breakpoints to a finished request body (`tools`, `system` and `messages` as the encoder built them).
pub(crate) fn mark_breakpoints(body: &mut Map<String, Value>) {
    if let Some(Value::Object(last_tool)) = body
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .and_then(|tools| tools.last_mut())
    {
        last_tool.insert("cache_control".into(), marker());
    }
    if let Some(Value::String(system)) = body.get("system") {
        let block = json!([{ "type": "text", "text": system, "cache_control": marker() }]);
        body.insert("system".into(), block);
    }
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    let Some(newest) = messages.len().checked_sub(1) else {
        return;
    };
    let previous_end = messages
        .iter()
        .rposition(|m| m["role"] == "assistant")
        .and_then(|assistant| assistant.checked_sub(1))
        .filter(|&i| i != newest);
    for i in previous_end.into_iter().chain([newest]) {
        mark_last_cacheable_block(&mut messages[i]);
    }
}

fn mark_last_cacheable_block(message: &mut Value) {
    let Some(content) = message.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    let cacheable = |block: &Value| {
        matches!(
            block.get("type").and_then(Value::as_str),
            Some("text" | "image" | "document" | "tool_use" | "tool_result")
        )
    };
    if let Some(Value::Object(block)) = content.iter_mut().rev().find(|b| cacheable(b)) {
        block.insert("cache_control".into(), marker());
    }
}
