//! `POST /api/model` against fake upstream servers (real HTTP on 127.0.0.1) speaking the providers' real SSE
//! formats: retry rules, bounds, timeouts, cancellation when the browser disconnects, `/models`, demo mode,
//! metrics. Golden replays and exact upstream requests: `golden_replay.rs`.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::http::StatusCode;
use common::*;
use serde_json::{json, Value};

fn last_event(text: &str) -> Value {
    events_of(text).pop().expect("at least one event")
}

#[tokio::test]
async fn rate_limit_then_ok_is_retried_once() {
    let (fake, r, _db) = relay_with_upstream(
        vec![
            Reply::Status {
                status: 429,
                body: r#"{"error":{"message":"slow down"}}"#.into(),
            },
            Reply::sse(text_stream()),
        ],
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(last_event(&text)["type"], "message-stop");
    assert_eq!(fake.requests().len(), 2, "one retry");
    assert!(r
        .state
        .metrics()
        .render()
        .contains("relay_upstream_retries_total 1"));
}

#[tokio::test]
async fn server_error_then_ok_is_retried_once_and_twice_fails() {
    let (fake, r, db) = relay_with_upstream(
        vec![Reply::status(503), Reply::sse(text_stream())],
        json!({}),
    )
    .await;
    let (status, _) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fake.requests().len(), 2);

    let fake = FakeUpstream::start(vec![Reply::status(429)]).await;
    let r = relay_for(&fake, &db, json!({})).await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error_code(&text), "UPSTREAM_RATE_LIMITED");
    assert_eq!(fake.requests().len(), 2, "exactly one retry, not more");
}

#[tokio::test]
async fn auth_and_bad_request_errors_are_not_retried_and_not_echoed() {
    for status in [401, 403, 400, 422] {
        let leak = r#"{"error":{"message":"Incorrect API key provided: sk-leaked-zzzzzzzz internal-detail-42"}}"#;
        let fake = FakeUpstream::start(vec![
            Reply::Status {
                status,
                body: leak.into(),
            },
            Reply::sse(text_stream()),
        ])
        .await;
        let db = TestDb::new(Backend::Sqlite);
        let r = relay_for(&fake, &db, json!({})).await;
        let (got, text) = post_model(&r, first_turn_request("chat")).await;
        assert_eq!(got, StatusCode::BAD_GATEWAY, "{status}");
        assert_eq!(error_code(&text), "UPSTREAM_REJECTED");
        assert!(
            !text.contains("sk-leaked") && !text.contains("internal-detail-42"),
            "upstream body never echoed: {text}"
        );
        assert_eq!(fake.requests().len(), 1, "{status} is never retried");
    }
}

#[tokio::test]
async fn connection_refused_is_upstream_unavailable() {
    // A port that was just free: nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    set_key();
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(
        &db,
        json!({ "models": [ { "id": "chat", "provider": "openai-chat", "baseUrl": format!("http://127.0.0.1:{port}/v1"),
                              "upstreamModel": "m", "apiKey": { "env": "PB_TEST_UPSTREAM_KEY" } } ] }),
    ))
    .await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(error_code(&text), "UPSTREAM_UNAVAILABLE");
    assert!(
        r.state
            .metrics()
            .render()
            .contains("relay_upstream_retries_total 1"),
        "connection errors are retried once"
    );
}

#[tokio::test]
async fn failure_after_first_byte_is_an_error_event_without_retry() {
    // The stream stops in the middle (no finish_reason, no [DONE]): events so far, then one error event.
    let full = text_stream();
    let cut = full.split("\n\n").take(3).collect::<Vec<_>>().join("\n\n") + "\n\n";
    let (fake, r, _db) =
        relay_with_upstream(vec![Reply::sse(cut), Reply::sse(full)], json!({})).await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    let events = events_of(&text);
    assert_eq!(events[0]["type"], "message-start");
    assert!(events.iter().any(|e| e["type"] == "block-delta"));
    let last = events.last().unwrap();
    assert_eq!(last["type"], "error");
    assert_eq!(last["code"], "UPSTREAM_PROTOCOL_ERROR");
    assert_eq!(
        fake.requests().len(),
        1,
        "no retry once bytes went to the browser"
    );
}

#[tokio::test]
async fn oversized_upstream_stream_is_cut_with_an_error_event() {
    let (_fake, r, _db) = relay_with_upstream(
        vec![Reply::Sse {
            body: text_stream().into_bytes(),
            chunk: 200,
            delay: Duration::ZERO,
        }],
        json!({ "limits": { "maxUpstreamResponseBytes": 700 } }),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    let last = last_event(&text);
    assert_eq!(last["type"], "error");
    assert_eq!(last["code"], "UPSTREAM_RESPONSE_TOO_LARGE");
    assert!(!events_of(&text).iter().any(|e| e["type"] == "message-stop"));
}

#[tokio::test]
async fn too_many_events_are_cut_at_the_bound() {
    let (_fake, r, _db) = relay_with_upstream(
        vec![Reply::sse(text_stream())],
        json!({ "limits": { "maxEventsPerCall": 3 } }),
    )
    .await;
    let (_, text) = post_model(&r, first_turn_request("chat")).await;
    let events = events_of(&text);
    assert_eq!(events.len(), 4, "3 events then the error: {events:?}");
    assert_eq!(events[3]["code"], "UPSTREAM_RESPONSE_TOO_LARGE");
}

#[tokio::test]
async fn idle_upstream_times_out_with_an_error_event() {
    let (fake, r, _db) = relay_stalling_after_first_event(300).await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    let events = events_of(&text);
    assert_eq!(events[0]["type"], "message-start");
    let last = events.last().unwrap();
    assert_eq!(last["code"], "UPSTREAM_TIMEOUT");
    assert_eq!(last["retryable"], true);
    assert!(
        eventually(Duration::from_secs(2), || fake
            .disconnected
            .load(Ordering::SeqCst))
        .await,
        "upstream dropped"
    );
}

/// A stream whose chunks keep coming is never cut by a timeout, however long it runs: here it outlasts the
/// first-byte and idle timeouts several times over, with every gap well inside them.
#[tokio::test]
async fn a_steadily_flowing_stream_outlasts_its_timeouts() {
    let body = text_stream();
    let chunk = body.len().div_ceil(12);
    let (_fake, r, _db) = relay_with_upstream(
        vec![Reply::Sse {
            body: body.into_bytes(),
            chunk,
            delay: Duration::from_millis(80),
        }],
        json!({ "limits": { "firstByteTimeoutMs": 250, "idleTimeoutMs": 250 } }),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    let events = events_of(&text);
    assert!(
        events.iter().all(|e| e["type"] != "error"),
        "no error event: {events:?}"
    );
    assert_eq!(events.last().unwrap()["type"], "message-stop", "{events:?}");
}

#[tokio::test]
async fn no_response_headers_is_a_first_byte_timeout() {
    let (fake, r, _db) = relay_with_upstream(
        vec![Reply::Hang],
        json!({ "limits": { "firstByteTimeoutMs": 300 } }),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(error_code(&text), "UPSTREAM_TIMEOUT");
    assert_eq!(fake.requests().len(), 1, "a timeout is not retried");
}

/// Regression pin for "browser disconnect must cancel upstream at once": the fake upstream keeps its stream
/// open forever; when the browser drops the connection the relay must drop the upstream request.
#[tokio::test]
async fn browser_disconnect_cancels_the_upstream_request() {
    let (fake, r, _db) = relay_stalling_after_first_event(600000).await;
    let addr = r.serve().await;
    let client = reqwest::Client::new();
    let mut response = browser_call(&client, addr).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let chunk = response.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&chunk).contains("message-start"));
    assert!(fake.stream_started.load(Ordering::SeqCst));
    assert!(!fake.disconnected.load(Ordering::SeqCst));
    drop(response);
    drop(client);
    assert!(
        eventually(Duration::from_secs(3), || fake
            .disconnected
            .load(Ordering::SeqCst))
        .await,
        "upstream request must be dropped when the browser goes away"
    );
    assert!(
        eventually(Duration::from_secs(2), || r
            .state
            .metrics()
            .render()
            .contains("relay_open_streams 0"))
        .await
    );
    assert!(r.state.metrics().render().contains("outcome=\"cancelled\""));
}

#[tokio::test]
async fn unknown_model_and_foreign_model_state_fail_before_any_upstream_call() {
    let (fake, r, _db) = relay_with_upstream(vec![Reply::sse(text_stream())], json!({})).await;
    let (status, text) = post_model(&r, first_turn_request("nope")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&text), "UNKNOWN_MODEL");

    let mut request = first_turn_request("chat");
    request["modelState"] = json!({ "format": "anthropic-messages/v1", "data": {} });
    let (status, text) = post_model(&r, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&text), "MODEL_STATE_FORMAT_MISMATCH");

    let mut request = first_turn_request("chat");
    request["temperature"] = json!(1);
    let (status, text) = post_model(&r, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("temperature"), "{text}");

    let mut request = first_turn_request("chat");
    request.as_object_mut().unwrap().remove("modelState");
    let (status, _) = post_model(&r, request).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "modelState key is required"
    );
    assert_eq!(fake.requests().len(), 0);
}

#[tokio::test]
async fn models_lists_configured_models_and_default() {
    let (_fake, r, db) = relay_with_upstream(
        vec![Reply::sse(text_stream())],
        json!({ "defaultModel": "claude" }),
    )
    .await;
    let (status, body) = r.call("GET", "/api/models", "alice", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["protocolVersion"], 1);
    assert_eq!(body["previewOnly"], false);
    assert_eq!(body["defaultModel"], "claude");
    let providers: Vec<&str> = body["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["provider"].as_str().unwrap())
        .collect();
    assert_eq!(
        providers,
        ["openai-chat", "openai-responses", "anthropic-messages"]
    );
    assert_eq!(
        body["models"][0]["capabilities"],
        json!({ "tools": true, "inputs": ["text", "image"], "images": true, "reasoning": false })
    );
    assert!(
        !body.to_string().contains(KEY) && !body.to_string().contains("127.0.0.1"),
        "no secrets or URLs"
    );

    // No `model` in the request: the default (claude) is used.
    let fake2 = FakeUpstream::start(vec![Reply::sse(read_fixture(
        "anthropic-messages/recorded/basic_response.sse",
    ))])
    .await;
    let r2 = relay_for(&fake2, &db, json!({ "defaultModel": "claude" })).await;
    let mut request = first_turn_request("x");
    request.as_object_mut().unwrap().remove("model");
    let (status, _) = post_model(&r2, request).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fake2.requests()[0].path, "/v1/messages");
}

#[tokio::test]
async fn demo_mode_serves_the_scripted_model_labelled_preview_only() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({ "demo": true }))).await;
    let (_, body) = r.call("GET", "/api/models", "alice", None).await;
    assert_eq!(body["previewOnly"], true);
    assert_eq!(body["models"][0]["provider"], "scripted-demo");
    assert_eq!(body["models"][0]["previewOnly"], true);
    assert!(body["models"][0]["label"]
        .as_str()
        .unwrap()
        .contains("not AI"));
    let mut request = first_turn_request("scripted");
    request["messages"][0]["blocks"][0]["text"] = json!("hello");
    let (status, text) = post_model(&r, request).await;
    assert_eq!(status, StatusCode::OK);
    let events = events_of(&text);
    assert_eq!(events[0]["type"], "message-start");
    assert_eq!(events.last().unwrap()["type"], "message-stop", "{events:?}");
}

#[tokio::test]
async fn metrics_report_the_relays_added_latency() {
    let (_fake, r, _db) = relay_with_upstream(vec![Reply::sse(text_stream())], json!({})).await;
    let (status, _) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = r.call("GET", "/metrics", "", None).await;
    assert_eq!(status, StatusCode::OK);
    let text = r.state.metrics().render();
    for name in [
        "relay_upstream_first_byte_seconds_count 1",
        "relay_first_event_seconds_count 1",
        "relay_added_first_event_seconds_count 1",
        "relay_model_calls_total{model=\"chat\",outcome=\"ok\"} 1",
    ] {
        assert!(text.contains(name), "missing `{name}` in\n{text}");
    }
    let chunks = text
        .lines()
        .find(|l| l.starts_with("relay_chunk_processing_seconds_count"))
        .unwrap();
    let n: u64 = chunks.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(n >= 5, "one observation per upstream SSE message: {chunks}");
}

/// A browser that goes away while the relay still waits for the upstream's response headers cancels the
/// upstream request too (the handler future is dropped with the connection).
#[tokio::test]
async fn browser_disconnect_before_upstream_headers_cancels_the_upstream_request() {
    let (fake, r, _db) = relay_with_upstream(
        vec![Reply::Hang],
        json!({ "limits": { "firstByteTimeoutMs": 600000 } }),
    )
    .await;
    let addr = r.serve().await;
    let client = reqwest::Client::new();
    let pending = browser_call(&client, addr).send();
    // Give the request time to reach the upstream, then abandon it.
    let _ = tokio::time::timeout(Duration::from_millis(500), pending).await;
    assert!(
        fake.stream_started.load(Ordering::SeqCst),
        "the upstream got the request"
    );
    drop(client);
    assert!(
        eventually(Duration::from_secs(3), || fake
            .disconnected
            .load(Ordering::SeqCst))
        .await,
        "upstream request must be dropped when the browser goes away before the stream starts"
    );
}

fn overloaded_event() -> String {
    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".into()
}

/// A provider that accepts the call (200) and then reports overload before any content is retried once: no
/// byte had gone to the browser yet. A second overload ends the call with a retryable error event.
#[tokio::test]
async fn in_stream_overload_before_the_first_event_is_retried_once() {
    let ok = read_fixture("anthropic-messages/recorded/basic_response.sse");
    let (fake, r, db) = relay_with_upstream(
        vec![Reply::sse(overloaded_event()), Reply::sse(ok)],
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("claude")).await;
    assert_eq!(status, StatusCode::OK);
    let events = events_of(&text);
    assert_eq!(
        events[0]["type"], "message-start",
        "the failed attempt left no trace: {events:?}"
    );
    assert_eq!(events.last().unwrap()["type"], "message-stop");
    assert_eq!(fake.requests().len(), 2);

    let fake = FakeUpstream::start(vec![Reply::sse(overloaded_event())]).await;
    let r = relay_for(&fake, &db, json!({})).await;
    let (status, text) = post_model(&r, first_turn_request("claude")).await;
    assert_eq!(status, StatusCode::OK);
    let events = events_of(&text);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["code"], "UPSTREAM_UNAVAILABLE");
    assert_eq!(events[0]["retryable"], true);
    assert_eq!(fake.requests().len(), 2, "one retry in all");

    // A 503 retry and an in-stream overload share the single retry.
    let fake = FakeUpstream::start(vec![Reply::status(503), Reply::sse(overloaded_event())]).await;
    let r = relay_for(&fake, &db, json!({})).await;
    let (_, text) = post_model(&r, first_turn_request("claude")).await;
    assert_eq!(events_of(&text)[0]["code"], "UPSTREAM_UNAVAILABLE");
    assert_eq!(fake.requests().len(), 2);
}

/// A 429 whose `Retry-After` is short is retried after that wait; a long one fails at once (the browser decides).
#[tokio::test]
async fn retry_after_is_honoured_only_when_short() {
    let (fake, r, db) = relay_with_upstream(
        vec![Reply::RetryAfter { seconds: 1 }, Reply::sse(text_stream())],
        json!({}),
    )
    .await;
    let began = std::time::Instant::now();
    let (status, _) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fake.requests().len(), 2);
    assert!(
        began.elapsed() >= Duration::from_millis(900),
        "waited for Retry-After"
    );

    let fake = FakeUpstream::start(vec![
        Reply::RetryAfter { seconds: 30 },
        Reply::sse(text_stream()),
    ])
    .await;
    let r = relay_for(&fake, &db, json!({})).await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error_code(&text), "UPSTREAM_RATE_LIMITED");
    assert_eq!(
        fake.requests().len(),
        1,
        "a 30 s Retry-After is not waited for"
    );
}

#[tokio::test]
async fn model_request_over_the_body_bound_is_413_before_any_upstream_call() {
    let (fake, r, _db) = relay_with_upstream(
        vec![Reply::sse(text_stream())],
        json!({ "limits": { "maxRequestBytes": 2048 } }),
    )
    .await;
    let mut request = first_turn_request("chat");
    request["messages"][0]["blocks"][0]["text"] = json!("x".repeat(4096));
    let (status, text) = post_model(&r, request).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_code(&text), "PAYLOAD_TOO_LARGE");
    assert_eq!(fake.requests().len(), 0);
}

/// Upstream logs correlate with the relay's: every attempt (the retry too) carries the browser request's
/// `x-request-id`, or the id the relay generated and answered with when the browser sent none.
#[tokio::test]
async fn upstream_requests_carry_the_request_id() {
    let (fake, r, db) = relay_with_upstream(
        vec![Reply::status(503), Reply::sse(text_stream())],
        json!({}),
    )
    .await;
    let mut request = req(
        "POST",
        "/api/model",
        "alice",
        Some(first_turn_request("chat")),
    );
    request
        .headers_mut()
        .insert("x-request-id", "browser-req-42".parse().unwrap());
    let response = r.send(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    let ids: Vec<_> = fake
        .requests()
        .iter()
        .map(|got| got.headers.get("x-request-id").cloned())
        .collect();
    assert_eq!(ids.len(), 2, "one retry");
    for id in ids {
        assert_eq!(
            id.as_ref().map(|v| v.to_str().unwrap()),
            Some("browser-req-42")
        );
    }

    let fake = FakeUpstream::start(vec![Reply::sse(text_stream())]).await;
    let r = relay_for(&fake, &db, json!({})).await;
    let response = r
        .send(req(
            "POST",
            "/api/model",
            "alice",
            Some(first_turn_request("chat")),
        ))
        .await;
    let generated = response.headers()["x-request-id"].clone();
    assert_eq!(generated.len(), 36, "a UUID");
    assert_eq!(
        fake.requests()[0].headers.get("x-request-id"),
        Some(&generated)
    );
}

/// Only connection errors, 429 and 5xx are retried: a 408 is the provider refusing this request, and a repeat
/// may repeat its side effects.
#[tokio::test]
async fn upstream_408_is_not_retried() {
    let (fake, r, _db) = relay_with_upstream(
        vec![Reply::status(408), Reply::sse(text_stream())],
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{text}");
    assert_eq!(error_code(&text), "UPSTREAM_REJECTED");
    assert_eq!(fake.requests().len(), 1, "408 is never retried");
}

/// A provider API never redirects: a 3xx is an upstream rejection and nothing is sent anywhere else. Followed,
/// a 307 from a misconfigured gateway or a hijacked DNS name would carry the key (`x-api-key` is not stripped
/// on a cross-host redirect as `Authorization` is) and the whole conversation to the redirect target.
#[tokio::test]
async fn upstream_redirects_are_not_followed_and_the_key_stays_home() {
    use std::sync::{Arc, Mutex};
    set_key();
    // The redirect target records every request it gets.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let target = axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
        let record = record.clone();
        async move {
            let key = headers
                .get("x-api-key")
                .map(|v| v.to_str().unwrap_or("").to_owned())
                .unwrap_or_default();
            record.lock().unwrap().push(key);
            "ok"
        }
    });
    let target_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target_addr = target_listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(target_listener, target).await.unwrap() });
    // The configured provider answers every call with a 307 to the target.
    let location = format!("http://{target_addr}/v1/messages");
    let redirector = axum::Router::new().fallback(move || {
        let location = location.clone();
        async move {
            (
                axum::http::StatusCode::TEMPORARY_REDIRECT,
                [(axum::http::header::LOCATION, location)],
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, redirector).await.unwrap() });

    let db = TestDb::new(Backend::Sqlite);
    let claude = json!({ "id": "claude", "provider": "anthropic-messages", "baseUrl": format!("http://{addr}/v1"),
                         "upstreamModel": "claude-x", "apiKey": { "env": "PB_TEST_UPSTREAM_KEY" } });
    let r = relay(base_config(&db, json!({ "models": [claude] }))).await;
    let (status, text) = post_model(&r, first_turn_request("claude")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{text}");
    assert_eq!(error_code(&text), "UPSTREAM_REJECTED");
    assert!(
        seen.lock().unwrap().is_empty(),
        "the redirect target got requests (keys: {:?})",
        seen.lock().unwrap()
    );
}

/// The browser's SSE text for a first turn whose upstream answers `body` in `chunk`-byte pieces (status 200).
async fn relay_upstream_bytes(body: Vec<u8>, chunk: usize) -> String {
    let (_fake, r, _db) = relay_with_upstream(
        vec![Reply::Sse {
            body,
            chunk,
            delay: Duration::ZERO,
        }],
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);
    text
}

#[tokio::test]
async fn a_stream_that_starts_with_a_byte_order_mark_streams_normally() {
    // The SSE parser the relay used before panicked here (it sliced into the three-byte BOM).
    let text = relay_upstream_bytes(format!("\u{feff}{}", text_stream()).into_bytes(), 2).await;
    let events = events_of(&text);
    assert_eq!(events[0]["type"], "message-start");
    assert_eq!(last_event(&text)["type"], "message-stop", "{events:?}");
}

#[tokio::test]
async fn an_upstream_stream_that_is_not_utf8_ends_with_a_protocol_error() {
    let mut body = text_stream().into_bytes();
    let cut = body.len() / 2;
    body.splice(cut..cut, [0xff, 0xfe]);
    let text = relay_upstream_bytes(body, 64).await;
    let events = events_of(&text);
    // What came before the bad bytes was relayed; then the stream ends with the error.
    assert_eq!(events[0]["type"], "message-start");
    assert!(events.iter().any(|e| e["type"] == "block-delta"));
    assert_eq!(last_event(&text)["code"], "UPSTREAM_PROTOCOL_ERROR");
}
