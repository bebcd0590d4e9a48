//! Anthropic Messages SSE → neutral events.
//!
//! Each Anthropic content block becomes at most one neutral block with the next neutral index (Anthropic's
//! own `index` is only used to check the stream's consistency). Thinking streams as a shown `reasoning` block
//! and is also kept verbatim with its signature in ModelState; `redacted_thinking` and server tool blocks
//! (`server_tool_use`, `web_search_tool_result`, …) are kept verbatim in ModelState only.
//!
//! Sources (`docs/protocol.md` §1): a text block's `citations_delta`s become its sources, and the results of a
//! `web_search_tool_result` block the sources of the next text block. Only title, URL and cited text are read;
//! the citation objects themselves (with `encrypted_index`) are not kept, and the text goes back without them.

use patchbridge_protocol::{ModelRequest, StopReason, StreamEvent, Usage};
use serde_json::Value;

use super::block_delta::{self, piece_field};
use super::{Entry, FORMAT};
use crate::emit::{source_from, Emitter, LiveKind};
use crate::state::{Continuation, PartsBuilder};
use crate::tool_names::ToolNames;
use crate::wire::{self, protocol, str_field};
use crate::AdapterError;

enum Current {
    Text {
        neutral: Option<u32>,
    },
    Thinking {
        start: Value,
        text: String,
        signature: String,
        neutral: Option<u32>,
    },
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// A block the neutral protocol has no type for: kept verbatim (with its streamed input, if any).
    Raw {
        start: Value,
        json: String,
    },
}

pub(crate) struct AnthropicDecoder {
    continuation: Continuation<Entry>,
    names: ToolNames,
    /// Read by the dispatch in `lib.rs`: a stopped emitter means the stream is complete.
    pub(crate) emit: Emitter,
    current: Option<(u64, Current)>,
    parts: PartsBuilder,
    stop_reason: Option<String>,
    usage: RawUsage,
    /// Whether block deltas take `block_delta`'s fast path (always, except in tests and the benchmark comparing
    /// both paths).
    pub(crate) fast_path: bool,
}

#[derive(Default)]
struct RawUsage {
    input: Option<u64>,
    output: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    thinking: Option<u64>,
}

impl RawUsage {
    /// Anthropic reports usage in `message_start` and (cumulatively) in `message_delta`: latest value wins.
    fn merge(&mut self, usage: &Value) {
        let get = |key: &str| usage.get(key).and_then(Value::as_u64);
        self.input = get("input_tokens").or(self.input);
        self.output = get("output_tokens").or(self.output);
        self.cache_read = get("cache_read_input_tokens").or(self.cache_read);
        self.cache_write = get("cache_creation_input_tokens").or(self.cache_write);
        self.thinking = usage
            .pointer("/output_tokens_details/thinking_tokens")
            .and_then(Value::as_u64)
            .or(self.thinking);
    }

    /// Neutral `inputTokens` counts every input token (Anthropic's `input_tokens` excludes cache reads and
    /// writes), matching OpenAI's `prompt_tokens`.
    fn neutral(&self) -> Usage {
        let cache_read = self.cache_read.unwrap_or(0);
        let cache_write = self.cache_write.unwrap_or(0);
        Usage {
            input_tokens: self
                .input
                .unwrap_or(0)
                .saturating_add(cache_read)
                .saturating_add(cache_write),
            output_tokens: self.output.unwrap_or(0),
            reasoning_tokens: self.thinking.unwrap_or(0),
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
        }
    }
}

impl AnthropicDecoder {
    pub(crate) fn new(request: &ModelRequest) -> Result<Self, AdapterError> {
        Ok(AnthropicDecoder {
            continuation: Continuation::new(FORMAT, request)?,
            names: ToolNames::new(request),
            emit: Emitter::default(),
            current: None,
            parts: PartsBuilder::default(),
            stop_reason: None,
            usage: RawUsage::default(),
            fast_path: true,
        })
    }

    pub(crate) fn feed(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        if self.fast_path {
            if let Some(delta) = block_delta::parse(data) {
                let index = self.check_open(delta.index)?;
                return self.apply_delta(index, delta.delta_type, &delta.piece, out);
            }
        }
        let value = wire::parse("Anthropic", event, data)?;
        let kind = wire::event_type(&value, event);
        match kind {
            "ping" => Ok(()),
            "error" => Err(wire::provider_error(&value)),
            "message_start" => {
                let message = value
                    .get("message")
                    .ok_or_else(|| protocol("message_start without message"))?;
                if let Some(usage) = message.get("usage") {
                    self.usage.merge(usage);
                }
                let id = self
                    .continuation
                    .message_id(message.get("id").and_then(Value::as_str));
                self.emit.start(id, out)
            }
            "content_block_start" => self.block_start(&value, out),
            "content_block_delta" => self.block_delta(&value, out),
            "content_block_stop" => {
                let index = self.check_index(&value)?;
                let (_, current) = self
                    .current
                    .take()
                    .ok_or_else(|| protocol(format!("stop of block {index} that is not open")))?;
                self.end_block(index, current, out)
            }
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = value.get("usage") {
                    self.usage.merge(usage);
                }
                Ok(())
            }
            "message_stop" => self.message_stop(out),
            // Unknown events are ignored for forward compatibility, as Anthropic's versioning policy asks.
            _ => Ok(()),
        }
    }

    fn check_index(&self, value: &Value) -> Result<u64, AdapterError> {
        let index = value
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| protocol("content block event without index"))?;
        self.check_open(index)
    }

    /// An event for block `index` is refused while another block is open.
    fn check_open(&self, index: u64) -> Result<u64, AdapterError> {
        match &self.current {
            Some((open, _)) if *open != index => Err(protocol(format!(
                "event for block {index} while block {open} is open"
            ))),
            _ => Ok(index),
        }
    }

    fn block_start(
        &mut self,
        value: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        if !self.emit.started() {
            return Err(protocol("content_block_start before message_start"));
        }
        let index = value
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| protocol("content_block_start without index"))?;
        if let Some((open, _)) = &self.current {
            return Err(protocol(format!(
                "block {index} started while block {open} is open"
            )));
        }
        let block = value
            .get("content_block")
            .ok_or_else(|| protocol("content_block_start without content_block"))?;
        let current = match str_field(block, "type") {
            "text" => {
                // Citations come as `citations_delta`s; a gateway that sends the block whole lists them here.
                self.emit.sources(
                    block
                        .get("citations")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(citation_source),
                );
                let neutral =
                    self.emit
                        .live_delta(LiveKind::Text, str_field(block, "text"), out)?;
                Current::Text { neutral }
            }
            "thinking" => {
                let text = str_field(block, "thinking").to_owned();
                let neutral = self.emit.live_delta(LiveKind::Reasoning, &text, out)?;
                Current::Thinking {
                    start: block.clone(),
                    signature: str_field(block, "signature").to_owned(),
                    text,
                    neutral,
                }
            }
            "tool_use" => {
                let id = str_field(block, "id").to_owned();
                let name = str_field(block, "name").to_owned();
                // Some gateways put the whole input in the start event instead of streaming it.
                let json = match block.get("input") {
                    Some(Value::Object(map)) if !map.is_empty() => {
                        Value::Object(map.clone()).to_string()
                    }
                    _ => String::new(),
                };
                Current::ToolUse { id, name, json }
            }
            kind => {
                if kind == "web_search_tool_result" {
                    // Its results (an error object instead of a list when the search failed) are shown as sources
                    // of the text that follows.
                    self.emit.sources(
                        block
                            .get("content")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter(|result| str_field(result, "type") == "web_search_result")
                            .filter_map(|result| source_from(result, &["url"], &["title"])),
                    );
                }
                Current::Raw {
                    start: block.clone(),
                    json: String::new(),
                }
            }
        };
        self.current = Some((index, current));
        Ok(())
    }

    fn block_delta(
        &mut self,
        value: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        let index = self.check_index(value)?;
        let delta = value
            .get("delta")
            .ok_or_else(|| protocol("content_block_delta without delta"))?;
        let delta_type = str_field(delta, "type");
        // Never on the fast path (`block_delta` reads only deltas with a piece of text).
        if delta_type == "citations_delta" {
            if !matches!(self.current, Some((_, Current::Text { .. }))) {
                return Err(protocol(format!(
                    "citations_delta for block {index}, which is not a text block"
                )));
            }
            let citation = delta.get("citation").unwrap_or(&Value::Null);
            self.emit.sources(citation_source(citation));
            return Ok(());
        }
        let piece = piece_field(delta_type).map_or("", |field| str_field(delta, field));
        self.apply_delta(index, delta_type, piece, out)
    }

    /// A `content_block_delta` for block `index` (checked against the open block), however it was read: `piece`
    /// is the field its `delta_type` names (`block_delta::piece_field`), `""` when absent.
    fn apply_delta(
        &mut self,
        index: u64,
        delta_type: &str,
        piece: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        let Some((_, current)) = self.current.as_mut() else {
            return Err(protocol(format!(
                "delta for block {index} that is not open"
            )));
        };
        match (current, delta_type) {
            (Current::Text { neutral }, "text_delta") => {
                if let Some(i) = self.emit.live_delta(LiveKind::Text, piece, out)? {
                    *neutral = Some(i);
                }
            }
            (Current::Thinking { text, neutral, .. }, "thinking_delta") => {
                text.push_str(piece);
                if let Some(i) = self.emit.live_delta(LiveKind::Reasoning, piece, out)? {
                    *neutral = Some(i);
                }
            }
            (Current::Thinking { signature, .. }, "signature_delta") => signature.push_str(piece),
            (Current::ToolUse { json, .. } | Current::Raw { json, .. }, "input_json_delta") => {
                json.push_str(piece)
            }
            (_, other) => {
                return Err(protocol(format!(
                    "unexpected {other:?} delta for block {index}"
                )))
            }
        }
        Ok(())
    }

    fn end_block(
        &mut self,
        index: u64,
        current: Current,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        match current {
            Current::Text { neutral } => {
                self.emit.close(out);
                self.parts
                    .blocks(index, neutral.into_iter().collect(), None);
            }
            Current::Thinking {
                mut start,
                text,
                signature,
                neutral,
            } => {
                self.emit.close(out);
                start["thinking"] = Value::String(text);
                start["signature"] = Value::String(signature);
                self.parts.raw(index, start, neutral.into_iter().collect());
            }
            Current::ToolUse { id, name, json } => {
                let name = self.names.neutral(&name).to_owned();
                let i = self.emit.tool_call(&id, &name, &json, out)?;
                self.parts.blocks(index, vec![i], None);
            }
            Current::Raw { mut start, json } => {
                self.emit.close(out);
                if !json.trim().is_empty() {
                    let input: Value = serde_json::from_str(&json).map_err(|e| {
                        protocol(format!(
                            "input of a {} block is not JSON: {e}",
                            str_field(&start, "type")
                        ))
                    })?;
                    start["input"] = input;
                }
                self.parts.raw(index, start, Vec::new());
            }
        }
        Ok(())
    }

    fn message_stop(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        let reason = self.stop_reason.clone();
        let truncated = reason.as_deref() == Some("max_tokens");
        if let Some((index, current)) = self.current.take() {
            // Only the token limit may cut a block off. What was shown stays; a tool call whose input was cut
            // is dropped (it cannot run and its JSON is incomplete); a thinking block without its signature
            // cannot be sent back, so it keeps only its shown text.
            if !truncated {
                return Err(protocol(format!(
                    "message ended while block {index} was open"
                )));
            }
            match current {
                Current::ToolUse { .. } => {}
                Current::Thinking {
                    signature, neutral, ..
                } if signature.is_empty() => {
                    self.emit.close(out);
                    self.parts
                        .blocks(index, neutral.into_iter().collect(), None);
                }
                Current::Raw { json, .. } if !json.is_empty() => self.emit.close(out),
                other => self.end_block(index, other, out)?,
            }
        }
        let stop_reason = match reason.as_deref() {
            Some("end_turn") => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") | Some("model_context_window_exceeded") => StopReason::MaxTokens,
            Some("stop_sequence") => StopReason::StopSequence,
            Some("pause_turn") => StopReason::PauseTurn,
            Some("refusal") => StopReason::Refusal,
            _ => StopReason::Other,
        };
        let entry = std::mem::take(&mut self.parts)
            .finish()
            .map(|content| Entry { content });
        let usage = self.usage.neutral();
        self.emit
            .stop(stop_reason, usage, &mut self.continuation, entry, out)
    }

    /// End of a body that never reached `message_stop`.
    pub(crate) fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        Err(protocol("the Anthropic stream ended before message_stop"))
    }
}

/// The visible part of an Anthropic citation: web search results name a `url` and `title`, search results
/// (`search_result_location`) a `source` and `title`, documents (`char_location`, `page_location`,
/// `content_block_location`) a `document_title`; all carry `cited_text`.
fn citation_source(citation: &Value) -> Option<patchbridge_protocol::Source> {
    source_from(citation, &["url", "source"], &["title", "document_title"])
}
