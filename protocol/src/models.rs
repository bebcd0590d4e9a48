//! The models document (`docs/protocol.md` §5).

use serde::{Deserialize, Serialize};

/// `GET {base}/models`: the models a relay offers, in configuration order (`docs/protocol.md` §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct ModelsDocument {
    /// [`PROTOCOL_VERSION`](crate::PROTOCOL_VERSION).
    pub protocol_version: u32,
    /// True when the scripted demo model is active (answers are scripts, not AI); it is then the only model.
    pub preview_only: bool,
    /// The configured `defaultModel`, else the first model.
    pub default_model: String,
    /// Every model, in configuration order.
    pub models: Vec<ModelInfo>,
}

/// One model of [`ModelsDocument`]; no URL or credential is ever listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct ModelInfo {
    /// The id a model request names.
    pub id: String,
    /// `openai-chat`, `openai-responses`, `anthropic-messages` or `scripted-demo`.
    pub provider: String,
    /// Display name (defaults to the id).
    pub label: String,
    /// True only for the scripted demo model.
    pub preview_only: bool,
    /// What the model can take.
    pub capabilities: Capabilities,
}

/// What a model can take (from the configuration; default `tools: true, images: false, reasoning: false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Capabilities {
    /// Tool definitions and tool calls.
    pub tools: bool,
    /// Image blocks in user messages.
    pub images: bool,
    /// Shown reasoning blocks.
    pub reasoning: bool,
}

crate::object::objects_only!(ModelsDocument, ModelInfo, Capabilities);
