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
    /// What a model can take (from the configuration; default `tools: true, inputs: ["text", "image"], reasoning:
    /// false`).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Capabilities {
        /// Tool definitions and tool calls.
        pub tools: bool = "tools",
        /// The input kinds the model takes (`text` always; `image` for image blocks, `pdf` for PDF documents; text
        /// documents need only `text`). A request with a kind the model does not take is refused with
        /// `UNSUPPORTED_INPUT` before any upstream call.
        pub inputs: Vec<InputKind> = "inputs",
        /// The documented alias of `"image"` in `inputs` (kept for readers that predate `inputs`).
        pub images: bool = "images",
        /// Shown reasoning blocks.
        pub reasoning: bool = "reasoning",
    }
}

crate::string_enum! {
    /// An input kind a model takes (`capabilities.inputs`, closed set).
    pub enum InputKind {
        /// Text: text blocks, and documents of the text types (`text/plain`, `text/markdown`, `text/csv`,
        /// `application/json`).
        Text = "text",
        /// Image blocks.
        Image = "image",
        /// PDF documents (`application/pdf`).
        Pdf = "pdf",
    }
}
