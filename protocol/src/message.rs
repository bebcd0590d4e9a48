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

impl crate::ToValue for Role {
    fn to_value(&self) -> Value {
        Value::String(
            match self {
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool",
            }
            .to_owned(),
        )
    }
}

crate::wire! {
    strict, ts(feature = "ts");
    /// One stable message: `{ id, role, blocks }`, blocks in produced order.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Message {
        pub id: String = "id",
        pub role: Role = "role",
        pub blocks: Vec<Block> = "blocks",
    }
}

crate::wire! {
    strict, ts(feature = "ts");
    /// A content block (closed set).
    #[derive(Debug, Clone, PartialEq)]
    pub enum Block {
        Text = "text" {
            text: String = "text",
            /// What the text cites (assistant text only); empty for most text, and then not written.
            sources: Vec<Source> = "sources" omit_empty,
        },
        Image = "image" {
            source: ImageSource = "source",
        },
        /// Reasoning the provider allows to be shown; private reasoning state lives in [`ModelState`].
        Reasoning = "reasoning" {
            text: String = "text",
        },
        ToolCall = "tool-call" {
            call_id: String = "callId",
            name: String = "name",
            /// Always a complete JSON object: the runtime validated it before the block became stable.
            #[cfg_attr(feature = "ts", ts(type = "JsonObject"))]
            input: Map<String, Value> = "input",
        },
        ToolResult = "tool-result" {
            call_id: String = "callId",
            content: String = "content",
            is_error: bool = "isError",
        },
        /// A file the person attached (user messages only): a PDF as base64, a text file as its text
        /// (`docs/protocol.md` §1, ADR-015). The media type is one of [`DocumentMediaType`](crate::document::DocumentMediaType).
        Document = "document" {
            /// The file name as the person picked it (no path).
            name: String = "name",
            source: DocumentSource = "source",
        },
    }
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

crate::wire! {
    strict, ts(feature = "ts");
    /// Where an image comes from.
    #[derive(Debug, Clone, PartialEq)]
    pub enum ImageSource {
        Url = "url" {
            url: String = "url",
        },
        Base64 = "base64" {
            media_type: String = "mediaType",
            data: String = "data",
        },
    }
}

crate::wire! {
    strict, ts(feature = "ts");
    /// How a document's content travels: `base64` for PDF, `text` for the text types.
    #[derive(Debug, Clone, PartialEq)]
    pub enum DocumentSource {
        Base64 = "base64" {
            media_type: String = "mediaType",
            data: String = "data",
        },
        Text = "text" {
            media_type: String = "mediaType",
            text: String = "text",
        },
    }
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

crate::wire! {
    strict + value, ts(feature = "ts");
    /// Provider-private continuation state. The runtime passes it through verbatim and never reads `data`.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ModelState {
        pub format: String = "format",
        #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
        pub data: Value = "data",
    }
}

crate::wire! {
    lenient + value, ts(feature = "ts");
    /// Token usage of one model call (or the sum over an execution). Absent fields are zero; keys this version does
    /// not know are ignored (a newer relay may report more kinds of tokens).
    // `?` in TypeScript (`optional = nullable` keeps the type as it is, which is all a non-`Option` field needs):
    // a model or relay may leave a count out. What the runtime reports is always complete (`Required<Usage>`).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Usage {
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        pub input_tokens: u64 = "inputTokens" default,
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        pub output_tokens: u64 = "outputTokens" default,
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        pub reasoning_tokens: u64 = "reasoningTokens" default,
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        pub cache_read_tokens: u64 = "cacheReadTokens" default,
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        pub cache_write_tokens: u64 = "cacheWriteTokens" default,
    }
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

crate::wire! {
    strict, ts(feature = "ts");
    /// A tool as the model sees it.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ToolDefinition {
        pub name: String = "name",
        pub description: String = "description",
        #[cfg_attr(feature = "ts", ts(type = "JsonObject"))]
        pub input_schema: Value = "inputSchema",
    }
}
