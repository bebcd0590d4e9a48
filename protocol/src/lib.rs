//! The wire types of `docs/protocol.md`, shared by the browser runtime (`controller-wasm`) and the relay
//! (`relay-server`) so that both sides agree by construction.
//!
//! - [`message`]: [`Message`], [`Block`], [`ImageSource`], [`DocumentSource`], [`ModelState`], [`Usage`],
//!   [`ToolDefinition`].
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
//! - [`wire!`]: each wire type declared once (its keys, and how each may be absent), which generates its reader,
//!   its writers and its TypeScript declaration ([`declare`]).
//! - [`write`](mod@write): [`ToValue`], JSON values built by plain map inserts (what the runtime writes).
//! - [`string_enum!`]: closed sets of stable strings (codes, names) declared once.
//! - `fields` (private): the one key loop every wire struct is read through (objects only, the derive's errors).
//! - `tagged` (private): the one reader of the internally tagged enums (smaller than serde's derive, same
//!   behaviour and error texts).
//! - `value` (private): reading the fields of a tagged enum's variant out of a `serde_json::Value`.
//!
//! Requests are parsed strictly (an unknown key is refused) so typos fail loudly; the protocol document says
//! clients ignore unknown keys in responses, which is why response-only types do not deny them.

// `wire!` names serde through this crate (`#[serde(crate = "patchbridge_protocol::__private::serde")]`), here too.
extern crate self as patchbridge_protocol;

pub mod conversation;
pub mod declare;
pub mod document;
pub mod error;
pub mod event;
mod fields;
pub mod message;
pub mod models;
pub mod number;
pub mod request;
pub mod source;
mod string_enum;
mod tagged;
pub mod unique;
mod value;
pub mod write;

/// What [`string_enum!`] and [`wire!`] expand to refer to, so that crates using the macro need no direct dependency.
#[doc(hidden)]
pub mod __private {
    pub use crate::fields::present;
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
