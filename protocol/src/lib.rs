//! The wire types of `docs/protocol.md`, shared by the browser runtime (`controller-wasm`) and the relay
//! (`relay-server`) so that both sides agree by construction.
//!
//! - [`message`]: [`Message`], [`Block`], [`ImageSource`], [`DocumentSource`], [`ModelState`], [`Usage`], [`ToolDefinition`].
//! - [`document`]: the closed lists of attachment media types ([`DocumentMediaType`], [`ImageMediaType`]) and
//!   the size of base64 data.
//! - [`event`]: the neutral model stream: [`StreamEvent`], [`BlockKind`], [`StopReason`].
//! - [`source`]: [`Source`], what a text block cites (title, safe link, snippet).
//! - [`request`]: [`ModelRequest`], the body of `POST {base}/model` and what a custom model receives.
//! - [`conversation`]: [`ConversationContext`], [`ConversationSnapshot`], [`ConversationSummary`],
//!   [`ConversationPage`], and the request bodies [`CreateConversation`], [`SaveConversation`].
//! - [`error`]: [`RelayErrorCode`] (with its HTTP status and retry advice), the [`ErrorEnvelope`] of every
//!   error answer, and the [`SpendingLimit`] a `SPENDING_LIMIT_REACHED` error names.
//! - [`models`]: [`ModelsDocument`], the answer of `GET {base}/models`.
//! - [`number`]: JSON numbers compared and range-checked exactly from their text ([`number::Decimal`]).
//! - [`unique`]: JSON values whose objects have unique keys and numbers a double holds (tool-call arguments).
//! - [`write`](mod@write): [`ToValue`], the wire types as JSON values built by hand (what the runtime writes).
//! - [`string_enum!`]: closed sets of stable strings (codes, names) declared once.
//! - `object` (private): wire structs are read from JSON objects only (`objects_only!`).
//! - `fields` (private): hand-written `Deserialize` of the structs the runtime reads most (messages, conversations,
//!   model requests): one key loop for all of them, same behaviour and error texts as the derive.
//! - `tagged` (private): hand-written `Deserialize` of the internally tagged enums (smaller than serde's derive,
//!   same behaviour and error texts).
//! - `unexpected` (private): how a reader names the JSON value it did not expect (shared by `tagged` and `source`).
//!
//! Requests are parsed strictly (`deny_unknown_fields`) so typos fail loudly; the protocol document says
//! clients ignore unknown keys in responses, which is why response-only types do not deny them.

pub mod conversation;
pub mod document;
pub mod error;
pub mod event;
mod fields;
pub mod message;
pub mod models;
pub mod number;
mod object;
pub mod request;
pub mod source;
mod string_enum;
mod tagged;
mod unexpected;
pub mod unique;
pub mod write;

/// What [`string_enum!`] expands to refers to, so that crates using the macro need no direct dependency.
#[doc(hidden)]
pub mod __private {
    pub use serde;
    pub use serde_json::Value;
    pub use std::string::String;
}

pub use conversation::{
    ConversationContext, ConversationPage, ConversationSnapshot, ConversationSummary,
    CreateConversation, SaveConversation,
};
pub use document::{DocumentMediaType, ImageMediaType};
pub use error::{ErrorBody, ErrorEnvelope, RelayErrorCode, SpendingLimit, SpendingLimitKind};
pub use event::{BlockKind, StopReason, StreamEvent};
pub use message::{
    Block, DocumentSource, ImageSource, Message, ModelState, Role, ToolDefinition, Usage,
};
pub use models::{Capabilities, InputKind, ModelInfo, ModelsDocument};
pub use request::ModelRequest;
pub use source::Source;
pub use write::ToValue;

/// The protocol version reported by `GET {base}/models`.
pub const PROTOCOL_VERSION: u32 = 1;
