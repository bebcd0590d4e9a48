//! Identity (default deny, development, JWT HS256 / RS256 PEM / JWKS, trusted proxy, host-supplied resolver),
//! Origin and content-type checks, and CORS.

mod common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::identity::*;
use common::*;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use patchbridge_relay::{IdentityResolver, ResolveFuture, UserId};
use serde_json::{json, Value};

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jwt")
        .join(name)
}

fn post(path: &str, body: Value) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri(path)
        .header("host", HOST)
        .header("origin", ORIGIN)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test]
async fn without_identity_every_api_answers_401() {
    let db = TestDb::new(Backend::Sqlite);
    let mut config = base_config(&db, json!({}));
    config.as_object_mut().unwrap().remove("identity");
    let r = relay(config).await;
    let requests = vec![
        get_as("/api/models", &[]),
        get_as("/api/conversations", &[("x-patchbridge-user", "alice")]),
        get_as("/api/conversations/c_x", &[]),
        post("/api/conversations", json!({})),
        post("/api/model", first_turn_request("scripted")),
    ];
    for request in requests {
        let path = request.uri().to_string();
        let (status, body) = status_and_json(&r, request).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(body["error"]["code"], "UNAUTHENTICATED", "{path}");
    }
    let (status, _) = status_and_json(&r, get_as("/healthz", &[])).await;
    assert_eq!(status, StatusCode::OK, "health needs no identity");
    let (status, _) = status_and_json(&r, get_as("/readyz", &[])).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn development_identity_reads_header_or_query() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    let (status, _) = status_and_json(&r, get_as("/api/models?user=alice", &[])).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) =
        status_and_json(&r, get_as("/api/models", &[("x-patchbridge-user", "bob")])).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) =
        status_and_json(&r, get_as("/api/models", &[("x-patchbridge-user", "  ")])).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = status_and_json(&r, get_as("/api/models", &[])).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[derive(serde::Serialize)]
struct Claims<'a> {
    sub: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    exp: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    iss: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aud: Option<&'a str>,
}

fn bearer(token: &str) -> Request<Body> {
    get_as(
        "/api/conversations",
        &[("authorization", format!("Bearer {token}").as_str())],
    )
}

#[tokio::test]
async fn jwt_hs256_checks_signature_expiry_issuer_and_audience() {
    let db = TestDb::new(Backend::Sqlite);
    let (r, _dir) = hs256_relay(
        &db,
        json!({ "issuer": "https://idp.test", "audience": "relay" }),
    )
    .await;
    let sign = |claims: &Claims<'_>| hs256_token(claims);
    let good = Claims {
        sub: "alice",
        exp: Some(unix_now() + 600),
        iss: Some("https://idp.test"),
        aud: Some("relay"),
    };
    let (status, body) = status_and_json(&r, bearer(&sign(&good))).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let expired = Claims {
        exp: Some(unix_now() - 3600),
        ..good
    };
    let no_exp = Claims { exp: None, ..good };
    let wrong_iss = Claims {
        iss: Some("https://evil.test"),
        ..good
    };
    let wrong_aud = Claims {
        aud: Some("other"),
        ..good
    };
    for (what, token) in [
        ("expired", sign(&expired)),
        ("no exp", sign(&no_exp)),
        ("wrong issuer", sign(&wrong_iss)),
        ("wrong audience", sign(&wrong_aud)),
        (
            "wrong secret",
            encode(
                &Header::new(Algorithm::HS256),
                &good,
                &EncodingKey::from_secret(b"another-secret-another-secret-xx"),
            )
            .unwrap(),
        ),
        ("garbage", "not.a.jwt".to_owned()),
    ] {
        let (status, body) = status_and_json(&r, bearer(&token)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}");
        assert_eq!(body["error"]["code"], "UNAUTHENTICATED");
    }
    // `sub` scopes conversations.
    let alice = sign(&good);
    let bob = sign(&Claims { sub: "bob", ..good });
    let mut create = post("/api/conversations", json!({}));
    create
        .headers_mut()
        .insert("authorization", format!("Bearer {alice}").parse().unwrap());
    let (status, created) = status_and_json(&r, create).await;
    assert_eq!(status, StatusCode::CREATED);
    let path = format!(
        "/api/conversations/{}",
        created["conversation"]["id"].as_str().unwrap()
    );
    let as_bob = get_as(
        &path,
        &[("authorization", format!("Bearer {bob}").as_str())],
    );
    assert_eq!(status_and_json(&r, as_bob).await.0, StatusCode::NOT_FOUND);
    let as_alice = get_as(
        &path,
        &[("authorization", format!("Bearer {alice}").as_str())],
    );
    assert_eq!(status_and_json(&r, as_alice).await.0, StatusCode::OK);
}

#[tokio::test]
async fn jwt_rs256_with_pem_key_and_with_jwks() {
    let private = std::fs::read(fixture("test-private.pem")).unwrap();
    let other = std::fs::read(fixture("other-private.pem")).unwrap();
    let key = EncodingKey::from_rsa_pem(&private).unwrap();
    let other_key = EncodingKey::from_rsa_pem(&other).unwrap();
    let claims = Claims {
        sub: "carol",
        exp: Some(unix_now() + 600),
        iss: None,
        aud: None,
    };
    for identity in [
        json!({ "mode": "jwt", "rs256PublicKeyFile": fixture("test-public.pem") }),
        json!({ "mode": "jwt", "jwksFile": fixture("test-jwks.json") }),
    ] {
        let db = TestDb::new(Backend::Sqlite);
        let r = relay(base_config(&db, json!({ "identity": identity.clone() }))).await;
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("test-key-1".into());
        let good = encode(&header, &claims, &key).unwrap();
        assert_eq!(
            status_and_json(&r, bearer(&good)).await.0,
            StatusCode::OK,
            "{identity}"
        );
        let forged = encode(&header, &claims, &other_key).unwrap();
        assert_eq!(
            status_and_json(&r, bearer(&forged)).await.0,
            StatusCode::UNAUTHORIZED,
            "{identity}"
        );
        // An HS256 token signed with the public key text must not pass (algorithm confusion).
        let public = std::fs::read(fixture("test-public.pem")).unwrap();
        let confused = encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(&public),
        )
        .unwrap();
        assert_eq!(
            status_and_json(&r, bearer(&confused)).await.0,
            StatusCode::UNAUTHORIZED,
            "{identity}"
        );
    }
}

#[tokio::test]
async fn trusted_proxy_header_is_the_user() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(
        &db,
        json!({ "identity": { "mode": "trusted-proxy", "header": "X-Auth-User" } }),
    ))
    .await;
    // The header is believed only from a trusted peer (loopback by default).
    let from_proxy =
        |mut request: Request<Body>| {
            request.extensions_mut().insert(axum::extract::ConnectInfo(
                std::net::SocketAddr::from(([127, 0, 0, 1], 40000)),
            ));
            request
        };
    let ok = from_proxy(get_as("/api/conversations", &[("x-auth-user", "dave")]));
    assert_eq!(status_and_json(&r, ok).await.0, StatusCode::OK);
    let missing = from_proxy(get_as(
        "/api/conversations",
        &[("x-patchbridge-user", "dave")],
    ));
    assert_eq!(
        status_and_json(&r, missing).await.0,
        StatusCode::UNAUTHORIZED
    );
    let doubled = from_proxy(get_as(
        "/api/conversations",
        &[("x-auth-user", "dave"), ("x-auth-user", "eve")],
    ));
    assert_eq!(
        status_and_json(&r, doubled).await.0,
        StatusCode::UNAUTHORIZED,
        "an appended second header is refused"
    );
}

struct TenantResolver;

impl IdentityResolver for TenantResolver {
    fn resolve<'a>(&'a self, parts: &'a axum::http::request::Parts) -> ResolveFuture<'a> {
        Box::pin(async move {
            let cookie = parts.headers.get("cookie")?.to_str().ok()?;
            cookie
                .strip_prefix("session=valid-")
                .map(|u| UserId(format!("tenant1/{u}")))
        })
    }
}

#[tokio::test]
async fn hosts_can_plug_their_own_resolver() {
    let db = TestDb::new(Backend::Sqlite);
    let mut config = base_config(&db, json!({}));
    config.as_object_mut().unwrap().remove("identity");
    let base = relay(config).await;
    let state = base.state.clone().with_identity(Arc::new(TenantResolver));
    let r = Relay {
        app: patchbridge_relay::router(state.clone()),
        state,
    };
    let ok = get_as("/api/conversations", &[("cookie", "session=valid-frank")]);
    assert_eq!(status_and_json(&r, ok).await.0, StatusCode::OK);
    let bad = get_as("/api/conversations", &[("cookie", "session=forged")]);
    assert_eq!(status_and_json(&r, bad).await.0, StatusCode::UNAUTHORIZED);
}

fn write_request(origin: Option<&str>, content_type: Option<&str>) -> Request<Body> {
    let mut b = Request::builder()
        .method("POST")
        .uri("/api/conversations")
        .header("host", HOST)
        .header("x-patchbridge-user", "alice");
    if let Some(o) = origin {
        b = b.header("origin", o);
    }
    if let Some(ct) = content_type {
        b = b.header("content-type", ct);
    }
    b.body(Body::from("{}")).unwrap()
}

#[tokio::test]
async fn state_changing_requests_need_allowed_origin_and_json() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(
        &db,
        json!({ "server": { "allowedOrigins": ["https://app.example"] } }),
    ))
    .await;
    let cases: [(Option<&str>, Option<&str>, StatusCode, &str); 8] = [
        (
            Some(ORIGIN),
            Some("application/json"),
            StatusCode::CREATED,
            "",
        ),
        (
            Some("https://app.example"),
            Some("application/json; charset=utf-8"),
            StatusCode::CREATED,
            "",
        ),
        (
            None,
            Some("application/json"),
            StatusCode::FORBIDDEN,
            "FORBIDDEN_ORIGIN",
        ),
        (
            Some("https://evil.example"),
            Some("application/json"),
            StatusCode::FORBIDDEN,
            "FORBIDDEN_ORIGIN",
        ),
        (
            Some("null"),
            Some("application/json"),
            StatusCode::FORBIDDEN,
            "FORBIDDEN_ORIGIN",
        ),
        (
            Some("http://localhost:8080"),
            Some("application/json"),
            StatusCode::FORBIDDEN,
            "FORBIDDEN_ORIGIN",
        ),
        (
            Some(ORIGIN),
            Some("text/plain"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            Some(ORIGIN),
            None,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
    ];
    for (origin, ct, expected, code) in cases {
        let (status, body) = status_and_json(&r, write_request(origin, ct)).await;
        assert_eq!(
            status, expected,
            "origin {origin:?} content-type {ct:?}: {body}"
        );
        if !code.is_empty() {
            assert_eq!(body["error"]["code"], code);
        }
    }
    let delete = Request::builder()
        .method("DELETE")
        .uri("/api/conversations/c_x")
        .header("host", HOST)
        .header("x-patchbridge-user", "alice")
        .header("origin", "https://evil.example")
        .body(Body::empty())
        .unwrap();
    assert_eq!(status_and_json(&r, delete).await.0, StatusCode::FORBIDDEN);
    // Only 2 conversations were created by the accepted requests.
    let (_, page) = r.call("GET", "/api/conversations", "alice", None).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn cors_answers_only_configured_origins() {
    let preflight = |origin: &str| {
        Request::builder()
            .method("OPTIONS")
            .uri("/api/model")
            .header("host", HOST)
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type, authorization",
            )
            .body(Body::empty())
            .unwrap()
    };
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(
        &db,
        json!({ "server": { "allowedOrigins": ["https://app.example"] } }),
    ))
    .await;
    let response = r.send(preflight("https://app.example")).await;
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    let methods = response.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(methods.contains("POST"), "{methods}");
    let response = r.send(preflight("https://evil.example")).await;
    assert!(response
        .headers()
        .get("access-control-allow-origin")
        .is_none());

    let db2 = TestDb::new(Backend::Sqlite);
    let r2 = relay(base_config(&db2, json!({}))).await;
    let response = r2.send(preflight("https://app.example")).await;
    assert!(
        response
            .headers()
            .get("access-control-allow-origin")
            .is_none(),
        "no CORS without configured origins"
    );
}

#[tokio::test]
async fn request_ids_are_generated_or_propagated() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    let response = r.send(get_as("/healthz", &[])).await;
    let id = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let response = r
        .send(get_as("/healthz", &[("x-request-id", "abc-123")]))
        .await;
    assert_eq!(response.headers()["x-request-id"], "abc-123");
}

/// jsonwebtoken checks `iss`/`aud` only when the token carries them and `nbf` only when asked, so the relay
/// requires all three: a token without `iss`/`aud` may be minted for another service with the same key.
#[tokio::test]
async fn jwt_missing_issuer_or_audience_and_future_nbf_are_refused() {
    let db = TestDb::new(Backend::Sqlite);
    let (r, _dir) = hs256_relay(
        &db,
        json!({ "issuer": "https://idp.test", "audience": "relay" }),
    )
    .await;
    let sign = |claims: &Value| hs256_token(claims);
    let good = json!({ "sub": "alice", "exp": unix_now() + 600, "iss": "https://idp.test", "aud": "relay" });
    assert_eq!(
        status_and_json(&r, bearer(&sign(&good))).await.0,
        StatusCode::OK
    );
    let mut past_nbf = good.clone();
    past_nbf["nbf"] = json!(unix_now() - 10);
    assert_eq!(
        status_and_json(&r, bearer(&sign(&past_nbf))).await.0,
        StatusCode::OK
    );

    let mut no_iss = good.clone();
    no_iss.as_object_mut().unwrap().remove("iss");
    let mut no_aud = good.clone();
    no_aud.as_object_mut().unwrap().remove("aud");
    let mut future_nbf = good.clone();
    future_nbf["nbf"] = json!(unix_now() + 3600);
    for (what, claims) in [
        ("no iss", no_iss),
        ("no aud", no_aud),
        ("nbf in an hour", future_nbf),
    ] {
        let (status, body) = status_and_json(&r, bearer(&sign(&claims))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {body}");
    }
}

/// Bug probe: the guard is a route layer, so paths under the base that match no route (or a route with another
/// method) must still not answer anything but 401 to a caller without identity.
#[tokio::test]
async fn unrouted_api_paths_and_other_methods_answer_401_without_identity() {
    let db = TestDb::new(Backend::Sqlite);
    let mut config = base_config(&db, json!({}));
    config.as_object_mut().unwrap().remove("identity");
    let r = relay(config).await;
    for (method, path) in [
        ("HEAD", "/api/models"),
        ("HEAD", "/api/conversations"),
        ("OPTIONS", "/api/model"),
        ("OPTIONS", "/api/conversations"),
        ("PATCH", "/api/conversations/c_x"),
        ("GET", "/api/model"),
        ("GET", "/api"),
        ("GET", "/api/"),
        ("POST", "/api"),
        ("GET", "/api/nothing-here"),
        ("GET", "/api/models/"),
        ("GET", "/api/conversations/"),
    ] {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", HOST)
            .header("origin", ORIGIN)
            .header("content-type", "application/json")
            .body(Body::empty())
            .unwrap();
        let status = r.send(request).await.status();
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // With an identity the same unrouted paths are a plain NOT_FOUND in the documented error shape.
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    for path in ["/api", "/api/", "/api/nothing-here"] {
        let (status, body) = r.call("GET", path, "alice", None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_eq!(body["error"]["code"], "NOT_FOUND", "{path}");
    }
}

/// A loopback listen address is not enough for the development identity: DNS rebinding lets a page on any site
/// reach a loopback relay under its own host name, where its requests are even same-origin. So the request's
/// `Host` must be a loopback name too, or the caller is not identified.
#[tokio::test]
async fn development_identity_refuses_a_non_loopback_host_dns_rebinding() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    let as_host = |method: &str, host: &str| {
        let mut builder = Request::builder()
            .method(method)
            .uri("/api/conversations")
            .header("host", host)
            .header("origin", format!("http://{host}"))
            .header("x-patchbridge-user", "alice");
        if method == "POST" {
            builder = builder.header("content-type", "application/json");
        }
        builder.body(Body::from("{}")).unwrap()
    };
    for host in [
        "localhost:8787",
        "127.0.0.1:8787",
        "127.0.0.2",
        "[::1]:8787",
        "LOCALHOST",
        "app.localhost:8787",
    ] {
        assert_eq!(
            r.send(as_host("GET", host)).await.status(),
            StatusCode::OK,
            "{host}"
        );
        assert_eq!(
            r.send(as_host("POST", host)).await.status(),
            StatusCode::CREATED,
            "{host}"
        );
    }
    for host in [
        "evil.example:8787",
        "evil.example",
        "127.0.0.1.evil.example",
        "localhost.evil.example",
        "10.0.0.1:8787",
    ] {
        assert_eq!(
            r.send(as_host("GET", host)).await.status(),
            StatusCode::UNAUTHORIZED,
            "{host}"
        );
        assert_eq!(
            r.send(as_host("POST", host)).await.status(),
            StatusCode::UNAUTHORIZED,
            "{host}"
        );
    }
    let no_host = Request::builder()
        .uri("/api/conversations?user=alice")
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        r.send(no_host).await.status(),
        StatusCode::UNAUTHORIZED,
        "no Host at all"
    );
}
