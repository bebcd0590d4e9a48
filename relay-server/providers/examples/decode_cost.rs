//! Prints what decoding costs per upstream SSE message, next to a floor measured in the same run: parsing the
//! same `data:` payloads into `serde_json::Value` and nothing else (any decoder must at least read the JSON).
//! A benchmark, not a test: figures vary with the machine and its load.
//!
//!     cargo run --release -p patchbridge-providers --example decode_cost

use std::hint::black_box;
use std::time::Instant;

use patchbridge_protocol::{Block, Message, ModelRequest, Role};
use patchbridge_providers::{Decoder, ProviderKind};

fn sse_messages(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for frame in text.split("\n\n") {
        let mut event = String::new();
        let mut data = Vec::new();
        for line in frame.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                event = v.trim().to_owned();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
            }
        }
        if !data.is_empty() {
            out.push((event, data.join("\n")));
        }
    }
    out
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
            ProviderKind::OpenAiResponses,
            "openai-responses/reasoning_tool_call.sse",
        ),
    ];
    let request = ModelRequest {
        model: None,
        messages: vec![Message {
            id: "u1".into(),
            role: Role::User,
            blocks: vec![Block::Text { text: "hi".into() }],
        }],
        model_state: None,
        tools: vec![],
        conversation_id: None,
    };
    println!(
        "{:<52} {:>9} {:>12} {:>12} {:>7}",
        "fixture", "messages", "decode ns", "parse ns", "ratio"
    );
    for (kind, file) in cases {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let messages = sse_messages(&text);
        let rounds = (200_000 / messages.len()).max(50);
        let start = Instant::now();
        for _ in 0..rounds {
            let mut decoder = Decoder::new(kind, &request).unwrap();
            let mut out = Vec::with_capacity(16);
            for (event, data) in &messages {
                decoder.feed(event, data, &mut out).unwrap();
                out.clear();
            }
            decoder.finish(&mut out).unwrap();
            black_box(&out);
        }
        let decode = start.elapsed().as_nanos() as f64 / (rounds * messages.len()) as f64;
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
            "{:<52} {:>9} {:>12.0} {:>12.0} {:>7.2}",
            file,
            messages.len(),
            decode,
            parse,
            decode / parse
        );
    }
}
