//! How an execution ends when it does not fail: its [`Outcome`] and the [`ExecutionResult`] that `result`
//! resolves with (pure data).

use patchbridge_protocol::write::Object;
use patchbridge_protocol::{Message, ModelState, ToValue, Usage};
use serde::Serialize;
use serde_json::Value;

patchbridge_protocol::string_enum! {
    /// The non-error end of an execution (closed set): `completed`, `max-tokens` or `cancelled`.
    pub enum Outcome {
        /// The model ended naturally (`end-turn`, `stop-sequence`, `refusal`, `other`).
        Completed = "completed",
        /// The provider sealed the message at its token limit; the message is kept (and saved by the controller).
        MaxTokens = "max-tokens",
        /// The host or user cancelled; nothing of the turn is saved.
        Cancelled = "cancelled",
    }
}

/// What `result` resolves with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ExecutionResult {
    /// The outcome.
    pub outcome: Outcome,
    /// The whole conversation: input messages plus every message that became stable (never a draft). A
    /// `cancelled` result that stopped between an assistant message's tool calls and their tool message ends with
    /// a closing tool message: the results already published, and a not-run result (`isError: true`, content
    /// starting with `[not run] `) for each call that never ran, so these messages are a valid next input.
    pub messages: Vec<Message>,
    /// The provider state after the last stable message (verbatim).
    pub model_state: Option<ModelState>,
    /// Usage summed over the model calls that completed.
    #[cfg_attr(test, ts(type = "Required<Usage>"))]
    pub usage: Usage,
}

impl ToValue for ExecutionResult {
    fn to_value(&self) -> Value {
        Object::new()
            .put("outcome", self.outcome.to_value())
            .put("messages", self.messages.to_value())
            .put("modelState", self.model_state.to_value())
            .put("usage", self.usage.to_value())
            .done()
    }
}
