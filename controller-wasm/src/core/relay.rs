//! The relay client (`docs/protocol.md` §2, §4, §6): [`RelayModel`] streams `POST {endpoint}/model` and
//! [`RelayStore`] keeps conversations at `{endpoint}/conversations`. The request bodies, paths and the mapping of
//! statuses and error bodies to stable codes are decided here, natively tested; moving bytes (`fetch`, SSE
//! framing, the event pump) is the host's [`RelayTransport`].

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::stream::{self, StreamExt, TryStreamExt};
use futures::FutureExt;
use patchbridge_protocol::{
    ConversationContext, ConversationPage, ConversationSnapshot, CreateConversation, ErrorBody,
    RelayErrorCode, SaveConversation, SpendingLimit,
};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::abort::AbortSignal;
use super::error::{relay_error_details, AgentError, ErrorCode};
use super::host::{ConversationStore, EventStream, Model};
use super::json::text_of;
use super::request::CallRequest;

/// An HTTP answer of any status: its status and body text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAnswer {
    /// The HTTP status.
    pub status: u32,
    /// The body text.
    pub body: String,
}

/// What a streaming request produced: the events of a 2xx answer, or any other answer whole.
pub enum StreamAnswer {
    /// A 2xx `text/event-stream`: its events.
    Events(EventStream),
    /// Any other status, with its body text.
    Refused(HttpAnswer),
}

/// Moves requests to the relay and answers back; decides nothing. Paths start with `/` and are relative to the
/// relay's endpoint. A future fails only when no answer arrived at all (network failure, a headers provider
/// that threw); the failure is a typed error whose message starts with `what`.
pub trait RelayTransport {
    /// One JSON request (`body` is JSON text, sent with `content-type: application/json`).
    fn request(
        &self,
        method: &'static str,
        path: &str,
        body: Option<String>,
        what: &'static str,
    ) -> LocalBoxFuture<'static, Result<HttpAnswer, AgentError>>;

    /// `POST path` with a JSON body, answered with a stream of events; `signal` aborts the request.
    fn stream(
        &self,
        path: &str,
        body: String,
        signal: &AbortSignal,
        what: &'static str,
    ) -> LocalBoxFuture<'static, Result<StreamAnswer, AgentError>>;
}

/// The error of a non-2xx answer. `REVISION_CONFLICT`, `CONVERSATION_CORRUPT` and `SPENDING_LIMIT_REACHED` (with
/// `retryAfterSeconds` and `limit` in `details`) get their own codes; everything else is `AGENT_RELAY_ERROR` with
/// the relay's code (and, for `MODEL_STATE_MISMATCH`, the `messageId` the relay
/// named, so a page can offer a way forward). `details` has the same shape as for an in-stream `error` event
/// ([`relay_error_details`]); a body that is not a relay error envelope gives `relayCode: ""`.
pub fn http_error(answer: &HttpAnswer, what: &str) -> AgentError {
    let envelope = error_body(&answer.body);
    let body = envelope.as_ref();
    let relay_code = body.map_or("", |b| b.code.as_str());
    let code = match body.and_then(|b| b.known_code()) {
        Some(RelayErrorCode::RevisionConflict) => ErrorCode::RevisionConflict,
        Some(RelayErrorCode::ConversationCorrupt) => ErrorCode::ConversationCorrupt,
        Some(RelayErrorCode::SpendingLimitReached) => ErrorCode::SpendingLimitReached,
        _ => ErrorCode::RelayError,
    };
    let mut details = relay_error_details(
        relay_code,
        Some(answer.status),
        body.and_then(|b| b.retryable),
        body.and_then(|b| b.current_revision).map(Into::into),
        body.and_then(|b| b.message_id.clone()),
    );
    // A spending refusal says which limit and when the person may try again (the body repeats `Retry-After`).
    if let (Some(b), serde_json::Value::Object(map)) = (body, &mut details) {
        if let Some(seconds) = b.retry_after_seconds {
            map.insert("retryAfterSeconds".into(), seconds.into());
        }
        if let Some(limit) = &b.limit {
            map.insert("limit".into(), super::json::to_value(limit));
        }
    }
    let text = match body {
        Some(b) if !b.message.is_empty() => b.message.clone(),
        _ => format!("HTTP {}", answer.status),
    };
    AgentError::new(code, format!("{what}: {text}")).with_details(details)
}

/// The `error` of a relay error envelope (`{ "error": ErrorBody }`), or `None` when `text` is not one: exactly
/// the answers `serde_json::from_str::<ErrorEnvelope>` reads, read by [`ErrorShape`] instead of the protocol
/// types' derives. The derives compile a `deserialize_struct` per struct with each field's reader inlined twice
/// (object and array form); one visitor for the three structs and one seed for every field is 3.9 KB raw
/// (1.0 KiB gzip) smaller in the wasm (bench/README.md, seventh round). `tests/relay_error_body.rs` pins that
/// both accept the same texts with the same values.
pub fn error_body(text: &str) -> Option<ErrorBody> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let read = ErrorShape::Envelope.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    match read {
        Shaped::Body(body) => Some(body),
        Shaped::Limit(_) => None,
    }
}

/// Which of the envelope's structs [`ErrorShape`] reads. Each is read as serde's derive reads a struct without
/// `deny_unknown_fields`: an object (each known key at most once, unknown keys skipped whatever they hold, the
/// required fields present) or an array of the fields in declaration order (the optional ones may be left off
/// at the end). Only acceptance matters here (an envelope that does not read is no envelope), so the errors
/// are plain.
#[derive(Clone, Copy)]
enum ErrorShape {
    /// `{ error }`.
    Envelope,
    /// `ErrorBody { code, message?, currentRevision?, messageId?, retryable?, limit?, retryAfterSeconds? }`.
    Body,
    /// `SpendingLimit { kind, max, windowSeconds?, sliding?, model? }`.
    Limit,
}

/// What [`ErrorShape`] read (the envelope gives its body).
enum Shaped {
    Body(ErrorBody),
    Limit(SpendingLimit),
}

const ENVELOPE_KEYS: &[&str] = &["error"];
const BODY_KEYS: &[&str] = &[
    "code",
    "message",
    "currentRevision",
    "messageId",
    "retryable",
    "limit",
    "retryAfterSeconds",
];
const LIMIT_KEYS: &[&str] = &["kind", "max", "windowSeconds", "sliding", "model"];

/// A [`SpendingLimit`] read by [`ErrorShape::Limit`] (for `Option`'s own `null` handling).
struct Limit(SpendingLimit);

impl<'de> serde::Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match ErrorShape::Limit.deserialize(deserializer)? {
            Shaped::Limit(limit) => Ok(Limit(limit)),
            Shaped::Body(_) => Err(de::Error::custom("not a spending limit")),
        }
    }
}

/// The fields read so far (slots shared by the three structs, see [`Field`]).
#[derive(Default)]
struct Fields {
    body: Option<Shaped>,
    strings: [Option<String>; 2],
    numbers: [Option<Option<u64>>; 2],
    text: Option<Option<String>>,
    flag: Option<Option<bool>>,
    limit: Option<Option<SpendingLimit>>,
    max: Option<u64>,
}

/// `Field(shape, i, fields)`: field `i` (declaration order) of `shape`, read into its slot of `fields`. One seed
/// for the object and the array form, so each field's reader is compiled once.
struct Field<'f>(ErrorShape, usize, &'f mut Fields);

impl<'de> DeserializeSeed<'de> for Field<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let Field(shape, i, fields) = self;
        match (shape, i) {
            (ErrorShape::Envelope, _) => fields.body = Some(ErrorShape::Body.deserialize(d)?),
            // code, message / kind
            (ErrorShape::Body, 0 | 1) | (ErrorShape::Limit, 0) => {
                fields.strings[i] = Some(String::deserialize(d)?)
            }
            // currentRevision / windowSeconds, then retryAfterSeconds
            (ErrorShape::Body, 2) | (ErrorShape::Limit, 2) => {
                fields.numbers[0] = Some(Option::deserialize(d)?)
            }
            (ErrorShape::Body, 6) => fields.numbers[1] = Some(Option::deserialize(d)?),
            // messageId / model
            (ErrorShape::Body, 3) | (ErrorShape::Limit, 4) => {
                fields.text = Some(Option::deserialize(d)?)
            }
            // retryable / sliding
            (ErrorShape::Body, 4) | (ErrorShape::Limit, 3) => {
                fields.flag = Some(Option::deserialize(d)?)
            }
            (ErrorShape::Body, _) => {
                fields.limit = Some(Option::<Limit>::deserialize(d)?.map(|l| l.0))
            }
            (ErrorShape::Limit, _) => fields.max = Some(u64::deserialize(d)?),
        }
        Ok(())
    }
}

impl ErrorShape {
    fn keys(self) -> &'static [&'static str] {
        match self {
            ErrorShape::Envelope => ENVELOPE_KEYS,
            ErrorShape::Body => BODY_KEYS,
            ErrorShape::Limit => LIMIT_KEYS,
        }
    }

    /// The struct from its fields, or the missing required field's error.
    fn finish<E: de::Error>(self, fields: Fields) -> Result<Shaped, E> {
        let [first, second] = fields.strings;
        let [number, later] = fields.numbers;
        match self {
            ErrorShape::Envelope => fields.body.ok_or_else(|| E::missing_field("error")),
            ErrorShape::Body => Ok(Shaped::Body(ErrorBody {
                code: first.ok_or_else(|| E::missing_field("code"))?,
                message: second.unwrap_or_default(),
                current_revision: number.flatten(),
                message_id: fields.text.flatten(),
                retryable: fields.flag.flatten(),
                limit: fields.limit.flatten(),
                retry_after_seconds: later.flatten(),
            })),
            ErrorShape::Limit => Ok(Shaped::Limit(SpendingLimit {
                kind: first.ok_or_else(|| E::missing_field("kind"))?,
                max: fields.max.ok_or_else(|| E::missing_field("max"))?,
                window_seconds: number.flatten(),
                sliding: fields.flag.flatten(),
                model: fields.text.flatten(),
            })),
        }
    }
}

impl<'de> DeserializeSeed<'de> for ErrorShape {
    type Value = Shaped;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shaped, D::Error> {
        deserializer.deserialize_struct("", self.keys(), self)
    }
}

impl<'de> Visitor<'de> for ErrorShape {
    type Value = Shaped;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a relay error envelope")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shaped, A::Error> {
        let keys = self.keys();
        let mut fields = Fields::default();
        let mut seen = 0u32;
        while let Some(key) = map.next_key::<String>()? {
            let Some(i) = keys.iter().position(|k| *k == key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            if seen & (1 << i) != 0 {
                return Err(de::Error::duplicate_field(keys[i]));
            }
            seen |= 1 << i;
            map.next_value_seed(Field(self, i, &mut fields))?;
        }
        self.finish(fields)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shaped, A::Error> {
        let mut fields = Fields::default();
        // The optional fields (all but the first one or two) may be left off at the end.
        let required = match self {
            ErrorShape::Envelope | ErrorShape::Body => 1,
            ErrorShape::Limit => 2,
        };
        for i in 0..self.keys().len() {
            if seq
                .next_element_seed(Field(self, i, &mut fields))?
                .is_none()
                && i < required
            {
                return Err(de::Error::invalid_length(i, &self));
            }
        }
        self.finish(fields)
    }
}

fn is_success(status: u32) -> bool {
    (200..300).contains(&status)
}

/// The relay as a [`Model`]: the call's request is the body of `POST /model`.
pub struct RelayModel<T> {
    transport: Rc<T>,
}

impl<T: RelayTransport> RelayModel<T> {
    /// A model over `transport`.
    pub fn new(transport: Rc<T>) -> Self {
        RelayModel { transport }
    }
}

impl<T: RelayTransport> Model for RelayModel<T> {
    fn stream(&self, request: Rc<CallRequest>, signal: AbortSignal) -> EventStream {
        let body = text_of(&*request);
        let answer = self
            .transport
            .stream("/model", body, &signal, "relay request failed");
        stream::once(async move {
            match answer.await? {
                StreamAnswer::Events(events) => Ok(events),
                StreamAnswer::Refused(answer) if is_success(answer.status) => {
                    // The transport streams every 2xx; a refused 2xx would be its own mistake.
                    Err(AgentError::new(
                        ErrorCode::RelayError,
                        format!(
                            "relay model call failed: HTTP {} without a stream",
                            answer.status
                        ),
                    ))
                }
                StreamAnswer::Refused(answer) => {
                    Err(http_error(&answer, "relay model call failed"))
                }
            }
        })
        .try_flatten()
        .boxed_local()
    }
}

/// The relay's conversation API as a [`ConversationStore`].
pub struct RelayStore<T> {
    transport: Rc<T>,
}

impl<T: RelayTransport> RelayStore<T> {
    /// A store over `transport`.
    pub fn new(transport: Rc<T>) -> Self {
        RelayStore { transport }
    }

    /// One JSON request; resolves with the body text of a 2xx answer (`expect`: the only status accepted, when
    /// the protocol names one), else the mapped relay error.
    fn exchange(
        &self,
        method: &'static str,
        path: &str,
        body: Option<String>,
        expect: Option<u32>,
        what: &'static str,
    ) -> LocalBoxFuture<'static, Result<String, AgentError>> {
        let answer = self.transport.request(method, path, body, what);
        async move {
            let answer = answer.await?;
            if !is_success(answer.status) {
                return Err(http_error(&answer, what));
            }
            if expect.is_some_and(|expected| expected != answer.status) {
                // A 2xx the protocol does not name (a proxy's answer, say) proves nothing.
                return Err(AgentError::new(
                    ErrorCode::RelayError,
                    format!("{what}: unexpected HTTP {} from the relay", answer.status),
                )
                .with_details(relay_error_details(
                    "",
                    Some(answer.status),
                    None,
                    None,
                    None,
                )));
            }
            Ok(answer.body)
        }
        .boxed_local()
    }

    /// A request answered with a conversation snapshot; one that does not parse is a corrupt conversation.
    fn snapshot(
        &self,
        method: &'static str,
        path: &str,
        body: Option<String>,
        what: &'static str,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        let exchange = self.exchange(method, path, body, None, what);
        async move {
            let text = exchange.await?;
            serde_json::from_str::<ConversationSnapshot>(&text).map_err(|e| {
                AgentError::new(
                    ErrorCode::ConversationCorrupt,
                    format!("{what}: the stored conversation does not parse: {e}"),
                )
            })
        }
        .boxed_local()
    }
}

/// `/conversations/{id}` with the id percent-encoded.
fn conversation_path(id: &str) -> String {
    format!("/conversations/{}", encode_uri_component(id))
}

/// `/conversations` with the page query (`limit`, then `cursor`, each only when given).
fn list_path(limit: Option<u32>, cursor: Option<&str>) -> String {
    let mut path = String::from("/conversations");
    let mut separator = '?';
    if let Some(limit) = limit {
        path.push(separator);
        path.push_str(&format!("limit={limit}"));
        separator = '&';
    }
    if let Some(cursor) = cursor {
        path.push(separator);
        path.push_str("cursor=");
        path.push_str(&encode_uri_component(cursor));
    }
    path
}

/// JavaScript's `encodeURIComponent`: every byte of the UTF-8 text is percent-encoded except the letters, digits
/// and `-_.!~*'()`.
pub fn encode_uri_component(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(byte >> 4)] as char);
            out.push(HEX[usize::from(byte & 15)] as char);
        }
    }
    out
}

impl<T: RelayTransport> ConversationStore for RelayStore<T> {
    fn list(
        &self,
        limit: Option<u32>,
        cursor: Option<&str>,
    ) -> LocalBoxFuture<'static, Result<ConversationPage, AgentError>> {
        const WHAT: &str = "listing the conversations failed";
        let exchange = self.exchange("GET", &list_path(limit, cursor), None, Some(200), WHAT);
        async move {
            let text = exchange.await?;
            serde_json::from_str::<ConversationPage>(&text).map_err(|e| {
                AgentError::new(
                    ErrorCode::RelayError,
                    format!("{WHAT}: the relay's answer does not parse: {e}"),
                )
            })
        }
        .boxed_local()
    }

    fn load(&self, id: &str) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        self.snapshot(
            "GET",
            &conversation_path(id),
            None,
            "loading the conversation failed",
        )
    }

    fn create(
        &self,
        title: &str,
        ctx: &ConversationContext,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        let body = CreateConversation {
            title: Some(title.to_owned()),
            context: Some(ctx.clone()),
        };
        self.snapshot(
            "POST",
            "/conversations",
            Some(text_of(&body)),
            "creating the conversation failed",
        )
    }

    fn save(
        &self,
        id: &str,
        expected_revision: u64,
        title: Option<&str>,
        ctx: &ConversationContext,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        let body = SaveConversation {
            expected_revision,
            title: title.map(str::to_owned),
            context: ctx.clone(),
        };
        self.snapshot(
            "PUT",
            &conversation_path(id),
            Some(text_of(&body)),
            "saving the conversation failed",
        )
    }

    fn delete(&self, id: &str) -> LocalBoxFuture<'static, Result<(), AgentError>> {
        let exchange = self.exchange(
            "DELETE",
            &conversation_path(id),
            None,
            Some(204),
            "deleting the conversation failed",
        );
        async move { exchange.await.map(|_| ()) }.boxed_local()
    }
}
