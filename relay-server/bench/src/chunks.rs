//! The fake upstream's response: an OpenAI Chat Completions stream in the real wire format (the shape of
//! `relay-server/providers/fixtures/openai-chat/recorded`), built once and replayed for every request.
//!
//! `n` content chunks, then the `finish_reason` chunk, the usage chunk (`stream_options.include_usage`) and
//! `data: [DONE]`. Pure: no I/O here, so the counts the benchmark checks are unit-tested against the relay's
//! own decoder.

use bytes::Bytes;

/// The text of every content chunk (one token, as real providers send).
pub const TOKEN: &str = "tok ";

/// The upstream's SSE body, one element per `data:` event (each is written as its own body frame).
pub fn chat_stream(n: usize) -> Vec<Bytes> {
    let head = r#"{"id":"chatcmpl-bench0001","object":"chat.completion.chunk","created":1700000000,"model":"bench-model","system_fingerprint":"fp_bench","choices":["#;
    let mut out = Vec::with_capacity(n + 3);
    for i in 0..n {
        let delta = if i == 0 {
            format!(r#"{{"role":"assistant","content":"{TOKEN}"}}"#)
        } else {
            format!(r#"{{"content":"{TOKEN}"}}"#)
        };
        out.push(event(&format!(
            r#"{head}{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":null}}]}}"#
        )));
    }
    out.push(event(&format!(
        r#"{head}{{"index":0,"delta":{{}},"logprobs":null,"finish_reason":"stop"}}]}}"#
    )));
    let usage = format!(
        r#"{{"prompt_tokens":12,"completion_tokens":{n},"total_tokens":{}}}"#,
        n + 12
    );
    out.push(event(&format!(r#"{head}],"usage":{usage}}}"#)));
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

fn event(json: &str) -> Bytes {
    Bytes::from(format!("data: {json}\n\n"))
}

/// SSE events a client reading the upstream (directly or through nginx) receives for `n` content chunks.
pub fn upstream_events(n: usize) -> usize {
    n + 3
}

/// Neutral events the relay sends for `n` content chunks: message-start, block-start, `n` block-delta,
/// block-stop, message-stop.
pub fn relay_events(n: usize) -> usize {
    n + 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use patchbridge_protocol::{ModelRequest, StopReason, StreamEvent};
    use patchbridge_providers::{Decoder, ProviderKind};

    fn request() -> ModelRequest {
        serde_json::from_str(
            crate::client::RELAY_BODY_TEMPLATE
                .replace("{model}", "bench")
                .as_str(),
        )
        .unwrap()
    }

    /// The fake must speak the real format: the relay's decoder turns it into exactly the events the
    /// benchmark counts, with every token and a clean end-turn stop.
    #[test]
    fn fake_stream_decodes_to_the_counted_neutral_events() {
        let n = 7;
        let mut decoder = Decoder::new(ProviderKind::OpenAiChat, &request()).unwrap();
        let mut out = Vec::new();
        for chunk in chat_stream(n) {
            let text = std::str::from_utf8(&chunk).unwrap();
            let data = text
                .strip_prefix("data: ")
                .unwrap()
                .strip_suffix("\n\n")
                .unwrap();
            decoder.feed("", data, &mut out).unwrap();
        }
        decoder.finish(&mut out).unwrap();
        assert!(decoder.is_complete());
        assert_eq!(out.len(), relay_events(n));
        let deltas: String = out
            .iter()
            .filter_map(|e| match e {
                StreamEvent::BlockDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, TOKEN.repeat(n));
        match out.last().unwrap() {
            StreamEvent::MessageStop {
                stop_reason, usage, ..
            } => {
                assert_eq!(*stop_reason, StopReason::EndTurn);
                assert_eq!(usage.output_tokens, n as u64);
            }
            other => panic!("last event {other:?}"),
        }
    }

    #[test]
    fn every_chunk_is_one_sse_data_event() {
        let stream = chat_stream(3);
        assert_eq!(stream.len(), upstream_events(3));
        for chunk in &stream {
            assert!(chunk.starts_with(b"data: ") && chunk.ends_with(b"\n\n"));
            assert_eq!(
                chunk.iter().filter(|&&b| b == b'\n').count(),
                2,
                "one line per event"
            );
        }
    }
}
