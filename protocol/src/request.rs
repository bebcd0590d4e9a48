//! The model request (`docs/protocol.md` §2).

use serde::Serialize;

use crate::message::{Message, ModelState, ToolDefinition};

/// The whole conversation so far plus this turn's tools: the relay keeps no session.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub model: Option<String>,
    // Readonly in TypeScript: what a custom model or an interceptor receives is frozen.
    #[cfg_attr(feature = "ts", ts(type = "ReadonlyArray<Readonly<Message>>"))]
    pub messages: Vec<Message>,
    /// Required key, null allowed.
    #[serde(deserialize_with = "crate::message::required_nullable")]
    #[cfg_attr(feature = "ts", ts(type = "Readonly<ModelState> | null"))]
    pub model_state: Option<ModelState>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "ReadonlyArray<Readonly<ToolDefinition>>"))]
    pub tools: Vec<ToolDefinition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub conversation_id: Option<String>,
}
