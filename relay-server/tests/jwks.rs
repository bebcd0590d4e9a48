//! `identity.jwksUrl` against a local JWKS server over real HTTP: key rotation picked up on the next token, a
//! flood of unknown `kid`s bounded to one fetch per cool-down, background refresh by the cache headers, an
//! unreachable provider served from the last good set until the stale bound and then refused with
//! `IDENTITY_UNAVAILABLE`, start-up without a key set failing (in process and as the binary's exit code 2),
//! and the configuration checks of the URL and its bounds.

mod common;
mod jwks_support;

use std::time::Duration;

use axum::http::StatusCode;
use common::*;
use jwks_support::*;
use serde_json::json;

/// A generous bound for things that happen within about a second; never asserted as a duration.
const PATIENCE: Duration = Duration::from_secs(60);

/// Polls the relay with `token` until it answers `status`, or gives up after [`PATIENCE`].
async fn until_status(r: &Relay, token: &str, status: StatusCode) -> (StatusCode, String) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let answer = try_token(r, token).await;
        if answer.0 == status || tokio::time::Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_rotated_key_is_picked_up_on_the_next_token_and_a_removed_key_is_refused() {
    let old = TestKey::es256("2026-old");
    let new = TestKey::es256("2026-new");
    let server = JwksServer::start(jwks(&[&old])).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(&db, server.identity(json!({}))).await.unwrap();
    assert_eq!(server.fetches(), 1, "start-up fetched the key set once");
    assert_eq!(
        try_token(&r, &old.sign(&claims("alice"))).await.0,
        StatusCode::OK
    );

    // The provider rotates: the new key replaces the old one. The first token naming it makes the relay
    // refetch at once, long before the cached set (max-age=3600) would expire.
    server.publish(jwks(&[&new]));
    assert_eq!(
        try_token(&r, &new.sign(&claims("alice"))).await.0,
        StatusCode::OK
    );
    assert_eq!(server.fetches(), 2);
    assert_eq!(
        try_token(&r, &new.sign(&claims("bob"))).await.0,
        StatusCode::OK
    );
    assert_eq!(server.fetches(), 2, "a known kid needs no fetch");

    // The old key is gone from the set: its tokens are refused, and within the cool-down they cost no fetch.
    assert_eq!(
        try_token(&r, &old.sign(&claims("alice"))).await,
        (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED".into())
    );
    assert_eq!(server.fetches(), 2);
}

#[tokio::test]
async fn a_flood_of_unknown_kids_costs_one_fetch_per_cooldown() {
    let key = TestKey::es256("real");
    let server = JwksServer::start(jwks(&[&key])).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        &db,
        server.identity(json!({ "jwksUnknownKidCooldownSeconds": 3600 })),
    )
    .await
    .unwrap();
    assert_eq!(server.fetches(), 1);

    // 200 tokens, each naming a different made-up kid (validly signed with the real key), all at once.
    let mut flood = Vec::new();
    for i in 0..200 {
        let r = r.clone();
        let token = key.sign_as(key.alg, Some(&format!("made-up-{i}")), &claims("mallory"));
        flood.push(tokio::spawn(async move { try_token(&r, &token).await }));
    }
    for answer in flood {
        assert_eq!(
            answer.await.unwrap(),
            (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED".into())
        );
    }
    assert_eq!(
        server.fetches(),
        2,
        "the whole flood caused one refetch (start-up + 1)"
    );
    // One after another, within the cool-down, they cost nothing either.
    for i in 0..20 {
        let token = key.sign_as(key.alg, Some(&format!("later-{i}")), &claims("mallory"));
        assert_eq!(try_token(&r, &token).await.0, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(server.fetches(), 2, "no refetch within the cool-down");
    assert_eq!(
        try_token(&r, &key.sign(&claims("alice"))).await.0,
        StatusCode::OK
    );
    assert_eq!(server.fetches(), 2);
}

#[tokio::test]
async fn unknown_kids_may_refetch_again_once_the_cooldown_has_passed() {
    let key = TestKey::ed25519("real");
    let late = TestKey::ed25519("late");
    let server = JwksServer::start(jwks(&[&key])).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        &db,
        server.identity(json!({ "jwksUnknownKidCooldownSeconds": 1 })),
    )
    .await
    .unwrap();
    assert_eq!(
        try_token(&r, &late.sign(&claims("a"))).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(server.fetches(), 2);
    // The key is published after that refetch; once the cool-down has passed the next token fetches again.
    server.publish(jwks(&[&key, &late]));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        try_token(&r, &late.sign(&claims("a"))).await.0,
        StatusCode::OK
    );
    assert_eq!(server.fetches(), 3);
}

#[tokio::test]
async fn the_key_set_is_refreshed_in_the_background_as_its_cache_headers_say() {
    let old = TestKey::es384("old");
    let new = TestKey::es384("new");
    let server = JwksServer::start(jwks(&[&old])).await;
    server.set_cache_control("public, max-age=1");
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        &db,
        server.identity(json!({ "jwksMinCacheSeconds": 1, "jwksMaxCacheSeconds": 60,
                                "jwksUnknownKidCooldownSeconds": 3600 })),
    )
    .await
    .unwrap();
    let old_token = old.sign(&claims("alice"));
    assert_eq!(try_token(&r, &old_token).await.0, StatusCode::OK);
    // No token asks for it: the refresh task fetches again because the one-second lifetime runs out, and the
    // old key (known, so never a reason to refetch) stops working once the set without it is in.
    server.publish(jwks(&[&new]));
    assert_eq!(
        until_status(&r, &old_token, StatusCode::UNAUTHORIZED)
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );
    assert!(server.fetches() >= 2);
    assert_eq!(
        try_token(&r, &new.sign(&claims("alice"))).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn an_unreachable_provider_is_served_from_cache_until_the_stale_bound_then_refused() {
    let key = TestKey::es256("k1");
    let server = JwksServer::start(jwks(&[&key])).await;
    server.set_cache_control("max-age=1");
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        &db,
        server.identity(json!({ "jwksMinCacheSeconds": 1, "jwksMaxCacheSeconds": 1,
                                "jwksMaxStaleSeconds": 8 })),
    )
    .await
    .unwrap();
    let token = key.sign(&claims("alice"));
    assert_eq!(try_token(&r, &token).await.0, StatusCode::OK);

    // The provider goes down. Once a refresh has failed, the last good set still serves...
    server.set_failing(true);
    assert!(eventually(PATIENCE, || server.failed_fetches() >= 1).await);
    assert_eq!(
        try_token(&r, &token).await.0,
        StatusCode::OK,
        "served from the last good key set during the outage"
    );
    // ... until its lifetime plus jwksMaxStaleSeconds has passed: then tokens are refused with a stable code.
    let (status, code) = until_status(&r, &token, StatusCode::SERVICE_UNAVAILABLE).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "IDENTITY_UNAVAILABLE")
    );
    assert!(server.failed_fetches() >= 2, "the relay kept retrying");
    // Requests without a token are still plainly unauthenticated.
    let (status, body) = r.call("GET", "/api/conversations", "", None).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::UNAUTHORIZED, &json!("UNAUTHENTICATED"))
    );

    // The provider comes back: the next retry restores service without a restart.
    server.set_failing(false);
    assert_eq!(
        until_status(&r, &token, StatusCode::OK).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn start_up_without_a_key_set_is_a_configuration_error() {
    let db = TestDb::new(Backend::Sqlite);
    // Nothing listens on the port.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let identity = json!({ "mode": "jwt", "jwksUrl": format!("http://{closed}/jwks.json") });
    let error = relay_with(&db, identity).await.err().expect("refused");
    assert!(error.contains("identity.jwksUrl"), "{error}");
    assert!(error.contains(&closed.to_string()), "{error}");

    // A provider that answers, but with an error or without a usable key.
    let server = JwksServer::start(json!({ "keys": [] })).await;
    server.set_failing(true);
    let error = relay_with(&db, server.identity(json!({})))
        .await
        .err()
        .expect("refused");
    assert!(error.contains("503"), "{error}");
    server.set_failing(false);
    server.publish(json!({ "keys": [{ "kty": "oct", "kid": "s", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0" }] }));
    let error = relay_with(&db, server.identity(json!({})))
        .await
        .err()
        .expect("refused");
    assert!(error.contains("no usable signing key"), "{error}");
}

#[tokio::test]
async fn the_binary_exits_with_code_2_when_no_key_set_can_be_fetched() {
    let dir = tempfile::tempdir().unwrap();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let config = json!({
        "server": { "bind": "127.0.0.1:0" },
        "identity": { "mode": "jwt", "jwksUrl": format!("http://{closed}/jwks.json") },
        "database": { "url": format!("sqlite://{}", dir.path().join("relay.sqlite3").display()) },
        "demo": true
    });
    let path = dir.path().join("relay.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let output = tokio::time::timeout(
        PATIENCE,
        tokio::process::Command::new(env!("CARGO_BIN_EXE_patchbridge-relay"))
            .arg("--config")
            .arg(&path)
            .env("PATCHBRIDGE_LOG", "error")
            .output(),
    )
    .await
    .expect("the relay gives up on its own")
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("config error at `identity.jwksUrl`"),
        "{stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("listening"),
        "the port never opened"
    );
}

#[test]
fn the_url_and_its_bounds_are_checked() {
    let check = |identity: serde_json::Value| {
        let config =
            json!({ "server": { "bind": "127.0.0.1:0" }, "identity": identity, "demo": true });
        patchbridge_relay::config::RelayConfig::from_json(&config.to_string())
            .unwrap()
            .validate()
            .err()
            .map(|e| (e.path, e.message))
    };
    let url = "https://idp.example/.well-known/jwks.json";
    assert_eq!(check(json!({ "mode": "jwt", "jwksUrl": url })), None);
    assert_eq!(
        check(json!({ "mode": "jwt", "jwksUrl": "http://127.0.0.1:9/jwks.json" })),
        None,
        "http is fine for loopback"
    );
    let refused = [
        (
            json!({ "jwksUrl": "http://idp.example/jwks.json" }),
            "identity.jwksUrl",
        ),
        (
            json!({ "jwksUrl": "ftp://idp.example/jwks.json" }),
            "identity.jwksUrl",
        ),
        (
            json!({ "jwksUrl": "https://user:pw@idp.example/k" }),
            "identity.jwksUrl",
        ),
        (json!({ "jwksUrl": "not a url" }), "identity.jwksUrl"),
        (
            json!({ "jwksUrl": url, "jwksMinCacheSeconds": 0 }),
            "identity.jwksMinCacheSeconds",
        ),
        (
            json!({ "jwksUrl": url, "jwksMaxStaleSeconds": 0 }),
            "identity.jwksMaxStaleSeconds",
        ),
        (
            json!({ "jwksUrl": url, "jwksUnknownKidCooldownSeconds": 0 }),
            "identity.jwksUnknownKidCooldownSeconds",
        ),
        (
            json!({ "jwksUrl": url, "jwksMinCacheSeconds": 600, "jwksMaxCacheSeconds": 60 }),
            "identity.jwksMaxCacheSeconds",
        ),
        (
            json!({ "jwksMaxStaleSeconds": 60 }),
            "identity.jwksMaxStaleSeconds",
        ),
        (
            json!({ "jwksUrl": url, "jwksFile": "/tmp/x.json" }),
            "identity.mode",
        ),
        (
            json!({ "jwksUrl": url, "userIdClaim": "" }),
            "identity.userIdClaim",
        ),
    ];
    for (extra, path) in refused {
        let mut identity = json!({ "mode": "jwt" });
        merge(&mut identity, extra.clone());
        let error = check(identity);
        assert_eq!(
            error.as_ref().map(|e| e.0.as_str()),
            Some(path),
            "{extra}: {error:?}"
        );
    }
}
