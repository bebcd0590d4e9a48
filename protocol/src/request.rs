//! The model request (`docs/protocol.md` §2).

use crate::message::{Message, ModelState, ToolDefinition};

crate::wire! {
    strict, ts(feature = "ts");
    /// The whole conversation so far plus this turn's tools: the relay keeps no session.
    // Readonly in TypeScript: what a custom model or an interceptor receives is frozen.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ModelRequest {
        pub model: Option<String> = "model" optional,
        #[cfg_attr(feature = "ts", ts(type = "ReadonlyArray<Readonly<Message>>"))]
        pub messages: Vec<Message> = "messages",
        /// Required key, null allowed.
        #[cfg_attr(feature = "ts", ts(type = "Readonly<ModelState> | null"))]
        pub model_state: Option<ModelState> = "modelState",
        #[cfg_attr(feature = "ts", ts(type = "ReadonlyArray<Readonly<ToolDefinition>>"))]
        pub tools: Vec<ToolDefinition> = "tools" default,
        pub conversation_id: Option<String> = "conversationId" optional,
    }
}
