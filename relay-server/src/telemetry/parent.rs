//! The browser's trace context: the W3C `traceparent` (and `tracestate`) headers of a request, read by the SDK's
//! W3C propagator into the parent of the relay's spans, so a call joins the page's trace (`docs/protocol.md` §7).
//! A missing or malformed header gives no parent (the relay's span starts a trace of its own).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::HeaderMap;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::Context;
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// The headers the propagator reads.
const FIELDS: [&str; 2] = ["traceparent", "tracestate"];

/// The parent context a request names (an empty context without one). Extracted only when the request carries
/// a `traceparent`, so untraced requests cost one header lookup.
#[derive(Clone, Default)]
pub struct TraceParent(pub Option<Context>);

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        FIELDS
            .into_iter()
            .filter(|k| self.0.contains_key(*k))
            .collect()
    }
}

impl TraceParent {
    pub fn from_headers(headers: &HeaderMap) -> Self {
        if !headers.contains_key(FIELDS[0]) {
            return TraceParent(None);
        }
        let cx = TraceContextPropagator::new().extract(&Headers(headers));
        TraceParent(Some(cx))
    }

    /// The parent for a new span: the browser's, or none.
    pub fn context(&self) -> Context {
        self.0.clone().unwrap_or_default()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for TraceParent {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(TraceParent::from_headers(&parts.headers))
    }
}
