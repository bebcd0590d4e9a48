//! Operations endpoints and layers: `/healthz` (process alive), `/readyz` (the identity resolver can verify
//! requests, a JWKS key set is held, and the database answers), `/metrics` (Prometheus text format), and the
//! per-request metrics middleware.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::state::AppState;

pub async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

/// 200 `ready`, or 503 with the first reason it is not, in words (one line).
pub async fn readyz(State(state): State<AppState>) -> Response {
    if let Err(why) = state.identity_status() {
        let line = crate::logging::escape(&why);
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("identity unavailable: {line}\n"),
        )
            .into_response();
    }
    match state.store().ping().await {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(e) => {
            crate::error::RelayError::from(e).log();
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable\n").into_response()
        }
    }
}

pub async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics().render(),
    )
        .into_response()
}

/// Counts requests by matched route template (not raw path, so ids do not explode the label set).
pub async fn count_requests(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    // A `MatchedPath` clone shares its text (no copy of the route per request).
    let route = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    state.metrics().http_request(
        route.as_ref().map_or("unmatched", MatchedPath::as_str),
        response.status().as_u16(),
    );
    response
}
