//! Helpers for the tests that compare a decoder's fast path with its general path (`openai_chat/text_chunk.rs`,
//! `anthropic/block_delta.rs`): a provider's fixture streams framed by the relay's own [`crate::sse`] framer, one
//! decoder run with the fast path on or off, and proptest strategies for JSON objects close to the fast shapes.

use std::path::PathBuf;

use patchbridge_protocol::{ModelRequest, StreamEvent};
use proptest::prelude::*;

use crate::sse::{SseFramer, SseMessage};
use crate::{Decoder, ProviderKind};

/// One user message, no ModelState, no tools.
pub(crate) fn request() -> ModelRequest {
    serde_json::from_value(serde_json::json!({
        "messages": [ { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": "hi" } ] } ],
        "modelState": null
    }))
    .unwrap()
}

/// Every `.sse` fixture of a provider (`fixtures/<provider_dir>/` and its `recorded/`), each as the SSE messages
/// (event name, data) the relay would feed the decoder. A last message without its blank line is dispatched,
/// as at the end of a body.
pub(crate) fn fixture_streams(provider_dir: &str) -> Vec<(PathBuf, Vec<SseMessage>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(provider_dir);
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("recorded")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "sse") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "fixtures of {provider_dir}");
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read(&path).unwrap();
            let mut framer = SseFramer::new();
            let mut messages = Vec::new();
            framer.push(&text, &mut messages).unwrap();
            framer.push(b"\n\n", &mut messages).unwrap();
            (path, messages)
        })
        .collect()
}

/// Feeds `messages` to a decoder of `kind` with the fast path on or off and returns everything it produced:
/// the events, and the first error (of `feed` or of `finish`) as text.
pub(crate) fn run(
    kind: ProviderKind,
    messages: &[SseMessage],
    fast: bool,
) -> (Vec<StreamEvent>, Option<String>) {
    let mut decoder = Decoder::new(kind, &request()).unwrap();
    decoder.set_fast_path(fast);
    let mut out = Vec::new();
    for message in messages {
        if let Err(e) = decoder.feed(&message.event, &message.data, &mut out) {
            return (out, Some(e.to_string()));
        }
    }
    let error = decoder.finish(&mut out).err().map(|e| e.to_string());
    (out, error)
}

/// Runs every fixture stream of `provider_dir` through a decoder of `kind` with the fast path on and off,
/// requires the same events and errors from both, and returns how many messages `takes_fast_path` accepted (so
/// a test can require that the fixtures exercise the fast path at all).
pub(crate) fn assert_paths_agree_on_fixtures(
    kind: ProviderKind,
    provider_dir: &str,
    takes_fast_path: impl Fn(&str) -> bool,
) -> usize {
    let mut fast_hits = 0;
    for (file, messages) in fixture_streams(provider_dir) {
        fast_hits += messages.iter().filter(|m| takes_fast_path(&m.data)).count();
        assert_eq!(
            run(kind, &messages, true),
            run(kind, &messages, false),
            "{}",
            file.display()
        );
    }
    fast_hits
}

/// An SSE message without an `event:` name (the decoders read the type from the JSON).
pub(crate) fn unnamed(data: String) -> SseMessage {
    SseMessage {
        event: String::new(),
        data,
    }
}

/// JSON values of every type, including the ones a typed read and a `Value` parse might treat differently: a
/// lone surrogate escape, nesting deeper than serde_json's limit, numbers outside `u64`, `-0`, `1.0`, objects
/// keyed by serde_json's private number token.
pub(crate) fn json_value() -> impl Strategy<Value = String> {
    let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
    prop_oneof![
        Just("null".to_owned()),
        Just("0".to_owned()),
        Just("1".to_owned()),
        Just("-0".to_owned()),
        Just("1.0".to_owned()),
        Just("-1".to_owned()),
        Just("1e999".to_owned()),
        Just("18446744073709551616".to_owned()),
        Just("true".to_owned()),
        Just("\"\"".to_owned()),
        Just("\"x\"".to_owned()),
        Just("\" \"".to_owned()),
        Just("\"stop\"".to_owned()),
        Just("\"\\ud800\"".to_owned()),
        Just("[]".to_owned()),
        Just("{}".to_owned()),
        Just("[\"a\"]".to_owned()),
        Just("{\"prompt_tokens\":3}".to_owned()),
        // Read by `Value` as a number (serde_json's private token, under `arbitrary_precision`), or refused.
        Just("{\"$serde_json::private::Number\":\"7\"}".to_owned()),
        Just("{\"$serde_json::private::Number\":7}".to_owned()),
        Just(deep),
    ]
}

/// JSON objects of up to five fields named from `keys` (repeats included), each value from `inner` or any
/// [`json_value`].
pub(crate) fn object(
    keys: &'static [&'static str],
    inner: BoxedStrategy<String>,
) -> impl Strategy<Value = String> {
    let key = proptest::sample::select(keys);
    let field =
        (key, prop_oneof![3 => inner, 1 => json_value()]).prop_map(|(k, v)| format!("\"{k}\":{v}"));
    proptest::collection::vec(field, 0..6).prop_map(|fields| format!("{{{}}}", fields.join(",")))
}

/// How many of `samples` generated values `fast` accepts, and how many it leaves to the general path.
pub(crate) fn split_by_path<S: Strategy<Value = String>>(
    strategy: S,
    samples: usize,
    fast: impl Fn(&str) -> bool,
) -> (usize, usize) {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut taken = 0;
    for _ in 0..samples {
        let data = strategy.new_tree(&mut runner).unwrap().current();
        taken += usize::from(fast(&data));
    }
    (taken, samples - taken)
}
