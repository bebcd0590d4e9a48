//! Neutral request → Chat Completions request body.

use patchbridge_protocol::{Block, DocumentSource, ImageSource, Message, ModelRequest, Role};
use serde_json::{json, Map, Value};

use super::{Entry, FORMAT};
use crate::error::misplaced;
use crate::state;
use crate::tool_names::ToolNames;
use crate::{AdapterError, ModelOptions, ProviderKind, UpstreamRequest};

/// Prefix that tells the model a tool failed: Chat Completions and Responses have no error flag on tool output.
const TOOL_ERROR_PREFIX: &str = "Error: ";

pub(crate) fn encode(
    options: &ModelOptions,
    request: &ModelRequest,
) -> Result<UpstreamRequest, AdapterError> {
    let entries = state::read::<Entry>(FORMAT, request)?;
    let names = ToolNames::new(request);
    // Reasoning goes back only inside the current tool loop (after the last user message): that is where
    // reasoning models need it (DeepSeek rejects a tool loop without it), while earlier turns' reasoning is
    // ignored by such servers and only costs tokens.
    let loop_start = request
        .messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .map_or(0, |i| i + 1);

    let mut messages = Vec::new();
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({ "role": "system", "content": system }));
    }
    for (position, message) in request.messages.iter().enumerate() {
        match message.role {
            // A message without content says nothing, and OpenAI rejects an empty content list.
            Role::User if message.blocks.is_empty() => {}
            Role::User => messages.push(
                json!({ "role": "user", "content": user_content(&message.blocks, &message.id)? }),
            ),
            Role::Tool => {
                for (call_id, content) in tool_outputs(message)? {
                    messages.push(
                        json!({ "role": "tool", "tool_call_id": call_id, "content": content }),
                    );
                }
            }
            Role::Assistant => {
                let mut text = String::new();
                let mut tool_calls = Vec::new();
                let entry = entries.get(&message.id);
                for block in &message.blocks {
                    match block {
                        Block::Text { text: t, .. } => text.push_str(t),
                        // Shown reasoning goes back through ModelState (below), never as content.
                        Block::Reasoning { .. } => {}
                        Block::ToolCall {
                            call_id,
                            name,
                            input,
                        } => {
                            let mut call = json!({
                                "id": call_id,
                                "type": "function",
                                "function": { "name": names.provider(name), "arguments": Value::Object(input.clone()).to_string() },
                            });
                            // What the provider attached to this call (Gemini's thought signature) goes back
                            // with it, verbatim, in every turn: it belongs to the call, not to the tool loop.
                            if let Some(kept) = entry.and_then(|e| e.calls.get(call_id)) {
                                call["extra_content"] = kept.extra_content.clone();
                            }
                            tool_calls.push(call);
                        }
                        other => return Err(misplaced(other, "assistant", &message.id)),
                    }
                }
                let mut m = Map::new();
                m.insert("role".into(), json!("assistant"));
                m.insert(
                    "content".into(),
                    if text.is_empty() && !tool_calls.is_empty() {
                        Value::Null
                    } else {
                        Value::String(text)
                    },
                );
                if !tool_calls.is_empty() {
                    m.insert("tool_calls".into(), Value::Array(tool_calls));
                }
                if position >= loop_start {
                    if let Some(entry) = entry {
                        // Structured details are the gateway's complete record (signatures included); the
                        // plain text goes back only when there are none, so nothing is sent twice.
                        if let Some(details) = &entry.details {
                            m.insert("reasoning_details".into(), details.clone());
                        } else if let (Some(field), Some(text)) = (entry.field, &entry.text) {
                            m.insert(field.as_str().into(), Value::String(text.clone()));
                        }
                    }
                }
                // An assistant message that showed only reasoning, continued without its state, says nothing
                // the provider accepts back.
                if m.len() == 2 && m["content"] == "" {
                    continue;
                }
                // The deltas' `extra_content` goes back on the message it came with.
                if let Some(extra_content) = entry.and_then(|e| e.extra_content.as_ref()) {
                    m.insert("extra_content".into(), extra_content.clone());
                }
                messages.push(Value::Object(m));
            }
        }
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(options.upstream_model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({ "type": "function", "function": {
                    "name": names.provider(&t.name), "description": t.description, "parameters": t.input_schema,
                } })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(max) = options.max_output_tokens {
        body.insert("max_completion_tokens".into(), json!(max));
    }
    if let Some(effort) = options.reasoning.as_ref().and_then(|r| r.effort) {
        body.insert("reasoning_effort".into(), json!(effort.as_str()));
    }
    Ok(UpstreamRequest {
        path: ProviderKind::OpenAiChat.path(),
        headers: Vec::new(),
        body: Value::Object(body),
    })
}

/// A lone text block is sent as a plain string (what every compatible server understands); anything else as
/// content parts.
fn user_content(blocks: &[Block], id: &str) -> Result<Value, AdapterError> {
    if let [Block::Text { text, .. }] = blocks {
        return Ok(Value::String(text.clone()));
    }
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            Block::Text { text, .. } => parts.push(json!({ "type": "text", "text": text })),
            Block::Image { source } => parts
                .push(json!({ "type": "image_url", "image_url": { "url": image_url(source) } })),
            Block::Document { name, source } => parts.push(match document(name, source, id)? {
                DocumentPart::File { data_url } => {
                    json!({ "type": "file", "file": { "file_data": data_url, "filename": name } })
                }
                DocumentPart::Text(text) => json!({ "type": "text", "text": text }),
            }),
            other => return Err(misplaced(other, "user", id)),
        }
    }
    Ok(Value::Array(parts))
}

/// The results of a tool message as `(call_id, output text)`, a failed tool's text marked with
/// [`TOOL_ERROR_PREFIX`]. Shared with the Responses encoder (`function_call_output`).
pub(crate) fn tool_outputs(message: &Message) -> Result<Vec<(&str, String)>, AdapterError> {
    message
        .blocks
        .iter()
        .map(|block| match block {
            Block::ToolResult {
                call_id,
                content,
                is_error: true,
            } => Ok((call_id.as_str(), format!("{TOOL_ERROR_PREFIX}{content}"))),
            Block::ToolResult {
                call_id, content, ..
            } => Ok((call_id.as_str(), content.clone())),
            other => Err(misplaced(other, "tool", &message.id)),
        })
        .collect()
}

/// How OpenAI (Chat and Responses) takes a document: a PDF as a file part with a `data:` URL, a text file as a
/// text part headed with its name.
pub(crate) enum DocumentPart {
    File { data_url: String },
    Text(String),
}

/// A document block checked (`patchbridge_protocol::document`) and turned into its [`DocumentPart`].
pub(crate) fn document(
    name: &str,
    source: &DocumentSource,
    id: &str,
) -> Result<DocumentPart, AdapterError> {
    crate::error::checked_document(name, source, id)?;
    Ok(match source {
        DocumentSource::Base64 { media_type, data } => DocumentPart::File {
            data_url: format!("data:{media_type};base64,{data}"),
        },
        DocumentSource::Text { media_type, text } => {
            DocumentPart::Text(headed_text(name, media_type, text))
        }
    })
}

/// A text file as one text part: a line naming the file (and its type), the text, and a line closing it, so the
/// model can tell the file from the person's words around it.
pub(crate) fn headed_text(name: &str, media_type: &str, text: &str) -> String {
    format!("--- file {name} ({media_type}) ---\n{text}\n--- end of file {name} ---")
}

/// OpenAI takes images as URLs; inline images become `data:` URLs.
pub(crate) fn image_url(source: &ImageSource) -> String {
    match source {
        ImageSource::Url { url } => url.clone(),
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
    }
}
