//! Prompt and completion text as span attributes, only when the operator opts in (`telemetry.captureContent`):
//! `gen_ai.input.messages` (the request's messages) and `gen_ai.output.messages` (the streamed answer), JSON in
//! the GenAI conventions' message shape (`{role, parts: [{type: "text", content}, {type: "tool_call", id, name,
//! arguments}, {type: "tool_call_response", id, response}, {type: "reasoning", content}]}`; other blocks as
//! `{type}` alone, images never with their data). Each attribute is cut at [`MAX_CONTENT_BYTES`].

use patchbridge_protocol::{BlockKind, Message, StopReason, StreamEvent};
use serde_json::{json, Value};

/// The longest content attribute (bytes); longer JSON is cut at a character boundary and marked `…`.
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;

/// One neutral block (as its JSON) as a GenAI message part.
fn part(block: &Value) -> Value {
    let kind = block["type"].as_str().unwrap_or("");
    match kind {
        "text" => json!({ "type": "text", "content": block["text"] }),
        "reasoning" => json!({ "type": "reasoning", "content": block["text"] }),
        "tool-call" => {
            json!({ "type": "tool_call", "id": block["id"], "name": block["name"], "arguments": block["input"] })
        }
        "tool-result" => {
            json!({ "type": "tool_call_response", "id": block["toolCallId"], "response": block["content"] })
        }
        other => json!({ "type": other }),
    }
}

/// `gen_ai.input.messages` of a request.
pub fn input_messages(messages: &[Message]) -> String {
    let messages: Vec<Value> = messages
        .iter()
        .map(|m| {
            let value = serde_json::to_value(m).unwrap_or(Value::Null);
            let parts: Vec<Value> = value["blocks"]
                .as_array()
                .map(|blocks| blocks.iter().map(part).collect())
                .unwrap_or_default();
            json!({ "role": value["role"], "parts": parts })
        })
        .collect();
    bounded(Value::Array(messages).to_string())
}

/// The streamed answer, gathered block by block from the events.
#[derive(Default)]
pub struct Output {
    /// `(kind, text so far)` by block index.
    blocks: Vec<(BlockKind, String)>,
}

impl Output {
    pub fn observe(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::BlockStart { index, block } => {
                let index = *index as usize;
                if index >= self.blocks.len() {
                    self.blocks
                        .resize_with(index + 1, || (BlockKind::Text, String::new()));
                }
                self.blocks[index] = (block.clone(), String::new());
            }
            StreamEvent::BlockDelta { index, delta } => {
                if let Some((_, text)) = self.blocks.get_mut(*index as usize) {
                    if text.len() < MAX_CONTENT_BYTES {
                        text.push_str(delta);
                    }
                }
            }
            _ => {}
        }
    }

    /// `gen_ai.output.messages`: one assistant message with its finish reason.
    pub fn finish(&self, reason: StopReason) -> String {
        let parts: Vec<Value> = self
            .blocks
            .iter()
            .map(|(kind, text)| match kind {
                BlockKind::Text => json!({ "type": "text", "content": text }),
                BlockKind::Reasoning => json!({ "type": "reasoning", "content": text }),
                BlockKind::ToolCall { call_id, name } => {
                    let arguments = serde_json::from_str::<Value>(text)
                        .unwrap_or_else(|_| Value::String(text.clone()));
                    json!({ "type": "tool_call", "id": call_id, "name": name, "arguments": arguments })
                }
            })
            .collect();
        bounded(
            json!([{ "role": "assistant", "parts": parts, "finish_reason": reason.as_str() }])
                .to_string(),
        )
    }
}

fn bounded(mut text: String) -> String {
    if text.len() > MAX_CONTENT_BYTES {
        let mut cut = MAX_CONTENT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}
