//! The model proxy: `POST {base}/model` (neutral request in, neutral SSE stream out) and `GET {base}/models`.
//!
//! - [`registry`]: configured models, or the scripted demo model.
//! - [`scripted`]: the scripted demo model itself (deterministic, not AI).
//! - [`client`]: the pooled HTTP client to the providers (TLS, proxies, fixed connection buffers).
//! - [`upstream`]: one attempt at the provider; error classification and redaction.
//! - [`retry`]: the one retry rule, decided on the typed error of a failed attempt.
//! - [`stream`]: the response's event pipeline (bounds, timeouts, SSE framing, decoding, metrics, cancellation).
//! - [`sse_body`]: the events encoded for the browser, batched into as few writes as the timing allows.

pub mod client;
pub mod registry;
pub mod retry;
pub mod scripted;
pub mod sse_body;
pub mod stream;
pub mod upstream;

use std::time::{Duration, Instant};

use axum::extract::{Extension, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;

use futures_util::stream as fstream;
use futures_util::StreamExt;
use patchbridge_protocol::ModelRequest;
use patchbridge_providers::{encode_request, Decoder};

use crate::error::RelayError;
use crate::extract::StrictJson;
use crate::identity::UserId;
use crate::spending::Refused;
use crate::state::AppState;
use registry::ModelEntry;
use sse_body::SseBody;
use stream::{adapter_error, error_event, StreamBounds};

/// A spending refusal as the route answers it: the limit with its retry time (429), or, when the counters
/// cannot be reached, an internal error (a relay that cannot count does not spend).
impl From<Refused> for RelayError {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Limit(r) => RelayError::spending_limit(r.limit, r.retry_after_seconds),
            Refused::Unavailable(e) => RelayError::internal(format!("spending counters: {e}")),
        }
    }
}

pub async fn models(State(state): State<AppState>) -> Response {
    Json(state.inner.models.describe()).into_response()
}

/// What [`call`] reads from the request head. Not the `HeaderMap` extractor: that clones the whole map.
pub struct CallHead {
    /// The router's request-id layer always sets it; sent upstream so provider logs correlate with ours.
    request_id: Option<HeaderValue>,
    /// [`crate::extract::is_small_body`].
    small_body: bool,
}

impl<S: Send + Sync> FromRequestParts<S> for CallHead {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(CallHead {
            request_id: parts.headers.get(crate::REQUEST_ID).cloned(),
            small_body: crate::extract::is_small_body(&parts.headers),
        })
    }
}

pub async fn call(
    State(state): State<AppState>,
    Extension(user): Extension<UserId>,
    head: CallHead,
    StrictJson(request): StrictJson<ModelRequest>,
) -> Result<Response, RelayError> {
    let started = Instant::now();
    let entry = state.inner.models.pick(request.model.as_deref())?.clone();
    let model = match entry {
        ModelEntry::Scripted => {
            let ticket = state
                .spending()
                .admit(&user.0, registry::SCRIPTED_ID, &request)
                .await?
                .free();
            let events = state.heavy(move || scripted::respond(&request)).await?;
            state.metrics().model_call(registry::SCRIPTED_ID, "ok");
            return Ok(SseBody::new(fstream::iter(events).map(move |event| {
                let _running = &ticket;
                event
            }))
            .into_response());
        }
        ModelEntry::Upstream(model) => model,
    };
    let kind = model.config.provider;
    // Encoding walks every message, tool and ModelState item: linear, but megabytes of it, so a large request
    // is encoded off the async workers (a small one in place: the hop would cost more than the work). Building
    // the decoder here too fails early on requests it cannot serve (before any upstream call).
    let prepare = move |options: &patchbridge_providers::ModelOptions, request: ModelRequest| {
        let upstream = encode_request(kind, options, &request)?;
        let decoder = Decoder::new(kind, &request)?;
        Ok::<_, patchbridge_providers::AdapterError>((request, upstream, decoder))
    };
    let prepared = if head.small_body {
        prepare(&model.options, request)
    } else {
        let model = model.clone();
        state
            .heavy(move || prepare(&model.options, request))
            .await?
    };
    let (request, upstream_request, decoder) = prepared.map_err(adapter_error)?;
    // The spending limits, after the request proved valid and before anything goes upstream: a refused call costs
    // nothing. The ticket records the call's usage when it is dropped, with the response (or on the way out of
    // this function, when no response streams).
    let mut ticket = state
        .spending()
        .admit(&user.0, &model.config.id, &request)
        .await?;
    let mut unused_decoder = Some(decoder);
    tracing::info!(
        model = %model.config.id,
        provider = kind.as_str(),
        conversation = %crate::logging::escape(request.conversation_id.as_deref().unwrap_or("")),
        messages = request.messages.len(),
        "model call"
    );
    let limits = state.inner.limits;
    let bounds = StreamBounds {
        max_upstream_bytes: limits.max_upstream_response_bytes,
        max_events: limits.max_events_per_call,
        first_byte: Duration::from_millis(limits.first_byte_timeout_ms),
        idle: Duration::from_millis(limits.idle_timeout_ms),
        total: Duration::from_millis(limits.max_stream_duration_ms),
    };
    // The response to the browser starts only once the first neutral event exists, so a provider that accepts
    // the call and then fails before producing anything (an in-stream "overloaded" event, a dropped
    // connection) is decided by the same retry rule as one that refuses it outright: no byte went out yet.
    let mut upstream =
        upstream::Prepared::new(&model, &upstream_request, head.request_id.as_ref())?;
    let mut attempt = 0;
    let (first, events) = loop {
        attempt += 1;
        let (failed, events) = match upstream.send(&state, started).await {
            Err(failed) => (failed, None),
            Ok(response) => {
                // The one built up front serves the first attempt (building it parses the request's ModelState).
                let decoder = match unused_decoder.take() {
                    Some(decoder) => decoder,
                    None => Decoder::new(kind, &request).map_err(adapter_error)?,
                };
                let mut events = Box::pin(stream::relay(
                    response,
                    decoder,
                    bounds,
                    started,
                    state.inner.metrics.clone(),
                    model.clone(),
                ));
                match events.next().await {
                    Some(Err(error)) => (
                        upstream::Failed {
                            error,
                            retry_after: None,
                        },
                        Some(events),
                    ),
                    first => break (first, events),
                }
            }
        };
        let upstream::Failed { error, retry_after } = failed;
        if let Some(delay) = retry::delay_before_retry(
            &error,
            attempt,
            started.elapsed(),
            retry_after,
            bounds.first_byte,
        ) {
            tracing::info!(model = %model.config.id, code = error.code().as_str(), "retrying the upstream call once");
            state.metrics().upstream_retries.inc();
            tokio::time::sleep(delay).await;
            continue;
        }
        match events {
            // The provider accepted the call: the failure is the stream's one event.
            Some(events) => break (Some(Err(error)), events),
            None => {
                state.metrics().model_call(&model.config.id, "error");
                return Err(error);
            }
        }
    };
    let events = fstream::iter(first).chain(events).map(move |item| {
        let event = item.unwrap_or_else(|error| error_event(&error));
        ticket.observe(&event);
        event
    });
    Ok(SseBody::new(events).into_response())
}
