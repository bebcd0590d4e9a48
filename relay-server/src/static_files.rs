//! The static trees (`/npm/`, `/examples/`): `ServeDir` behind a check that the request stays inside the
//! served directory. `ServeDir` follows symlinks and serves dotfiles; here a path with any segment starting
//! with `.` (dotfiles, `.git`, `..`) is not found, and a path whose real location (symlinks resolved, and the
//! `index.html` of a directory too) is outside the served directory is not found either.
//!
//! Pages get a Content-Security-Policy that allows only same-origin scripts (plus WebAssembly compilation),
//! styles and connections, no framing, no plugins and no `<base>` ([`PAGE_CSP`]).

use std::path::{Path, PathBuf};

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use patchbridge_protocol::RelayErrorCode;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::error::RelayError;

/// The policy of served pages: the demo runs its ES modules and WebAssembly from this origin and talks only to
/// this relay.
pub const PAGE_CSP: &str =
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
img-src 'self' data: blob: https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; \
object-src 'none'; form-action 'self'";

/// A router serving `dir` (to be nested under its prefix).
pub fn tree<S: Clone + Send + Sync + 'static>(dir: &Path) -> Router<S> {
    // Canonical once: every served file must resolve under this path.
    let root = match std::fs::canonicalize(dir) {
        Ok(root) => root,
        Err(e) => {
            tracing::error!(dir = %dir.display(), error = %e, "static directory cannot be resolved; not serving it");
            return Router::new().fallback(|| async { RelayError::from(RelayErrorCode::NotFound) });
        }
    };
    Router::new()
        .fallback_service(ServeDir::new(&root))
        .layer(axum::middleware::from_fn_with_state(root, inside_only))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(PAGE_CSP),
        ))
}

async fn inside_only(State(root): State<PathBuf>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let allowed = tokio::task::spawn_blocking(move || stays_inside(&root, &path))
        .await
        .unwrap_or(false);
    if allowed {
        next.run(request).await
    } else {
        RelayError::from(RelayErrorCode::NotFound).into_response()
    }
}

/// Pure path rules (no file system): the decoded segments, or `None` when a segment is hidden (`.` prefix),
/// holds a backslash or NUL, or the path is not UTF-8 after percent-decoding.
pub fn visible_segments(uri_path: &str) -> Option<Vec<String>> {
    let decoded = percent_encoding::percent_decode_str(uri_path)
        .decode_utf8()
        .ok()?;
    let mut segments = Vec::new();
    for segment in decoded.split('/') {
        if segment.is_empty() {
            continue;
        }
        if segment.starts_with('.') || segment.contains(['\\', '\0']) {
            return None;
        }
        segments.push(segment.to_owned());
    }
    Some(segments)
}

/// Whether the request path names something whose real location is inside `root` (canonical). Paths that do
/// not exist are let through: `ServeDir` answers them 404.
pub fn stays_inside(root: &Path, uri_path: &str) -> bool {
    let Some(segments) = visible_segments(uri_path) else {
        return false;
    };
    let mut target = root.to_path_buf();
    for segment in &segments {
        target.push(segment);
    }
    let Ok(real) = std::fs::canonicalize(&target) else {
        // Missing (404 from ServeDir) or a dangling link (ServeDir cannot open it either). A link that points
        // outside and does not resolve is still refused here, so nothing outside is even probed.
        return std::fs::symlink_metadata(&target).is_err();
    };
    if !real.starts_with(root) {
        return false;
    }
    if real.is_dir() {
        // ServeDir serves `index.html` of a directory: that file must be inside too.
        if let Ok(index) = std::fs::canonicalize(real.join("index.html")) {
            return index.starts_with(root);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_segments_are_refused() {
        assert_eq!(
            visible_segments("/demo/index.html").unwrap(),
            vec!["demo", "index.html"]
        );
        for bad in [
            "/.env",
            "/demo/.git/config",
            "/%2egit/config",
            "/../etc/passwd",
            "/demo/%2e%2e/x",
            "/a%5cb",
            "/a%00b",
            "/%ff",
        ] {
            assert!(visible_segments(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn symlinks_out_of_the_root_are_refused_and_inside_ones_served() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("hostname"), "secret").unwrap();
        std::fs::create_dir(outside.path().join("site")).unwrap();
        std::fs::write(outside.path().join("site/index.html"), "outside").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("demo")).unwrap();
        std::fs::write(root.join("demo/index.html"), "ok").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("etc")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("hostname"), root.join("host")).unwrap();
        std::os::unix::fs::symlink(root.join("demo/index.html"), root.join("alias.html")).unwrap();
        std::fs::create_dir(root.join("framed")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("site/index.html"),
            root.join("framed/index.html"),
        )
        .unwrap();
        std::os::unix::fs::symlink("/nonexistent/pb-test", root.join("dangling")).unwrap();

        assert!(stays_inside(&root, "/demo/index.html"));
        assert!(stays_inside(&root, "/demo/"));
        assert!(stays_inside(&root, "/alias.html"));
        assert!(stays_inside(&root, "/missing.html"));
        assert!(!stays_inside(&root, "/etc/hostname"));
        assert!(!stays_inside(&root, "/host"));
        assert!(!stays_inside(&root, "/framed/"));
        assert!(!stays_inside(&root, "/dangling"));
    }
}
