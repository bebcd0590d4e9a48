//! Middleware in front of every API route, in this order:
//! 1. Origin: requests that change state (anything but GET/HEAD) need an `Origin` that is same-origin (its
//!    host equals the request's authority: the `Host` header, or over HTTP/2, which sends no `Host`, the
//!    `:authority` in the request URI) or allow-listed, so a page on another site cannot drive the relay with
//!    the user's credentials.
//! 2. Content type: POST and PUT need `application/json` (which also forces browsers to preflight).
//! 3. Identity: default deny; the resolved [`UserId`] is put in the request extensions.

use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use patchbridge_protocol::RelayErrorCode;

use crate::error::RelayError;
use crate::identity::{Unresolved, UserId};
use crate::state::AppState;

pub async fn api_guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if let Err(e) = check_origin(&state, &request) {
        return e.into_response();
    }
    if let Err(e) = check_content_type(&request) {
        return e.into_response();
    }
    let (mut parts, body) = request.into_parts();
    let user = match &state.inner.identity {
        Some(resolver) => resolver.authenticate(&parts).await,
        None => Err(Unresolved::Unauthenticated),
    };
    let user = match user {
        Ok(user) => user,
        Err(Unresolved::Unauthenticated) => {
            return RelayError::from(RelayErrorCode::Unauthenticated).into_response()
        }
        Err(Unresolved::Unavailable) => {
            return RelayError::from(RelayErrorCode::IdentityUnavailable).into_response()
        }
    };
    parts.extensions.insert(user);
    next.run(Request::from_parts(parts, body)).await
}

fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn check_origin(state: &AppState, request: &Request) -> Result<(), RelayError> {
    if !changes_state(request.method()) {
        return Ok(());
    }
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .ok_or(RelayErrorCode::ForbiddenOrigin)?;
    if origin_allowed(
        origin,
        request_authority(request),
        &state.inner.allowed_origins,
    ) {
        Ok(())
    } else {
        tracing::info!(origin, "origin refused");
        Err(RelayErrorCode::ForbiddenOrigin.into())
    }
}

/// The authority the client addressed: `Host` when present (HTTP/1.1), else the URI's authority (HTTP/2
/// `:authority`). A `Host` that is not text means no authority rather than falling back.
pub fn request_authority(request: &Request) -> Option<&str> {
    match request.headers().get(header::HOST) {
        Some(host) => host.to_str().ok(),
        None => request.uri().authority().map(|a| a.as_str()),
    }
}

/// Pure decision: allow-listed (exact normalised origin) or same host as the request.
pub fn origin_allowed(origin: &str, host: Option<&str>, allowed: &[String]) -> bool {
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    if !matches!(url.scheme(), "http" | "https") {
        return false;
    }
    // Serialised only when there is a list to look it up in (it costs allocations on every request).
    if !allowed.is_empty() && allowed.contains(&url.origin().ascii_serialization()) {
        return true;
    }
    let Some(host) = host else { return false };
    let Some(origin_host) = url.host_str() else {
        return false;
    };
    // `Host` omits default ports; `Url::port` does too, so the two compare directly.
    authority_is(host, origin_host, url.port())
}

/// Whether `authority` is `host` (any case), followed by `:port` when there is a port: the text
/// `format!("{host}:{port}")` would be, compared without building it.
fn authority_is(authority: &str, host: &str, port: Option<u16>) -> bool {
    let Some(port) = port else {
        return authority.eq_ignore_ascii_case(host);
    };
    let Some((name, digits)) = authority.split_at_checked(host.len()) else {
        return false;
    };
    let mut text = [0u8; 5];
    let mut start = text.len();
    let mut rest = port;
    loop {
        start -= 1;
        text[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    name.eq_ignore_ascii_case(host)
        && digits.strip_prefix(':').map(str::as_bytes) == Some(&text[start..])
}

fn check_content_type(request: &Request) -> Result<(), RelayError> {
    if !matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH
    ) {
        return Ok(());
    }
    let ct = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = ct.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(RelayErrorCode::UnsupportedMediaType.into())
    }
}

/// Extracts the user the guard resolved.
pub fn user_of(parts: &axum::http::Extensions) -> Result<UserId, RelayError> {
    parts
        .get::<UserId>()
        .cloned()
        .ok_or_else(|| RelayErrorCode::Unauthenticated.into())
}

#[cfg(test)]
mod tests {
    use super::{origin_allowed, request_authority};

    #[test]
    fn authority_comes_from_host_or_the_http2_uri() {
        let h1 = axum::http::Request::builder()
            .uri("/api/conversations")
            .header("host", "relay.example:8787")
            .body(axum::body::Body::empty())
            .unwrap();
        assert_eq!(request_authority(&h1), Some("relay.example:8787"));
        let h2 = axum::http::Request::builder()
            .uri("http://relay.example:8787/api/conversations")
            .body(axum::body::Body::empty())
            .unwrap();
        assert_eq!(request_authority(&h2), Some("relay.example:8787"));
        assert!(origin_allowed(
            "http://relay.example:8787",
            request_authority(&h2),
            &[]
        ));
        let neither = axum::http::Request::builder()
            .uri("/api/conversations")
            .body(axum::body::Body::empty())
            .unwrap();
        assert_eq!(request_authority(&neither), None);
    }

    #[test]
    fn authority_comparison_matches_the_formatted_text() {
        for (authority, host, port) in [
            ("relay.example:8787", "relay.example", Some(8787)),
            ("RELAY.example:8787", "relay.example", Some(8787)),
            ("relay.example:08787", "relay.example", Some(8787)),
            ("relay.example:8787", "relay.example", Some(878)),
            ("relay.example:0", "relay.example", Some(0)),
            ("relay.example:65535", "relay.example", Some(65535)),
            ("relay.example", "relay.example", Some(80)),
            ("relay.example:", "relay.example", Some(1)),
            ("relay.examplex8787", "relay.example", Some(8787)),
            ("[::1]:8787", "[::1]", Some(8787)),
            ("relay.example", "RELAY.EXAMPLE", None),
            ("relay.example:80", "relay.example", None),
            ("é", "ab", Some(1)),
        ] {
            let expected = match port {
                Some(port) => format!("{host}:{port}"),
                None => host.to_owned(),
            }
            .eq_ignore_ascii_case(authority);
            assert_eq!(
                super::authority_is(authority, host, port),
                expected,
                "{authority} vs {host} {port:?}"
            );
        }
    }

    #[test]
    fn same_host_is_allowed_and_other_hosts_are_not() {
        assert!(origin_allowed(
            "http://127.0.0.1:8787",
            Some("127.0.0.1:8787"),
            &[]
        ));
        assert!(!origin_allowed(
            "http://127.0.0.1:9999",
            Some("127.0.0.1:8787"),
            &[]
        ));
        assert!(!origin_allowed(
            "https://evil.example",
            Some("relay.example"),
            &[]
        ));
        assert!(origin_allowed(
            "https://relay.example",
            Some("relay.example"),
            &[]
        ));
    }

    #[test]
    fn allow_list_matches_normalised_origins_only() {
        let allowed = vec!["https://app.example".to_string()];
        assert!(origin_allowed(
            "https://app.example",
            Some("relay.example"),
            &allowed
        ));
        assert!(!origin_allowed(
            "https://app.example.evil",
            Some("relay.example"),
            &allowed
        ));
        assert!(!origin_allowed("null", Some("relay.example"), &allowed));
    }

    /// Host comparison covers ports, case and IPv6; non-HTTP schemes, `null` and default-port spellings
    /// the browser would never send are refused rather than guessed.
    #[test]
    fn same_origin_compares_host_and_port_exactly() {
        assert!(origin_allowed("http://[::1]:8787", Some("[::1]:8787"), &[]));
        assert!(!origin_allowed(
            "http://[::1]:8788",
            Some("[::1]:8787"),
            &[]
        ));
        assert!(origin_allowed(
            "http://LocalHost:8787",
            Some("localhost:8787"),
            &[]
        ));
        assert!(origin_allowed(
            "http://localhost:8787",
            Some("LOCALHOST:8787"),
            &[]
        ));
        assert!(!origin_allowed(
            "http://localhost",
            Some("localhost:8787"),
            &[]
        ));
        assert!(!origin_allowed(
            "http://localhost:8787",
            Some("localhost"),
            &[]
        ));
        assert!(!origin_allowed("http://localhost:8787", None, &[]));
        assert!(!origin_allowed("null", Some("localhost"), &[]));
        assert!(!origin_allowed(
            "file:///etc/passwd",
            Some("localhost"),
            &[]
        ));
        assert!(!origin_allowed("ws://localhost", Some("localhost"), &[]));
        assert!(!origin_allowed(
            "http://localhost.evil",
            Some("localhost"),
            &[]
        ));
        assert!(!origin_allowed("", Some("localhost"), &[]));
    }
}
