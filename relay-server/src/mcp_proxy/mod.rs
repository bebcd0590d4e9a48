//! The optional MCP passthrough (ADR-016 "The relay's passthrough"): `{basePath}/mcp/{name}` forwards the
//! Streamable HTTP exchange of a page's MCP client to a server the operator configured (`mcp.servers`), adding
//! the operator's secret headers, so a page can use a server that has no CORS or needs a key it must not see.
//! It sits behind the API guard (Origin, content type, identity) like every API route, and it is a pipe: the
//! relay never reads the JSON-RPC messages, never lists or calls tools itself, and never runs the agent loop.
//!
//! - [`config`]: the `mcp` section and its validation.
//! - [`permits`]: the per-user bound on open exchanges.
//! - [`servers`]: [`McpProxy`], the validated servers and the open exchanges the state holds (a leaf, so the
//!   state does not import the handler).
//! - this file: the handler.
//!
//! Forwarded from the browser: `content-type`, `accept`, `mcp-session-id`, `mcp-protocol-version`,
//! `last-event-id` and the body (bounded by `mcp.maxRequestBytes`); never `authorization` or cookies (they
//! authenticate the user to the relay, not to the server). Passed back: the status, `content-type`,
//! `mcp-session-id`, `mcp-protocol-version`, `cache-control`, a declared `content-length`, and the body streamed
//! as it arrives (JSON or SSE),
//! cut when the upstream is idle past `mcp.idleTimeoutMs`, open past `mcp.maxExchangeMs`, or larger than
//! `mcp.maxResponseBytes` (a larger declared `content-length` is 502 `UPSTREAM_RESPONSE_TOO_LARGE` before any
//! byte). A cut answer ends the browser's response with an error, which its MCP client sees as a broken stream. An upstream 401/403 or 3xx is the operator's
//! problem, not the page's: it becomes 502 `UPSTREAM_REJECTED` (a page must not start an OAuth flow against a
//! server the relay holds the credentials of).

pub mod config;
pub mod permits;
pub mod servers;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, StatusCode};
use axum::response::Response;
use axum::Extension;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use patchbridge_protocol::RelayErrorCode;

use crate::error::RelayError;
use crate::extract::Path;
use crate::identity::UserId;
use crate::model::client::describe;
use crate::state::AppState;

pub use config::{McpConfig, ValidatedMcp};
pub use servers::McpProxy;

const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The headers the CORS layer exposes to pages, and the MCP client must be able to send.
pub const EXPOSED_HEADERS: [HeaderName; 2] = [MCP_SESSION_ID, MCP_PROTOCOL_VERSION];

/// What the browser may send on to the server.
const FORWARDED_REQUEST: [HeaderName; 5] = [
    header::CONTENT_TYPE,
    header::ACCEPT,
    MCP_SESSION_ID,
    MCP_PROTOCOL_VERSION,
    LAST_EVENT_ID,
];
/// What the server may send back to the browser.
const FORWARDED_RESPONSE: [HeaderName; 4] = [
    header::CONTENT_TYPE,
    header::CACHE_CONTROL,
    MCP_SESSION_ID,
    MCP_PROTOCOL_VERSION,
];

/// `POST | GET | DELETE {base}/mcp/{name}`.
pub async fn forward(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Extension(user): Extension<UserId>,
    request: Request,
) -> Result<Response, RelayError> {
    let proxy = &state.inner.mcp;
    let limits = &proxy.config;
    let server = limits
        .servers
        .iter()
        .find(|s| s.name == name)
        .ok_or(RelayErrorCode::McpServerNotFound)?;
    if !server.users.allows(&user.0) {
        tracing::info!(server = %server.name, "mcp server refused for this user");
        return Err(RelayErrorCode::McpServerForbidden.into());
    }
    let permit = proxy
        .permits
        .try_acquire(&user.0, limits.max_concurrent_per_user)
        .ok_or_else(|| {
            RelayError::new(
                RelayErrorCode::McpConcurrencyLimit,
                format!(
                    "at most {} MCP exchanges may be open at once",
                    limits.max_concurrent_per_user
                ),
            )
        })?;

    let (parts, body) = request.into_parts();
    let body_timeout = std::time::Duration::from_millis(state.inner.limits.request_body_timeout_ms);
    let body = tokio::time::timeout(
        body_timeout,
        crate::extract::read_limited(
            {
                // Only the body and its declared length matter to the bounded read.
                let mut bounded = Request::new(body);
                *bounded.headers_mut() = parts.headers.clone();
                bounded
            },
            limits.max_request_bytes,
        ),
    )
    .await
    .map_err(|_| RelayError::from(RelayErrorCode::RequestTimeout))??;

    let mut upstream = hyper::Request::builder()
        .method(parts.method.clone())
        .uri(server.endpoint.clone())
        .body(Full::new(body))
        .map_err(RelayError::internal)?;
    copy_headers(&parts.headers, upstream.headers_mut(), &FORWARDED_REQUEST);
    for (name, value) in &server.headers {
        upstream.headers_mut().insert(name.clone(), value.clone());
    }

    let response = match tokio::time::timeout(
        limits.first_byte_timeout,
        state.inner.http.send(upstream),
    )
    .await
    {
        Err(_) => {
            return Err(RelayError::new(
                RelayErrorCode::UpstreamTimeout,
                "the MCP server did not answer in time",
            ))
        }
        Ok(Err(e)) => {
            return Err(
                RelayError::from(RelayErrorCode::UpstreamUnavailable).with_source(format!(
                    "mcp server `{}`: {}",
                    server.name,
                    describe(&e)
                )),
            )
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if status.is_redirection()
        || status == StatusCode::UNAUTHORIZED
        || status == StatusCode::FORBIDDEN
    {
        return Err(RelayError::new(
            RelayErrorCode::UpstreamRejected,
            "the MCP server refused the relay's request",
        )
        .with_source(format!("mcp server `{}` answered {status}", server.name)));
    }

    let declared = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_response_bytes) {
        return Err(RelayError::new(
            RelayErrorCode::UpstreamResponseTooLarge,
            format!(
                "the MCP server's answer is larger than {} bytes",
                limits.max_response_bytes
            ),
        ));
    }

    let (head, incoming) = response.into_parts();
    let mut answer = Response::builder().status(head.status);
    if let Some(headers) = answer.headers_mut() {
        copy_headers(&head.headers, headers, &FORWARDED_RESPONSE);
        // A declared length goes on with the body (an empty 202 stays an empty body, not an open chunked stream
        // the client must cancel).
        if let Some(length) = declared {
            headers.insert(header::CONTENT_LENGTH, length.into());
        }
    }
    let idle = limits.idle_timeout;
    let max_bytes = limits.max_response_bytes;
    let ends_at = tokio::time::Instant::now() + limits.max_exchange;
    let server_name = server.name.clone();
    // The body is polled outside the request's span (`request_span`); its lines enter it to carry the request id.
    let span = tracing::Span::current();
    let stream = async_stream::stream! {
        // Held until the answer ends or the browser goes away (the stream is dropped).
        let _permit = permit;
        let mut incoming = incoming;
        let mut sent: u64 = 0;
        loop {
            let wait = idle.min(ends_at.saturating_duration_since(tokio::time::Instant::now()));
            match tokio::time::timeout(wait, incoming.frame()).await {
                Err(_) if tokio::time::Instant::now() >= ends_at => {
                    span.in_scope(|| tracing::info!(server = %server_name, "mcp exchange open past mcp.maxExchangeMs; answer ended"));
                    yield Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "mcp exchange too long"));
                    break;
                }
                Err(_) => {
                    span.in_scope(|| tracing::info!(server = %server_name, "mcp upstream idle; answer cut"));
                    yield Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "mcp upstream idle"));
                    break;
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    span.in_scope(|| tracing::info!(server = %server_name, error = %describe(&e), "mcp upstream body failed"));
                    yield Err(std::io::Error::other(e));
                    break;
                }
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        sent = sent.saturating_add(data.len() as u64);
                        if sent > max_bytes {
                            span.in_scope(|| tracing::info!(server = %server_name, "mcp answer larger than mcp.maxResponseBytes; answer cut"));
                            yield Err(std::io::Error::other("mcp answer too large"));
                            break;
                        }
                        yield Ok::<Bytes, std::io::Error>(data);
                    }
                }
            }
        }
    };
    answer
        .body(Body::from_stream(stream))
        .map_err(RelayError::internal)
}

fn copy_headers(from: &HeaderMap, to: &mut HeaderMap, names: &[HeaderName]) {
    for name in names {
        for value in from.get_all(name) {
            to.append(name.clone(), value.clone());
        }
    }
}
