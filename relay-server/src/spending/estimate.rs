//! The input a call is charged when its stream ends without the provider's usage (the browser hung up, the
//! connection was cut, the call was cancelled): an upper bound computed from the request, so closing streams
//! early never spends past an `inputTokens` limit.
//!
//! The bound, in tokens (documented in `relay-server/README.md`, "Spending limits"):
//! - text, reasoning: its UTF-8 bytes (every provider's tokenizer spends at least one byte per token);
//! - an image: [`IMAGE_TOKENS`] (above what any supported provider charges for one image: they resize images
//!   to a bounded size before counting);
//! - every other block (tool calls and results, documents, any kind added later), the tool definitions and the
//!   request's `modelState`: their JSON bytes;
//! - plus [`MESSAGE_OVERHEAD_TOKENS`] per message (role and framing tokens).
//!
//! The model's configured system prompt is the operator's own text and is not counted.

use patchbridge_protocol::{Block, ModelRequest};

/// Tokens counted for one image.
pub const IMAGE_TOKENS: u64 = 6_000;
/// Tokens counted per message for its role and framing.
pub const MESSAGE_OVERHEAD_TOKENS: u64 = 16;

/// The most input tokens `request` can cost.
pub fn input_bound(request: &ModelRequest) -> u64 {
    let mut total: u64 = 0;
    for message in &request.messages {
        total = total.saturating_add(MESSAGE_OVERHEAD_TOKENS);
        for block in &message.blocks {
            total = total.saturating_add(block_bound(block));
        }
    }
    for tool in &request.tools {
        total = total.saturating_add(json_bytes(tool));
    }
    if let Some(state) = &request.model_state {
        total = total.saturating_add(json_bytes(state));
    }
    total
}

fn block_bound(block: &Block) -> u64 {
    match block {
        Block::Text { text, .. } | Block::Reasoning { text } => text.len() as u64,
        Block::Image { .. } => IMAGE_TOKENS,
        // Tool calls and results, documents, and any block kind added later: by their size.
        other => json_bytes(other),
    }
}

/// The length of `value` written as JSON, counted without building the text.
fn json_bytes(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail; a value serde cannot write counts as nothing more.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(value: serde_json::Value) -> ModelRequest {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn text_counts_its_bytes_an_image_its_bound_and_other_blocks_their_json_size() {
        let text = "é".repeat(1000);
        let r = request(json!({ "messages": [
            { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": text } ] },
        ], "modelState": null }));
        assert_eq!(input_bound(&r), 2000 + MESSAGE_OVERHEAD_TOKENS);
        let r = request(json!({ "messages": [
            { "id": "u1", "role": "user", "blocks": [
                { "type": "image", "source": { "type": "base64", "mediaType": "image/png", "data": "A".repeat(50_000) } },
            ] },
            { "id": "a1", "role": "assistant", "blocks": [
                { "type": "tool-call", "callId": "c1", "name": "t", "input": { "q": "x".repeat(300) } },
            ] },
        ], "modelState": null }));
        let bound = input_bound(&r);
        assert!(bound > IMAGE_TOKENS + 300, "{bound}");
        assert!(
            bound < IMAGE_TOKENS + 400 + 2 * MESSAGE_OVERHEAD_TOKENS,
            "{bound}"
        );
    }
}
