//! Display messages and their content blocks.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::source::Source;

/// Who produced a message. `Tool` messages carry the `tool-result` blocks answering the previous assistant
/// message's tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    User,
    Assistant,
    Tool,
}

/// One stable message: `{ id, role, blocks }`, blocks in produced order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub id: String,
    pub role: Role,
    pub blocks: Vec<Block>,
}

/// A content block (closed set).
// `Deserialize` is hand-written (`tagged.rs`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Block {
    Text {
        text: String,
        /// What the text cites (assistant text only); empty for most text, and then not written.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        sources: Vec<Source>,
    },
    Image {
        source: ImageSource,
    },
    /// Reasoning the provider allows to be shown; private reasoning state lives in [`ModelState`].
    Reasoning {
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        call_id: String,
        name: String,
        /// Always a complete JSON object: the runtime validated it before the block became stable.
        #[cfg_attr(feature = "ts", ts(type = "JsonObject"))]
        input: Map<String, Value>,
    },
    #[serde(rename_all = "camelCase")]
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
    /// A file the person attached (user messages only): a PDF as base64, a text file as its text
    /// (`docs/protocol.md` §1, ADR-015). The media type is one of [`DocumentMediaType`](crate::document::DocumentMediaType).
    Document {
        /// The file name as the person picked it (no path).
        name: String,
        source: DocumentSource,
    },
}

impl Block {
    /// A text block without sources.
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text {
            text: text.into(),
            sources: Vec::new(),
        }
    }
}

/// Where an image comes from.
// `Deserialize` is hand-written (`tagged.rs`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ImageSource {
    Url {
        url: String,
    },
    #[serde(rename_all = "camelCase")]
    Base64 {
        media_type: String,
        data: String,
    },
}

/// How a document's content travels: `base64` for PDF, `text` for the text types.
// `Deserialize` is hand-written (`tagged.rs`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DocumentSource {
    #[serde(rename_all = "camelCase")]
    Base64 { media_type: String, data: String },
    #[serde(rename_all = "camelCase")]
    Text { media_type: String, text: String },
}

impl DocumentSource {
    /// The media type as written (checked against the closed list by [`crate::document`]).
    pub fn media_type(&self) -> &str {
        match self {
            DocumentSource::Base64 { media_type, .. } | DocumentSource::Text { media_type, .. } => {
                media_type
            }
        }
    }
}

/// Provider-private continuation state. The runtime passes it through verbatim and never reads `data`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ModelState {
    pub format: String,
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub data: Value,
}

/// Token usage of one model call (or the sum over an execution). Absent fields are zero; keys this version does
/// not know are ignored (a newer relay may report more kinds of tokens).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(remote = "Self", rename_all = "camelCase", default)]
pub struct Usage {
    // `?` in TypeScript (`optional = nullable` keeps the type as it is, which is all a non-`Option` field needs):
    // a model or relay may leave a count out. What the runtime reports is always complete (`Required<Usage>`).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub input_tokens: u64,
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub output_tokens: u64,
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub reasoning_tokens: u64,
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub cache_read_tokens: u64,
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Adds another call's usage (saturating: a provider's wild numbers must not panic the runtime).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
    }
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    #[cfg_attr(feature = "ts", ts(type = "JsonObject"))]
    pub input_schema: Value,
}

/// Deserialises an `Option<T>` whose key must be present (null allowed). serde treats a missing `Option` field
/// as `None`; the protocol makes "absent" an error for `modelState` so that a forgotten field cannot silently
/// clear provider state.
pub fn required_nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

crate::object::objects_only!(Usage);
