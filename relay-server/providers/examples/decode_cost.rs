//! Prints what decoding costs per upstream SSE message, three ways in the same run: the decoder as the relay runs
//! it (fast paths on), the decoder with its fast paths off (every event read into a `serde_json::Value` tree),
//! and a floor: parsing the same `data:` payloads into `Value` and nothing else. `fast/Value` is the first over
//! the second. The recorded Responses and Anthropic streams are short (3 or 4 text deltas among a dozen other
//! events), so each is also measured with every text delta repeated 50 times in place, which is what a long
//! answer looks like. The Chat Completions usage chunk (one per call, the last before `[DONE]`) is measured the
//! same way, repeated 50 times in place, so that its row is about that chunk alone. A benchmark, not a test:
//! figures vary with the machine and its load.
//!
//!     cargo run --release -p patchbridge-providers --example decode_cost

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use patchbridge_protocol::ModelRequest;
use patchbridge_providers::{Decoder, ProviderKind};

/// The SSE messages (event, data) of a recorded stream, framed as the relay frames them.
fn sse_messages(text: &str) -> Vec<(String, String)> {
    common::sse_messages(text.as_bytes())
        .into_iter()
        .map(|m| (m.event, m.data))
        .collect()
}

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let cases = [
        (
            ProviderKind::OpenAiChat,
            "openai-chat/recorded/d61558011839.sse",
        ),
        (
            ProviderKind::OpenAiChat,
            "openai-chat/recorded/f82268f2fefd.sse",
        ),
        (
            ProviderKind::AnthropicMessages,
            "anthropic-messages/recorded/tool_use_response.sse",
        ),
        (
            ProviderKind::AnthropicMessages,
            "anthropic-messages/thinking_tool_use.sse",
        ),
        (
            ProviderKind::AnthropicMessages,
            "anthropic-messages/recorded/basic_response.sse",
        ),
        (
            ProviderKind::OpenAiResponses,
            "openai-responses/recorded/vercel-phase.sse",
        ),
        (
            ProviderKind::OpenAiResponses,
            "openai-responses/reasoning_tool_call.sse",
        ),
    ];
    let request = common::one_message_request();
    println!(
        "{:<62} {:>8} {:>8} {:>9} {:>9} {:>10}",
        "fixture (ns per message)", "messages", "fast", "Value", "parse", "fast/Value"
    );
    let long = [
        (
            ProviderKind::AnthropicMessages,
            "anthropic-messages/recorded/basic_response.sse",
            Hot::TextDeltas,
        ),
        (
            ProviderKind::OpenAiResponses,
            "openai-responses/recorded/vercel-phase.sse",
            Hot::TextDeltas,
        ),
        (
            ProviderKind::OpenAiChat,
            "openai-chat/recorded/4cc50a6135d2.sse",
            Hot::UsageChunk,
        ),
    ];
    let cases = cases
        .into_iter()
        .map(|(kind, file)| (kind, file.to_owned(), Hot::TextDeltas, 1))
        .chain(long.into_iter().map(|(kind, file, hot)| {
            let what = match hot {
                Hot::TextDeltas => "deltas",
                Hot::UsageChunk => "usage chunk",
            };
            (kind, format!("{file}, {what} x50"), hot, 50)
        }));
    for (kind, name, hot, repeat) in cases {
        let file = name.split(',').next().unwrap();
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let messages = repeat_hot(sse_messages(&text), hot, repeat);
        let rounds = (200_000 / messages.len()).max(50);
        // Interleaved, so that a change in the machine's load falls on both.
        let (mut fast, mut value) = (0.0, 0.0);
        for _ in 0..5 {
            fast += decode_ns(kind, &request, &messages, rounds / 5, true);
            value += decode_ns(kind, &request, &messages, rounds / 5, false);
        }
        let (fast, value) = (fast / 5.0, value / 5.0);
        let start = Instant::now();
        for _ in 0..rounds {
            for (_, data) in &messages {
                if data != "[DONE]" {
                    black_box(serde_json::from_str::<serde_json::Value>(data).unwrap());
                }
            }
        }
        let parse = start.elapsed().as_nanos() as f64 / (rounds * messages.len()) as f64;
        println!(
            "{:<62} {:>8} {:>8.0} {:>9.0} {:>9.0} {:>10.2}",
            name,
            messages.len(),
            fast,
            value,
            parse,
            fast / value
        );
    }
}

/// Which messages of a stream a row repeats.
#[derive(Clone, Copy)]
enum Hot {
    /// Anthropic `content_block_delta`, Responses `response.output_text.delta`.
    TextDeltas,
    /// The Chat Completions chunk with no choices and a `usage` object.
    UsageChunk,
}

/// Each `hot` message `n` times.
fn repeat_hot(messages: Vec<(String, String)>, hot: Hot, n: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for message in messages {
        let value = serde_json::from_str::<serde_json::Value>(&message.1).ok();
        let is_hot = value.is_some_and(|v| match hot {
            Hot::TextDeltas => matches!(
                v.get("type").and_then(|t| t.as_str()),
                Some("content_block_delta" | "response.output_text.delta")
            ),
            Hot::UsageChunk => {
                v.get("choices")
                    .and_then(|c| c.as_array())
                    .is_some_and(|c| c.is_empty())
                    && v.get("usage").is_some_and(|u| u.is_object())
            }
        });
        let times = if is_hot { n } else { 1 };
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
        for (event, data) in messages {
            decoder.feed(event, data, &mut out).unwrap();
            out.clear();
        }
        decoder.finish(&mut out).unwrap();
        black_box(&out);
    }
    start.elapsed().as_nanos() as f64 / (rounds * messages.len()) as f64
}
