//! Responses SSE → neutral events.
//!
//! Text parts and reasoning summary parts stream live, each part its own neutral block; function calls are
//! emitted whole at `response.output_item.done` (the item carries the final arguments), reasoning items are kept
//! verbatim from that same event (its `encrypted_content` is the complete one; the copy in `output_item.added`
//! may not be).
//!
//! Items may finish out of order: a reasoning item (output 0) can be done only after the message item
//! (output 1) was opened, filled and finished. Everything is keyed by `output_index`, and the ModelState entry
//! lists the items in `output_index` order whatever order their `done` events came in. Each output message item
//! is one part (its text blocks and its `phase`), so several messages of one response go back as separate
//! input items.
//!
//! Sources (`docs/protocol.md` §1): `url_citation` and `file_citation` annotations, from
//! `response.output_text.annotation.added` while the text part is open, or, when an item streamed none, from the
//! `annotations` of its finished `output_text` parts.

use std::collections::{BTreeMap, BTreeSet};

use patchbridge_protocol::{ModelRequest, StopReason, StreamEvent, Usage};
use serde_json::Value;

use super::{Entry, FORMAT};
use crate::emit::{source_from, Emitter, LiveKind};
use crate::state::{Continuation, MessagePhase, PartsBuilder};
use crate::tool_names::ToolNames;
use crate::wire::{self, index_field, protocol, str_field};
use crate::AdapterError;

pub(crate) struct ResponsesDecoder {
    continuation: Continuation<Entry>,
    names: ToolNames,
    /// Read by the dispatch in `lib.rs`: a stopped emitter means the stream is complete.
    pub(crate) emit: Emitter,
    /// Which (output_index, part index, kind) the open live block belongs to: a new part is a new block.
    live: Option<(u64, u64, LiveKind)>,
    /// Neutral blocks produced so far by each output item not yet done.
    item_blocks: BTreeMap<u64, Vec<u32>>,
    /// Arguments streamed per output index, in case `output_item.done` lacks them.
    arguments: BTreeMap<u64, String>,
    /// The `phase` of message items seen in `output_item.added`, for a message the token limit cuts off.
    phases: BTreeMap<u64, MessagePhase>,
    parts: PartsBuilder,
    /// Output items that streamed `annotation.added` events (their finished parts' annotations are not read again).
    annotated: BTreeSet<u64>,
    any_call: bool,
    refusal: bool,
}

impl ResponsesDecoder {
    pub(crate) fn new(request: &ModelRequest) -> Result<Self, AdapterError> {
        Ok(ResponsesDecoder {
            continuation: Continuation::new(FORMAT, request)?,
            names: ToolNames::new(request),
            emit: Emitter::default(),
            live: None,
            item_blocks: BTreeMap::new(),
            arguments: BTreeMap::new(),
            phases: BTreeMap::new(),
            parts: PartsBuilder::default(),
            annotated: BTreeSet::new(),
            any_call: false,
            refusal: false,
        })
    }

    pub(crate) fn feed(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        let value = wire::parse("Responses", event, data)?;
        let kind = wire::event_type(&value, event);
        let output_index = index_field(&value, "output_index");
        if let Some((part_field, part_offset, live)) = live_event(kind) {
            if kind == "response.refusal.delta" {
                self.refusal = true;
            }
            let part = part_offset.saturating_add(index_field(&value, part_field));
            return self.live_delta(output_index, part, live, str_field(&value, "delta"), out);
        }
        match kind {
            // Some Responses-compatible servers skip `response.created` and begin with `in_progress`.
            "response.created" | "response.in_progress" => self.start(&value, out),
            "response.function_call_arguments.delta" => {
                self.arguments
                    .entry(output_index)
                    .or_default()
                    .push_str(str_field(&value, "delta"));
                Ok(())
            }
            "response.output_item.added" => {
                if let Some(phase) = value.get("item").and_then(phase_of) {
                    self.phases.insert(output_index, phase);
                }
                Ok(())
            }
            "response.output_text.annotation.added" => {
                self.annotated.insert(output_index);
                let annotation = value.get("annotation").unwrap_or(&Value::Null);
                self.emit.sources(annotation_source(annotation));
                Ok(())
            }
            "response.output_item.done" => {
                let item = value
                    .get("item")
                    .ok_or_else(|| protocol("output_item.done without item"))?;
                self.item_done(output_index, item, out)
            }
            "response.completed" | "response.incomplete" => self.complete(kind, &value, out),
            // `response.failed` carries `response.error: { code, message }`.
            "response.failed" => Err(wire::provider_error(
                value.pointer("/response/error").unwrap_or(&Value::Null),
            )),
            "error" => Err(wire::provider_error(&value)),
            // content_part.*, *.done text events, annotations…: nothing the deltas and item.done events have
            // not said already.
            _ => Ok(()),
        }
    }

    fn live_delta(
        &mut self,
        output_index: u64,
        part: u64,
        kind: LiveKind,
        delta: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        if delta.is_empty() {
            return Ok(());
        }
        if self.live != Some((output_index, part, kind)) {
            self.emit.close(out);
            self.live = Some((output_index, part, kind));
        }
        if let Some(index) = self.emit.live_delta(kind, delta, out)? {
            let blocks = self.item_blocks.entry(output_index).or_default();
            if blocks.last() != Some(&index) {
                blocks.push(index);
            }
        }
        Ok(())
    }

    fn close_live(&mut self, out: &mut Vec<StreamEvent>) {
        self.emit.close(out);
        self.live = None;
    }

    fn start(&mut self, value: &Value, out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        if self.emit.started() {
            return Ok(());
        }
        let id = value.pointer("/response/id").and_then(Value::as_str);
        let id = self.continuation.message_id(id);
        self.emit.start(id, out)
    }

    /// Emits the text parts of a message item, or the summary parts of a reasoning item, that arrived whole.
    fn unstreamed_content(
        &mut self,
        item: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Vec<u32>, AdapterError> {
        let (parts, kind) = match str_field(item, "type") {
            "message" => (item.get("content"), LiveKind::Text),
            "reasoning" => (item.get("summary"), LiveKind::Reasoning),
            _ => return Ok(Vec::new()),
        };
        let mut blocks = Vec::new();
        for part in parts.and_then(Value::as_array).into_iter().flatten() {
            let text = match str_field(part, "type") {
                "output_text" | "summary_text" => str_field(part, "text"),
                "refusal" => {
                    self.refusal = true;
                    str_field(part, "refusal")
                }
                _ => "",
            };
            if let Some(i) = self.emit.live_delta(kind, text, out)? {
                blocks.push(i);
                self.emit.sources(part_annotations(part));
                self.emit.close(out);
            }
        }
        Ok(blocks)
    }

    fn item_done(
        &mut self,
        output_index: u64,
        item: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        // A server that streamed the text but no annotation events: the finished parts' annotations go on the
        // item's open text block.
        let open_here =
            matches!(self.live, Some((open, _, LiveKind::Text)) if open == output_index);
        if open_here && !self.annotated.contains(&output_index) {
            let parts = item.get("content").and_then(Value::as_array);
            self.emit
                .sources(parts.into_iter().flatten().flat_map(part_annotations));
        }
        self.close_live(out);
        let mut blocks = self.item_blocks.remove(&output_index).unwrap_or_default();
        // A server that sends an item's content only in `output_item.done` (no deltas) still shows it.
        if blocks.is_empty() {
            blocks = self.unstreamed_content(item, out)?;
        }
        match str_field(item, "type") {
            "message" => {
                let phase = phase_of(item).or_else(|| self.phases.get(&output_index).copied());
                self.parts.blocks(output_index, blocks, phase);
            }
            "function_call" => {
                let streamed = self.arguments.remove(&output_index).unwrap_or_default();
                let arguments = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or(&streamed);
                let name = self.names.neutral(str_field(item, "name")).to_owned();
                let i = self
                    .emit
                    .tool_call(str_field(item, "call_id"), &name, arguments, out)?;
                self.parts.blocks(output_index, vec![i], None);
                self.any_call = true;
            }
            // Reasoning (with encrypted_content) and items the neutral protocol has no type for (built-in
            // tool calls) go back verbatim.
            _ => self.parts.raw(output_index, item.clone(), blocks),
        }
        Ok(())
    }

    fn complete(
        &mut self,
        kind: &str,
        value: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        self.close_live(out);
        let response = value.get("response").unwrap_or(&Value::Null);
        // Items the token limit cut off never got their `done`: their shown text stays, a cut function call
        // is dropped, and a reasoning item without its final encrypted content is not kept.
        for (output_index, blocks) in std::mem::take(&mut self.item_blocks) {
            let phase = self.phases.get(&output_index).copied();
            self.parts.blocks(output_index, blocks, phase);
        }
        let stop_reason = if kind == "response.completed" {
            if self.any_call {
                StopReason::ToolUse
            } else if self.refusal {
                StopReason::Refusal
            } else {
                StopReason::EndTurn
            }
        } else {
            match response
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str)
            {
                Some("max_output_tokens") => StopReason::MaxTokens,
                Some("content_filter") => StopReason::Refusal,
                _ => StopReason::Other,
            }
        };
        let entry = std::mem::take(&mut self.parts)
            .finish()
            .map(|items| Entry { items });
        let usage = response.get("usage").map(neutral_usage).unwrap_or_default();
        self.emit
            .stop(stop_reason, usage, &mut self.continuation, entry, out)?;
        Ok(())
    }

    /// End of a body that never reached `response.completed` or `response.incomplete`.
    pub(crate) fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        Err(protocol(
            "the Responses stream ended before response.completed or response.incomplete",
        ))
    }
}

/// The events that stream text live: the field numbering the part within its output item, an offset keeping
/// raw reasoning parts apart from summary parts (so they never share a block), and the block kind. Summaries are
/// the reasoning OpenAI allows to be shown; `reasoning_text` is raw reasoning that open-weight models behind
/// Responses-compatible servers stream, shown the same way.
fn live_event(kind: &str) -> Option<(&'static str, u64, LiveKind)> {
    Some(match kind {
        "response.output_text.delta" | "response.refusal.delta" => {
            ("content_index", 0, LiveKind::Text)
        }
        "response.reasoning_summary_text.delta" => ("summary_index", 0, LiveKind::Reasoning),
        "response.reasoning_text.delta" => ("content_index", 1000, LiveKind::Reasoning),
        _ => return None,
    })
}

/// The visible part of a Responses annotation: `url_citation` has `url` and `title`, `file_citation` (and
/// `container_file_citation`) a `filename`; `file_path` and others name nothing to show.
fn annotation_source(annotation: &Value) -> Option<patchbridge_protocol::Source> {
    source_from(annotation, &["url"], &["title", "filename"])
}

/// The sources of a finished `output_text` part's `annotations`.
fn part_annotations(part: &Value) -> impl Iterator<Item = patchbridge_protocol::Source> + '_ {
    part.get("annotations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(annotation_source)
}

/// The `phase` of a message item, when it is one of the spec's values.
fn phase_of(item: &Value) -> Option<MessagePhase> {
    serde_json::from_value(item.get("phase")?.clone()).ok()
}

fn neutral_usage(usage: &Value) -> Usage {
    let get = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: get("/input_tokens"),
        output_tokens: get("/output_tokens"),
        reasoning_tokens: get("/output_tokens_details/reasoning_tokens"),
        cache_read_tokens: get("/input_tokens_details/cached_tokens"),
        cache_write_tokens: 0,
    }
}
