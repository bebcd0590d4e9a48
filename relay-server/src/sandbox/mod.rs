//! The MCP Apps sandbox origin (`docs/adr/018-mcp-apps-sandbox-origin.md`): an optional second listener of the
//! relay that serves one thing, the sandbox proxy page of `<patchbridge-agent>` (`widget/sandbox/proxy.html`,
//! SEP-1865 "Sandbox proxy"), on an origin that is never the host page's. Only the configured page origins may
//! frame it (`frame-ancestors`); every other path answers 404 with the relay's usual headers (no framing at all).
//!
//! - [`config`]: the `sandbox` section (`bind`, `publicOrigin`, `pageOrigins`) and its checks.
//! - [`page`]: the proxy page as served (the page origins written in) and its response headers.
//! - this file: [`router`], what the listener answers; [`frame_src_for_pages`], the one directive the relay's own
//!   pages gain when a sandbox is configured (`frame-src <publicOrigin>`).

pub mod config;
pub mod page;

use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use patchbridge_protocol::RelayErrorCode;

pub use config::{SandboxConfig, ValidatedSandbox};

use crate::error::RelayError;

/// What the sandbox listener serves: `GET /` (and `HEAD /`) the proxy page; anything else 404, not framable.
pub fn router(sandbox: &ValidatedSandbox) -> Router {
    let page = page::ProxyPage::new(&sandbox.page_origins);
    Router::new()
        .route(
            "/",
            get(move |method: Method| {
                let page = page.clone();
                async move { page.response(method == Method::HEAD) }
            }),
        )
        .fallback(not_found)
}

/// Adds `frame-src <sandbox origin>` to a page of the relay's own (an answer carrying
/// [`crate::static_files::PAGE_CSP`]), so the demo and example pages can show MCP Apps; every other answer as it is.
pub fn frame_src_for_pages(mut response: Response, origin: &str) -> Response {
    let page = response
        .headers()
        .get(header::CONTENT_SECURITY_POLICY)
        .is_some_and(|v| v.as_bytes() == crate::static_files::PAGE_CSP.as_bytes());
    if page {
        let csp = format!("{}; frame-src {origin}", crate::static_files::PAGE_CSP);
        if let Ok(value) = HeaderValue::from_str(&csp) {
            response
                .headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, value);
        }
    }
    response
}

/// 404 with the headers of every relay answer: nothing here may be framed or run.
async fn not_found() -> Response {
    let mut response = RelayError::from(RelayErrorCode::NotFound).into_response();
    *response.status_mut() = StatusCode::NOT_FOUND;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
