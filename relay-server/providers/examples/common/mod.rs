//! What the decoder-cost examples share: the model request the decoders are built for (one user message; the
//! decoders read only its ModelState and tool names, so its content does not matter), and a recorded stream's
//! SSE messages, framed as the relay frames them.

use patchbridge_protocol::{Block, Message, ModelRequest, Role};
use patchbridge_providers::sse::{SseFramer, SseMessage};

/// The SSE messages of a stream's bytes; a last event without its blank line counts, as in the relay.
pub fn sse_messages(text: &[u8]) -> Vec<SseMessage> {
    let mut framer = SseFramer::new();
    let mut messages = Vec::new();
    framer.push(text, &mut messages).unwrap();
    framer.push(b"\n\n", &mut messages).unwrap();
    messages
}

pub fn one_message_request() -> ModelRequest {
    ModelRequest {
        model: None,
        messages: vec![Message {
            id: "u1".into(),
            role: Role::User,
            blocks: vec![Block::text("hi")],
        }],
        model_state: None,
        tools: vec![],
        conversation_id: None,
    }
}
