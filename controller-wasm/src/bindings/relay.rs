//! The relay transport over `fetch`: [`FetchTransport`] moves the core relay client's requests
//! ([`crate::core::relay`], which decides bodies, paths and the mapping of answers to errors) through
//! `npm/adapter.js` (`relayRequest`, `relayStream`: fetch and SSE framing) and turns 2xx model streams into
//! [`PumpStream`]s.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::{FutureExt, StreamExt};
use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::js;
use super::signal::mirror_signal;
use super::stream::PumpStream;
use super::values::await_js;
use crate::core::relay::{HttpAnswer, RelayTransport, StreamAnswer};
use crate::core::{AbortSignal, AgentError, ErrorCode};

/// Where the relay lives and how to authenticate each request.
pub struct FetchTransport {
    /// `endpoint` without a trailing slash.
    base: Rc<str>,
    /// The host's `headers` option: an object, or a (possibly async) function called per request.
    headers: JsValue,
}

impl FetchTransport {
    /// A transport to `endpoint` (a trailing slash is dropped) sending the host's `headers` option.
    pub fn new(endpoint: &str, headers: JsValue) -> Self {
        FetchTransport {
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

/// `[status, body]` as adapter.js resolves it.
fn status_and_body(pair: &JsValue) -> (u32, JsValue) {
    let array: &Array = pair.unchecked_ref();
    (array.get(0).as_f64().unwrap_or(0.0) as u32, array.get(1))
}

impl RelayTransport for FetchTransport {
    fn request(
        &self,
        method: &'static str,
        path: &str,
        body: Option<String>,
        what: &'static str,
    ) -> LocalBoxFuture<'static, Result<HttpAnswer, AgentError>> {
        let promise = js::relay_request(
            method,
            &self.url(path),
            &self.headers,
            body,
            &JsValue::UNDEFINED,
        );
        async move {
            let pair = await_js(promise, ErrorCode::RelayError, what).await?;
            let (status, body) = status_and_body(&pair);
            Ok(HttpAnswer {
                status,
                body: body.as_string().unwrap_or_default(),
            })
        }
        .boxed_local()
    }

    fn stream(
        &self,
        path: &str,
        body: String,
        traceparent: Option<String>,
        signal: &AbortSignal,
        what: &'static str,
    ) -> LocalBoxFuture<'static, Result<StreamAnswer, AgentError>> {
        let promise = js::relay_stream(
            &self.url(path),
            &self.headers,
            body,
            &mirror_signal(signal),
            traceparent,
        );
        async move {
            let pair = await_js(promise, ErrorCode::RelayError, what).await?;
            let (status, body) = status_and_body(&pair);
            if !(200..300).contains(&status) {
                return Ok(StreamAnswer::Refused(HttpAnswer {
                    status,
                    body: body.as_string().unwrap_or_default(),
                }));
            }
            let events =
                PumpStream::new(&body, true, ErrorCode::RelayError, "relay stream failed")?;
            Ok(StreamAnswer::Events(events.boxed_local()))
        }
        .boxed_local()
    }
}
