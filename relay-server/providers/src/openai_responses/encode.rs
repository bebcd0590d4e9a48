//! Neutral request → Responses request body.

use patchbridge_protocol::{Block, Message, ModelRequest, Role};
use serde_json::{json, Map, Value};

use super::{Entry, FORMAT};
use crate::cache_key::prompt_cache_key;
use crate::error::misplaced;
use crate::openai_chat::{document, image_url, tool_outputs, DocumentPart};
use crate::state::{self, MessagePhase, Planned};
use crate::tool_names::ToolNames;
use crate::{AdapterError, ModelOptions, ProviderKind, ReasoningSummary, UpstreamRequest};

pub(crate) fn encode(
    options: &ModelOptions,
    request: &ModelRequest,
) -> Result<UpstreamRequest, AdapterError> {
    let entries = state::read::<Entry>(FORMAT, request)?;
    let names = ToolNames::new(request);
    let mut input = Vec::new();
    for message in &request.messages {
        match message.role {
            Role::User => {
                let mut content = Vec::new();
                for block in &message.blocks {
                    match block {
                        Block::Text { text, .. } => content.push(json!({ "type": "input_text", "text": text })),
                        Block::Image { source } => content
                            .push(json!({ "type": "input_image", "image_url": image_url(source), "detail": "auto" })),
                        Block::Document { name, source } => content.push(match document(name, source, &message.id)? {
                            DocumentPart::File { data_url } => {
                                json!({ "type": "input_file", "file_data": data_url, "filename": name })
                            }
                            DocumentPart::Text(text) => json!({ "type": "input_text", "text": text }),
                        }),
                        other => return Err(misplaced(other, "user", &message.id)),
                    }
                }
                // A user message without content says nothing, and OpenAI rejects an empty content list.
                if !content.is_empty() {
                    input.push(json!({ "type": "message", "role": "user", "content": content }));
                }
            }
            Role::Tool => {
                for (call_id, output) in tool_outputs(message)? {
                    input.push(json!({ "type": "function_call_output", "call_id": call_id, "output": output }));
                }
            }
            Role::Assistant => {
                let entry = entries.get(&message.id).map(|e| &e.items);
                for item in state::plan(message, entry)? {
                    match item {
                        Planned::Raw(raw) => {
                            check_raw_item(raw, &message.id)?;
                            input.push(raw.clone());
                        }
                        Planned::Blocks { blocks, phase } => {
                            if let Some(item) = assistant_item(message, &blocks, phase, &names)? {
                                input.push(item);
                            }
                        }
                    }
                }
            }
        }
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(options.upstream_model));
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert("instructions".into(), json!(system));
    }
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), json!(true));
    // Stateless: nothing is kept at OpenAI; encrypted reasoning travels in ModelState instead.
    body.insert("store".into(), json!(false));
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                // strict mode would reject ordinary page schemas (it needs every property required and
                // additionalProperties false), so it stays off.
                json!({ "type": "function", "name": names.provider(&t.name), "description": t.description,
                        "parameters": t.input_schema, "strict": false })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    // OpenAI caches prompt prefixes automatically; the key keeps one conversation's calls on the same cache.
    if let Some(conversation) = request
        .conversation_id
        .as_deref()
        .filter(|_| options.prompt_caching)
    {
        body.insert(
            "prompt_cache_key".into(),
            json!(prompt_cache_key(conversation)),
        );
    }
    if let Some(max) = options.max_output_tokens {
        body.insert("max_output_tokens".into(), json!(max));
    }
    if let Some(reasoning) = &options.reasoning {
        let mut r = Map::new();
        if let Some(effort) = reasoning.effort {
            r.insert("effort".into(), json!(effort.as_str()));
        }
        r.insert(
            "summary".into(),
            json!(reasoning.summary.unwrap_or(ReasoningSummary::Auto).as_str()),
        );
        body.insert("reasoning".into(), Value::Object(r));
    }
    Ok(UpstreamRequest {
        path: ProviderKind::OpenAiResponses.path(),
        headers: Vec::new(),
        body: Value::Object(body),
    })
}

/// The input item for neutral blocks that formed one output item: the text parts of one output message (with
/// its `phase`), or one function call. Its content is a plain string: the input form of an assistant message
/// (`EasyInputMessage`); `output_text` parts are only valid in the output form, which also needs the item id and
/// status. Shown reasoning without its reasoning item cannot go back (the item, when there was one, is sent
/// verbatim as a raw part), and an empty message says nothing: both send nothing.
fn assistant_item(
    message: &Message,
    blocks: &[&Block],
    phase: Option<MessagePhase>,
    names: &ToolNames,
) -> Result<Option<Value>, AdapterError> {
    match blocks {
        [Block::ToolCall {
            call_id,
            name,
            input,
        }] if phase.is_none() => Ok(Some(json!({
            "type": "function_call",
            "call_id": call_id,
            "name": names.provider(name),
            "arguments": Value::Object(input.clone()).to_string(),
        }))),
        [Block::Reasoning { .. }] if phase.is_none() => Ok(None),
        _ => {
            let mut text = String::new();
            for block in blocks {
                match block {
                    Block::Text { text: t, .. } => text.push_str(t),
                    Block::Reasoning { .. } | Block::ToolCall { .. } => {
                        return Err(state::mismatch(
                            message,
                            "one of its output messages no longer holds only text",
                        ))
                    }
                    other => return Err(misplaced(other, "assistant", &message.id)),
                }
            }
            if text.is_empty() {
                return Ok(None);
            }
            let mut item = json!({ "type": "message", "role": "assistant", "content": text });
            if let Some(phase) = phase {
                item["phase"] = json!(phase);
            }
            Ok(Some(item))
        }
    }
}

/// Raw items come back from the browser's ModelState, so they are untrusted. The decoder keeps only provider
/// *output* items raw (reasoning, built-in tool calls); an input-only type there would let a client add a
/// `developer` / `system` message above the operator's system prompt, forge a tool output, or reference
/// items stored by others.
fn check_raw_item(raw: &Value, message_id: &str) -> Result<(), AdapterError> {
    let kind = raw.get("type").and_then(Value::as_str).unwrap_or("");
    if kind.is_empty() || matches!(kind, "message" | "item_reference" | "function_call_output") {
        return Err(AdapterError::InvalidRequest(format!(
            "modelState of message `{message_id}` holds a raw item of type `{kind}`, which is never a \
             provider output item"
        )));
    }
    Ok(())
}
