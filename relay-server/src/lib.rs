//! PatchBridge relay: proxies model calls (OpenAI Chat Completions and compatible servers, OpenAI Responses,
//! Anthropic Messages) as one neutral SSE stream, and stores each conversation's `{ messages, modelState }` by
//! revision. Wire protocol: `docs/protocol.md`. Hosts mount [`router`]; the `patchbridge-relay` binary
//! (`src/main.rs`) runs it standalone.
//!
//! Layout:
//! - [`config`]: strict config file, env overrides, secrets, validation.
//! - [`error`]: [`RelayError`], the one error type (a protocol code, a client-safe message, the cause kept for
//!   the log; `IntoResponse`).
//! - [`identity`]: [`IdentityResolver`] and the development / JWT / trusted-proxy resolvers.
//! - [`guard`]: Origin, content-type and identity checks in front of the API.
//! - [`extract`]: the request extractors: bounded, strict JSON bodies; `Query` and `Path` answering with [`RelayError`].
//! - [`model`]: `POST {base}/model` and `GET {base}/models`; [`spending`]: per-user limits on model calls, a
//!   component the model route asks (its own rules, counter store port, metrics and refusal type).
//! - [`mcp_proxy`]: `{base}/mcp/{name}`, the optional passthrough to the operator's MCP servers.
//! - [`sandbox`]: the MCP Apps sandbox origin, a second listener serving only the sandbox proxy page.
//! - [`conversations`]: `{base}/conversations` handlers; [`store`]: the SQL layer (SQLite / PostgreSQL).
//! - [`ops`], [`metrics`]: health, readiness, Prometheus; [`telemetry`]: OpenTelemetry traces over OTLP.
//! - [`serve`]: the accept loop (timeouts, connection limit, bounded shutdown); [`workers`]: the per-core threads
//!   it hands connections to; [`fdlimit`]: descriptors.
//! - [`logging`]: escaped, bounded log output and request-id validation; [`request_span`]: the span each
//!   request's handler runs in.
//! - [`static_files`]: the `/npm/` and `/examples/` trees, confined to their directories; [`embedded_site`]: the
//!   same trees compiled into the binary for `patchbridge-relay demo`.
//! - [`cli`]: the binary's `demo` and `healthcheck` commands.
//! - [`state`]: [`AppState`]; this file: [`router`] and the security headers of every answer.
//!
//! No file imports, directly or not, a file that imports it (`tests/no_import_circles.rs` fails on a circle):
//! shared parts live in leaf modules (`config::error`, `store::rows`, `spending::counts`, `identity`'s
//! `mod.rs`), and spending and the store take their inputs as parameters.

pub mod cli;
pub mod config;
pub mod conversations;
pub mod embedded_site;
pub mod error;
pub mod extract;
pub mod fdlimit;
pub mod guard;
pub mod identity;
pub mod logging;
pub mod mcp_proxy;
pub mod metrics;
pub mod model;
pub mod ops;
pub mod request_span;
pub mod sandbox;
pub mod serve;
pub mod spending;
pub mod state;
pub mod static_files;
pub mod store;
pub mod telemetry;
pub mod workers;
pub mod write_timeout;

use axum::http::{header, HeaderValue, Method};
use axum::routing::get;
use axum::{middleware, Router};
use patchbridge_protocol::RelayErrorCode;
use tower::ServiceBuilder;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;

pub use error::RelayError;
pub use identity::{IdentityResolver, ResolveFuture, UserId};
pub use state::AppState;

pub(crate) use logging::REQUEST_ID;

/// The relay's routes: the API under the configured base path, `/healthz`, `/readyz`, `/metrics`, and (when
/// configured) the static npm package at `/npm/` and example pages at `/examples/`.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/model", axum::routing::post(model::call))
        .route("/models", get(model::models))
        .route(
            "/conversations",
            get(conversations::list).post(conversations::create),
        )
        .route(
            "/conversations/{id}",
            get(conversations::read)
                .put(conversations::write)
                .delete(conversations::delete),
        )
        .route(
            "/mcp/{name}",
            axum::routing::post(mcp_proxy::forward)
                .get(mcp_proxy::forward)
                .delete(mcp_proxy::forward),
        );
    let guard_layer = middleware::from_fn_with_state(state.clone(), guard::api_guard);

    let mut app = Router::new()
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics));
    let base = state.inner.base_path.clone();
    app = if base == "/" {
        app.merge(api.route_layer(guard_layer))
    } else {
        // `layer`, not `route_layer`: paths under the base that match no route (`/api`, `/api/`, typos) go
        // through the guard too, so without identity they answer 401 rather than revealing what exists.
        // `{base}/` matches neither the nested routes nor the nest's wildcard: it gets its own guarded 404.
        let not_found = || async { RelayError::from(RelayErrorCode::NotFound) };
        app.route(
            &format!("{base}/"),
            axum::routing::any(not_found).layer(guard_layer.clone()),
        )
        .nest(&base, api.fallback(not_found).layer(guard_layer))
    };
    // A configured directory wins over the embedded site (`./dev demo` serves the working tree).
    let site = state.inner.site;
    if let Some(dir) = &state.inner.npm_dir {
        // `nest_service`, not `nest`: a nested router's wildcard needs a non-empty tail, so `/npm/` and
        // `/examples/` (the directories' index pages) would miss it.
        app = app.nest_service("/npm", static_files::tree::<()>(dir));
    } else if let Some(site) = site.filter(|s| s.has("npm")) {
        app = app.nest_service("/npm", site.tree::<()>("npm"));
    }
    if let Some(dir) = &state.inner.examples_dir {
        app = app.nest_service("/examples", static_files::tree::<()>(dir));
        // `/` opens the demo page when the examples include it, else the examples directory.
        let target = if dir.join("demo/index.html").is_file() {
            "/examples/demo/"
        } else {
            "/examples/"
        };
        app = app.route(
            "/",
            get(move || async move { axum::response::Redirect::temporary(target) }),
        );
    } else if let Some(site) = site {
        if site.has_demo_page() {
            app = app
                .nest_service("/examples", site.tree::<()>("examples"))
                .route(
                    "/",
                    get(|| async { axum::response::Redirect::temporary("/examples/demo/") }),
                );
        } else {
            app = app.route("/", get(embedded_site::missing_site));
        }
    }
    app = app.fallback(|| async { RelayError::from(RelayErrorCode::NotFound) });
    // With a sandbox listener, the relay's pages may frame it: the one directive ADR 018 adds to their policy.
    if let Some(origin) = state.inner.sandbox_origin.clone() {
        app = app.layer(middleware::map_response(move |response| {
            let origin = origin.clone();
            async move { sandbox::frame_src_for_pages(response, &origin) }
        }));
    }

    // Inside the router: the request counter needs the matched route.
    let app = app
        .layer(middleware::from_fn_with_state(
            state.clone(),
            ops::count_requests,
        ))
        .with_state(state.clone());

    let cors = (!state.inner.allowed_origins.is_empty()).then(|| {
        let origins: Vec<HeaderValue> = state
            .inner
            .allowed_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers([
                REQUEST_ID,
                mcp_proxy::EXPOSED_HEADERS[0].clone(),
                mcp_proxy::EXPOSED_HEADERS[1].clone(),
            ])
            .max_age(std::time::Duration::from_secs(600))
    });
    // Every answer passes these, outermost first. They wrap the router once, as one service: added with
    // `Router::layer`, each would wrap every route's endpoint in a boxed service of its own, and axum clones the
    // matched endpoint's whole stack for every request: 64 boxed clones and 78 allocations per model call, 6 %
    // of its instructions.
    let every_answer = ServiceBuilder::new()
        .option_layer(cors)
        // Security headers: no MIME sniffing, no framing by any origin, no referrer. Pages carry their own
        // fuller policy ([`static_files::PAGE_CSP`]); everything else gets a policy that allows nothing, which
        // only matters if a JSON answer is ever opened as a document.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        // A client id that is too long or not visible ASCII never reaches the span or the log.
        .layer(middleware::map_request(
            logging::drop_unacceptable_request_id,
        ))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(request_span::RequestSpanLayer)
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .service(app);
    Router::new().fallback_service(every_answer)
}
