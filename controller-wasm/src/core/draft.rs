//! The assistant message being streamed (pure data), built from validated block events in one place: the
//! loop's aggregator and the controller's state both apply the same events with [`Draft::apply`].

use patchbridge_protocol::write::Object;
use patchbridge_protocol::{BlockKind, Source, StreamEvent, ToValue};
use serde_json::Value;

/// One block of the draft.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftBlock {
    /// What kind of block (with the tool call's id and name).
    pub kind: BlockKind,
    /// Text, reasoning text, or the raw JSON arguments so far.
    pub buffer: String,
    /// Whether `block-stop` arrived.
    pub stopped: bool,
    /// A text block's sources (they arrive with `block-stop`).
    pub sources: Vec<Source>,
}

/// The assistant message being streamed (never persisted).
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// The message id.
    pub id: String,
    /// Blocks so far (tool-call buffers hold raw argument JSON).
    pub blocks: Vec<DraftBlock>,
}

impl Draft {
    /// An empty draft for message `id`.
    pub fn new(id: String) -> Self {
        Draft {
            id,
            blocks: Vec::new(),
        }
    }

    /// Applies one block event (`block-start`, `block-delta`, `block-stop`) that the aggregator has already
    /// validated (indices in order, one block open at a time); other events change nothing. O(size of the event).
    pub fn apply(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::BlockStart { block, .. } => self.blocks.push(DraftBlock {
                kind: block.clone(),
                buffer: String::new(),
                stopped: false,
                sources: Vec::new(),
            }),
            StreamEvent::BlockDelta { index, delta } => {
                if let Some(block) = self.blocks.get_mut(*index as usize) {
                    block.buffer.push_str(delta);
                }
            }
            StreamEvent::BlockStop { index, sources } => {
                if let Some(block) = self.blocks.get_mut(*index as usize) {
                    block.stopped = true;
                    block.sources.clone_from(sources);
                }
            }
            _ => {}
        }
    }

    /// `{ id, role: "assistant", blocks: [...] }` with each block's `type`, `text` (or `callId`, `name`,
    /// `argumentsText`) and `complete`, and a finished text block's `sources` when it has any.
    pub fn to_json(&self) -> Value {
        let blocks: Vec<Value> = self
            .blocks
            .iter()
            .map(|block| {
                let text = block.buffer.as_str();
                let mut object = Object::tagged(match &block.kind {
                    BlockKind::Text => "text",
                    BlockKind::Reasoning => "reasoning",
                    BlockKind::ToolCall { .. } => "tool-call",
                });
                match &block.kind {
                    BlockKind::ToolCall { call_id, name } => object
                        .put("callId", call_id.as_str())
                        .put("name", name.as_str())
                        .put("argumentsText", text),
                    _ => object.put("text", text),
                };
                object.put("complete", block.stopped);
                // Only a text block carries sources.
                if matches!(block.kind, BlockKind::Text) && !block.sources.is_empty() {
                    object.put("sources", block.sources.to_value());
                }
                object.done()
            })
            .collect();
        Object::new()
            .put("id", self.id.as_str())
            .put("role", "assistant")
            .put("blocks", blocks)
            .done()
    }
}
