//! Pure translation between the neutral PatchBridge protocol (`docs/protocol.md`, crate
//! `patchbridge-protocol`) and the wire formats of model providers. No I/O happens here: the relay does the
//! HTTP, this crate turns a neutral [`ModelRequest`] into an [`UpstreamRequest`] body and an upstream SSE
//! body ([`sse`] frames it) back into neutral [`StreamEvent`]s.
//!
//! Layout:
//! - [`ProviderKind`], [`encode_request`], [`Decoder`], [`validate_options`] (this file): the dispatch.
//! - [`options`]: [`ModelOptions`] in, [`UpstreamRequest`] out.
//! - [`error`]: [`AdapterError`], the one error enum, with stable codes.
//! - [`sse`]: SSE framing of the upstream body, linear in its length.
//! - `cache_key`: OpenAI's `prompt_cache_key` for a conversation.
//! - `emit`: the neutral event builder shared by the decoders (indexes 0..n, one open block, tool-call
//!   validation).
//! - `state`: ModelState helpers shared by the adapters (format check, entries keyed by message id, pruning).
//! - `tool_names`: the reversible mapping of neutral tool names (`local.device_get`) to provider-safe names.
//! - `wire`: reading provider events (JSON parse, event type, lenient field access) for the decoders, and the
//!   typed field readers of their fast paths.
//! - `test_support` (tests only): fixture streams and proptest strategies for comparing a decoder's fast path
//!   with its general path.
//! - `openai_chat`, `openai_responses`, `anthropic`: one module per wire format, each with `encode` and
//!   `decode`. Chat Completions and Anthropic also read their most common event, the text delta, on a fast path
//!   (`text_chunk`, `block_delta`) that skips the `serde_json::Value` tree; `relay-server/bench/README.md` has
//!   the measurement that keeps these two and no others.

pub mod error;
pub mod options;
pub mod sse;

mod anthropic;
mod cache_key;
mod emit;
mod openai_chat;
mod openai_responses;
mod state;
#[cfg(test)]
mod test_support;
mod tool_names;
mod wire;

use patchbridge_protocol::{ModelRequest, StreamEvent};

pub use error::{AdapterError, UpstreamFailure};
pub use options::{
    ModelOptions, ReasoningEffort, ReasoningOptions, ReasoningSummary, UpstreamRequest,
    DEFAULT_ANTHROPIC_MAX_TOKENS,
};
pub use state::unique_message_id;

patchbridge_protocol::string_enum! {
    /// Closed set of upstream wire formats, by the name used in configuration and in `GET /models` (`provider`).
    pub enum ProviderKind {
        /// OpenAI Chat Completions and every OpenAI-compatible server (`POST /chat/completions`).
        OpenAiChat = "openai-chat",
        /// OpenAI Responses (`POST /responses`), stateless (`store: false`).
        OpenAiResponses = "openai-responses",
        /// Anthropic Messages (`POST /messages`).
        AnthropicMessages = "anthropic-messages",
    }
}

impl ProviderKind {
    /// The path of the streaming endpoint, joined to a model's base URL (`https://api.openai.com/v1` +
    /// `/chat/completions`); every request of this kind goes there.
    pub fn path(self) -> &'static str {
        match self {
            ProviderKind::OpenAiChat => "/chat/completions",
            ProviderKind::OpenAiResponses => "/responses",
            ProviderKind::AnthropicMessages => "/messages",
        }
    }

    /// The ModelState `format` this adapter owns; requests carrying another format are rejected.
    pub fn model_state_format(self) -> &'static str {
        match self {
            ProviderKind::OpenAiChat => "openai-chat/v1",
            ProviderKind::OpenAiResponses => "openai-responses/v1",
            ProviderKind::AnthropicMessages => "anthropic-messages/v1",
        }
    }
}

/// Checks options that a provider would reject on every call (so the relay can refuse to start instead).
pub fn validate_options(kind: ProviderKind, options: &ModelOptions) -> Result<(), AdapterError> {
    if options.upstream_model.trim().is_empty() {
        return Err(AdapterError::InvalidRequest(
            "upstream_model must not be empty".into(),
        ));
    }
    if options.max_output_tokens == Some(0) {
        return Err(AdapterError::InvalidRequest(
            "max_output_tokens must be at least 1".into(),
        ));
    }
    if kind == ProviderKind::AnthropicMessages {
        anthropic::validate_options(options)?;
    }
    Ok(())
}

/// Encodes one neutral request for `kind`. Fails with `MODEL_STATE_FORMAT_MISMATCH` when the request's
/// ModelState belongs to another adapter, and `INVALID_REQUEST` when the messages cannot be expressed.
pub fn encode_request(
    kind: ProviderKind,
    options: &ModelOptions,
    request: &ModelRequest,
) -> Result<UpstreamRequest, AdapterError> {
    match kind {
        ProviderKind::OpenAiChat => openai_chat::encode(options, request),
        ProviderKind::OpenAiResponses => openai_responses::encode(options, request),
        ProviderKind::AnthropicMessages => anthropic::encode(options, request),
    }
}

/// Incremental decoder of one upstream SSE stream into neutral events.
///
/// The relay parses SSE framing and calls [`Decoder::feed`] with each SSE message's `event:` name (empty
/// when absent) and `data:`; at end of input it calls [`Decoder::finish`]. The decoder emits `message-start`
/// (with the message id that keys ModelState entries) first and `message-stop` (stop reason, usage and the
/// FULL next ModelState: the entries still referenced by the request's messages plus the new message's entry,
/// or null when there is nothing to carry) last. After an `Err` the stream is dead: stop feeding and send the
/// error's code to the browser.
pub struct Decoder {
    inner: DecoderInner,
}

enum DecoderInner {
    Chat(openai_chat::ChatDecoder),
    Responses(openai_responses::ResponsesDecoder),
    Anthropic(anthropic::AnthropicDecoder),
}

impl Decoder {
    /// A decoder for the response to `request` (the same request given to [`encode_request`]): it needs the
    /// request's ModelState and message ids to build the full next state, and its tool names to map
    /// provider-safe names back.
    pub fn new(kind: ProviderKind, request: &ModelRequest) -> Result<Self, AdapterError> {
        let inner = match kind {
            ProviderKind::OpenAiChat => DecoderInner::Chat(openai_chat::ChatDecoder::new(request)?),
            ProviderKind::OpenAiResponses => {
                DecoderInner::Responses(openai_responses::ResponsesDecoder::new(request)?)
            }
            ProviderKind::AnthropicMessages => {
                DecoderInner::Anthropic(anthropic::AnthropicDecoder::new(request)?)
            }
        };
        Ok(Decoder { inner })
    }

    /// Whether the decoder reads its most common events (text and other deltas of the usual shape) into
    /// borrowed typed fields instead of a `serde_json::Value` tree. On by default; the Responses decoder has no
    /// fast path. Both ways produce the same events and errors; turning it off exists so that the tests and
    /// `examples/decode_cost.rs` can compare them.
    #[doc(hidden)]
    pub fn set_fast_path(&mut self, on: bool) {
        match &mut self.inner {
            DecoderInner::Chat(d) => d.fast_path = on,
            DecoderInner::Anthropic(d) => d.fast_path = on,
            DecoderInner::Responses(_) => {}
        }
    }

    /// Feeds one SSE message. Appends the neutral events it produces to `out`. Input after the provider's final
    /// event is ignored.
    pub fn feed(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        if self.is_complete() {
            return Ok(());
        }
        match &mut self.inner {
            DecoderInner::Chat(d) => d.feed(event, data, out),
            DecoderInner::Responses(d) => d.feed(event, data, out),
            DecoderInner::Anthropic(d) => d.feed(event, data, out),
        }
    }

    /// End of the upstream body. Fails with `UPSTREAM_PROTOCOL_ERROR` if the provider's final event never came.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        if self.is_complete() {
            return Ok(());
        }
        match &mut self.inner {
            DecoderInner::Chat(d) => d.finish(out),
            DecoderInner::Responses(d) => d.finish(out),
            DecoderInner::Anthropic(d) => d.finish(out),
        }
    }

    /// Whether the provider's final event has been seen (the stream is complete; later bytes are ignored). Every
    /// decoder seals its message through its emitter, so the emitter's state is the answer.
    pub fn is_complete(&self) -> bool {
        let emit = match &self.inner {
            DecoderInner::Chat(d) => &d.emit,
            DecoderInner::Responses(d) => &d.emit,
            DecoderInner::Anthropic(d) => &d.emit,
        };
        emit.stopped()
    }
}
