//! The model request (`docs/protocol.md` §2).

use serde::{Deserialize, Serialize};

use crate::message::{Message, ModelState, ToolDefinition};

/// The whole conversation so far plus this turn's tools: the relay keeps no session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub messages: Vec<Message>,
    /// Required key, null allowed.
    #[serde(deserialize_with = "crate::message::required_nullable")]
    pub model_state: Option<ModelState>,
    #[serde(default)]
    pub tools: Vec<ToolDefinition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
}
