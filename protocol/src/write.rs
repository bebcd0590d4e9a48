//! [`ToValue`]: the wire types as JSON values, built by plain map inserts instead of serde's `Serialize`.
//!
//! The browser runtime writes every JSON it sends through a `serde_json::Value`; the derived `Serialize`,
//! instantiated for serde_json's value serializer, compiles one serializer per type plus one `serialize_field`
//! per field type, which was a large share of the wasm. Here each wire shape is one small function over
//! [`Object`], whose insert is compiled once. The relay keeps the derives (it writes text directly).
//!
//! The result is exactly the derive's: keys in the derive's order (an internally tagged enum's `type` first),
//! the same `skip_serializing_if` rules, `null` for an absent `Option` that is not skipped.
//! `tests/write_equivalence.rs` compares both, value and text, on generated values of every type here.

use serde_json::{Map, Value};

use crate::conversation::{
    ConversationContext, ConversationPage, ConversationSummary, CreateConversation,
    SaveConversation,
};
use crate::error::SpendingLimit;
use crate::event::{BlockKind, StopReason, StreamEvent};
use crate::message::{
    Block, DocumentSource, ImageSource, Message, ModelState, Role, ToolDefinition, Usage,
};
use crate::request::ModelRequest;
use crate::source::Source;

/// A wire value as JSON, equal to `serde_json::to_value` of its derived `Serialize`.
pub trait ToValue {
    /// The value as JSON.
    fn to_value(&self) -> Value;
}

/// A JSON object under construction, keys in insertion order.
#[derive(Default)]
pub struct Object(Map<String, Value>);

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object(Map::new())
    }

    /// An object whose first key is `type` (an internally tagged enum's variant).
    pub fn tagged(tag: &str) -> Object {
        let mut object = Object::new();
        object.put("type", tag);
        object
    }

    /// Appends `key: value`.
    pub fn put(&mut self, key: &str, value: impl Into<Value>) -> &mut Object {
        self.insert(key, value.into())
    }

    fn insert(&mut self, key: &str, value: Value) -> &mut Object {
        self.0.insert(key.to_owned(), value);
        self
    }

    /// Appends `key: value` when `value` is `Some` (`skip_serializing_if = "Option::is_none"`).
    pub fn put_some(&mut self, key: &str, value: Option<impl Into<Value>>) -> &mut Object {
        if let Some(value) = value {
            self.put(key, value);
        }
        self
    }

    /// The object as a JSON value.
    pub fn done(&mut self) -> Value {
        Value::Object(std::mem::take(&mut self.0))
    }
}

impl<T: ToValue> ToValue for [T] {
    fn to_value(&self) -> Value {
        array(self.len(), &|i| self[i].to_value())
    }
}

/// `len` items as an array: the loop is compiled once, whatever the item type (only the closure is per type).
fn array(len: usize, item: &dyn Fn(usize) -> Value) -> Value {
    Value::Array((0..len).map(item).collect())
}

impl<T: ToValue> ToValue for Vec<T> {
    fn to_value(&self) -> Value {
        self[..].to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, T::to_value)
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue + ?Sized> ToValue for std::rc::Rc<T> {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

fn text(value: &str) -> Value {
    Value::String(value.to_owned())
}

fn opt_text(value: &Option<String>) -> Option<Value> {
    value.as_deref().map(text)
}

impl ToValue for Role {
    fn to_value(&self) -> Value {
        text(match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        })
    }
}

impl ToValue for StopReason {
    fn to_value(&self) -> Value {
        text(self.as_str())
    }
}

impl ToValue for Message {
    fn to_value(&self) -> Value {
        Object::new()
            .put("id", text(&self.id))
            .put("role", self.role.to_value())
            .put("blocks", self.blocks.to_value())
            .done()
    }
}

impl ToValue for Source {
    fn to_value(&self) -> Value {
        Object::new()
            .put_some("url", opt_text(&self.url))
            .put_some("title", opt_text(&self.title))
            .put_some("citedText", opt_text(&self.cited_text))
            .done()
    }
}

/// `sources`, skipped when empty.
fn put_sources(object: &mut Object, sources: &[Source]) {
    if !sources.is_empty() {
        object.put("sources", sources.to_value());
    }
}

impl ToValue for Block {
    fn to_value(&self) -> Value {
        match self {
            Block::Text { text: t, sources } => {
                let mut object = Object::tagged("text");
                object.put("text", text(t));
                put_sources(&mut object, sources);
                object.done()
            }
            Block::Image { source } => Object::tagged("image")
                .put("source", source.to_value())
                .done(),
            Block::Reasoning { text: t } => Object::tagged("reasoning").put("text", text(t)).done(),
            Block::ToolCall {
                call_id,
                name,
                input,
            } => Object::tagged("tool-call")
                .put("callId", text(call_id))
                .put("name", text(name))
                .put("input", Value::Object(input.clone()))
                .done(),
            Block::ToolResult {
                call_id,
                content,
                is_error,
            } => Object::tagged("tool-result")
                .put("callId", text(call_id))
                .put("content", text(content))
                .put("isError", *is_error)
                .done(),
            Block::Document { name, source } => Object::tagged("document")
                .put("name", text(name))
                .put("source", source.to_value())
                .done(),
        }
    }
}

impl ToValue for DocumentSource {
    fn to_value(&self) -> Value {
        match self {
            DocumentSource::Base64 { media_type, data } => Object::tagged("base64")
                .put("mediaType", text(media_type))
                .put("data", text(data))
                .done(),
            DocumentSource::Text {
                media_type,
                text: t,
            } => Object::tagged("text")
                .put("mediaType", text(media_type))
                .put("text", text(t))
                .done(),
        }
    }
}

impl ToValue for ImageSource {
    fn to_value(&self) -> Value {
        match self {
            ImageSource::Url { url } => Object::tagged("url").put("url", text(url)).done(),
            ImageSource::Base64 { media_type, data } => Object::tagged("base64")
                .put("mediaType", text(media_type))
                .put("data", text(data))
                .done(),
        }
    }
}

impl ToValue for ModelState {
    fn to_value(&self) -> Value {
        Object::new()
            .put("format", text(&self.format))
            .put("data", self.data.clone())
            .done()
    }
}

impl ToValue for Usage {
    fn to_value(&self) -> Value {
        Object::new()
            .put("inputTokens", self.input_tokens)
            .put("outputTokens", self.output_tokens)
            .put("reasoningTokens", self.reasoning_tokens)
            .put("cacheReadTokens", self.cache_read_tokens)
            .put("cacheWriteTokens", self.cache_write_tokens)
            .done()
    }
}

impl ToValue for ToolDefinition {
    fn to_value(&self) -> Value {
        Object::new()
            .put("name", text(&self.name))
            .put("description", text(&self.description))
            .put("inputSchema", self.input_schema.clone())
            .done()
    }
}

impl ToValue for StreamEvent {
    fn to_value(&self) -> Value {
        match self {
            StreamEvent::MessageStart { id } => Object::tagged("message-start")
                .put_some("id", opt_text(id))
                .done(),
            StreamEvent::BlockStart { index, block } => Object::tagged("block-start")
                .put("index", *index)
                .put("block", block.to_value())
                .done(),
            StreamEvent::BlockDelta { index, delta } => Object::tagged("block-delta")
                .put("index", *index)
                .put("delta", text(delta))
                .done(),
            StreamEvent::BlockStop { index, sources } => {
                let mut object = Object::tagged("block-stop");
                object.put("index", *index);
                put_sources(&mut object, sources);
                object.done()
            }
            StreamEvent::MessageStop {
                stop_reason,
                usage,
                model_state,
            } => Object::tagged("message-stop")
                .put("stopReason", stop_reason.to_value())
                .put("usage", usage.to_value())
                .put("modelState", model_state.to_value())
                .done(),
            StreamEvent::Error {
                code,
                message,
                retryable,
            } => Object::tagged("error")
                .put("code", text(code))
                .put("message", text(message))
                .put_some("retryable", *retryable)
                .done(),
        }
    }
}

impl ToValue for BlockKind {
    fn to_value(&self) -> Value {
        match self {
            BlockKind::Text => Object::tagged("text").done(),
            BlockKind::Reasoning => Object::tagged("reasoning").done(),
            BlockKind::ToolCall { call_id, name } => Object::tagged("tool-call")
                .put("callId", text(call_id))
                .put("name", text(name))
                .done(),
        }
    }
}

impl ToValue for ModelRequest {
    fn to_value(&self) -> Value {
        model_request(
            self.model.as_deref(),
            &self.messages,
            self.model_state.as_ref(),
            &self.tools,
            self.conversation_id.as_deref(),
        )
    }
}

/// A [`ModelRequest`]'s JSON from its parts (a caller holding the history shared rather than as one `Vec`
/// writes the same object without copying it into a `ModelRequest` first).
pub fn model_request(
    model: Option<&str>,
    messages: &[impl ToValue],
    model_state: Option<&ModelState>,
    tools: &[ToolDefinition],
    conversation_id: Option<&str>,
) -> Value {
    Object::new()
        .put_some("model", model.map(text))
        .put("messages", messages.to_value())
        .put("modelState", model_state.to_value())
        .put("tools", tools.to_value())
        .put_some("conversationId", conversation_id.map(text))
        .done()
}

impl ToValue for ConversationContext {
    fn to_value(&self) -> Value {
        Object::new()
            .put("messages", self.messages.to_value())
            .put("modelState", self.model_state.to_value())
            .done()
    }
}

impl ToValue for ConversationSummary {
    fn to_value(&self) -> Value {
        Object::new()
            .put("id", text(&self.id))
            .put("title", text(&self.title))
            .put("revision", self.revision)
            .put("createdAt", text(&self.created_at))
            .put("updatedAt", text(&self.updated_at))
            .done()
    }
}

impl ToValue for ConversationPage {
    fn to_value(&self) -> Value {
        Object::new()
            .put("items", self.items.to_value())
            .put(
                "nextCursor",
                opt_text(&self.next_cursor).unwrap_or(Value::Null),
            )
            .done()
    }
}

impl ToValue for CreateConversation {
    fn to_value(&self) -> Value {
        Object::new()
            .put_some("title", opt_text(&self.title))
            .put_some("context", self.context.as_ref().map(ToValue::to_value))
            .done()
    }
}

impl ToValue for SaveConversation {
    fn to_value(&self) -> Value {
        Object::new()
            .put("expectedRevision", self.expected_revision)
            .put_some("title", opt_text(&self.title))
            .put("context", self.context.to_value())
            .done()
    }
}

impl ToValue for SpendingLimit {
    fn to_value(&self) -> Value {
        Object::new()
            .put("kind", text(&self.kind))
            .put("max", self.max)
            .put_some("windowSeconds", self.window_seconds)
            .put_some("sliding", self.sliding)
            .put_some("model", opt_text(&self.model))
            .done()
    }
}
