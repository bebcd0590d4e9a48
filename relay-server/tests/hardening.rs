//! The relay against hostile clients and upstreams: identities are exact strings, the trusted-proxy header is
//! believed only from listed peers, the Origin check works over h2c, slow clients are cut off by the header
//! and body timeouts, an upstream that sends only comments ends at the total stream bound, static trees stay
//! inside their directories, every answer carries the security headers, request ids are bounded, and per-user
//! quotas hold on SQLite and PostgreSQL.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use common::identity::*;
use common::*;
use patchbridge_relay::serve::{serve, ServeOptions};
use patchbridge_relay::workers::Workers;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Serves `r` through the relay's own accept loop on 127.0.0.1:0, its connections on two workers as the binary
/// serves them (`server.workers`; the workers live as long as the test process).
async fn serve_with(r: &Relay, options: ServeOptions) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = r.app.clone();
    let workers: &'static Workers = Box::leak(Box::new(
        Workers::start(2, Duration::from_secs(1)).expect("worker threads"),
    ));
    tokio::spawn(serve(
        listener,
        app,
        options,
        Some(workers),
        std::future::pending(),
    ));
    addr
}

fn options(header_read_ms: u64) -> ServeOptions {
    ServeOptions {
        header_read_timeout: Duration::from_millis(header_read_ms),
        max_connections: 64,
        max_header_bytes: 64 * 1024,
        shutdown_grace: Duration::from_secs(1),
        client_write_timeout: Duration::from_secs(10),
    }
}

/// An HS256 token for `sub`, valid for ten minutes.
fn token_for(sub: &str) -> String {
    hs256_token(&json!({ "sub": sub, "exp": unix_now() + 600 }))
}

#[tokio::test]
async fn padded_or_unicode_spaced_subjects_are_refused_not_trimmed() {
    let db = TestDb::new(Backend::Sqlite);
    let (r, _dir) = hs256_relay(&db, json!({})).await;
    let auth = |sub: &str| format!("Bearer {}", token_for(sub));
    let (status, _) = status_and_json(
        &r,
        get_as("/api/conversations", &[("authorization", &auth("zed"))]),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    for sub in [" zed", "zed ", "zed\u{3000}", "zed\u{200b}", "zed\t"] {
        let (status, _) = status_and_json(
            &r,
            get_as("/api/conversations", &[("authorization", &auth(sub))]),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{sub:?}");
    }
}

#[tokio::test]
async fn bearer_scheme_is_case_insensitive() {
    let db = TestDb::new(Backend::Sqlite);
    let (r, _dir) = hs256_relay(&db, json!({})).await;
    let token = token_for("zed");
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let value = format!("{scheme} {token}");
        let (status, _) = status_and_json(
            &r,
            get_as("/api/conversations", &[("authorization", &value)]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{scheme}");
    }
}

#[tokio::test]
async fn trusted_proxy_header_counts_only_from_listed_peers_and_never_as_a_list() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(
        &db,
        json!({ "identity": { "mode": "trusted-proxy", "header": "x-auth-user", "trustedProxies": ["10.0.0.0/8", "192.0.2.7"] } }),
    ))
    .await;
    let from = |peer: [u8; 4], user: &str| {
        let mut request = get_as("/api/conversations", &[("x-auth-user", user)]);
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(SocketAddr::from((peer, 5555))));
        request
    };
    assert_eq!(
        status_and_json(&r, from([10, 9, 8, 7], "dave")).await.0,
        StatusCode::OK
    );
    assert_eq!(
        status_and_json(&r, from([192, 0, 2, 7], "dave")).await.0,
        StatusCode::OK
    );
    for (peer, user) in [
        ([127, 0, 0, 1], "dave"),
        ([192, 0, 2, 8], "dave"),
        ([10, 0, 0, 1], "alice, admin"),
        ([10, 0, 0, 1], "alice,admin"),
        ([10, 0, 0, 1], " dave"),
    ] {
        assert_eq!(
            status_and_json(&r, from(peer, user)).await.0,
            StatusCode::UNAUTHORIZED,
            "{peer:?} {user:?}"
        );
    }
    // Without the peer address (a host that serves the router without connect info) nobody is trusted.
    let bare = get_as("/api/conversations", &[("x-auth-user", "dave")]);
    assert_eq!(status_and_json(&r, bare).await.0, StatusCode::UNAUTHORIZED);
}

#[test]
fn trusted_proxy_list_is_validated() {
    use patchbridge_relay::config::RelayConfig;
    let check = |list: Value| {
        let text = json!({ "demo": true, "identity": { "mode": "trusted-proxy", "header": "x-u", "trustedProxies": list } });
        RelayConfig::from_json(&text.to_string())
            .unwrap()
            .validate()
            .map(|_| ())
            .map_err(|e| (e.path, e.message))
    };
    assert!(check(json!(["10.0.0.0/8", "::1", "fd00::/8"])).is_ok());
    let (path, _) = check(json!([])).unwrap_err();
    assert_eq!(path, "identity.trustedProxies");
    let (path, _) = check(json!(["10.0.0.0/8", "proxy.internal"])).unwrap_err();
    assert_eq!(path, "identity.trustedProxies[1]");
    let (path, message) = check(json!(["10.0.0.1/8"])).unwrap_err();
    assert_eq!(path, "identity.trustedProxies[0]");
    assert!(message.contains("10.0.0.0/8"), "{message}");
}

/// HTTP/2 sends `:authority` instead of `Host`; a same-origin POST over h2c must still pass the Origin check.
#[tokio::test]
async fn state_changing_requests_over_h2c_pass_the_same_origin_check() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    let addr = serve_with(&r, options(5_000)).await;
    let port = addr.port();
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .resolve("localhost", addr)
        .build()
        .unwrap();
    let response = client
        .post(format!("http://localhost:{port}/api/conversations"))
        .header("origin", format!("http://localhost:{port}"))
        .header("content-type", "application/json")
        .header("x-patchbridge-user", "alice")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.status(), StatusCode::CREATED);
    let foreign = client
        .post(format!("http://localhost:{port}/api/conversations"))
        .header("origin", "http://evil.example")
        .header("content-type", "application/json")
        .header("x-patchbridge-user", "alice")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
}

/// Reads until the peer closes; `None` if it stays open for `limit`.
async fn closed_within(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(received),
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test]
async fn half_sent_and_idle_connections_are_closed_after_the_header_timeout() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    let addr = serve_with(&r, options(300)).await;
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut partial = tokio::net::TcpStream::connect(addr).await.unwrap();
    partial
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: a")
        .await
        .unwrap();
    assert!(closed_within(&mut idle, Duration::from_secs(5))
        .await
        .is_some());
    assert!(closed_within(&mut partial, Duration::from_secs(5))
        .await
        .is_some());
    // A client that keeps sending header bytes slowly is cut off too: the bound is on the whole head.
    let mut dribble = tokio::net::TcpStream::connect(addr).await.unwrap();
    dribble
        .write_all(b"GET /healthz HTTP/1.1\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let mut closed = false;
    for i in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if dribble
            .write_all(format!("X-{i}: y\r\n").as_bytes())
            .await
            .is_err()
        {
            closed = true;
            break;
        }
    }
    assert!(
        closed
            || closed_within(&mut dribble, Duration::from_millis(100))
                .await
                .is_some(),
        "a dribbling head was still open after {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_request_body_that_does_not_arrive_in_time_gets_408() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(
        &db,
        json!({ "limits": { "requestBodyTimeoutMs": 300 } }),
    ))
    .await;
    let addr = serve_with(&r, options(5_000)).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            b"POST /api/conversations HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n\
              x-patchbridge-user: alice\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"ti",
        )
        .await
        .unwrap();
    let answer = closed_within(&mut stream, Duration::from_secs(5))
        .await
        .expect("the relay answers and closes");
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("REQUEST_TIMEOUT"), "{text}");
}

/// An upstream that answers 200 and then sends only SSE comments (each resetting the idle timer) is cut at
/// `limits.maxStreamDurationMs`.
#[tokio::test]
async fn a_stream_of_comments_ends_at_the_total_duration_bound() {
    let body = ": keep-alive\n\n".repeat(2000).into_bytes();
    let (_fake, r, _db) = relay_with_upstream(
        vec![Reply::Sse {
            body,
            chunk: 14,
            delay: Duration::from_millis(20),
        }],
        json!({ "limits": { "maxStreamDurationMs": 700, "idleTimeoutMs": 10000 } }),
    )
    .await;
    let started = Instant::now();
    let (status, text) = tokio::time::timeout(
        Duration::from_secs(20),
        post_model(&r, first_turn_request("chat")),
    )
    .await
    .expect("the stream ends");
    assert_eq!(status, StatusCode::OK);
    let events = events_of(&text);
    let last = events.last().expect("an error event");
    assert_eq!(last["type"], "error", "{text}");
    assert_eq!(last["code"], "UPSTREAM_TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn new_limits_cannot_be_switched_off() {
    use patchbridge_relay::config::RelayConfig;
    for name in [
        "maxStreamDurationMs",
        "headerReadTimeoutMs",
        "requestBodyTimeoutMs",
        "clientWriteTimeoutMs",
        "maxConnections",
        "maxHeaderBytes",
        "shutdownGraceMs",
        "maxConversationsPerUser",
        "maxStoredBytesPerUser",
    ] {
        let text = json!({ "demo": true, "limits": { name: 0 } }).to_string();
        let e = RelayConfig::from_json(&text)
            .unwrap()
            .validate()
            .unwrap_err();
        assert_eq!(e.path, format!("limits.{name}"));
    }
}

fn static_relay_config(db: &TestDb, examples: &std::path::Path) -> Value {
    base_config(db, json!({ "server": { "examplesDir": examples } }))
}

#[tokio::test]
async fn static_trees_refuse_symlinks_out_and_dotfiles() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("hostname"), "outside-secret").unwrap();
    let examples = tempfile::tempdir().unwrap();
    std::fs::create_dir(examples.path().join("demo")).unwrap();
    std::fs::write(examples.path().join("demo/index.html"), "<p>demo</p>").unwrap();
    std::fs::write(examples.path().join(".env"), "SECRET=1").unwrap();
    std::fs::create_dir(examples.path().join(".git")).unwrap();
    std::fs::write(examples.path().join(".git/config"), "[core]").unwrap();
    std::os::unix::fs::symlink(outside.path(), examples.path().join("etc")).unwrap();
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(static_relay_config(&db, examples.path())).await;

    let page = r.send(get_as("/examples/demo/index.html", &[])).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(
        page.headers()["content-security-policy"],
        patchbridge_relay::static_files::PAGE_CSP
    );
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    for path in [
        "/examples/etc/hostname",
        "/examples/.env",
        "/examples/.git/config",
        "/examples/%2egit/config",
        "/examples/demo/../.env",
    ] {
        let response = r.send(get_as(path, &[])).await;
        let status = response.status();
        let text = body_text(response).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert!(
            !text.contains("outside-secret") && !text.contains("SECRET"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn api_answers_and_errors_carry_security_headers() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    for request in [
        req("GET", "/api/conversations", "alice", None),
        req("GET", "/api/conversations", "", None),
        get_as("/healthz", &[]),
        get_as("/nowhere", &[]),
        req("PATCH", "/api/models", "alice", None),
    ] {
        let response = r.send(request).await;
        let headers = response.headers();
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(headers["x-frame-options"], "DENY");
        assert_eq!(headers["referrer-policy"], "no-referrer");
        assert!(headers.contains_key("x-request-id"));
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    }
}

#[tokio::test]
async fn oversized_or_invisible_request_ids_are_replaced_by_fresh_ones() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    let kept = r
        .send(get_as("/healthz", &[("x-request-id", "trace-42.abc")]))
        .await;
    assert_eq!(kept.headers()["x-request-id"], "trace-42.abc");
    let huge = "a".repeat(60_000);
    for bad in [huge.as_str(), "two words", &"b".repeat(129)] {
        let response = r.send(get_as("/healthz", &[("x-request-id", bad)])).await;
        let id = response.headers()["x-request-id"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_ne!(id, bad);
        assert!(id.len() <= 64 && uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    }
}

async fn quotas_hold(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(
        &db,
        json!({ "limits": { "maxConversationsPerUser": 2, "maxStoredBytesPerUser": 4096, "maxConversationBytes": 4096 } }),
    ))
    .await;
    let (s1, c1) = r
        .call("POST", "/api/conversations", "alice", Some(json!({})))
        .await;
    assert_eq!(s1, StatusCode::CREATED);
    let (s2, _) = r
        .call("POST", "/api/conversations", "alice", Some(json!({})))
        .await;
    assert_eq!(s2, StatusCode::CREATED);
    let (s3, e3) = r
        .call("POST", "/api/conversations", "alice", Some(json!({})))
        .await;
    assert_eq!(s3, StatusCode::FORBIDDEN);
    assert_eq!(e3["error"]["code"], "QUOTA_EXCEEDED");
    // Another user is not affected.
    let (s, _) = r
        .call("POST", "/api/conversations", "bob", Some(json!({})))
        .await;
    assert_eq!(s, StatusCode::CREATED);
    // Deleting frees a slot.
    let id = c1["conversation"]["id"].as_str().unwrap().to_owned();
    let (s, _) = r
        .call("DELETE", &format!("/api/conversations/{id}"), "alice", None)
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (s, c) = r
        .call("POST", "/api/conversations", "alice", Some(json!({})))
        .await;
    assert_eq!(s, StatusCode::CREATED);

    // Bytes: a write that would take alice past 4096 bytes in all is refused and changes nothing.
    let id = c["conversation"]["id"].as_str().unwrap().to_owned();
    let message = |text: String| {
        json!({ "expectedRevision": 1, "context": { "messages": [
            { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": text } ] } ], "modelState": null } })
    };
    let (s, e) = r
        .call(
            "PUT",
            &format!("/api/conversations/{id}"),
            "alice",
            Some(message("x".repeat(4000))),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{e}");
    assert_eq!(e["error"]["code"], "QUOTA_EXCEEDED");
    let (_, read) = r
        .call("GET", &format!("/api/conversations/{id}"), "alice", None)
        .await;
    assert_eq!(read["conversation"]["revision"], 1);
    let (s, _) = r
        .call(
            "PUT",
            &format!("/api/conversations/{id}"),
            "alice",
            Some(message("x".repeat(1000))),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let (used_conversations, used_bytes) = r.state.store().usage("alice").await.unwrap();
    assert_eq!(used_conversations, 2);
    assert!(used_bytes > 1000 && used_bytes < 4096, "{used_bytes}");
}

#[tokio::test]
async fn per_user_quotas_hold_on_sqlite() {
    quotas_hold(Backend::Sqlite).await;
}

#[tokio::test]
async fn per_user_quotas_hold_on_postgres() {
    quotas_hold(Backend::Postgres).await;
}

/// Concurrent creates of one user never pass the count quota (the usage row serialises them).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_respect_the_count_quota_on_postgres() {
    let db = TestDb::new(Backend::Postgres);
    let r = relay(base_config(
        &db,
        json!({ "limits": { "maxConversationsPerUser": 5 } }),
    ))
    .await;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let r = r.clone();
            tokio::spawn(async move {
                r.call("POST", "/api/conversations", "carol", Some(json!({})))
                    .await
                    .0
            })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        if task.await.unwrap() == StatusCode::CREATED {
            created += 1;
        }
    }
    assert_eq!(created, 5);
    assert_eq!(r.state.store().usage("carol").await.unwrap().0, 5);
}

#[tokio::test]
async fn static_tree_roots_serve_their_index_pages() {
    let examples = tempfile::tempdir().unwrap();
    std::fs::write(examples.path().join("index.html"), "<p>examples</p>").unwrap();
    std::fs::create_dir(examples.path().join("demo")).unwrap();
    std::fs::write(examples.path().join("demo/index.html"), "<p>demo</p>").unwrap();
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(static_relay_config(&db, examples.path())).await;
    for (path, body) in [
        ("/examples/", "<p>examples</p>"),
        ("/examples/demo/", "<p>demo</p>"),
    ] {
        let response = r.send(get_as(path, &[])).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_eq!(
            response.headers()["content-security-policy"],
            patchbridge_relay::static_files::PAGE_CSP,
            "{path}"
        );
        assert_eq!(body_text(response).await, body, "{path}");
    }
}
