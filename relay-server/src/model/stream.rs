//! The event stream of a `POST {base}/model` response: upstream bytes → bounded, timed byte stream → SSE
//! messages ([`SseFramer`]) → the adapter's [`Decoder`] → neutral events (which
//! [`super::sse_body`] batches and encodes for the browser).
//!
//! The whole pipeline lives inside the response body stream and owns the upstream response, so when the
//! browser disconnects and hyper drops the body, the upstream request is dropped (and its connection closed)
//! at once. Nothing is spawned.
//!
//! A failure ends the stream as its last item, a typed [`RelayError`]: the handler decides on it (the one retry
//! before anything went to the browser, `model/retry.rs`) and otherwise sends it as one `error` event.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use http_body_util::BodyExt;
use patchbridge_protocol::{RelayErrorCode, StreamEvent};
use patchbridge_providers::sse::{SseFramer, SseMessage};
use patchbridge_providers::{AdapterError, Decoder};

use super::client::UpstreamResponse;
use crate::config::{Secret, ValidatedModel};
use crate::error::RelayError;
use crate::metrics::Metrics;

/// Bounds of one call, copied from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct StreamBounds {
    pub max_upstream_bytes: u64,
    pub max_events: u64,
    pub first_byte: Duration,
    pub idle: Duration,
    /// The whole call, from the request's arrival to the last event: whatever the upstream sends (comments and
    /// pings reset the idle timer), the stream ends here.
    pub total: Duration,
}

/// Why the upstream byte stream ended early.
#[derive(Debug)]
enum ByteIssue {
    FirstByteTimeout,
    IdleTimeout,
    DurationExceeded(Duration),
    TooLarge(u64),
    Transport(hyper::Error),
}

impl std::fmt::Display for ByteIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ByteIssue::FirstByteTimeout => write!(f, "first byte timeout"),
            ByteIssue::IdleTimeout => write!(f, "idle timeout"),
            ByteIssue::DurationExceeded(d) => {
                write!(
                    f,
                    "stream exceeded limits.maxStreamDurationMs ({} ms)",
                    d.as_millis()
                )
            }
            ByteIssue::TooLarge(n) => write!(f, "upstream response exceeds {n} bytes"),
            ByteIssue::Transport(e) => write!(f, "transport: {e}"),
        }
    }
}

/// When the wait for the next upstream bytes ends, and as which issue. Pure, so the rules are tested without
/// a clock: a wait that begins at `began` may last the first-byte timeout (counted from the call's arrival) until
/// the first byte and the idle timeout after it, and never past the whole call's bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WaitRule {
    first_byte_by: Instant,
    total_by: Instant,
    idle: Duration,
}

impl WaitRule {
    fn new(bounds: &StreamBounds, started: Instant) -> Self {
        WaitRule {
            first_byte_by: started + bounds.first_byte,
            total_by: started + bounds.total,
            idle: bounds.idle,
        }
    }

    /// The deadline of a wait that began at `began`, and which bound it is.
    fn due(&self, began: Instant, first: bool) -> (Instant, Expiry) {
        let (by, expiry) = if first {
            (self.first_byte_by, Expiry::FirstByte)
        } else {
            (began + self.idle, Expiry::Idle)
        };
        if self.total_by <= by {
            (self.total_by, Expiry::Total)
        } else {
            (by, expiry)
        }
    }
}

/// Which bound a wait for upstream bytes ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    FirstByte,
    Idle,
    Total,
}

impl Expiry {
    fn issue(self, bounds: &StreamBounds) -> ByteIssue {
        match self {
            Expiry::FirstByte => ByteIssue::FirstByteTimeout,
            Expiry::Idle => ByteIssue::IdleTimeout,
            Expiry::Total => ByteIssue::DurationExceeded(bounds.total),
        }
    }
}

/// Upstream body bytes with the byte bound, the first-byte deadline and the idle timeout applied.
///
/// One timer serves the whole stream. Arming a fresh timeout per chunk registered and removed a timer-wheel
/// entry (two driver locks) for every upstream chunk; here the timer keeps its deadline while chunks arrive,
/// and only when it fires is the real deadline of the current wait (which began after the last chunk was
/// handed on) recomputed: the timer is moved forward, or the stream ends with the issue.
fn bounded_bytes(
    response: UpstreamResponse,
    bounds: StreamBounds,
    started: Instant,
    metrics: Arc<Metrics>,
    first_byte_at: Arc<std::sync::OnceLock<Instant>>,
) -> impl Stream<Item = Result<bytes::Bytes, ByteIssue>> {
    async_stream::stream! {
        let mut body = response.into_body().into_data_stream();
        let mut total: u64 = 0;
        let rule = WaitRule::new(&bounds, started);
        let (mut armed, _) = rule.due(started, true);
        let timer = tokio::time::sleep_until(armed.into());
        tokio::pin!(timer);
        loop {
            let first = first_byte_at.get().is_none();
            let began = Instant::now();
            let (due, expiry) = rule.due(began, first);
            // Checked before polling: the body is polled first below, so an upstream whose bytes are always
            // ready would never let the timer fire.
            if began >= rule.total_by {
                yield Err(ByteIssue::DurationExceeded(bounds.total));
                break;
            }
            // The first-byte deadline can be later than the first idle deadline: then the timer moves back.
            if due < armed {
                armed = due;
                timer.as_mut().reset(armed.into());
            }
            // `Err`: the wait ran into its bound.
            let next = loop {
                tokio::select! {
                    biased;
                    next = body.next() => break Ok(next),
                    () = &mut timer => {
                        if Instant::now() < due {
                            armed = due;
                            timer.as_mut().reset(armed.into());
                            continue;
                        }
                        break Err(expiry);
                    }
                }
            };
            match next {
                Err(expiry) => {
                    yield Err(expiry.issue(&bounds));
                    break;
                }
                Ok(None) => {
                    // End of body: terminate a last event that lacks its blank line. The WHATWG rules drop
                    // it, but the providers' own SDKs dispatch it, and recorded streams end that way.
                    yield Ok(bytes::Bytes::from_static(b"\n\n"));
                    break;
                }
                Ok(Some(Err(e))) => {
                    yield Err(ByteIssue::Transport(e));
                    break;
                }
                Ok(Some(Ok(chunk))) => {
                    if first && first_byte_at.set(Instant::now()).is_ok() {
                        metrics.upstream_first_byte.observe(started.elapsed().as_secs_f64());
                    }
                    total += chunk.len() as u64;
                    if total > bounds.max_upstream_bytes {
                        yield Err(ByteIssue::TooLarge(bounds.max_upstream_bytes));
                        break;
                    }
                    yield Ok(chunk);
                }
            }
        }
    }
}

pub fn error_event(error: &RelayError) -> StreamEvent {
    StreamEvent::Error {
        code: error.code().as_str().into(),
        message: error.public_message().to_owned(),
        retryable: Some(error.retryable()),
    }
}

/// An adapter error from request encoding (no upstream text, so no secret to redact).
pub fn adapter_error(e: AdapterError) -> RelayError {
    adapter_error_redacted(e, &[])
}

/// An adapter error logged with `secrets` (the model's API key) masked: in-stream provider errors carry
/// upstream text, and a provider or gateway may quote the key it refused.
pub fn adapter_error_redacted(e: AdapterError, secrets: &[&str]) -> RelayError {
    tracing::warn!(code = e.code().as_str(), detail = %crate::model::upstream::redact(&e.to_string(), secrets), "adapter error");
    if let Some(message_id) = e.message_id() {
        return RelayError::model_state_mismatch(message_id.to_owned(), e.message());
    }
    RelayError::new(e.code(), e.message())
}

/// Counts the stream as open while it lives and records how it ended (also when the browser went away).
struct StreamGuard {
    metrics: Arc<Metrics>,
    model: Arc<ValidatedModel>,
    outcome: &'static str,
    started: Instant,
    events: u64,
    /// The request's span. The body is polled (and dropped, when the browser goes away) outside of it
    /// (`request_span`), so the lines the stream writes enter it explicitly: they carry the request id.
    span: tracing::Span,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.metrics.open_streams.dec();
        let elapsed_ms = self.started.elapsed().as_millis() as u64;
        let model = &self.model.config.id;
        let _request = self.span.enter();
        if self.outcome == "cancelled" {
            tracing::info!(model = %model, events = self.events, elapsed_ms, "browser disconnected: upstream request dropped");
        } else {
            tracing::info!(model = %model, outcome = self.outcome, events = self.events, elapsed_ms, "model call finished");
        }
        self.metrics.model_call(model, self.outcome);
    }
}

/// The neutral event stream of one upstream call (the handler turns it into SSE); a failure is the last item.
pub fn relay(
    response: UpstreamResponse,
    mut decoder: Decoder,
    bounds: StreamBounds,
    started: Instant,
    metrics: Arc<Metrics>,
    model: Arc<ValidatedModel>,
) -> impl Stream<Item = Result<StreamEvent, RelayError>> {
    // Taken here, in the handler, which runs inside the request's span.
    let span = tracing::Span::current();
    async_stream::stream! {
        // The model's API key, masked in logged upstream text (the guard below holds the model for as long).
        let key = model.clone();
        let secrets: Vec<&str> = key.api_key.iter().map(Secret::expose).collect();
        metrics.open_streams.inc();
        let mut guard = StreamGuard { metrics: metrics.clone(), model, outcome: "cancelled", started, events: 0, span };
        let first_byte_at = Arc::new(std::sync::OnceLock::new());
        let mut bytes = Box::pin(bounded_bytes(response, bounds, started, metrics.clone(), first_byte_at.clone()));
        let mut framer = SseFramer::new();
        let mut messages: Vec<SseMessage> = Vec::new();
        let mut out: Vec<StreamEvent> = Vec::new();
        let mut failure: Option<RelayError> = None;

        // `None` (end of the upstream body) goes through the same loop so the decoder's final events share the
        // event bound and the first-event metrics.
        loop {
            let item = bytes.next().await;
            let ended = item.is_none();
            match item {
                Some(Ok(chunk)) => {
                    // Messages completed before a bad line still count; the failure takes effect after them.
                    let framed = framer.push(&chunk, &mut messages);
                    for message in messages.drain(..) {
                        // A complete decoder ignores whatever follows, so the upstream is not read to its end.
                        if failure.is_some() || decoder.is_complete() {
                            break;
                        }
                        let began = Instant::now();
                        if let Err(e) = decoder.feed(&message.event, &message.data, &mut out) {
                            failure = Some(guard.span.in_scope(|| adapter_error_redacted(e, &secrets)));
                        }
                        metrics.chunk_processing.observe(began.elapsed().as_secs_f64());
                    }
                    if framed.is_err() && failure.is_none() && !decoder.is_complete() {
                        guard.span.in_scope(|| tracing::warn!("upstream SSE is not valid UTF-8"));
                        failure = Some(RelayError::from(RelayErrorCode::UpstreamProtocolError));
                    }
                }
                Some(Err(issue)) => {
                    let code = match issue {
                        ByteIssue::FirstByteTimeout | ByteIssue::IdleTimeout | ByteIssue::DurationExceeded(_) => RelayErrorCode::UpstreamTimeout,
                        ByteIssue::TooLarge(_) => RelayErrorCode::UpstreamResponseTooLarge,
                        ByteIssue::Transport(_) => RelayErrorCode::UpstreamUnavailable,
                    };
                    failure = Some(RelayError::from(code).with_source(issue.to_string()));
                }
                None => {
                    if let Err(e) = decoder.finish(&mut out) {
                        failure = Some(guard.span.in_scope(|| adapter_error_redacted(e, &secrets)));
                    }
                }
            }
            for event in out.drain(..) {
                if guard.events >= bounds.max_events {
                    failure = Some(RelayError::from(RelayErrorCode::UpstreamResponseTooLarge).with_source(format!("more than {} events", bounds.max_events)));
                    break;
                }
                guard.events += 1;
                if guard.events == 1 {
                    let now = Instant::now();
                    metrics.first_event.observe(started.elapsed().as_secs_f64());
                    if let Some(at) = first_byte_at.get() {
                        metrics.added_first_event.observe(now.saturating_duration_since(*at).as_secs_f64());
                    }
                }
                yield Ok(event);
            }
            if ended || failure.is_some() || decoder.is_complete() {
                break;
            }
        }
        match failure {
            Some(error) => {
                guard.span.in_scope(|| error.log());
                guard.outcome = "error";
                yield Err(error);
            }
            None => guard.outcome = "ok",
        }
        drop(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> (WaitRule, Instant) {
        let started = Instant::now();
        let bounds = StreamBounds {
            max_upstream_bytes: 1,
            max_events: 1,
            first_byte: Duration::from_secs(30),
            idle: Duration::from_secs(10),
            total: Duration::from_secs(100),
        };
        (WaitRule::new(&bounds, started), started)
    }

    #[test]
    fn before_the_first_byte_the_wait_ends_at_the_first_byte_deadline_from_arrival() {
        let (rule, started) = rule();
        let late = started + Duration::from_secs(25);
        assert_eq!(
            rule.due(late, true),
            (started + Duration::from_secs(30), Expiry::FirstByte)
        );
    }

    #[test]
    fn after_the_first_byte_each_wait_gets_the_idle_timeout_from_its_start() {
        let (rule, started) = rule();
        let began = started + Duration::from_secs(42);
        assert_eq!(
            rule.due(began, false),
            (began + Duration::from_secs(10), Expiry::Idle)
        );
    }

    #[test]
    fn no_wait_outlasts_the_whole_call() {
        let (rule, started) = rule();
        let end = started + Duration::from_secs(100);
        assert_eq!(
            rule.due(started + Duration::from_secs(95), false),
            (end, Expiry::Total)
        );
        // A deadline that falls exactly on the call's end is the call's bound, as the error message says.
        assert_eq!(
            rule.due(started + Duration::from_secs(90), false),
            (end, Expiry::Total)
        );
        let short = WaitRule {
            total_by: started + Duration::from_secs(5),
            ..rule
        };
        assert_eq!(
            short.due(started, true),
            (started + Duration::from_secs(5), Expiry::Total)
        );
    }
}
