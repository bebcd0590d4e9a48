//! Chat Completions chunks → neutral events.
//!
//! Text, refusal text and gateway reasoning stream live. Tool calls arrive as fragments keyed by `index`
//! (several calls may interleave); they are assembled and emitted whole, in index order, once the provider
//! says why it finished, so a call cut off by the token limit can be dropped. `url_citation` annotations of the
//! message (search models) become sources of the text block (`docs/protocol.md` §1).

use std::collections::BTreeMap;

use patchbridge_protocol::{ModelRequest, StopReason, StreamEvent, Usage};
use serde_json::Value;

use super::details::Details;
use super::text_chunk;
use super::{extra, CallEntry, Entry, ReasoningField, FORMAT};
use crate::emit::{canonical_arguments, source_from, Emitter, LiveKind};
use crate::state::Continuation;
use crate::tool_names::ToolNames;
use crate::wire::{self, protocol, str_field};
use crate::{AdapterError, UpstreamFailure};

#[derive(Default)]
struct ToolAcc {
    id: String,
    name: String,
    arguments: String,
    /// The call's `extra_content` (Gemini's thought signature), kept for the next request.
    extra_content: Option<Value>,
}

pub(crate) struct ChatDecoder {
    continuation: Continuation<Entry>,
    names: ToolNames,
    /// Read by the dispatch in `lib.rs`: a stopped emitter means the stream is complete.
    pub(crate) emit: Emitter,
    reasoning: Option<(ReasoningField, String)>,
    details: Details,
    /// The deltas' `extra_content`, merged (`extra`).
    extra_content: Option<Value>,
    refusal: bool,
    /// Calls in arrival order; `slots` maps the provider's `index` to the latest call at that index.
    tools: Vec<ToolAcc>,
    slots: BTreeMap<u64, usize>,
    finish_reason: Option<String>,
    /// The counts of the last chunk's `usage` object: nothing else of it is kept.
    usage: Option<Usage>,
    /// Whether text-delta chunks take the fast path of `text_chunk` (always, except in tests and the benchmark
    /// comparing both paths).
    pub(crate) fast_path: bool,
}

impl ChatDecoder {
    pub(crate) fn new(request: &ModelRequest) -> Result<Self, AdapterError> {
        Ok(ChatDecoder {
            continuation: Continuation::new(FORMAT, request)?,
            names: ToolNames::new(request),
            emit: Emitter::default(),
            reasoning: None,
            details: Details::default(),
            extra_content: None,
            refusal: false,
            tools: Vec::new(),
            slots: BTreeMap::new(),
            finish_reason: None,
            usage: None,
            fast_path: true,
        })
    }

    pub(crate) fn feed(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        if data.trim() == "[DONE]" {
            return self.complete(out);
        }
        if self.fast_path {
            if let Some(chunk) = text_chunk::parse(data) {
                return self.text_delta(chunk, out);
            }
        }
        let chunk = wire::parse("Chat Completions", event, data)?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(wire::provider_error(error));
        }
        let id = chunk
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.trim().is_empty());
        let has_choices = chunk
            .get("choices")
            .and_then(Value::as_array)
            .is_some_and(|c| !c.is_empty());
        if !self.emit.started() {
            // Azure OpenAI opens with a chunk holding only `prompt_filter_results` (empty id, no choices): it
            // starts nothing, so the message is named by the completion id of the chunks that follow.
            if id.is_none() && !has_choices {
                return Ok(());
            }
            let id = self.continuation.message_id(id);
            self.emit.start(id, out)?;
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(neutral_usage(usage));
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Ok(());
        };
        // The relay always asks for one choice; extra choices (n > 1) are not part of this conversation.
        let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            self.delta(delta, out)?;
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(())
    }

    /// A text-delta or finishing chunk (see `text_chunk`): what `feed` does with such a chunk, without the `Value`
    /// tree.
    fn text_delta(
        &mut self,
        chunk: text_chunk::TextChunk<'_>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        if !self.emit.started() {
            let id = chunk.id.as_deref().filter(|id| !id.trim().is_empty());
            let id = self.continuation.message_id(id);
            self.emit.start(id, out)?;
        }
        if let Some(text) = chunk.content.as_deref() {
            self.emit.live_delta(LiveKind::Text, text, out)?;
        }
        if let Some(reason) = chunk.finish_reason {
            self.finish_reason = Some(reason.into_owned());
        }
        Ok(())
    }

    fn delta(&mut self, delta: &Value, out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        for field in [ReasoningField::ReasoningContent, ReasoningField::Reasoning] {
            if let Some(text) = delta.get(field.as_str()).and_then(Value::as_str) {
                if !text.is_empty() {
                    self.emit.live_delta(LiveKind::Reasoning, text, out)?;
                    self.reasoning
                        .get_or_insert_with(|| (field, String::new()))
                        .1
                        .push_str(text);
                }
            }
        }
        if let Some(fragments) = delta.get("reasoning_details").and_then(Value::as_array) {
            self.details.merge(fragments);
        }
        if let Some(piece) = delta.get("extra_content") {
            extra::merge(&mut self.extra_content, piece);
        }
        match delta.get("content") {
            Some(Value::String(text)) => {
                self.emit.live_delta(LiveKind::Text, text, out)?;
            }
            // Some compatible servers (Mistral among them) stream content as a list of typed parts.
            Some(Value::Array(parts)) => {
                for part in parts {
                    match str_field(part, "type") {
                        "text" => {
                            self.emit
                                .live_delta(LiveKind::Text, str_field(part, "text"), out)?;
                        }
                        "thinking" => {
                            for piece in part
                                .get("thinking")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                            {
                                self.emit.live_delta(
                                    LiveKind::Reasoning,
                                    str_field(piece, "text"),
                                    out,
                                )?;
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        if let Some(text) = delta.get("refusal").and_then(Value::as_str) {
            if !text.is_empty() {
                self.refusal = true;
                self.emit.live_delta(LiveKind::Text, text, out)?;
            }
        }
        // Never on the fast path (`text_chunk` reads only deltas without other fields). Read after the content so
        // that annotations sent with the text belong to its block.
        if let Some(annotations) = delta.get("annotations").and_then(Value::as_array) {
            self.emit
                .sources(annotations.iter().filter_map(|annotation| {
                    let citation = annotation.get("url_citation")?;
                    source_from(citation, &["url"], &["title"])
                }));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, call) in calls.iter().enumerate() {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(position as u64);
                let id = str_field(call, "id");
                // A new id at a known index is a new call: some servers send every call complete at index 0.
                let slot = match self.slots.get(&index) {
                    Some(&slot)
                        if id.is_empty()
                            || self.tools[slot].id.is_empty()
                            || self.tools[slot].id == id =>
                    {
                        slot
                    }
                    _ => {
                        self.tools.push(ToolAcc::default());
                        self.slots.insert(index, self.tools.len() - 1);
                        self.tools.len() - 1
                    }
                };
                let acc = &mut self.tools[slot];
                if acc.id.is_empty() {
                    acc.id = id.to_owned();
                }
                if let Some(piece) = call.get("extra_content") {
                    extra::merge(&mut acc.extra_content, piece);
                }
                if let Some(function) = call.get("function") {
                    if let Some(name) = function.get("name").and_then(Value::as_str) {
                        if acc.name.is_empty() {
                            acc.name = name.to_owned();
                        }
                    }
                    if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
                        acc.arguments.push_str(arguments);
                    }
                }
            }
        }
        Ok(())
    }

    fn complete(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        let Some(reason) = self.finish_reason.clone() else {
            return Err(protocol(
                "the Chat Completions stream ended without a finish_reason",
            ));
        };
        let id = self
            .emit
            .message_id()
            .map(str::to_owned)
            .ok_or_else(|| protocol("the stream ended before any chunk"))?;
        if reason == "error" {
            // OpenRouter-style: the provider behind the gateway failed mid-generation.
            return Err(AdapterError::Upstream {
                failure: UpstreamFailure::Unavailable,
                detail: "finish_reason \"error\"".into(),
            });
        }
        let truncated = reason == "length";
        let mut any_call = false;
        let mut calls = BTreeMap::new();
        for (n, acc) in std::mem::take(&mut self.tools).into_iter().enumerate() {
            if truncated && canonical_arguments(&acc.arguments).is_none() {
                // Cut off by the token limit: the call cannot run; what was shown before it stays.
                continue;
            }
            // Some compatible servers omit call ids; the runtime needs one to pair the result.
            let call_id = if acc.id.is_empty() {
                format!("{id}-call-{n}")
            } else {
                acc.id
            };
            let name = self.names.neutral(&acc.name).to_owned();
            self.emit.tool_call(&call_id, &name, &acc.arguments, out)?;
            if let Some(extra_content) = acc.extra_content {
                calls.insert(call_id, CallEntry { extra_content });
            }
            any_call = true;
        }
        let stop_reason = match reason.as_str() {
            "tool_calls" | "function_call" => StopReason::ToolUse,
            // Several compatible servers (older Ollama among them) finish tool-calling turns with "stop".
            _ if any_call && !truncated => StopReason::ToolUse,
            "stop" if self.refusal => StopReason::Refusal,
            "stop" => StopReason::EndTurn,
            "length" => StopReason::MaxTokens,
            "content_filter" => StopReason::Refusal,
            _ => StopReason::Other,
        };
        let (field, text) = self.reasoning.take().unzip();
        let details = std::mem::take(&mut self.details);
        let details = (!details.is_empty()).then(|| details.into_value());
        let extra_content = self.extra_content.take();
        let entry =
            (text.is_some() || details.is_some() || extra_content.is_some() || !calls.is_empty())
                .then_some(Entry {
                    field,
                    text,
                    details,
                    extra_content,
                    calls,
                });
        let usage = self.usage.unwrap_or_default();
        self.emit
            .stop(stop_reason, usage, &mut self.continuation, entry, out)
    }

    /// End of a body without `[DONE]`: a stream that already said why it finished is accepted without it (some
    /// compatible servers omit it), anything else is cut off.
    pub(crate) fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        self.complete(out)
    }
}

fn neutral_usage(usage: &Value) -> Usage {
    let get = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: get("/prompt_tokens"),
        output_tokens: get("/completion_tokens"),
        reasoning_tokens: get("/completion_tokens_details/reasoning_tokens"),
        cache_read_tokens: get("/prompt_tokens_details/cached_tokens"),
        cache_write_tokens: 0,
    }
}
