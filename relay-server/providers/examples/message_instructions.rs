//! Feeds one SSE message of a fixture stream to a decoder many times over, for counting what decoding that one
//! message costs in instructions: the messages before it are fed once (so the decoder is where the stream
//! would have it), then the message `repeat` times. Run it under callgrind with `repeat` 0 and, say, 1000: the
//! difference in instructions over 1000 is the cost of one message. A measuring tool, not a test.
//!
//!     cargo build --release -p patchbridge-providers --example message_instructions
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/message_instructions openai-chat openai-chat/recorded/d61558011839.sse 179 1000 fast
//!
//! Arguments: the provider (`openai-chat`, `openai-responses`, `anthropic-messages`), the fixture (relative to
//! `fixtures/`), the index of the message among the stream's SSE messages, how many times to feed it, and
//! `fast` or `general` (the decoder's fast paths on or off).

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;

use patchbridge_providers::{Decoder, ProviderKind};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, file, index, repeat, path] = args.as_slice() else {
        eprintln!("usage: message_instructions <provider> <fixture> <message index> <repeat> <fast|general>");
        std::process::exit(2);
    };
    let kind = ProviderKind::parse(kind).unwrap_or_else(|| panic!("unknown provider {kind}"));
    let index: usize = index.parse().unwrap();
    let repeat: usize = repeat.parse().unwrap();
    let fast = match path.as_str() {
        "fast" => true,
        "general" => false,
        other => panic!("expected fast or general, not {other}"),
    };
    let text = std::fs::read(format!("{}/fixtures/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let messages = common::sse_messages(&text);
    let request = common::one_message_request();
    let mut decoder = Decoder::new(kind, &request).unwrap();
    decoder.set_fast_path(fast);
    let mut out = Vec::with_capacity(16);
    for message in &messages[..index] {
        decoder
            .feed(&message.event, &message.data, &mut out)
            .unwrap();
    }
    out.clear();
    let message = &messages[index];
    eprintln!("message {index}: {}", message.data);
    for _ in 0..repeat {
        decoder
            .feed(
                black_box(&message.event),
                black_box(&message.data),
                &mut out,
            )
            .unwrap();
        out.clear();
    }
    black_box(&decoder);
}
