//! Prints what decoding costs per upstream SSE message, three ways in the same run: the decoder as the relay runs
//! it (`fast`: its fast path on, where it has one), the decoder with its fast path off (`Value`: every event read
//! into a `serde_json::Value` tree), and a floor: parsing the same `data:` payloads into `Value` and nothing else.
//! `fast/Value` is the first over the second.
//!
//! The first three rows take every recorded stream of a provider (`fixtures/<provider>/recorded/`) together,
//! each decoded once per round: the mix of events real answers had, which decides whether a fast path pays for
//! itself (`relay-server/bench/README.md`). Then single streams, and the recorded Anthropic stream with every text
//! delta repeated 50 times in place, which is what a long answer looks like. A benchmark, not a test: figures
//! vary with the machine and its load.
//!
//!     cargo run --release -p patchbridge-providers --example decode_cost
//!
//! On a busy machine, count instructions instead: `count <provider> <fast|general> <rounds>` decodes every
//! recorded stream of the provider `rounds` times and prints nothing, so that under callgrind the difference
//! between, say, 20 rounds and 0 is what decoding them costs.
//!
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/decode_cost count anthropic-messages fast 20

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use patchbridge_protocol::ModelRequest;
use patchbridge_providers::{AdapterError, Decoder, ProviderKind};

/// SSE messages as (event, data), framed as the relay frames them.
type Messages = Vec<(String, String)>;

const PROVIDERS: [(ProviderKind, &str); 3] = [
    (ProviderKind::OpenAiChat, "openai-chat"),
    (ProviderKind::AnthropicMessages, "anthropic-messages"),
    (ProviderKind::OpenAiResponses, "openai-responses"),
];

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let request = common::one_message_request();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.is_empty() {
        let [mode, provider, path, rounds] = args.as_slice() else {
            panic!("usage: decode_cost [count <provider> <fast|general> <rounds>]");
        };
        assert_eq!(mode, "count", "the only mode is count");
        let kind =
            ProviderKind::parse(provider).unwrap_or_else(|| panic!("unknown provider {provider}"));
        let fast = match path.as_str() {
            "fast" => true,
            "general" => false,
            other => panic!("{other}: fast or general"),
        };
        for stream in recorded_streams(&format!("{dir}/{provider}/recorded")) {
            decode_ns(kind, &request, &stream, rounds.parse().unwrap(), fast);
        }
        return;
    }

    println!(
        "{:<62} {:>8} {:>8} {:>9} {:>9} {:>10}",
        "fixture (ns per message)", "messages", "fast", "Value", "parse", "fast/Value"
    );
    for (kind, provider) in PROVIDERS {
        let streams = recorded_streams(&format!("{dir}/{provider}/recorded"));
        let name = format!("{provider}/recorded/*.sse ({} streams)", streams.len());
        row(kind, &request, &name, &streams);
    }
    let single = [
        (
            ProviderKind::OpenAiChat,
            "openai-chat/recorded/d61558011839.sse",
            1,
        ),
        (
            ProviderKind::OpenAiChat,
            "openai-chat/recorded/f82268f2fefd.sse",
            1,
        ),
        (
            ProviderKind::AnthropicMessages,
            "anthropic-messages/recorded/tool_use_response.sse",
            1,
        ),
        (
            ProviderKind::AnthropicMessages,
            "anthropic-messages/thinking_tool_use.sse",
            1,
        ),
        (
            ProviderKind::AnthropicMessages,
            "anthropic-messages/recorded/basic_response.sse",
            1,
        ),
        (
            ProviderKind::AnthropicMessages,
            "anthropic-messages/recorded/basic_response.sse",
            50,
        ),
    ];
    for (kind, file, repeat) in single {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let messages = repeat_text_deltas(sse_messages(&text), repeat);
        let name = match repeat {
            1 => file.to_owned(),
            n => format!("{file}, deltas x{n}"),
        };
        row(kind, &request, &name, &[messages]);
    }
}

/// Prints one row: `streams` decoded with the fast path on and off, interleaved (so that a change in the
/// machine's load falls on both), and parsed into `Value`; ns per message.
fn row(kind: ProviderKind, request: &ModelRequest, name: &str, streams: &[Messages]) {
    let messages: usize = streams.iter().map(Vec::len).sum();
    let rounds = (200_000 / messages).max(50);
    let (mut fast, mut value) = (0.0, 0.0);
    for _ in 0..5 {
        for stream in streams {
            let weight = stream.len() as f64;
            fast += decode_ns(kind, request, stream, rounds / 5, true) * weight;
            value += decode_ns(kind, request, stream, rounds / 5, false) * weight;
        }
    }
    let (fast, value) = (fast / 5.0 / messages as f64, value / 5.0 / messages as f64);
    let start = Instant::now();
    for _ in 0..rounds {
        for (_, data) in streams.iter().flatten() {
            if data != "[DONE]" {
                black_box(serde_json::from_str::<serde_json::Value>(data).ok());
            }
        }
    }
    let parse = start.elapsed().as_nanos() as f64 / (rounds * messages) as f64;
    println!(
        "{name:<62} {messages:>8} {fast:>8.0} {value:>9.0} {parse:>9.0} {:>10.2}",
        fast / value
    );
}

/// The SSE messages (event, data) of a stream's text, framed as the relay frames them.
fn sse_messages(text: &str) -> Messages {
    common::sse_messages(text.as_bytes())
        .into_iter()
        .map(|m| (m.event, m.data))
        .collect()
}

/// The SSE messages of every `.sse` stream in `dir`, one list per stream.
fn recorded_streams(dir: &str) -> Vec<Messages> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "sse"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| sse_messages(&std::fs::read_to_string(path).unwrap()))
        .collect()
}

/// Each Anthropic `content_block_delta` message `n` times.
fn repeat_text_deltas(messages: Messages, n: usize) -> Messages {
    let mut out = Vec::new();
    for message in messages {
        let value = serde_json::from_str::<serde_json::Value>(&message.1).ok();
        let is_delta = value
            .is_some_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("content_block_delta"));
        let times = if is_delta { n } else { 1 };
        out.extend(std::iter::repeat_n(message, times));
    }
    out
}

/// Decodes `messages` `rounds` times, each with a new decoder; returns ns per message.
fn decode_ns(
    kind: ProviderKind,
    request: &ModelRequest,
    messages: &[(String, String)],
    rounds: usize,
    fast_path: bool,
) -> f64 {
    let start = Instant::now();
    for _ in 0..rounds {
        let mut decoder = Decoder::new(kind, request).unwrap();
        decoder.set_fast_path(fast_path);
        let mut out = Vec::with_capacity(16);
        // A stream that fails (some recorded ones end with a provider error) ends there, as in the relay.
        let fed = messages.iter().try_for_each(|(event, data)| {
            decoder.feed(event, data, &mut out)?;
            out.clear();
            Ok::<_, AdapterError>(())
        });
        if fed.is_ok() {
            black_box(decoder.finish(&mut out).is_ok());
        }
        black_box(&out);
    }
    start.elapsed().as_nanos() as f64 / (rounds * messages.len()).max(1) as f64
}
