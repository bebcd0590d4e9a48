//! The relay protocol over `fetch` (docs/protocol.md §2, §4, §6): [`RelayModel`] streams `POST {endpoint}/model`
//! and [`RelayStore`] keeps conversations at `{endpoint}/conversations`. `fetch` and SSE framing happen in
//! `npm/adapter.js`; statuses and error bodies are mapped to stable codes here.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::stream::{self, StreamExt, TryStreamExt};
use futures::FutureExt;
use js_sys::Array;
use patchbridge_protocol::{ConversationContext, ConversationPage, ConversationSnapshot};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::js;
use super::signal::mirror_signal;
use super::stream::PumpStream;
use super::values::{await_js, json_text};
use crate::core::error::relay_error_details;
use crate::core::{
    AbortSignal, AgentError, CallRequest, ConversationStore, ErrorCode, EventStream, Model,
};

/// Where the relay lives and how to authenticate each request.
#[derive(Clone)]
pub struct Relay {
    /// `endpoint` without a trailing slash.
    pub base: Rc<str>,
    /// The host's `headers` option: an object, or a (possibly async) function called per request.
    pub headers: JsValue,
}

impl Relay {
    pub fn new(endpoint: &str, headers: JsValue) -> Self {
        Relay {
            base: endpoint.trim_end_matches('/').into(),
            headers,
        }
    }

    fn url(&self, path: &str) -> String {
        let mut url = String::with_capacity(self.base.len() + path.len());
        url.push_str(&self.base);
        url.push_str(path);
        url
    }
}

/// `{ error: { code, message, ... } }` of a non-2xx response as an AgentError. `REVISION_CONFLICT` and
/// `CONVERSATION_CORRUPT` get their own codes; everything else is `AGENT_RELAY_ERROR` with the relay's code
/// (and, for `MODEL_STATE_MISMATCH`, the `messageId` the relay named, so a page can offer a way forward).
/// `details` has the same shape as for an in-stream `error` event ([`relay_error_details`]).
fn http_error(status: u32, body: &str, what: &str) -> AgentError {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let err = parsed.get("error");
    let relay_code = err
        .and_then(|e| e.get("code"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let relay_message = err
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let code = match relay_code.as_str() {
        "REVISION_CONFLICT" => ErrorCode::RevisionConflict,
        "CONVERSATION_CORRUPT" => ErrorCode::ConversationCorrupt,
        _ => ErrorCode::RelayError,
    };
    let details = relay_error_details(
        &relay_code,
        Some(status),
        err.and_then(|e| e.get("retryable"))
            .and_then(Value::as_bool),
        err.and_then(|e| e.get("currentRevision")).cloned(),
        err.and_then(|e| e.get("messageId"))
            .and_then(Value::as_str)
            .map(str::to_owned),
    );
    let text = if relay_message.is_empty() {
        format!("HTTP {status}")
    } else {
        relay_message
    };
    AgentError::new(code, format!("{what}: {text}")).with_details(details)
}

fn status_and_body(pair: &JsValue) -> (u32, JsValue) {
    let array: &Array = pair.unchecked_ref();
    (array.get(0).as_f64().unwrap_or(0.0) as u32, array.get(1))
}

/// The relay as a [`Model`].
pub struct RelayModel {
    pub relay: Relay,
}

impl Model for RelayModel {
    fn stream(&self, request: Rc<CallRequest>, signal: AbortSignal) -> EventStream {
        let body = json_text(&*request);
        let url = self.relay.url("/model");
        let promise = js::relay_stream(&url, &self.relay.headers, body, &mirror_signal(&signal));
        stream::once(async move {
            let pair = await_js(promise, ErrorCode::RelayError, "relay request failed").await?;
            let (status, body) = status_and_body(&pair);
            if !(200..300).contains(&status) {
                return Err(http_error(
                    status,
                    &body.as_string().unwrap_or_default(),
                    "relay model call failed",
                ));
            }
            PumpStream::new(&body, true, ErrorCode::RelayError, "relay stream failed")
        })
        .try_flatten()
        .boxed_local()
    }
}

/// The relay's conversation API as a [`ConversationStore`].
pub struct RelayStore {
    pub relay: Relay,
}

impl RelayStore {
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
        let url = self.relay.url(path);
        let promise =
            js::relay_request(method, &url, &self.relay.headers, body, &JsValue::UNDEFINED);
        async move {
            let pair = await_js(promise, ErrorCode::RelayError, what).await?;
            let (status, body) = status_and_body(&pair);
            let text = body.as_string().unwrap_or_default();
            if !(200..300).contains(&status) {
                return Err(http_error(status, &text, what));
            }
            if expect.is_some_and(|expected| expected != status) {
                // A 2xx the protocol does not name (a proxy's answer, say) proves nothing.
                return Err(AgentError::new(
                    ErrorCode::RelayError,
                    format!("{what}: unexpected HTTP {status} from the relay"),
                )
                .with_details(relay_error_details(
                    "",
                    Some(status),
                    None,
                    None,
                    None,
                )));
            }
            Ok(text)
        }
        .boxed_local()
    }

    fn request(
        &self,
        method: &'static str,
        path: String,
        body: Option<String>,
        what: &'static str,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        let exchange = self.exchange(method, &path, body, None, what);
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

fn conversation_path(id: &str) -> String {
    let encoded: String = js_sys::encode_uri_component(id).into();
    format!("/conversations/{encoded}")
}

impl ConversationStore for RelayStore {
    fn list(
        &self,
        limit: Option<u32>,
        cursor: Option<&str>,
    ) -> LocalBoxFuture<'static, Result<ConversationPage, AgentError>> {
        const WHAT: &str = "listing the conversations failed";
        let mut path = String::from("/conversations");
        let mut separator = '?';
        if let Some(limit) = limit {
            path.push_str(&format!("{separator}limit={limit}"));
            separator = '&';
        }
        if let Some(cursor) = cursor {
            let encoded: String = js_sys::encode_uri_component(cursor).into();
            path.push_str(&format!("{separator}cursor={encoded}"));
        }
        let exchange = self.exchange("GET", &path, None, Some(200), WHAT);
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
        self.request(
            "GET",
            conversation_path(id),
            None,
            "loading the conversation failed",
        )
    }

    fn create(
        &self,
        title: &str,
        ctx: &ConversationContext,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        let body = json!({ "title": title, "context": ctx }).to_string();
        self.request(
            "POST",
            "/conversations".into(),
            Some(body),
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
        let body = match title {
            Some(title) => {
                json!({ "expectedRevision": expected_revision, "title": title, "context": ctx })
            }
            None => json!({ "expectedRevision": expected_revision, "context": ctx }),
        }
        .to_string();
        self.request(
            "PUT",
            conversation_path(id),
            Some(body),
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
