//! The operations side of a fetched identity key set, against a local JWKS / OpenID provider over real HTTP:
//! `/readyz` answering 503 with the reason while no usable key set is held (and 200 again once one is),
//! `identity.issuer` alone finding the key set through OIDC discovery (the document's `issuer` checked exactly,
//! its `jwks_uri` held to the `jwksUrl` rules), and the JWKS fetch series on `/metrics`.

mod common;
mod jwks_support;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use jwks_support::*;
use serde_json::json;

/// A generous bound for things that happen within about a second; never asserted as a duration.
const PATIENCE: Duration = Duration::from_secs(60);

/// `GET path` (no identity): the status and the body text.
async fn get(r: &Relay, path: &str) -> (StatusCode, String) {
    let response = r
        .send(
            Request::get(path)
                .header("host", HOST)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    let status = response.status();
    (status, body_text(response).await)
}

/// Polls `/readyz` until it answers `status`, or gives up after [`PATIENCE`]; the last answer.
async fn until_readyz(r: &Relay, status: StatusCode) -> (StatusCode, String) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let answer = get(r, "/readyz").await;
        if answer.0 == status || tokio::time::Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The value of the `/metrics` sample whose line starts with `series` (name and labels), if present.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test]
async fn readyz_fails_with_the_reason_while_no_usable_key_set_is_held_and_recovers() {
    let key = TestKey::es256("k1");
    let server = JwksServer::start(jwks(&[&key])).await;
    server.set_cache_control("max-age=1");
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        &db,
        server.identity(json!({ "jwksMinCacheSeconds": 1, "jwksMaxCacheSeconds": 1,
                                "jwksMaxStaleSeconds": 1 })),
    )
    .await
    .unwrap();
    assert_eq!(get(&r, "/readyz").await, (StatusCode::OK, "ready\n".into()));

    // The provider goes down; once the set is past its lifetime plus the stale bound, the relay is not ready
    // and says why (the source and the last fetch's failure), on one line.
    server.set_failing(true);
    let (status, text) = until_readyz(&r, StatusCode::SERVICE_UNAVAILABLE).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    assert!(text.starts_with("identity unavailable: "), "{text}");
    assert!(text.contains(&server.url), "{text}");
    assert!(text.contains("past jwksMaxStaleSeconds"), "{text}");
    assert!(text.contains("503"), "the last fetch's failure: {text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    // Liveness is not readiness: the process is fine.
    assert_eq!(get(&r, "/healthz").await.0, StatusCode::OK);

    server.set_failing(false);
    assert_eq!(
        until_readyz(&r, StatusCode::OK).await,
        (StatusCode::OK, "ready\n".into())
    );
}

#[tokio::test]
async fn a_host_that_never_waited_for_the_first_key_set_is_not_ready_until_it_arrives() {
    // A host mounting the router without `identity_ready()`: the first fetch has not happened yet (nothing
    // answers), so `/readyz` says so instead of claiming readiness.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let db = TestDb::new(Backend::Sqlite);
    let mut config = base_config(&db, json!({}));
    config["identity"] = json!({ "mode": "jwt", "jwksUrl": format!("http://{closed}/jwks.json") });
    let r = relay(config).await;
    let (status, text) = get(&r, "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    assert!(text.contains("no key set has been fetched yet"), "{text}");
}

#[tokio::test]
async fn the_issuer_alone_finds_the_key_set_by_oidc_discovery() {
    let key = TestKey::rsa("rs", jsonwebtoken::Algorithm::RS256);
    let server = JwksServer::start(jwks(&[&key])).await;
    let db = TestDb::new(Backend::Sqlite);
    // A trailing slash on the issuer is dropped before the well-known suffix; the document must then name the
    // issuer exactly as configured.
    let issuer = format!("{}/", server.issuer);
    server.publish_configuration(json!({ "issuer": issuer, "jwks_uri": server.url }));
    let r = relay_with(&db, json!({ "mode": "jwt", "issuer": issuer }))
        .await
        .unwrap();
    assert_eq!((server.discoveries(), server.fetches()), (1, 1));
    let token = key.sign(&json!({ "sub": "alice", "iss": issuer, "exp": now() + 600 }));
    assert_eq!(try_token(&r, &token).await.0, StatusCode::OK);
    // The issuer is also checked on tokens.
    let other =
        key.sign(&json!({ "sub": "alice", "iss": "https://other.example", "exp": now() + 600 }));
    assert_eq!(
        try_token(&r, &other).await,
        (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED".into())
    );
    // A rotation is found at the discovered URL without discovering again.
    let new = TestKey::es256("new");
    server.publish(jwks(&[&key, &new]));
    let token = new.sign(&json!({ "sub": "bob", "iss": issuer, "exp": now() + 600 }));
    assert_eq!(try_token(&r, &token).await.0, StatusCode::OK);
    assert_eq!((server.discoveries(), server.fetches()), (1, 2));
    assert_eq!(get(&r, "/readyz").await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_configuration_naming_another_issuer_or_a_plain_http_key_set_is_refused_at_start() {
    let key = TestKey::es256("k");
    let server = JwksServer::start(jwks(&[&key])).await;
    let db = TestDb::new(Backend::Sqlite);
    let identity = json!({ "mode": "jwt", "issuer": server.issuer });

    server
        .publish_configuration(json!({ "issuer": "https://evil.example", "jwks_uri": server.url }));
    let error = relay_with(&db, identity.clone())
        .await
        .err()
        .expect("refused");
    assert!(
        error.contains("config error at `identity.issuer`"),
        "{error}"
    );
    assert!(error.contains("names issuer"), "{error}");
    assert_eq!(
        server.fetches(),
        0,
        "no key set is fetched for another issuer"
    );

    server.publish_configuration(
        json!({ "issuer": server.issuer, "jwks_uri": "http://idp.example/jwks.json" }),
    );
    let error = relay_with(&db, identity.clone())
        .await
        .err()
        .expect("refused");
    assert!(error.contains("jwks_uri"), "{error}");

    server.publish_configuration(json!({ "issuer": server.issuer }));
    let error = relay_with(&db, identity).await.err().expect("refused");
    assert!(error.contains("no `jwks_uri`"), "{error}");
}

#[test]
fn discovery_needs_an_https_issuer_and_no_other_key_source() {
    let check = |identity: serde_json::Value| {
        let config =
            json!({ "server": { "bind": "127.0.0.1:0" }, "identity": identity, "demo": true });
        patchbridge_relay::config::RelayConfig::from_json(&config.to_string())
            .unwrap()
            .validate()
            .err()
            .map(|e| e.path)
    };
    assert_eq!(
        check(json!({ "mode": "jwt", "issuer": "https://id.example" })),
        None
    );
    assert_eq!(
        check(json!({ "mode": "jwt", "issuer": "https://id.example", "jwksMaxStaleSeconds": 60 })),
        None,
        "the key set bounds apply to the discovered key set"
    );
    assert_eq!(
        check(json!({ "mode": "jwt", "issuer": "http://id.example" })).as_deref(),
        Some("identity.issuer")
    );
    assert_eq!(
        check(json!({ "mode": "jwt", "issuer": "https://id.example/?t=1" })).as_deref(),
        Some("identity.issuer")
    );
    // With a key source the issuer is only the `iss` check, as before.
    assert_eq!(
        check(json!({ "mode": "jwt", "issuer": "not a url", "jwksUrl": "https://id.example/k" })),
        None
    );
    assert_eq!(
        check(json!({ "mode": "jwt" })).as_deref(),
        Some("identity.mode")
    );
}

#[tokio::test]
async fn jwks_fetches_are_counted_by_trigger_and_outcome_on_metrics() {
    let key = TestKey::es256("real");
    let server = JwksServer::start(jwks(&[&key])).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        &db,
        server.identity(json!({ "jwksUnknownKidCooldownSeconds": 1 })),
    )
    .await
    .unwrap();
    let (_, text) = get(&r, "/metrics").await;
    let ok_startup = r#"relay_jwks_fetches_total{trigger="startup",outcome="ok"}"#;
    assert_eq!(sample(&text, ok_startup), Some(1.0), "{text}");
    assert_eq!(sample(&text, "relay_jwks_keys"), Some(1.0), "{text}");
    assert!(sample(&text, "relay_jwks_last_success_timestamp_seconds").unwrap() > 1.7e9);
    assert_eq!(
        sample(&text, "relay_jwks_fetch_seconds_count"),
        Some(1.0),
        "{text}"
    );

    // A token naming an unknown kid while the provider is down: one failed unknown-kid fetch.
    server.set_failing(true);
    let token = key.sign_as(key.alg, Some("made-up"), &claims("mallory"));
    assert_eq!(
        try_token(&r, &token).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    let (_, text) = get(&r, "/metrics").await;
    let failed = r#"relay_jwks_fetches_total{trigger="unknown_kid",outcome="error"}"#;
    assert_eq!(sample(&text, failed), Some(1.0), "{text}");
    assert_eq!(
        sample(&text, "relay_jwks_fetch_seconds_count"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "relay_jwks_keys"),
        Some(1.0),
        "the last set is kept"
    );
}
