//! Anthropic Messages (`POST /messages`).
//!
//! - `encode`: neutral request → Messages body (thinking, redacted thinking and server tool blocks from
//!   ModelState at their original positions; consecutive tool results merged into one user message).
//! - `cache`: prompt caching breakpoints (`cache_control`) on the stable prefix of a request.
//! - `decode`: Messages SSE (`message_start`, `content_block_*`, `message_delta`, `message_stop`, `ping`,
//!   `error`) → neutral events.
//! - `block_delta`: the decoder's fast path for `content_block_delta` events of the usual shape (borrowed typed
//!   fields, no `Value`).
//!
//! ModelState `anthropic-messages/v1`: `{ "messages": { "<id>": { "content": [Part] } } }` where each part is a
//! content block of that message in order: `{ "raw": <block verbatim> , "blocks": [i] }` for thinking (which
//! also produced shown reasoning block `i`), `{ "raw": … }` for redacted thinking and server tool blocks, and
//! `{ "blocks": [i] }` for a text or tool-use block that the neutral block `i` describes fully.

mod block_delta;
mod cache;
mod decode;
mod encode;

pub(crate) use decode::AnthropicDecoder;
pub(crate) use encode::{encode, validate_options};

use serde::{Deserialize, Serialize};

use crate::state::Part;

pub(crate) const FORMAT: &str = "anthropic-messages/v1";
pub(crate) const API_VERSION: &str = "2023-06-01";

/// One message's entry in the ModelState.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    pub content: Vec<Part>,
}
