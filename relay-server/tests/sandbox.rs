//! The MCP Apps sandbox origin (`src/sandbox/`, `docs/adr/018-mcp-apps-sandbox-origin.md`): the listener serves
//! the proxy page only, framable only by the configured page origins, and nothing else; the API's listener keeps
//! refusing to be framed. The router is asked with `oneshot`; the real binary is started with a `sandbox`
//! section and asked over HTTP on both of its listeners. What the proxy does in a browser (isolation, the inner
//! frame's policy, message forwarding) is `tests/e2e/widget-apps.test.mjs`. With a sandbox, the relay's own
//! pages gain `frame-src <publicOrigin>` and nothing else.

use std::process::Stdio;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use patchbridge_relay::config::RelayConfig;
use patchbridge_relay::sandbox::{self, page, ValidatedSandbox};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tower::ServiceExt;

const BIN: &str = env!("CARGO_BIN_EXE_patchbridge-relay");

fn section() -> ValidatedSandbox {
    ValidatedSandbox {
        bind: "127.0.0.1:0".parse().unwrap(),
        public_origin: "http://localhost:8788".into(),
        page_origins: vec![
            "http://127.0.0.1:8787".into(),
            "https://app.example.com".into(),
        ],
    }
}

async fn get(path: &str, method: &str) -> axum::response::Response {
    sandbox::router(&section())
        .oneshot(
            Request::builder()
                .method(method)
                .uri(path)
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap()
}

fn header_of(response: &axum::response::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

#[tokio::test]
async fn the_proxy_page_may_be_framed_by_the_page_origins_only() {
    let response = get("/", "GET").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        header_of(&response, "content-type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    let csp = header_of(&response, "content-security-policy").unwrap();
    assert!(
        csp.ends_with("; frame-ancestors http://127.0.0.1:8787 https://app.example.com"),
        "{csp}"
    );
    assert_eq!(csp.matches("frame-ancestors").count(), 1, "{csp}");
    // X-Frame-Options cannot name origins; any value would forbid the page origins too.
    assert_eq!(header_of(&response, "x-frame-options"), None);
    assert!(csp.contains("object-src 'none'") && csp.contains("form-action 'none'"));
    let permissions = header_of(&response, "permissions-policy").unwrap();
    assert!(permissions.contains("camera=()") && permissions.contains("geolocation=()"));
    assert_eq!(
        header_of(&response, "x-content-type-options").as_deref(),
        Some("nosniff")
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(body.to_vec()).unwrap();
    assert!(text.contains(
        r#"data-page-origins="[&quot;http://127.0.0.1:8787&quot;,&quot;https://app.example.com&quot;]""#
    ));
}

#[tokio::test]
async fn head_answers_the_page_headers_without_a_body() {
    let response = get("/", "HEAD").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(header_of(&response, "content-security-policy")
        .unwrap()
        .contains("frame-ancestors http://127.0.0.1:8787"));
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert!(body.is_empty());
}

#[tokio::test]
async fn nothing_else_is_served_and_nothing_else_may_be_framed() {
    for path in [
        "/index.html",
        "/proxy.html",
        "/api/conversations",
        "/npm/widget.js",
        "/healthz",
        "/%2e%2e/etc/passwd",
    ] {
        let response = get(path, "GET").await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert_eq!(
            header_of(&response, "x-frame-options").as_deref(),
            Some("DENY"),
            "{path}"
        );
        assert_eq!(
            header_of(&response, "content-security-policy").as_deref(),
            Some("default-src 'none'; frame-ancestors 'none'"),
            "{path}"
        );
    }
    for method in ["POST", "PUT", "DELETE"] {
        let response = get("/", method).await;
        assert_ne!(response.status(), StatusCode::OK, "{method}");
        assert!(response.status().is_client_error(), "{method}");
    }
}

#[test]
fn the_served_page_is_widget_sandbox_proxy_html() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../widget/sandbox/proxy.html"
    ))
    .unwrap();
    assert!(
        source == page::SOURCE,
        "relay-server/src/sandbox/page.rs SOURCE differs from widget/sandbox/proxy.html: copy it again"
    );
    // The origins go where the proxy reads them, exactly once.
    let served = page::ProxyPage::new(&["https://app.example.com".into()]);
    let served = std::str::from_utf8(served.body()).unwrap();
    assert_eq!(served.matches("data-page-origins=").count(), 1);
    assert!(!served.contains(r#"data-page-origins="[]""#));
}

#[test]
fn the_section_is_strict_and_refuses_a_page_origin_as_the_sandbox_origin() {
    let text = |sandbox: &str| format!(r#"{{ "demo": true, "sandbox": {sandbox} }}"#);
    let unknown = RelayConfig::from_json(&text(
        r#"{ "bind": "127.0.0.1:8788", "publicOrigin": "http://localhost:8788", "pageOrigins": ["http://127.0.0.1:8787"], "path": "/x" }"#,
    ))
    .unwrap_err();
    assert!(unknown.path.starts_with("sandbox"), "{}", unknown.path);
    let same = RelayConfig::from_json(&text(
        r#"{ "bind": "127.0.0.1:8788", "publicOrigin": "http://127.0.0.1:8787", "pageOrigins": ["http://127.0.0.1:8787"] }"#,
    ))
    .unwrap()
    .validate()
    .unwrap_err();
    assert_eq!(same.path, "sandbox.pageOrigins[0]");
    let ok = RelayConfig::from_json(&text(
        r#"{ "bind": "127.0.0.1:8788", "publicOrigin": "http://localhost:8788", "pageOrigins": ["http://127.0.0.1:8787"] }"#,
    ))
    .unwrap()
    .validate()
    .unwrap();
    assert_eq!(
        ok.sandbox.unwrap().public_origin,
        "http://localhost:8788".to_string()
    );
}

/// The binary with a `sandbox` section: both listeners answer over real HTTP, each with its own headers.
#[tokio::test]
async fn the_relay_serves_the_sandbox_on_a_listener_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("relay.json");
    std::fs::create_dir(dir.path().join("pages")).unwrap();
    std::fs::write(
        dir.path().join("pages/index.html"),
        "<!doctype html><title>page</title>",
    )
    .unwrap();
    std::fs::write(
        &config,
        serde_json::json!({
            "demo": true,
            "server": { "bind": "127.0.0.1:0", "examplesDir": dir.path().join("pages") },
            "database": { "url": format!("sqlite://{}", dir.path().join("db.sqlite3").display()) },
            "sandbox": { "bind": "127.0.0.1:0", "publicOrigin": "http://localhost:9", "pageOrigins": ["http://127.0.0.1:9"] },
        })
        .to_string(),
    )
    .unwrap();
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(&config)
        .env_clear()
        .env("PATCHBRIDGE_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut api, mut sandbox) = (None, None);
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("patchbridge-relay listening on ") {
                api = Some(url.to_owned());
            }
            if let Some(url) = line.strip_prefix("patchbridge-relay sandbox listening on ") {
                sandbox = Some(url.to_owned());
            }
            if api.is_some() && sandbox.is_some() {
                return;
            }
        }
        panic!("the relay exited before both listeners were up");
    })
    .await
    .expect("both listeners within 30 s");
    let (api, sandbox) = (api.unwrap(), sandbox.unwrap());
    assert_ne!(api, sandbox);
    let client = reqwest::Client::new();

    let page = client.get(format!("{sandbox}/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers().get(header::X_FRAME_OPTIONS).is_none());
    assert!(page.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .ends_with("frame-ancestors http://127.0.0.1:9"));
    assert!(page
        .text()
        .await
        .unwrap()
        .contains("ui/notifications/sandbox-proxy-ready"));
    // The sandbox listener is not a second door to the API.
    let healthz = client
        .get(format!("{sandbox}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(healthz.status(), 404);
    // The API's listener still forbids every framing.
    let api_healthz = client.get(format!("{api}/healthz")).send().await.unwrap();
    assert_eq!(api_healthz.status(), 200);
    assert_eq!(api_healthz.headers()[header::X_FRAME_OPTIONS], "DENY");
    assert!(api_healthz.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .contains("frame-ancestors 'none'"));
    // The relay's own pages may frame the sandbox, and only it: the one directive added to their policy.
    let page = client
        .get(format!("{api}/examples/index.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(
        page.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap(),
        format!(
            "{}; frame-src http://localhost:9",
            patchbridge_relay::static_files::PAGE_CSP
        )
    );
    assert_eq!(page.headers()[header::X_FRAME_OPTIONS], "DENY");
    child.kill().await.unwrap();
}
