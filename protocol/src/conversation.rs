//! Conversations stored by revision (`docs/protocol.md` §6).

use crate::message::{Message, ModelState};

crate::wire! {
    strict;
    /// Messages and provider state, always saved and loaded as one unit.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ConversationContext {
        pub messages: Vec<Message> = "messages",
        /// Always written, null allowed; a missing key is an error when reading.
        pub model_state: Option<ModelState> = "modelState",
    }
}

crate::wire! {
    lenient, ts(feature = "ts");
    /// `ConversationSummary { "id", "title", "revision", "createdAt", "updatedAt" }` (RFC 3339 times;
    /// `docs/protocol.md` §6).
    #[derive(Debug, Clone, PartialEq)]
    pub struct ConversationSummary {
        pub id: String = "id",
        pub title: String = "title",
        pub revision: u64 = "revision",
        pub created_at: String = "createdAt",
        pub updated_at: String = "updatedAt",
    }
}

crate::wire! {
    lenient;
    /// `ConversationSnapshot { "conversation": ConversationSummary, "context": { "messages", "modelState" } }`: what
    /// reading or writing a conversation returns (`docs/protocol.md` §6).
    #[derive(Debug, Clone, PartialEq)]
    pub struct ConversationSnapshot {
        pub conversation: ConversationSummary = "conversation",
        pub context: ConversationContext = "context",
    }
}

crate::wire! {
    lenient, ts(feature = "ts");
    /// `GET {base}/conversations?limit=N&cursor=C` → `{ "items": [ConversationSummary], "nextCursor": string | null }`:
    /// newest `updatedAt` first; `nextCursor` is opaque (pass it as `cursor` for the next page) and null on the last
    /// page (`docs/protocol.md` §6).
    #[derive(Debug, Clone, PartialEq)]
    pub struct ConversationPage {
        #[cfg_attr(
            feature = "ts",
            ts(type = "ReadonlyArray<Readonly<ConversationSummary>>")
        )]
        pub items: Vec<ConversationSummary> = "items",
        /// Always serialised (null on the last page).
        pub next_cursor: Option<String> = "nextCursor" default,
    }
}

crate::wire! {
    strict;
    /// `POST {base}/conversations` `{ "title"?: string, "context"?: ConversationContext }`: creates revision 1 (title
    /// defaults to `""`, context to no messages and a null modelState; `docs/protocol.md` §6).
    #[derive(Debug, Clone, PartialEq)]
    pub struct CreateConversation {
        /// The title (at most 500 characters, no control characters).
        pub title: Option<String> = "title" optional,
        /// The initial context.
        pub context: Option<ConversationContext> = "context" optional,
    }
}

crate::wire! {
    strict;
    /// `PUT {base}/conversations/{id}` `{ "expectedRevision": n, "title"?: string, "context": ConversationContext }`:
    /// writes revision n+1 if the stored one is n (title kept when absent; `docs/protocol.md` §6).
    #[derive(Debug, Clone, PartialEq)]
    pub struct SaveConversation {
        /// The revision the writer read; a stale one is `409 REVISION_CONFLICT`.
        pub expected_revision: u64 = "expectedRevision",
        /// The new title, when it changes.
        pub title: Option<String> = "title" optional,
        /// The whole new context.
        pub context: ConversationContext = "context",
    }
}
