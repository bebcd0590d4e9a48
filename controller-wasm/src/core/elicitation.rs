//! A question a running tool puts to the person (pure data): the [`ElicitationRequest`] a tool makes through
//! its context (`context.elicit(request)`, MCP's form and URL elicitation), the pending [`Elicitation`] the
//! execution exposes (the second interrupt kind, beside the tool confirmation), the [`ElicitationResponse`]
//! that answers it, and the [`Asker`] a tool's context carries. The slot that holds the pending question is the
//! execution's one interrupt slot, so the terminal gate consumes it exactly as it consumes a confirmation.

use std::fmt;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use patchbridge_protocol::write::Object;
use patchbridge_protocol::ToValue;
use serde_json::{Map, Value};

use super::error::{AgentError, ErrorCode};
use super::interrupt::InterruptKind;

patchbridge_protocol::string_enum! {
    /// How the person answers an elicitation (closed set, MCP's modes).
    pub enum ElicitationMode {
        /// A small form built from `requestedSchema` (flat, primitive fields).
        Form = "form",
        /// A link the person opens; the answer happens there, the tool waits.
        Url = "url",
    }
}

patchbridge_protocol::string_enum! {
    /// The person's answer to an elicitation (closed set, MCP's actions).
    pub enum ElicitationAction {
        /// Answered (with `content` in form mode).
        Accept = "accept",
        /// Said no.
        Decline = "decline",
        /// Dismissed without a choice.
        Cancel = "cancel",
    }
}

/// What a tool asks: `{ mode?, message, requestedSchema?, url?, elicitationId?, source? }`.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// `form` (default) or `url`.
    pub mode: ElicitationMode,
    /// The question, shown to the person.
    pub message: String,
    /// Form mode: the fields asked for (an object schema of primitive properties).
    pub requested_schema: Option<Map<String, Value>>,
    /// URL mode: the link to open.
    pub url: Option<String>,
    /// URL mode: the server's id of this elicitation.
    pub elicitation_id: Option<String>,
    /// Who asks (an MCP tool's server, say), shown with the question.
    pub source: Option<String>,
}

fn invalid(message: &str) -> AgentError {
    AgentError::new(ErrorCode::InvalidInput, format!("elicit: {message}"))
}

fn opt_string(map: &Map<String, Value>, key: &str) -> Result<Option<String>, AgentError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(&format!("{key} must be a string"))),
    }
}

impl ElicitationRequest {
    /// Reads a tool's request strictly (unknown keys refused; form mode needs an object `requestedSchema`,
    /// URL mode an http(s) `url`).
    pub fn from_json(value: &Value) -> Result<ElicitationRequest, AgentError> {
        let Value::Object(map) = value else {
            return Err(invalid(
                "expects { mode?, message, requestedSchema?, url?, elicitationId?, source? }",
            ));
        };
        const KEYS: [&str; 6] = [
            "mode",
            "message",
            "requestedSchema",
            "url",
            "elicitationId",
            "source",
        ];
        if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(invalid(&format!("unknown key {key:?}")));
        }
        let mode = match opt_string(map, "mode")? {
            None => ElicitationMode::Form,
            Some(text) => ElicitationMode::parse(&text)
                .ok_or_else(|| invalid("mode must be \"form\" or \"url\""))?,
        };
        let message = opt_string(map, "message")?.ok_or_else(|| invalid("message is required"))?;
        let requested_schema = match map.get("requestedSchema") {
            None | Some(Value::Null) => None,
            Some(Value::Object(schema)) => Some(schema.clone()),
            Some(_) => return Err(invalid("requestedSchema must be an object schema")),
        };
        let url = opt_string(map, "url")?;
        match mode {
            ElicitationMode::Form if requested_schema.is_none() => {
                return Err(invalid("form mode needs requestedSchema"))
            }
            ElicitationMode::Url
                if !url
                    .as_deref()
                    .is_some_and(|u| u.starts_with("https://") || u.starts_with("http://")) =>
            {
                return Err(invalid("url mode needs an http(s) url"))
            }
            _ => {}
        }
        Ok(ElicitationRequest {
            mode,
            message,
            requested_schema,
            url,
            elicitation_id: opt_string(map, "elicitationId")?,
            source: opt_string(map, "source")?,
        })
    }
}

patchbridge_protocol::wire! {
    written, ts(test);
    /// A pending elicitation: the question of a running tool call, awaiting the person.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Elicitation {
        /// Stable id to pass to `respond`.
        pub interrupt_id: String = "interruptId",
        /// Always `elicitation`.
        pub kind: InterruptKind = "kind",
        /// The tool call that asks.
        pub call_id: String = "callId",
        /// The tool name.
        pub tool: String = "tool",
        /// `form` or `url`.
        pub mode: ElicitationMode = "mode",
        /// The question.
        pub message: String = "message",
        /// Form mode: the fields asked for.
        #[cfg_attr(test, ts(type = "JsonObject | null"))]
        pub requested_schema: Option<Map<String, Value>> = "requestedSchema",
        /// URL mode: the link to open.
        pub url: Option<String> = "url",
        /// URL mode: the server's id of this elicitation.
        pub elicitation_id: Option<String> = "elicitationId",
        /// Who asks (an MCP tool's server), when the tool said.
        pub source: Option<String> = "source",
    }
}

impl Elicitation {
    /// The pending question of `call_id` (tool `tool`) for `request`.
    pub fn new(
        interrupt_id: String,
        call_id: &str,
        tool: &str,
        request: ElicitationRequest,
    ) -> Self {
        Elicitation {
            interrupt_id,
            kind: InterruptKind::Elicitation,
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            mode: request.mode,
            message: request.message,
            requested_schema: request.requested_schema,
            url: request.url,
            elicitation_id: request.elicitation_id,
            source: request.source,
        }
    }
}

/// The person's answer: `{ action: "accept", content }`, `{ action: "decline" }` or `{ action: "cancel" }`.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationResponse {
    /// Answered; `content` holds the form's values (empty in URL mode).
    Accept {
        /// The values, by field name.
        content: Map<String, Value>,
    },
    /// Said no.
    Decline,
    /// Dismissed.
    Cancel,
}

impl ElicitationResponse {
    /// Parses `{ action, content? }` (`content` only with `accept`, an object of primitive values) or the bare
    /// strings `"decline"` / `"cancel"`.
    pub fn from_json(value: &Value) -> Result<ElicitationResponse, AgentError> {
        let bad = || {
            AgentError::new(
                ErrorCode::InvalidInput,
                "an elicitation answer must be { action: \"accept\", content: { … } }, { action: \"decline\" } or { action: \"cancel\" }",
            )
        };
        let map = match value {
            Value::String(s) if s == "decline" => return Ok(ElicitationResponse::Decline),
            Value::String(s) if s == "cancel" => return Ok(ElicitationResponse::Cancel),
            Value::Object(map) => map,
            _ => return Err(bad()),
        };
        if map.keys().any(|k| k != "action" && k != "content") {
            return Err(bad());
        }
        let action = map
            .get("action")
            .and_then(Value::as_str)
            .and_then(ElicitationAction::parse)
            .ok_or_else(bad)?;
        let content = map.get("content");
        match action {
            ElicitationAction::Accept => {
                let content = match content {
                    None => Map::new(),
                    Some(Value::Object(content)) => content.clone(),
                    Some(_) => return Err(bad()),
                };
                let primitive = |v: &Value| match v {
                    Value::String(_) | Value::Bool(_) | Value::Number(_) => true,
                    Value::Array(items) => items.iter().all(Value::is_string),
                    _ => false,
                };
                if !content.values().all(primitive) {
                    return Err(AgentError::new(
                        ErrorCode::InvalidInput,
                        "an elicitation's content holds strings, numbers, booleans or arrays of strings only",
                    ));
                }
                Ok(ElicitationResponse::Accept { content })
            }
            _ if content.is_some() => Err(bad()),
            ElicitationAction::Decline => Ok(ElicitationResponse::Decline),
            ElicitationAction::Cancel => Ok(ElicitationResponse::Cancel),
        }
    }

    /// Its action.
    pub fn action(&self) -> ElicitationAction {
        match self {
            ElicitationResponse::Accept { .. } => ElicitationAction::Accept,
            ElicitationResponse::Decline => ElicitationAction::Decline,
            ElicitationResponse::Cancel => ElicitationAction::Cancel,
        }
    }
}

impl ToValue for ElicitationResponse {
    fn to_value(&self) -> Value {
        match self {
            ElicitationResponse::Accept { content } => Object::new()
                .put("action", self.action().to_value())
                .put("content", content.clone())
                .done(),
            _ => Object::new().put("action", self.action().to_value()).done(),
        }
    }
}

/// What a tool's context uses to ask the person: resolves with the answer, or fails once the execution ended
/// (cancel, deadline, failure consume the pending question as they consume a confirmation).
pub type AskFuture = LocalBoxFuture<'static, Result<ElicitationResponse, AgentError>>;

/// A tool context's way to ask (bound to one execution and one call).
#[derive(Clone)]
pub struct Asker(Rc<dyn Fn(ElicitationRequest) -> AskFuture>);

impl Asker {
    /// Wraps the execution's asking function.
    pub fn new(ask: impl Fn(ElicitationRequest) -> AskFuture + 'static) -> Self {
        Asker(Rc::new(ask))
    }

    /// Puts `request` to the person.
    pub fn ask(&self, request: ElicitationRequest) -> AskFuture {
        (self.0)(request)
    }
}

impl fmt::Debug for Asker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Asker")
    }
}
