//! Neutral request → Anthropic Messages request body.

use patchbridge_protocol::{Block, DocumentSource, ImageSource, ModelRequest, Role};
use serde_json::{json, Map, Value};

use super::{cache, Entry, API_VERSION, FORMAT};
use crate::error::misplaced;
use crate::state::{self, Planned};
use crate::tool_names::ToolNames;
use crate::{
    AdapterError, ModelOptions, ProviderKind, UpstreamRequest, DEFAULT_ANTHROPIC_MAX_TOKENS,
};

pub(crate) fn validate_options(options: &ModelOptions) -> Result<(), AdapterError> {
    let max_tokens = options
        .max_output_tokens
        .unwrap_or(DEFAULT_ANTHROPIC_MAX_TOKENS);
    if let Some(budget) = options.reasoning.as_ref().and_then(|r| r.budget_tokens) {
        if budget < 1024 {
            return Err(AdapterError::InvalidRequest(
                "reasoning.budget_tokens must be at least 1024 for Anthropic".into(),
            ));
        }
        if budget >= max_tokens {
            return Err(AdapterError::InvalidRequest(format!(
                "reasoning.budget_tokens ({budget}) must be below max_output_tokens ({max_tokens}) for Anthropic"
            )));
        }
    }
    Ok(())
}

pub(crate) fn encode(
    options: &ModelOptions,
    request: &ModelRequest,
) -> Result<UpstreamRequest, AdapterError> {
    validate_options(options)?;
    let entries = state::read::<Entry>(FORMAT, request)?;
    let names = ToolNames::new(request);

    // Provider messages as (role, content blocks); adjacent same-role messages are merged because Anthropic
    // wants one user turn holding all tool results of a call batch (and any text that follows them).
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, content) = match message.role {
            Role::User => ("user", user_content(&message.blocks, &message.id)?),
            Role::Tool => ("user", tool_results(&message.blocks, &message.id)?),
            Role::Assistant => {
                let entry = entries.get(&message.id).map(|e| &e.content);
                let mut content = Vec::new();
                for item in state::plan(message, entry)? {
                    match item {
                        Planned::Raw(raw) => content.push(raw.clone()),
                        Planned::Blocks { phase: Some(_), .. } => {
                            return Err(state::mismatch(
                                message,
                                "it holds a message phase, which Anthropic content never has",
                            ))
                        }
                        Planned::Blocks { blocks, .. } => {
                            for block in blocks {
                                if let Some(v) = assistant_block(block, &names, &message.id)? {
                                    content.push(v)
                                }
                            }
                        }
                    }
                }
                ("assistant", content)
            }
        };
        if content.is_empty() {
            // An assistant message with only reasoning that has no signature (nothing Anthropic accepts back)
            // or an empty user message: Anthropic rejects empty content, and the message says nothing to it.
            continue;
        }
        match messages.last_mut() {
            Some((last_role, last)) if *last_role == role => last.extend(content),
            _ => messages.push((role, content)),
        }
    }

    let max_tokens = options
        .max_output_tokens
        .unwrap_or(DEFAULT_ANTHROPIC_MAX_TOKENS);
    let mut body = Map::new();
    body.insert("model".into(), json!(options.upstream_model));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), json!(system));
    }
    body.insert(
        "messages".into(),
        Value::Array(
            messages
                .into_iter()
                .map(|(role, content)| json!({ "role": role, "content": content }))
                .collect(),
        ),
    );
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({ "name": names.provider(&t.name), "description": t.description, "input_schema": t.input_schema })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let budget = options.reasoning.as_ref().and_then(|r| r.budget_tokens);
    if let Some(budget) = budget.filter(|_| !tool_loop_without_thinking(&body)) {
        body.insert(
            "thinking".into(),
            json!({ "type": "enabled", "budget_tokens": budget }),
        );
    }
    if options.prompt_caching {
        cache::mark_breakpoints(&mut body);
    }
    Ok(UpstreamRequest {
        path: ProviderKind::AnthropicMessages.path(),
        headers: vec![("anthropic-version", API_VERSION.to_owned())],
        body: Value::Object(body),
    })
}

/// Whether the request continues a tool loop whose assistant message has no thinking block to send back (a
/// conversation continued with `modelState: null`, or a message whose thinking was cut before its signature).
/// With thinking enabled Anthropic requires the assistant message of a running tool loop to start with its
/// signed thinking, so such a request is sent without thinking: the loop finishes in the mode it can continue
/// in, and the next user turn thinks again.
fn tool_loop_without_thinking(body: &Map<String, Value>) -> bool {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return false;
    };
    let [.., assistant, last] = messages.as_slice() else {
        return false;
    };
    let blocks = |m: &Value| m["content"].as_array().cloned().unwrap_or_default();
    let kind = |b: &Value| b["type"].as_str().unwrap_or("").to_owned();
    let assistant_blocks = blocks(assistant);
    assistant["role"] == "assistant"
        && last["role"] == "user"
        && blocks(last).iter().any(|b| kind(b) == "tool_result")
        && assistant_blocks.iter().any(|b| kind(b) == "tool_use")
        && !assistant_blocks
            .first()
            .is_some_and(|b| matches!(kind(b).as_str(), "thinking" | "redacted_thinking"))
}

fn user_content(blocks: &[Block], id: &str) -> Result<Vec<Value>, AdapterError> {
    let mut content = Vec::new();
    for block in blocks {
        match block {
            Block::Text { text, .. } if text.is_empty() => {}
            Block::Text { text, .. } => content.push(json!({ "type": "text", "text": text })),
            Block::Image { source } => {
                content.push(json!({ "type": "image", "source": image_source(source) }))
            }
            Block::Document { name, source } => content.push(document(name, source, id)?),
            other => return Err(misplaced(other, "user", id)),
        }
    }
    Ok(content)
}

fn image_source(source: &ImageSource) -> Value {
    match source {
        ImageSource::Url { url } => json!({ "type": "url", "url": url }),
        ImageSource::Base64 { media_type, data } => {
            json!({ "type": "base64", "media_type": media_type, "data": data })
        }
    }
}

/// A document block: a PDF as a `base64` source, a text file as a `text` source (Anthropic takes `text/plain`
/// only, so Markdown, CSV and JSON go as plain text), titled with the file name.
fn document(name: &str, source: &DocumentSource, id: &str) -> Result<Value, AdapterError> {
    crate::error::checked_document(name, source, id)?;
    let source = match source {
        DocumentSource::Base64 { media_type, data } => {
            json!({ "type": "base64", "media_type": media_type, "data": data })
        }
        DocumentSource::Text { text, .. } => {
            json!({ "type": "text", "media_type": "text/plain", "data": text })
        }
    };
    Ok(json!({ "type": "document", "source": source, "title": name }))
}

fn tool_results(blocks: &[Block], id: &str) -> Result<Vec<Value>, AdapterError> {
    blocks
        .iter()
        .map(|block| match block {
            Block::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let mut v =
                    json!({ "type": "tool_result", "tool_use_id": call_id, "content": content });
                if *is_error {
                    v["is_error"] = json!(true);
                }
                Ok(v)
            }
            other => Err(misplaced(other, "tool", id)),
        })
        .collect()
}

fn assistant_block(
    block: &Block,
    names: &ToolNames,
    id: &str,
) -> Result<Option<Value>, AdapterError> {
    Ok(match block {
        Block::Text { text, .. } if text.is_empty() => None,
        Block::Text { text, .. } => Some(json!({ "type": "text", "text": text })),
        // Shown reasoning without its signed thinking block cannot go back: Anthropic only accepts thinking it
        // signed. Its private state, when there was any, is sent through the ModelState path instead.
        Block::Reasoning { .. } => None,
        Block::ToolCall {
            call_id,
            name,
            input,
        } => Some(
            json!({ "type": "tool_use", "id": call_id, "name": names.provider(name), "input": input }),
        ),
        other => return Err(misplaced(other, "assistant", id)),
    })
}
