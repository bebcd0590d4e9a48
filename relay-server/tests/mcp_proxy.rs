//! The MCP passthrough's CORS: a page on an allow-listed origin may send the MCP request headers and read the
//! session headers of the answer (the exchange itself is tested end to end against a real SDK server in
//! tests/e2e/node-mcp-relay.test.mjs).

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use serde_json::json;

const APP: &str = "https://app.example";

async fn mcp_relay(db: &TestDb) -> Relay {
    relay(base_config(
        db,
        json!({
            "server": { "allowedOrigins": [APP] },
            "mcp": { "servers": [ { "name": "docs", "url": "http://127.0.0.1:9/mcp", "users": ["mia"] } ] }
        }),
    ))
    .await
}

#[tokio::test]
async fn a_preflight_allows_the_mcp_request_headers() {
    let db = TestDb::new(Backend::Sqlite);
    let r = mcp_relay(&db).await;
    let response = r
        .send(
            Request::builder()
                .method("OPTIONS")
                .uri("/api/mcp/docs")
                .header("host", HOST)
                .header("origin", APP)
                .header("access-control-request-method", "DELETE")
                .header(
                    "access-control-request-headers",
                    "content-type, mcp-session-id, mcp-protocol-version, last-event-id",
                )
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    let allowed = response.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for name in ["mcp-session-id", "mcp-protocol-version", "last-event-id"] {
        assert!(allowed.contains(name), "{name} in {allowed}");
    }
    let methods = response.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(methods.contains("DELETE"), "{methods}");
}

#[tokio::test]
async fn answers_expose_the_session_headers_to_the_page() {
    let db = TestDb::new(Backend::Sqlite);
    let r = mcp_relay(&db).await;
    let response = r
        .send(
            Request::builder()
                .method("POST")
                .uri("/api/mcp/docs")
                .header("host", HOST)
                .header("origin", APP)
                .header("x-patchbridge-user", "noah")
                .header("content-type", "application/json")
                .body(Body::from("{}"))
                .unwrap(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let exposed = response.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for name in ["mcp-session-id", "mcp-protocol-version", "x-request-id"] {
        assert!(exposed.contains(name), "{name} in {exposed}");
    }
    assert_eq!(
        error_code(&body_text(response).await),
        "MCP_SERVER_FORBIDDEN"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_upstream_unavailable() {
    let db = TestDb::new(Backend::Sqlite);
    let r = mcp_relay(&db).await;
    let (status, body) = r
        .call(
            "POST",
            "/api/mcp/docs",
            "mia",
            Some(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" })),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(body["error"]["code"], "UPSTREAM_UNAVAILABLE");
}
