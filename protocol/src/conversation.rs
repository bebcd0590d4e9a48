//! Conversations stored by revision (`docs/protocol.md` §6).

use serde::{Deserialize, Serialize};

use crate::message::{Message, ModelState};

/// Messages and provider state, always saved and loaded as one unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationContext {
    pub messages: Vec<Message>,
    /// Always serialised, null allowed; a missing key is an error when parsing.
    #[serde(deserialize_with = "crate::message::required_nullable")]
    pub model_state: Option<ModelState>,
}

/// A conversation's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub revision: u64,
    pub created_at: String,
    pub updated_at: String,
}

/// What reading a conversation returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSnapshot {
    pub conversation: ConversationSummary,
    pub context: ConversationContext,
}

/// One page of `GET {base}/conversations`: newest `updatedAt` first; `next_cursor` is opaque and `None` on the
/// last page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationPage {
    pub items: Vec<ConversationSummary>,
    /// Always serialised (null on the last page).
    #[serde(default)]
    pub next_cursor: Option<String>,
}
