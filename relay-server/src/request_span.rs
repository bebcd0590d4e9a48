//! The `request` span every answer's handler runs in: method, path (escaped and bounded, see
//! [`crate::logging::escape`]) and the request id, so each log line of a request names it.
//!
//! Only the handler's future is instrumented, not the response body. A streamed answer's body is polled several
//! times per chunk, and entering the span at each poll (as tower-http's `TraceLayer` does) cost 3.3 % of the
//! relay's instructions for a 20-chunk call (`relay-server/bench/README.md`, "Request span"). The few lines a
//! body writes while it streams take the span from the handler and enter it explicitly (`model::stream`,
//! `mcp_proxy`); `tests/log_lines.rs` pins that they name the request.

use std::task::{Context, Poll};

use axum::http::Request;
use tower::{Layer, Service};
use tracing::instrument::{Instrument, Instrumented};

use crate::logging;
use crate::REQUEST_ID;

/// Wraps a service so each call runs inside its request's span.
#[derive(Clone, Copy, Debug, Default)]
pub struct RequestSpanLayer;

impl<S> Layer<S> for RequestSpanLayer {
    type Service = RequestSpan<S>;

    fn layer(&self, inner: S) -> RequestSpan<S> {
        RequestSpan { inner }
    }
}

/// See [`RequestSpanLayer`].
#[derive(Clone, Debug)]
pub struct RequestSpan<S> {
    inner: S,
}

impl<S, B> Service<Request<B>> for RequestSpan<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Instrumented<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let span = span_of(&request);
        // Services that do work in `call` itself (before their future) log inside the span too.
        let future = span.in_scope(|| self.inner.call(request));
        future.instrument(span)
    }
}

fn span_of<B>(request: &Request<B>) -> tracing::Span {
    let id = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    // The path is bounded here too: JSON log lines repeat span fields on every event of the request.
    let path = logging::escape(request.uri().path());
    tracing::info_span!("request", method = %request.method(), path = %path, request_id = %id)
}

#[cfg(test)]
mod tests {
    use tower::ServiceExt;

    use super::*;
    use crate::logging::CapturedLog;

    #[test]
    fn the_handler_runs_inside_the_request_span_with_its_id() {
        let captured = CapturedLog::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let service = RequestSpanLayer.layer(tower::service_fn(|_: Request<()>| async {
            tracing::info!("handled");
            Ok::<_, std::convert::Infallible>(())
        }));
        let request = Request::builder()
            .method("POST")
            .uri("/api/model?x=1")
            .header(&REQUEST_ID, "req-42")
            .body(())
            .unwrap();
        tracing::subscriber::with_default(subscriber, || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            runtime.block_on(service.oneshot(request)).unwrap();
            // Outside the call, no request span is current.
            tracing::info!("after");
        });
        let out = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(
            lines[0].contains("request{method=POST path=/api/model request_id=req-42}")
                && lines[0].ends_with("handled"),
            "{out}"
        );
        assert!(!lines[1].contains("request{"), "{out}");
    }
}
