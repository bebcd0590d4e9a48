//! The models document (`docs/protocol.md` §5).

crate::wire! {
    lenient;
    /// `GET {base}/models`: the models a relay offers, in configuration order (`docs/protocol.md` §5).
    #[derive(Debug, Clone, PartialEq)]
    pub struct ModelsDocument {
        /// [`PROTOCOL_VERSION`](crate::PROTOCOL_VERSION).
        pub protocol_version: u32 = "protocolVersion",
        /// True when the scripted demo model is active (answers are scripts, not AI); it is then the only model.
        pub preview_only: bool = "previewOnly",
        /// The configured `defaultModel`, else the first model.
        pub default_model: String = "defaultModel",
        /// Every model, in configuration order.
        pub models: Vec<ModelInfo> = "models",
    }
}

crate::wire! {
    lenient;
    /// One model of [`ModelsDocument`]; no URL or credential is ever listed.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ModelInfo {
        /// The id a model request names.
        pub id: String = "id",
        /// `openai-chat`, `openai-responses`, `anthropic-messages` or `scripted-demo`.
        pub provider: String = "provider",
        /// Display name (defaults to the id).
        pub label: String = "label",
        /// True only for the scripted demo model.
        pub preview_only: bool = "previewOnly",
        /// What the model can take.
        pub capabilities: Capabilities = "capabilities",
    }
}

crate::wire! {
    lenient;
    /// What a model can take (from the configuration; default `tools: true, images: false, reasoning: false`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Capabilities {
        /// Tool definitions and tool calls.
        pub tools: bool = "tools",
        /// Image blocks in user messages.
        pub images: bool = "images",
        /// Shown reasoning blocks.
        pub reasoning: bool = "reasoning",
    }
}
