//! [`CallRequest`]: what one model call (and its interceptors) receives. It is the protocol's
//! [`ModelRequest`] with the history SHARED rather than copied: each stable message is an `Rc<Message>` owned by
//! the execution, so building the request of step n of a tool loop costs n pointer copies instead of a deep
//! clone of the whole conversation, and a request a host keeps alive (the lazy JS request waits for the garbage
//! collector) pins no copy of the history. It serialises to exactly the JSON of [`ModelRequest`]
//! (`docs/protocol.md` §2); [`CallRequest::to_request`] / [`CallRequest::from_request`] convert.

use std::rc::Rc;

use patchbridge_protocol::{Message, ModelRequest, ModelState, ToolDefinition};
use serde::{Serialize, Serializer};

patchbridge_protocol::wire! {
    written;
    /// One model call's request (see the module docs). Cloning is cheap (reference counts). It is written as
    /// exactly the JSON of [`ModelRequest`] (the body of `POST /model`, what a custom model or an interceptor
    /// reads), the history written from the shared messages.
    #[derive(Debug, Clone, PartialEq)]
    pub struct CallRequest {
        /// The relay model id, when one was chosen.
        pub model: Option<String> = "model" optional,
        /// The whole conversation so far, oldest first.
        #[serde(serialize_with = "shared_messages")]
        pub messages: Rc<[Rc<Message>]> = "messages",
        /// Exactly what the last message-stop carried (or what was stored).
        #[serde(serialize_with = "shared_state")]
        pub model_state: Option<Rc<ModelState>> = "modelState",
        /// This turn's tool definitions (computed once per execution).
        #[serde(serialize_with = "shared_tools")]
        pub tools: Rc<[ToolDefinition]> = "tools",
        /// For the relay's logs and metrics only.
        pub conversation_id: Option<String> = "conversationId" optional,
    }
}

// serde's `Serialize` of an `Rc` needs its `rc` feature; these write through the shared values instead.
fn shared_messages<S: Serializer>(messages: &Rc<[Rc<Message>]>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(messages.iter().map(|m| &**m))
}

fn shared_state<S: Serializer>(state: &Option<Rc<ModelState>>, s: S) -> Result<S::Ok, S::Error> {
    state.as_deref().serialize(s)
}

fn shared_tools<S: Serializer>(tools: &Rc<[ToolDefinition]>, s: S) -> Result<S::Ok, S::Error> {
    tools[..].serialize(s)
}

impl CallRequest {
    /// A request from a protocol value (an interceptor that replaced the request).
    pub fn from_request(request: ModelRequest) -> Self {
        CallRequest {
            model: request.model,
            messages: request.messages.into_iter().map(Rc::new).collect(),
            model_state: request.model_state.map(Rc::new),
            tools: request.tools.into(),
            conversation_id: request.conversation_id,
        }
    }

    /// A deep copy as the protocol value.
    pub fn to_request(&self) -> ModelRequest {
        ModelRequest {
            model: self.model.clone(),
            messages: self.messages.iter().map(|m| (**m).clone()).collect(),
            model_state: self.model_state.as_deref().cloned(),
            tools: self.tools.to_vec(),
            conversation_id: self.conversation_id.clone(),
        }
    }
}
