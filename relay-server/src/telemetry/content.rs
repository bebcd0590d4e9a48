//! Prompt and completion text as span attributes, only when the operator opts in (`telemetry.captureContent`):
//! `gen_ai.input.messages` (the request's messages) and `gen_ai.output.messages` (the streamed answer), JSON in
//! the GenAI conventions' message shape (`{role, parts: [{type: "text", content}, {type: "tool_call", id, name,
//! arguments}, {type: "tool_call_response", id, response}, {type: "reasoning", content}]}`; other blocks as
//! `{type}` alone, images never with their data). Each attribute is cut at [`MAX_CONTENT_BYTES`].

use patchbridge_protocol::{Block, BlockKind, Message, Role, StopReason, StreamEvent};
use serde::Serialize;
use serde_json::{Map, Value};

/// The longest content attribute (bytes); longer JSON is cut at a character boundary and marked `…`.
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;

/// A message in the GenAI conventions' shape (not a wire type of the relay: OpenTelemetry's).
#[derive(Serialize)]
struct GenAiMessage<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finish_reason: Option<&'static str>,
}

/// One part of a [`GenAiMessage`]; blocks without a text form (images, documents) are their `type` alone.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text {
        content: &'a str,
    },
    Reasoning {
        content: &'a str,
    },
    ToolCall {
        id: &'a str,
        name: &'a str,
        arguments: ArgumentsOf<'a>,
    },
    ToolCallResponse {
        id: &'a str,
        response: &'a str,
    },
    Image,
    Document,
}

/// A tool call's arguments: the parsed object of a stored call, or the streamed text read as JSON when it is.
#[derive(Serialize)]
#[serde(untagged)]
enum ArgumentsOf<'a> {
    Object(&'a Map<String, Value>),
    Parsed(Value),
}

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// One neutral block as a GenAI message part.
fn part(block: &Block) -> Part<'_> {
    match block {
        Block::Text { text, .. } => Part::Text { content: text },
        Block::Reasoning { text } => Part::Reasoning { content: text },
        Block::ToolCall {
            call_id,
            name,
            input,
        } => Part::ToolCall {
            id: call_id,
            name,
            arguments: ArgumentsOf::Object(input),
        },
        Block::ToolResult {
            call_id, content, ..
        } => Part::ToolCallResponse {
            id: call_id,
            response: content,
        },
        Block::Image { .. } => Part::Image,
        Block::Document { .. } => Part::Document,
    }
}

fn to_text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `gen_ai.input.messages` of a request.
pub fn input_messages(messages: &[Message]) -> String {
    let messages: Vec<GenAiMessage<'_>> = messages
        .iter()
        .map(|m| GenAiMessage {
            role: role(m.role),
            parts: m.blocks.iter().map(part).collect(),
            finish_reason: None,
        })
        .collect();
    bounded(to_text(&messages))
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
        let parts: Vec<Part<'_>> = self
            .blocks
            .iter()
            .map(|(kind, text)| match kind {
                BlockKind::Text => Part::Text { content: text },
                BlockKind::Reasoning => Part::Reasoning { content: text },
                BlockKind::ToolCall { call_id, name } => Part::ToolCall {
                    id: call_id,
                    name,
                    arguments: ArgumentsOf::Parsed(
                        serde_json::from_str::<Value>(text)
                            .unwrap_or_else(|_| Value::String(text.clone())),
                    ),
                },
            })
            .collect();
        bounded(to_text(&[GenAiMessage {
            role: "assistant",
            parts,
            finish_reason: Some(reason.as_str()),
        }]))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_and_results_keep_their_call_id_name_and_arguments() {
        let mut input = Map::new();
        input.insert("text".into(), Value::String("milk".into()));
        let messages = vec![
            Message {
                id: "a1".into(),
                role: Role::Assistant,
                blocks: vec![Block::ToolCall {
                    call_id: "call-7".into(),
                    name: "todos.add".into(),
                    input,
                }],
            },
            Message {
                id: "t1".into(),
                role: Role::Tool,
                blocks: vec![Block::ToolResult {
                    call_id: "call-7".into(),
                    content: "Added.".into(),
                    is_error: false,
                }],
            },
        ];
        let text = input_messages(&messages);
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value,
            serde_json::from_str::<Value>(
                r#"[{"role":"assistant","parts":[{"type":"tool_call","id":"call-7","name":"todos.add","arguments":{"text":"milk"}}]},
                    {"role":"tool","parts":[{"type":"tool_call_response","id":"call-7","response":"Added."}]}]"#
            )
            .unwrap()
        );
    }
}
