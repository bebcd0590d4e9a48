//! The MCP passthrough: the `mcp` section's validation (strict like every section, every rejection naming the
//! entry's field), and its CORS: a page on an allow-listed origin may send the MCP request headers and read the
//! session headers of the answer. The exchange itself runs end to end against a real SDK server in
//! tests/e2e/node-mcp-relay.test.mjs.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use patchbridge_relay::config::{ConfigError, RelayConfig, Validated};
use patchbridge_relay::mcp_proxy::config::McpUsers;
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

// ---------------------------------------------------------------------------------------------------------
// The `mcp` section

fn validate(mcp: serde_json::Value) -> Result<Validated, ConfigError> {
    RelayConfig::from_json(&json!({ "demo": true, "mcp": mcp }).to_string())?.validate()
}

fn server(extra: serde_json::Value) -> serde_json::Value {
    let mut s = json!({ "name": "docs", "url": "https://mcp.example.com/mcp", "users": "all" });
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    s
}

fn refused(mcp: serde_json::Value) -> ConfigError {
    validate(mcp).expect_err("the section must be refused")
}

#[test]
fn no_mcp_section_means_no_servers() {
    let v = RelayConfig::from_json(r#"{"demo": true}"#)
        .unwrap()
        .validate()
        .unwrap();
    assert!(v.mcp.servers.is_empty());
}

#[test]
fn a_server_with_an_env_secret_header_and_listed_users_is_accepted() {
    std::env::set_var("MCP_TEST_TOKEN_OK", "Bearer s3cret");
    let v = validate(json!({ "servers": [ server(json!({
        "headers": { "authorization": { "env": "MCP_TEST_TOKEN_OK" } }, "users": ["mia", "noah"] })) ] }))
    .unwrap();
    let s = &v.mcp.servers[0];
    assert_eq!(s.endpoint.to_string(), "https://mcp.example.com/mcp");
    assert_eq!(s.headers[0].0.as_str(), "authorization");
    assert_eq!(s.headers[0].1.to_str().unwrap(), "Bearer s3cret");
    assert!(s.headers[0].1.is_sensitive());
    assert!(
        !format!("{:?}", v.mcp).contains("s3cret"),
        "secrets stay out of debug output"
    );
    assert!(s.users.allows("mia") && !s.users.allows("eve"));
    assert_eq!(v.mcp.max_concurrent_per_user, 8);
}

#[test]
fn unknown_keys_are_refused_with_their_path() {
    assert_eq!(refused(json!({ "servrs": [] })).path, "mcp.servrs");
    let e = refused(json!({ "servers": [ server(json!({ "token": "x" })) ] }));
    assert_eq!(e.path, "mcp.servers[0].token");
}

#[test]
fn names_must_be_path_safe_and_unique() {
    for bad in ["", "a/b", "a b", "..", "ü", &"x".repeat(65)] {
        let e = refused(json!({ "servers": [ server(json!({ "name": bad })) ] }));
        assert_eq!(e.path, "mcp.servers[0].name", "{bad:?}");
    }
    let e = refused(json!({ "servers": [ server(json!({})), server(json!({})) ] }));
    assert_eq!(e.path, "mcp.servers[1].name");
    assert!(e.message.contains("duplicate"), "{e}");
}

#[test]
fn urls_follow_the_model_rules() {
    let e = refused(json!({ "servers": [ server(json!({ "url": "ftp://x/mcp" })) ] }));
    assert_eq!(e.path, "mcp.servers[0].url");
    let e = refused(json!({ "servers": [ server(json!({ "url": "http://mcp.lan/mcp" })) ] }));
    assert!(e.message.contains("allowInsecureHttp"), "{e}");
    let e = refused(json!({ "servers": [ server(json!({ "url": "https://u:p@x/mcp" })) ] }));
    assert!(e.message.contains("credentials"), "{e}");
    validate(json!({ "servers": [ server(json!({ "url": "http://mcp.lan/mcp", "allowInsecureHttp": true })) ] })).unwrap();
    validate(json!({ "servers": [ server(json!({ "url": "http://127.0.0.1:9000/mcp" })) ] }))
        .unwrap();
}

#[test]
fn users_is_all_or_a_non_empty_list() {
    let v = validate(json!({ "servers": [ server(json!({ "users": "all" })) ] })).unwrap();
    assert_eq!(v.mcp.servers[0].users, McpUsers::All);
    for bad in [json!("everyone"), json!([]), json!(["a", "a"]), json!(7)] {
        let e = refused(json!({ "servers": [ server(json!({ "users": bad })) ] }));
        assert!(e.path.starts_with("mcp.servers[0].users"), "{bad}: {e}");
    }
    let mut missing = server(json!({}));
    missing.as_object_mut().unwrap().remove("users");
    let e = refused(json!({ "servers": [ missing ] }));
    assert!(e.message.contains("users"), "{e}");
}

#[test]
fn secret_headers_must_resolve_and_not_replace_what_the_relay_forwards() {
    let e = refused(json!({ "servers": [ server(json!({
        "headers": { "authorization": { "env": "MCP_TEST_TOKEN_UNSET" } } })) ] }));
    assert_eq!(e.path, "mcp.servers[0].headers.authorization");
    assert!(e.message.contains("not set"), "{e}");
    std::env::set_var("MCP_TEST_TOKEN_SET", "v");
    for reserved in ["mcp-session-id", "host", "content-type"] {
        let e = refused(json!({ "servers": [ server(json!({
            "headers": { reserved: { "env": "MCP_TEST_TOKEN_SET" } } })) ] }));
        assert_eq!(e.path, format!("mcp.servers[0].headers.{reserved}"));
    }
    let e = refused(json!({ "servers": [ server(json!({ "headers": { "x-key": "inline" } })) ] }));
    assert!(
        e.path.starts_with("mcp.servers[0].headers"),
        "a secret is never inline: {e}"
    );
}

#[test]
fn bounds_cannot_be_switched_off() {
    for field in [
        "maxRequestBytes",
        "firstByteTimeoutMs",
        "idleTimeoutMs",
        "maxExchangeMs",
        "maxResponseBytes",
        "maxConcurrentPerUser",
    ] {
        let e = refused(json!({ field: 0 }));
        assert_eq!(e.path, format!("mcp.{field}"));
    }
}
