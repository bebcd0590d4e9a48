//! What the decoder-cost examples share: the model request the decoders are built for (one user message; the
//! decoders read only its ModelState and tool names, so its content does not matter).

use patchbridge_protocol::{Block, Message, ModelRequest, Role};

pub fn one_message_request() -> ModelRequest {
    ModelRequest {
        model: None,
        messages: vec![Message {
            id: "u1".into(),
            role: Role::User,
            blocks: vec![Block::Text { text: "hi".into() }],
        }],
        model_state: None,
        tools: vec![],
        conversation_id: None,
    }
}
