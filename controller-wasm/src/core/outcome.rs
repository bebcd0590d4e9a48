//! How an execution ends when it does not fail: its [`Outcome`] and the [`ExecutionResult`] that `result`
//! resolves with (pure data).

use patchbridge_protocol::{Message, ModelState, Usage};

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

patchbridge_protocol::wire! {
    written, ts(test);
    /// What `result` resolves with.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ExecutionResult {
        /// The outcome.
        pub outcome: Outcome = "outcome",
        /// The whole conversation: input messages plus every message that became stable (never a draft). A
        /// `cancelled` result that stopped between an assistant message's tool calls and their tool message ends with
        /// a closing tool message: the results already published, and a not-run result (`isError: true`, content
        /// starting with `[not run] `) for each call that never ran, so these messages are a valid next input.
        pub messages: Vec<Message> = "messages",
        /// The provider state after the last stable message (verbatim).
        pub model_state: Option<ModelState> = "modelState",
        /// Usage summed over the model calls that completed.
        #[cfg_attr(test, ts(type = "Required<Usage>"))]
        pub usage: Usage = "usage",
    }
}
