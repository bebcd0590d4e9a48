//! The model proxy: `POST {base}/model` (neutral request in, neutral SSE stream out) and `GET {base}/models`.
//!
//! - [`registry`]: configured models, or the scripted demo model.
//! - [`inputs`]: the input kinds of a request against what its model takes (`UNSUPPORTED_INPUT`).
//! - [`scripted`]: the scripted demo model itself (deterministic, not AI).
//! - [`client`]: the pooled HTTP client to the providers (TLS, proxies, fixed connection buffers).
//! - [`upstream`]: one attempt at the provider; error classification and redaction.
//! - [`retry`]: the one retry rule, decided on the typed error of a failed attempt.
//! - [`failover`]: which fallbacks a call may try, which failures move on to them, and their time.
//! - [`stream`]: the response's event pipeline (bounds, timeouts, SSE framing, decoding, metrics, cancellation).
//! - [`sse_body`]: the events encoded for the browser, batched into as few writes as the timing allows.

pub mod client;
pub mod failover;
pub mod inputs;
pub mod registry;
pub mod retry;
pub mod scripted;
pub mod sse_body;
pub mod stream;
pub mod upstream;

use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Extension, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;

use futures_util::stream as fstream;
use futures_util::{Stream, StreamExt};
use patchbridge_protocol::{ModelRequest, RelayErrorCode, StreamEvent};
use patchbridge_providers::{encode_request, AdapterError, Decoder, UpstreamRequest};

use crate::config::ValidatedModel;
use crate::error::RelayError;
use crate::extract::StrictJson;
use crate::identity::UserId;
use crate::spending::{self, Refused};
use crate::state::AppState;
use crate::telemetry::model_call::CallInfo;
use crate::telemetry::{ModelCallTrace, TraceParent};
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
    parent: TraceParent,
    StrictJson(request): StrictJson<ModelRequest>,
) -> Result<Response, RelayError> {
    let started = Instant::now();
    let entry = state.inner.models.pick(request.model.as_deref())?.clone();
    let model = match entry {
        ModelEntry::Scripted => {
            let info = CallInfo {
                model_id: registry::SCRIPTED_ID,
                provider: None,
                upstream_model: registry::SCRIPTED_ID,
                max_tokens: None,
                user: &user.0,
                request: &request,
            };
            let mut trace = ModelCallTrace::start(state.telemetry(), &parent, info);
            let ticket = trace
                .admission(async {
                    state
                        .spending()
                        .admit(&user.0, registry::SCRIPTED_ID, &request)
                        .await
                        .map_err(RelayError::from)
                })
                .await?
                .free();
            let events = state.heavy(move || scripted::respond(&request)).await?;
            state.metrics().model_call(registry::SCRIPTED_ID, "ok");
            return Ok(SseBody::new(fstream::iter(events).map(move |event| {
                let _running = &ticket;
                trace.observe(&event);
                event
            }))
            .into_response());
        }
        ModelEntry::Upstream(model) => model,
    };
    inputs::check(&request, &model)?;
    let info = CallInfo {
        model_id: &model.config.id,
        provider: Some(model.config.provider),
        upstream_model: &model.config.upstream_model,
        max_tokens: model.config.max_output_tokens,
        user: &user.0,
        request: &request,
    };
    let mut trace = ModelCallTrace::start(state.telemetry(), &parent, info);
    // The requested model, then the fallbacks that can serve this request (`failover.rs`).
    let mut chain = vec![model.clone()];
    for fallback in state.inner.models.fallbacks(&model.config.id) {
        match failover::unfit(&model, fallback, &request) {
            None => chain.push(fallback.clone()),
            Some(why) => {
                tracing::debug!(model = %model.config.id, fallback = %fallback.config.id, why, "fallback left out")
            }
        }
    }
    let call = Call {
        state: &state,
        request_id: head.request_id.as_ref(),
        started,
        budget: failover::Budget::new(started, &state.inner.limits),
    };
    let mut holds = failover::Holds::default();
    let mut request = request;
    // The last attempt that failed over: its model, and its error.
    let mut failed: Option<(Arc<ValidatedModel>, RelayError)> = None;
    for (position, serving) in chain.iter().enumerate() {
        let has_next = position + 1 < chain.len();
        if let Some((from, error)) = &failed {
            match holds.wait(serving, Instant::now(), &call.budget) {
                None => {
                    tracing::info!(model = %serving.config.id, "fallback skipped: its host asked to wait past the call's first-byte time");
                    continue;
                }
                Some(wait) if !wait.is_zero() => tokio::time::sleep(wait).await,
                Some(_) => {}
            }
            if call.budget.spent(Instant::now()) {
                break;
            }
            tracing::warn!(
                from = %from.config.id,
                to = %serving.config.id,
                code = error.code().as_str(),
                "failing over to the next model"
            );
            state.metrics().model_failover(
                &from.config.id,
                &serving.config.id,
                error.code().as_str(),
            );
        }
        let (back, prepared) = prepare(&state, serving, request, head.small_body).await?;
        request = back;
        let encoded = match prepared {
            Ok(prepared) => prepared,
            Err(e) if position == 0 => return Err(adapter_error(e)),
            Err(e) => {
                tracing::info!(model = %serving.config.id, error = %e, "fallback skipped: it cannot express the request");
                continue;
            }
        };
        // The spending limits of the model about to serve, after the request proved valid for it and before
        // anything goes upstream: a refused call costs nothing. The ticket records the call's usage when it is
        // dropped, with the response (or on the way out of this function, when no response streams).
        let mut ticket = match trace
            .admission(async {
                state
                    .spending()
                    .admit(&user.0, &serving.config.id, &request)
                    .await
                    .map_err(RelayError::from)
            })
            .await
        {
            Ok(ticket) => ticket,
            Err(e) if position == 0 => return Err(e),
            Err(e) => {
                tracing::info!(model = %serving.config.id, code = e.code().as_str(), "fallback skipped: not admitted");
                continue;
            }
        };
        if position == 0 {
            tracing::info!(
                model = %serving.config.id,
                provider = serving.config.provider.as_str(),
                conversation = %crate::logging::escape(request.conversation_id.as_deref().unwrap_or("")),
                messages = request.messages.len(),
                "model call"
            );
        }
        match call
            .attempt(serving, &request, encoded, has_next, &trace, &mut ticket)
            .await?
        {
            Attempted::Served { first, events } => {
                // A fallback names itself on `message-start`: the browser asked for another model.
                let first = match (first, position) {
                    (Some(Ok(StreamEvent::MessageStart { id, .. })), 1..) => {
                        Some(Ok(StreamEvent::MessageStart {
                            id,
                            model: Some(serving.config.id.clone()),
                        }))
                    }
                    (first, _) => first,
                };
                return Ok(respond(first, events, ticket, trace));
            }
            Attempted::Failed(failure) => {
                if let (Some(wait), RelayErrorCode::UpstreamRateLimited) =
                    (failure.retry_after, failure.error.code())
                {
                    holds.hold(serving, Instant::now(), wait);
                }
                if has_next && failover::fails_over(&failure.error) {
                    // Dropping the events and the ticket cancels that attempt and records it (charged the
                    // bounds when the provider accepted it: it may have spent them).
                    drop(ticket);
                    failed = Some((serving.clone(), failure.error));
                    continue;
                }
                return finish(&state, serving, failure, ticket, trace);
            }
        }
    }
    // Every model after the last failure was skipped, or the call's time ran out.
    match failed {
        Some((model, error)) => {
            let failure = Failure {
                error,
                retry_after: None,
                events: None,
            };
            finish(&state, &model, failure, None, trace)
        }
        None => Err(RelayError::internal("a model call without an attempt")),
    }
}

/// The neutral events of an attempt whose provider accepted the call.
type Events = Pin<Box<dyn Stream<Item = Result<StreamEvent, RelayError>> + Send>>;

/// An attempt at one model that failed before any event went to the browser.
struct Failure {
    error: RelayError,
    /// The provider's `Retry-After`, when it sent one.
    retry_after: Option<Duration>,
    /// The events, when the provider accepted the call and then failed before its first event.
    events: Option<Events>,
}

enum Attempted {
    /// The first event (`None` for a stream that ended without any), and the rest.
    Served {
        first: Option<Result<StreamEvent, RelayError>>,
        events: Events,
    },
    Failed(Failure),
}

/// What every attempt of one call shares.
struct Call<'a> {
    state: &'a AppState,
    /// The router's request-id layer always sets it; sent upstream so provider logs correlate with ours.
    request_id: Option<&'a HeaderValue>,
    started: Instant,
    budget: failover::Budget,
}

impl Call<'_> {
    /// Calls `model` until its first event: one attempt when a model follows it in the chain (the next one is
    /// tried instead of a retry), else the one retry of `retry.rs`. The response to the browser starts only
    /// once the first neutral event exists, so a provider that accepts the call and then fails before
    /// producing anything (an in-stream "overloaded" event, a dropped connection) is decided by the same rules
    /// as one that refuses it outright: no byte went out yet.
    async fn attempt(
        &self,
        model: &Arc<ValidatedModel>,
        request: &ModelRequest,
        (upstream_request, decoder): (UpstreamRequest, Decoder),
        has_next: bool,
        trace: &ModelCallTrace,
        ticket: &mut spending::Ticket,
    ) -> Result<Attempted, RelayError> {
        let state = self.state;
        let limits = state.inner.limits;
        let kind = model.config.provider;
        let mut unused_decoder = Some(decoder);
        let mut upstream = upstream::Prepared::new(model, &upstream_request, self.request_id)?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let bounds = StreamBounds {
                max_upstream_bytes: limits.max_upstream_response_bytes,
                max_events: limits.max_events_per_call,
                first_byte: self.budget.attempt_first_byte(Instant::now(), has_next),
                idle: Duration::from_millis(limits.idle_timeout_ms),
                total: Duration::from_millis(limits.max_stream_duration_ms),
            };
            let span = trace.attempt(&model.endpoint, attempt);
            // Charged from here if the browser goes away before the answer (`spending::Ticket::tokens`).
            ticket.attempt_sent();
            let failure = match upstream.send(state, self.started, bounds.first_byte).await {
                Err(upstream::Failed { error, retry_after }) => {
                    // A refusal or an unreachable provider cost nothing; a request left unanswered may be
                    // running at the provider.
                    ticket.attempt_ended(error.code() == RelayErrorCode::UpstreamTimeout);
                    span.failed(&error, None);
                    Failure {
                        error,
                        retry_after,
                        events: None,
                    }
                }
                Ok(response) => {
                    ticket.attempt_ended(true);
                    span.answered(response.status().as_u16());
                    // The one built up front serves the first attempt (building it parses the request's
                    // ModelState).
                    let decoder = match unused_decoder.take() {
                        Some(decoder) => decoder,
                        None => Decoder::new(kind, request).map_err(adapter_error)?,
                    };
                    let mut events: Events = Box::pin(stream::relay(
                        response,
                        decoder,
                        bounds,
                        self.started,
                        state.inner.metrics.clone(),
                        model.clone(),
                    ));
                    match events.next().await {
                        Some(Err(error)) => Failure {
                            error,
                            retry_after: None,
                            events: Some(events),
                        },
                        first => return Ok(Attempted::Served { first, events }),
                    }
                }
            };
            let retry = if has_next {
                None
            } else {
                retry::delay_before_retry(
                    &failure.error,
                    attempt,
                    self.started.elapsed(),
                    failure.retry_after,
                    bounds.first_byte,
                )
            };
            let Some(delay) = retry else {
                return Ok(Attempted::Failed(failure));
            };
            tracing::info!(model = %model.config.id, code = failure.error.code().as_str(), "retrying the upstream call once");
            state.metrics().upstream_retries.inc();
            tokio::time::sleep(delay).await;
        }
    }
}

/// Encodes `request` for `model` and builds its decoder, which fails early on requests it cannot serve (before
/// any upstream call). Encoding walks every message, tool and ModelState item: linear, but megabytes of it, so
/// a large request is encoded off the async workers (a small one in place: the hop would cost more than the
/// work). The request comes back whatever the outcome, for the next model of the chain.
async fn prepare(
    state: &AppState,
    model: &Arc<ValidatedModel>,
    request: ModelRequest,
    small_body: bool,
) -> Result<
    (
        ModelRequest,
        Result<(UpstreamRequest, Decoder), AdapterError>,
    ),
    RelayError,
> {
    let kind = model.config.provider;
    let work = move |options: &patchbridge_providers::ModelOptions, request: ModelRequest| {
        let prepared = encode_request(kind, options, &request)
            .and_then(|upstream| Ok((upstream, Decoder::new(kind, &request)?)));
        (request, prepared)
    };
    if small_body {
        Ok(work(&model.options, request))
    } else {
        let model = model.clone();
        state.heavy(move || work(&model.options, request)).await
    }
}

/// The `200 text/event-stream` response: `first`, then the rest of `events`, each seen by the ticket of the
/// model serving them; a failure is sent as the stream's one `error` event.
fn respond(
    first: Option<Result<StreamEvent, RelayError>>,
    events: Events,
    mut ticket: spending::Ticket,
    mut trace: ModelCallTrace,
) -> Response {
    let events = fstream::iter(first).chain(events).map(move |item| {
        let event = item.unwrap_or_else(|error| error_event(&error));
        ticket.observe(&event);
        trace.observe(&event);
        event
    });
    SseBody::new(events).into_response()
}

/// Ends a call whose last attempt failed: with an HTTP error when the provider never accepted it, else with a
/// stream holding just the failure as its `error` event.
fn finish(
    state: &AppState,
    model: &ValidatedModel,
    failure: Failure,
    ticket: impl Into<Option<spending::Ticket>>,
    mut trace: ModelCallTrace,
) -> Result<Response, RelayError> {
    match (failure.events, ticket.into()) {
        (Some(events), Some(ticket)) => {
            Ok(respond(Some(Err(failure.error)), events, ticket, trace))
        }
        (Some(events), None) => {
            let events = fstream::iter([Err(failure.error)])
                .chain(events)
                .map(move |item| {
                    let event = item.unwrap_or_else(|error| error_event(&error));
                    trace.observe(&event);
                    event
                });
            Ok(SseBody::new(events).into_response())
        }
        (None, _) => {
            state.metrics().model_call(&model.config.id, "error");
            trace.fail(&failure.error);
            Err(failure.error)
        }
    }
}
