//! The relay client (`docs/protocol.md` §2, §4, §6): [`RelayModel`] streams `POST {endpoint}/model` and
//! [`RelayStore`] keeps conversations at `{endpoint}/conversations`. The request bodies, paths and the mapping of
//! statuses and error bodies to stable codes are decided here, natively tested; moving bytes (`fetch`, SSE
//! framing, the event pump) is the host's [`RelayTransport`].

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::stream::{self, StreamExt, TryStreamExt};
use futures::FutureExt;
use patchbridge_protocol::{
    ConversationContext, ConversationPage, ConversationSnapshot, CreateConversation, ErrorEnvelope,
    RelayErrorCode, SaveConversation, ToValue,
};

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
    /// `traceparent`: a W3C `traceparent` header value to send with it (the host's own headers win).
    fn stream(
        &self,
        path: &str,
        body: String,
        traceparent: Option<String>,
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
    let envelope = serde_json::from_str::<ErrorEnvelope>(&answer.body).ok();
    let body = envelope.as_ref().map(|e| &e.error);
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
            map.insert("limit".into(), limit.to_value());
        }
    }
    let text = match body {
        Some(b) if !b.message.is_empty() => b.message.clone(),
        _ => format!("HTTP {}", answer.status),
    };
    AgentError::new(code, format!("{what}: {text}")).with_details(details)
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

impl<T: RelayTransport> RelayModel<T> {
    fn call(
        &self,
        request: Rc<CallRequest>,
        signal: AbortSignal,
        traceparent: Option<String>,
    ) -> EventStream {
        let body = text_of(&request);
        let answer =
            self.transport
                .stream("/model", body, traceparent, &signal, "relay request failed");
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

impl<T: RelayTransport> Model for RelayModel<T> {
    fn stream(&self, request: Rc<CallRequest>, signal: AbortSignal) -> EventStream {
        self.call(request, signal, None)
    }

    /// Sends the execution's trace as `traceparent` ([`traceparent`]), so the relay's spans join it.
    fn stream_traced(
        &self,
        request: Rc<CallRequest>,
        signal: AbortSignal,
        trace_id: &str,
        model_call: u64,
    ) -> EventStream {
        self.call(request, signal, Some(traceparent(trace_id, model_call)))
    }
}

/// The W3C `traceparent` of model call `model_call` of the execution traced as `trace_id` (`docs/protocol.md`
/// §7): version `00`; trace-id `trace_id` itself when it is 32 hex digits (a page's own W3C trace id, in
/// lower case), else the FNV-1a 128-bit hash of its UTF-8 bytes; parent-id the FNV-1a 64-bit hash of
/// `"{trace_id}/{model_call}"` (one per call, the same on a retry of the page); flags `01` (sampled). All-zero
/// ids, which W3C forbids, become `…01`.
pub fn traceparent(trace_id: &str, model_call: u64) -> String {
    let is_w3c = trace_id.len() == 32
        && trace_id.bytes().all(|b| b.is_ascii_hexdigit())
        && trace_id.bytes().any(|b| b != b'0');
    let trace = if is_w3c {
        trace_id.to_ascii_lowercase()
    } else {
        format!("{:032x}", fnv1a_128(trace_id.as_bytes()).max(1))
    };
    let parent = fnv1a_64(format!("{trace_id}/{model_call}").as_bytes()).max(1);
    format!("00-{trace}-{parent:016x}-01")
}

fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    bytes.iter().fold(OFFSET, |hash, b| {
        (hash ^ u128::from(*b)).wrapping_mul(PRIME)
    })
}

fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf29ce484222325;
    const PRIME: u64 = 0x100000001b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(PRIME))
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
