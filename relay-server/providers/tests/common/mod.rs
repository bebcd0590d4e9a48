//! Test helpers: reading fixture SSE files, decoding them, checking the neutral stream obeys the rules of
//! `docs/protocol.md` §3 (as the runtime would), assembling the stable message, and golden files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use patchbridge_protocol::{
    Block, BlockKind, ImageSource, Message, ModelRequest, ModelState, Role, StopReason,
    StreamEvent, ToolDefinition, Usage,
};
use patchbridge_providers::{encode_request, AdapterError, Decoder, ModelOptions, ProviderKind};
use serde_json::{json, Map, Value};

pub fn fixture(rel: &str) -> PathBuf {
    // The relay's tests compile this module too (`#[path]` in relay-server/tests/scripted.rs); there the
    // manifest directory is the relay's, which holds this crate in `providers/`.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crate_dir = if manifest.ends_with("providers") {
        manifest.to_path_buf()
    } else {
        manifest.join("providers")
    };
    crate_dir.join("fixtures").join(rel)
}

/// SSE framing per the WHATWG rules the relay's parser follows: `event:`/`data:` fields, multi-line data
/// joined by `\n`, comments ignored, a message dispatched at a blank line or at end of input (only when it has
/// data). The relay itself uses the `eventsource-stream` crate; this is enough to replay fixtures here.
pub fn sse_messages(text: &str) -> Vec<(String, String)> {
    let mut messages = Vec::new();
    let mut event = String::new();
    let mut data: Vec<String> = Vec::new();
    let mut dispatch = |event: &mut String, data: &mut Vec<String>| {
        if !data.is_empty() {
            messages.push((std::mem::take(event), data.join("\n")));
        }
        event.clear();
        data.clear();
    };
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            dispatch(&mut event, &mut data);
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => event = value.to_owned(),
            "data" => data.push(value.to_owned()),
            _ => {}
        }
    }
    dispatch(&mut event, &mut data);
    messages
}

/// Decodes a fixture file for `request`. On failure returns the events emitted before it and the error.
pub fn decode(
    kind: ProviderKind,
    request: &ModelRequest,
    rel: &str,
) -> Result<Vec<StreamEvent>, (Vec<StreamEvent>, AdapterError)> {
    let text = std::fs::read_to_string(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut decoder = Decoder::new(kind, request).map_err(|e| (Vec::new(), e))?;
    let mut out = Vec::new();
    for (event, data) in sse_messages(&text) {
        if let Err(e) = decoder.feed(&event, &data, &mut out) {
            return Err((out, e));
        }
    }
    match decoder.finish(&mut out) {
        Ok(()) => Ok(out),
        Err(e) => Err((out, e)),
    }
}

pub fn decode_ok(kind: ProviderKind, request: &ModelRequest, rel: &str) -> Vec<StreamEvent> {
    match decode(kind, request, rel) {
        Ok(events) => events,
        Err((_, e)) => panic!("{rel}: {e}"),
    }
}

pub fn decode_err(
    kind: ProviderKind,
    request: &ModelRequest,
    rel: &str,
) -> (Vec<StreamEvent>, AdapterError) {
    match decode(kind, request, rel) {
        Ok(events) => panic!("{rel}: expected an error, got {events:?}"),
        Err(x) => x,
    }
}

/// The events as the relay would send them, including the final `error` event of a failed stream.
pub fn with_error(
    result: Result<Vec<StreamEvent>, (Vec<StreamEvent>, AdapterError)>,
) -> Vec<StreamEvent> {
    match result {
        Ok(events) => events,
        Err((mut events, e)) => {
            events.push(StreamEvent::Error {
                code: e.code().as_str().into(),
                message: e.message(),
                retryable: Some(e.retryable()),
            });
            events
        }
    }
}

/// Compares events with a golden JSON-lines file (one wire event per line). `UPDATE_GOLDEN=1` rewrites the
/// file; every rewritten file is reviewed by hand before it is committed.
pub fn assert_golden(rel_expected: &str, events: &[StreamEvent]) {
    let path = fixture(rel_expected);
    let actual: String = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{rel_expected}: {e} (run with UPDATE_GOLDEN=1)"));
    if expected != actual {
        panic!("{rel_expected} differs.\n--- expected\n{expected}\n--- actual\n{actual}");
    }
}

/// What the runtime builds from a well-formed stream.
#[derive(Debug)]
pub struct Assembled {
    pub message: Message,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub model_state: Option<ModelState>,
}

/// Checks the stream rules of `docs/protocol.md` §3 and assembles the assistant message.
pub fn assemble(events: &[StreamEvent]) -> Assembled {
    let mut id = None;
    let mut blocks: Vec<Block> = Vec::new();
    let mut open: Option<(u32, BlockKind, String)> = None;
    let mut end = None;
    for (n, event) in events.iter().enumerate() {
        assert!(end.is_none(), "event after message-stop: {event:?}");
        match event {
            StreamEvent::MessageStart { id: i, .. } => {
                assert_eq!(n, 0, "message-start must come first");
                id = Some(i.clone().expect("adapters always send an id"));
            }
            _ if n == 0 => panic!("first event must be message-start, got {event:?}"),
            StreamEvent::BlockStart { index, block } => {
                assert!(
                    open.is_none(),
                    "block {index} started while another is open"
                );
                assert_eq!(
                    *index as usize,
                    blocks.len(),
                    "block indexes must be 0..n in order"
                );
                open = Some((*index, block.clone(), String::new()));
            }
            StreamEvent::BlockDelta { index, delta } => {
                let (i, _, text) = open.as_mut().expect("delta without open block");
                assert_eq!(i, index, "delta for a block that is not open");
                text.push_str(delta);
            }
            StreamEvent::BlockStop { index, sources } => {
                let (i, kind, text) = open.take().expect("stop without open block");
                assert_eq!(i, *index);
                assert!(
                    sources.is_empty() || kind == BlockKind::Text,
                    "sources on a {kind:?} block"
                );
                blocks.push(match kind {
                    BlockKind::Text => Block::Text {
                        text,
                        sources: sources.clone(),
                    },
                    BlockKind::Reasoning => Block::Reasoning { text },
                    BlockKind::ToolCall { call_id, name } => {
                        let input: Map<String, Value> =
                            serde_json::from_str(&text).unwrap_or_else(|e| {
                                panic!("tool-call arguments must be a JSON object: {text:?}: {e}")
                            });
                        Block::ToolCall {
                            call_id,
                            name,
                            input,
                        }
                    }
                });
            }
            StreamEvent::MessageStop {
                stop_reason,
                usage,
                model_state,
            } => {
                assert!(open.is_none(), "message-stop with an open block");
                end = Some((*stop_reason, *usage, model_state.clone()));
            }
            StreamEvent::Error { .. } => panic!("error event in a successful stream"),
        }
    }
    let (stop_reason, usage, model_state) = end.expect("stream must end with message-stop");
    Assembled {
        message: Message {
            id: id.unwrap(),
            role: Role::Assistant,
            blocks,
        },
        stop_reason,
        usage,
        model_state,
    }
}

pub fn user(id: &str, text: &str) -> Message {
    Message {
        id: id.into(),
        role: Role::User,
        blocks: vec![Block::text(text)],
    }
}

pub fn tool_result(id: &str, results: &[(&str, &str, bool)]) -> Message {
    Message {
        id: id.into(),
        role: Role::Tool,
        blocks: results
            .iter()
            .map(|(call_id, content, is_error)| Block::ToolResult {
                call_id: (*call_id).into(),
                content: (*content).into(),
                is_error: *is_error,
            })
            .collect(),
    }
}

pub fn tool(name: &str, schema: Value) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: schema,
    }
}

/// The page tools used by the decoding fixtures. Dotted names exercise the provider-safe name mapping.
pub fn page_tools() -> Vec<ToolDefinition> {
    vec![
        tool(
            "todo.add",
            json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] }),
        ),
        tool("todo.list", json!({ "type": "object", "properties": {} })),
        tool(
            "local.clock_now",
            json!({ "type": "object", "properties": { "tz": { "type": "string" } } }),
        ),
        tool(
            "weather_get",
            json!({ "type": "object", "properties": { "city": { "type": "string" } } }),
        ),
    ]
}

pub fn request(messages: Vec<Message>, model_state: Option<ModelState>) -> ModelRequest {
    ModelRequest {
        model: None,
        messages,
        model_state,
        tools: page_tools(),
        conversation_id: None,
    }
}

/// The first turn every decoding fixture answers.
pub fn first_turn() -> ModelRequest {
    request(vec![user("u1", "Please help.")], None)
}

/// Every `.sse` fixture under `dir` (relative to `fixtures/`), sorted.
pub fn sse_files(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(fixture(dir))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.ends_with(".sse").then(|| format!("{dir}/{name}"))
        })
        .collect();
    files.sort();
    files
}

/// Decodes every fixture of a provider and compares it with its golden file `expected/<path>.jsonl`.
pub fn check_all_goldens(kind: ProviderKind, provider_dir: &str) {
    let mut files = sse_files(provider_dir);
    if fixture(&format!("{provider_dir}/recorded")).exists() {
        files.extend(sse_files(&format!("{provider_dir}/recorded")));
    }
    assert!(!files.is_empty());
    for rel in files {
        let events = with_error(decode(kind, &first_turn(), &rel));
        let name = rel
            .strip_prefix(&format!("{provider_dir}/"))
            .unwrap()
            .replace('/', "-")
            .replace(".sse", ".jsonl");
        assert_golden(&format!("{provider_dir}/expected/{name}"), &events);
    }
}

/// A JSON object literal as a tool call's input.
pub fn obj(v: Value) -> Map<String, Value> {
    v.as_object().expect("a JSON object").clone()
}

pub fn assistant(id: &str, blocks: Vec<Block>) -> Message {
    Message {
        id: id.into(),
        role: Role::Assistant,
        blocks,
    }
}

pub fn image_url(url: &str) -> Block {
    Block::Image {
        source: ImageSource::Url { url: url.into() },
    }
}

pub fn image_base64(media_type: &str, data: &str) -> Block {
    Block::Image {
        source: ImageSource::Base64 {
            media_type: media_type.into(),
            data: data.into(),
        },
    }
}

pub fn pdf(name: &str, data: &str) -> Block {
    Block::Document {
        name: name.into(),
        source: patchbridge_protocol::DocumentSource::Base64 {
            media_type: "application/pdf".into(),
            data: data.into(),
        },
    }
}

pub fn text_file(name: &str, media_type: &str, text: &str) -> Block {
    Block::Document {
        name: name.into(),
        source: patchbridge_protocol::DocumentSource::Text {
            media_type: media_type.into(),
            text: text.into(),
        },
    }
}

/// The next request of a conversation: `first`'s messages, the decoded answer, then `more`, with the answer's
/// ModelState.
pub fn continue_after(
    first: &ModelRequest,
    answer: &Assembled,
    more: Vec<Message>,
) -> ModelRequest {
    let mut messages = first.messages.clone();
    messages.push(answer.message.clone());
    messages.extend(more);
    request(messages, answer.model_state.clone())
}

/// A request carrying an (empty) ModelState of `format` must be refused by both the encoder and the decoder of
/// `kind`, never dropped. Returns the encoder's error.
pub fn assert_foreign_state_rejected(
    kind: ProviderKind,
    options: &ModelOptions,
    format: &str,
) -> AdapterError {
    let state = ModelState {
        format: format.into(),
        data: json!({ "messages": {} }),
    };
    let req = request(vec![user("u1", "hi")], Some(state));
    let e = encode_request(kind, options, &req).unwrap_err();
    assert_eq!(e.code().as_str(), "MODEL_STATE_FORMAT_MISMATCH");
    assert_eq!(
        Decoder::new(kind, &req).err().map(|e| e.code().as_str()),
        Some("MODEL_STATE_FORMAT_MISMATCH")
    );
    e
}

pub fn text(text: &str) -> Block {
    Block::text(text)
}

pub fn reasoning(text: &str) -> Block {
    Block::Reasoning { text: text.into() }
}

pub fn tool_call(call_id: &str, name: &str, input: Value) -> Block {
    Block::ToolCall {
        call_id: call_id.into(),
        name: name.into(),
        input: obj(input),
    }
}

/// A plain text answer: message `id` with one text block, `end_turn`, these input and output tokens and
/// nothing else counted, and no ModelState (plain text needs no private state).
pub fn assert_plain_text_answer(a: &Assembled, id: &str, text_: &str, tokens: (u64, u64)) {
    assert_eq!(a.message.id, id);
    assert_eq!(a.message.blocks, vec![text(text_)]);
    assert_eq!(a.stop_reason, StopReason::EndTurn);
    assert_eq!(
        a.usage,
        Usage {
            input_tokens: tokens.0,
            output_tokens: tokens.1,
            ..Usage::default()
        }
    );
    assert_eq!(a.model_state, None);
}

/// The request after `answer` as the runtime builds it: tool results ("ok") for its tool calls when it
/// stopped for tool use, else a new user message; with `answer`'s ModelState.
pub fn next_turn(first: &ModelRequest, answer: &Assembled) -> ModelRequest {
    let calls: Vec<String> = answer
        .message
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolCall { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    let more = if answer.stop_reason == StopReason::ToolUse {
        let results: Vec<(&str, &str, bool)> =
            calls.iter().map(|c| (c.as_str(), "ok", false)).collect();
        tool_result("t1", &results)
    } else {
        user("u2", "go on")
    };
    continue_after(first, answer, vec![more])
}

/// Every successful fixture of `files`, answered and continued with `modelState: null` (a conversation started
/// anew from its messages): each must encode. Returns the encoded bodies.
pub fn assert_history_encodes_without_state(
    kind: ProviderKind,
    options: &ModelOptions,
    files: &[String],
) -> Vec<Value> {
    let mut bodies = Vec::new();
    for rel in files {
        let first = first_turn();
        let Ok(events) = decode(kind, &first, rel) else {
            continue;
        };
        let answer = assemble(&events);
        let mut next = next_turn(&first, &answer);
        next.model_state = None;
        let body = encode_request(kind, options, &next)
            .unwrap_or_else(|e| panic!("{rel} continued with modelState null: {e}"))
            .body;
        bodies.push(body);
    }
    assert!(bodies.len() >= 3, "enough successful fixtures");
    bodies
}

/// Every `.sse` fixture of a provider, hand-written and recorded.
pub fn all_fixtures(provider_dir: &str) -> Vec<String> {
    let mut files = sse_files(provider_dir);
    if fixture(&format!("{provider_dir}/recorded")).exists() {
        files.extend(sse_files(&format!("{provider_dir}/recorded")));
    }
    files
}

/// The visible sources of every text block of an assembled answer, as `(text, [url or title])`.
pub fn cited(a: &Assembled) -> Vec<(String, Vec<String>)> {
    a.message
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text, sources } => Some((
                text.clone(),
                sources
                    .iter()
                    .map(|s| s.url.clone().or(s.title.clone()).unwrap())
                    .collect(),
            )),
            _ => None,
        })
        .collect()
}
