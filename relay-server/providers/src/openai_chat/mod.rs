//! OpenAI Chat Completions (`POST /chat/completions`), for OpenAI and every OpenAI-compatible server.
//!
//! - `encode`: neutral request → Chat Completions body (`stream_options.include_usage`, images as `image_url`
//!   parts, tool results as `role: "tool"` messages, gateway reasoning sent back inside the current tool loop).
//! - `decode`: `chat.completion.chunk` SSE (`tool_calls` fragments by index, `reasoning_content` or
//!   `reasoning` from gateways, `refusal`, `finish_reason`, the trailing usage chunk, `[DONE]`) → neutral events.
//! - `text_chunk`: the decoder's fast path for the common text-delta chunk (borrowed typed fields, no `Value`).
//! - `details`: merging of streamed OpenRouter-style `reasoning_details` fragments.
//! - `extra`: provider state outside the standard fields (`extra_content`, Gemini's thought signatures).
//!
//! ModelState `openai-chat/v1`: `{ "messages": { "<id>": { "field": "reasoning_content" | "reasoning",
//! "text": "…", "details": [ … ], "extra_content": { … }, "calls": { "<call id>": { "extra_content": { … } } }
//! } } }`: the reasoning a gateway streamed for that message, under the field name it used, OpenRouter-style
//! `reasoning_details`, and the `extra_content` a server put on the message's deltas and on each tool call
//! (Gemini's `extra_content.google.thought_signature`); each part present only when streamed.

mod decode;
mod details;
mod encode;
mod extra;
mod text_chunk;

pub(crate) use decode::ChatDecoder;
pub(crate) use encode::{document, encode, image_url, tool_outputs, DocumentPart};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub(crate) const FORMAT: &str = "openai-chat/v1";

/// Which delta field carried reasoning: DeepSeek, vLLM and many gateways use `reasoning_content`, OpenRouter
/// and newer vLLM `reasoning`. It goes back under the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum ReasoningField {
    #[serde(rename = "reasoning_content")]
    ReasoningContent,
    #[serde(rename = "reasoning")]
    Reasoning,
}

impl ReasoningField {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ReasoningField::ReasoningContent => "reasoning_content",
            ReasoningField::Reasoning => "reasoning",
        }
    }
}

/// One message's entry in the ModelState.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    /// The delta field the reasoning text came in, and the text (absent when a gateway sent only details).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<ReasoningField>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// OpenRouter-style `reasoning_details`, merged from their fragments, sent back verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// The `extra_content` objects of the message's deltas, merged; sent back on the assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_content: Option<serde_json::Value>,
    /// Per tool call id: what the provider attached to that call beside its standard fields.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub calls: BTreeMap<String, CallEntry>,
}

/// What one tool call carried outside `id`, `type` and `function`, sent back with that call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CallEntry {
    /// The call's `extra_content` verbatim (fragments merged), e.g. `{ "google": { "thought_signature": … } }`.
    pub extra_content: serde_json::Value,
}
