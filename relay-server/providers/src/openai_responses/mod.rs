//! OpenAI Responses (`POST /responses`), stateless: `store: false` with
//! `include: ["reasoning.encrypted_content"]`, so reasoning continues across turns through ModelState.
//!
//! - `encode`: neutral request → Responses body (`input` items: user messages, assistant messages,
//!   `function_call`, `function_call_output`, and reasoning items from ModelState verbatim, in order;
//!   `prompt_cache_key` for the conversation).
//! - `decode`: Responses SSE (`response.created`, `response.output_item.added/done`,
//!   `response.output_text.delta`, `response.refusal.delta`, `response.reasoning_summary_text.delta`,
//!   `response.function_call_arguments.delta`, `response.completed/incomplete/failed`, `error`) → neutral events.
//!
//! ModelState `openai-responses/v1`: `{ "messages": { "<id>": { "items": [Part] } } }`: the output items of
//! that message in `output_index` order, `{ "raw": <reasoning item verbatim>, "blocks": [summary block indexes] }`
//! for reasoning (with its `encrypted_content`) and other items the neutral protocol cannot express,
//! `{ "blocks": [text blocks], "phase": … }` for one output message, and `{ "blocks": [i] }` for a function call.
//! Without an entry every text block goes back as its own assistant message.

mod decode;
mod encode;

pub(crate) use decode::ResponsesDecoder;
pub(crate) use encode::encode;

use serde::{Deserialize, Serialize};

use crate::state::Part;

pub(crate) const FORMAT: &str = "openai-responses/v1";

/// One message's entry in the ModelState.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    pub items: Vec<Part>,
}
