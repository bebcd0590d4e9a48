//! Conversations stored by revision (`docs/protocol.md` §6).

use serde::{Deserialize, Serialize};

use crate::message::{Message, ModelState};

/// Messages and provider state, always saved and loaded as one unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationContext {
    pub messages: Vec<Message>,
    /// Always serialised, null allowed; a missing key is an error when parsing.
    #[serde(deserialize_with = "crate::message::required_nullable")]
    pub model_state: Option<ModelState>,
}

/// `ConversationSummary { "id", "title", "revision", "createdAt", "updatedAt" }` (RFC 3339 times;
/// `docs/protocol.md` §6).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub revision: u64,
    pub created_at: String,
    pub updated_at: String,
}

/// `ConversationSnapshot { "conversation": ConversationSummary, "context": { "messages", "modelState" } }`: what
/// reading or writing a conversation returns (`docs/protocol.md` §6).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSnapshot {
    pub conversation: ConversationSummary,
    pub context: ConversationContext,
}

/// `GET {base}/conversations?limit=N&cursor=C` → `{ "items": [ConversationSummary], "nextCursor": string | null }`:
/// newest `updatedAt` first; `nextCursor` is opaque (pass it as `cursor` for the next page) and null on the last
/// page (`docs/protocol.md` §6).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationPage {
    #[cfg_attr(
        feature = "ts",
        ts(type = "ReadonlyArray<Readonly<ConversationSummary>>")
    )]
    pub items: Vec<ConversationSummary>,
    /// Always serialised (null on the last page).
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// `POST {base}/conversations` `{ "title"?: string, "context"?: ConversationContext }`: creates revision 1 (title
/// defaults to `""`, context to no messages and a null modelState; `docs/protocol.md` §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateConversation {
    /// The title (at most 500 characters, no control characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The initial context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ConversationContext>,
}

/// `PUT {base}/conversations/{id}` `{ "expectedRevision": n, "title"?: string, "context": ConversationContext }`:
/// writes revision n+1 if the stored one is n (title kept when absent; `docs/protocol.md` §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveConversation {
    /// The revision the writer read; a stale one is `409 REVISION_CONFLICT`.
    pub expected_revision: u64,
    /// The new title, when it changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The whole new context.
    pub context: ConversationContext,
}

crate::object::objects_only!(CreateConversation, SaveConversation);
