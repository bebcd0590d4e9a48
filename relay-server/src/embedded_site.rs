//! The demo site compiled into the binary: the demo page (`examples/demo/`) and the npm package's browser files
//! (`npm/dist/`: the static widget script; `npm/pkg/`: the wasm it loads), gathered by `build.rs` and embedded with
//! `include_dir!`, so `patchbridge-relay demo` serves a working page from any folder with nothing beside the
//! binary. They are served at `/examples/` and `/npm/` like the directories of `server.examplesDir` and
//! `server.npmDir` (which take precedence when configured), with the same page policy ([`PAGE_CSP`]) and the
//! same path rules (no hidden segments).
//!
//! A binary compiled before the package's wasm was built carries an empty site ([`DEMO_SITE_SOURCE`] is
//! `none`): its `/` answers [`MISSING_SITE`], which says how to get the page.

use axum::extract::{OriginalUri, Request};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use include_dir::{include_dir, Dir};
use patchbridge_protocol::RelayErrorCode;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::error::RelayError;
use crate::static_files::{visible_segments, PAGE_CSP};

static DEMO_SITE: Dir<'static> = include_dir!("$PATCHBRIDGE_DEMO_SITE");

/// Where the embedded demo site came from when this binary was compiled: `repository` (a clone with the
/// package built), `crate` (the staged `demo-assets/` of a published crate) or `none` (not built in).
pub const DEMO_SITE_SOURCE: &str = env!("PATCHBRIDGE_DEMO_SITE_SOURCE");

/// The demo page inside a site.
const DEMO_PAGE: &str = "examples/demo/index.html";

/// What `/` of `patchbridge-relay demo` answers (404, plain text) and what start-up prints when the binary has no
/// demo site.
pub const MISSING_SITE: &str = "\
This patchbridge-relay was compiled without the demo page: the npm package's browser files (npm/dist: the widget
script; npm/pkg: its wasm) did not exist when it was built. The API at /api works; only the page is missing.
To get a binary with the page:
  - install a published release: cargo install patchbridge-relay
  - or, in a clone of the repository, build the package first, then the relay:
      scripts/build-wasm.sh && node widget/build.mjs && cargo build --release -p patchbridge-relay
    (./dev demo does all of it and serves the page)
";

/// A tree of files compiled into the binary, laid out like the repository (`examples/…`, `npm/…`).
#[derive(Clone, Copy)]
pub struct EmbeddedSite {
    dir: &'static Dir<'static>,
}

impl std::fmt::Debug for EmbeddedSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedSite")
            .field("demo_page", &self.has_demo_page())
            .finish()
    }
}

impl EmbeddedSite {
    /// The demo site of this binary (possibly empty: see [`EmbeddedSite::has_demo_page`]).
    pub fn demo() -> Self {
        EmbeddedSite { dir: &DEMO_SITE }
    }

    /// Any embedded tree with the same layout (hosts and tests).
    pub fn from_dir(dir: &'static Dir<'static>) -> Self {
        EmbeddedSite { dir }
    }

    /// Whether the tree holds the demo page (`examples/demo/index.html`).
    pub fn has_demo_page(&self) -> bool {
        self.dir.get_file(DEMO_PAGE).is_some()
    }

    /// Whether the tree has anything under `top` (`examples` or `npm`).
    pub fn has(&self, top: &str) -> bool {
        self.dir.get_dir(top).is_some()
    }

    /// A router serving the tree's `top` directory (to be nested at `/{top}` with `nest_service`).
    pub fn tree<S: Clone + Send + Sync + 'static>(self, top: &'static str) -> Router<S> {
        Router::new()
            .fallback(move |original: OriginalUri, request: Request| async move {
                serve(
                    self.dir,
                    top,
                    request.uri().path(),
                    original.path(),
                    request.method(),
                )
            })
            .layer(SetResponseHeaderLayer::overriding(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(PAGE_CSP),
            ))
    }
}

/// One request inside `/{top}` (`inner` is its path there): a file, a directory's `index.html`, or a redirect
/// from a directory without its trailing slash (as `ServeDir` does, so relative links resolve inside it).
fn serve(
    dir: &'static Dir<'static>,
    top: &str,
    inner: &str,
    original: &str,
    method: &Method,
) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "GET, HEAD")],
        )
            .into_response();
    }
    let Some(segments) = visible_segments(inner) else {
        return RelayError::from(RelayErrorCode::NotFound).into_response();
    };
    let mut path = String::from(top);
    for segment in &segments {
        path.push('/');
        path.push_str(segment);
    }
    if dir.get_dir(&path).is_some() {
        if !inner.ends_with('/') {
            return match HeaderValue::try_from(format!("{original}/")) {
                Ok(location) => (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, location)],
                )
                    .into_response(),
                Err(_) => RelayError::from(RelayErrorCode::NotFound).into_response(),
            };
        }
        path.push_str("/index.html");
    }
    match dir.get_file(&path) {
        Some(file) => {
            let mime = mime_guess::from_path(&path).first_or_octet_stream();
            let content_type = HeaderValue::from_str(mime.as_ref())
                .unwrap_or(HeaderValue::from_static("application/octet-stream"));
            (
                [
                    (header::CONTENT_TYPE, content_type),
                    // The files change with the binary: a browser revalidates rather than keeps an old wasm.
                    (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
                ],
                file.contents(),
            )
                .into_response()
        }
        None => RelayError::from(RelayErrorCode::NotFound).into_response(),
    }
}

/// `/` of a relay serving an embedded site without the demo page.
pub async fn missing_site() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        MISSING_SITE,
    )
        .into_response()
}
