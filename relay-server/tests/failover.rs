//! Failover between models (`models[].fallbacks`, `docs/protocol.md` §4), over real HTTP against fake upstreams:
//! a 503, a 429 with `Retry-After` and a refused connection move the call to the next model, which names itself
//! on `message-start`; nothing fails over once an event went out; a request with a ModelState fails over only
//! inside its model's `stateGroup`; a fallback must take the request's tools and pass its own spending limits;
//! and the configuration refuses unknown, self-referencing, cyclic and overlong fallback chains.

mod common;

use axum::http::StatusCode;
use common::*;
use patchbridge_relay::config::RelayConfig;
use serde_json::{json, Value};

const TEXT: &str = "openai-chat/recorded/83b060bae42e.sse";

fn chat(id: &str, base_url: &str, extra: Value) -> Value {
    let mut m = json!({ "id": id, "provider": "openai-chat", "baseUrl": base_url,
                        "upstreamModel": format!("{id}-upstream"), "apiKey": { "env": "PB_TEST_UPSTREAM_KEY" } });
    merge(&mut m, extra);
    m
}

async fn relay_with(models: Vec<Value>, db: &TestDb, extra: Value) -> Relay {
    set_key();
    let mut config = base_config(db, json!({ "models": models }));
    merge(&mut config, extra);
    relay(config).await
}

/// A base URL nothing listens on: the port was bound and released.
async fn refused_base_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/v1")
}

fn served_answer(text: &str) -> Vec<Value> {
    let events = events_of(text);
    assert_eq!(events[0]["type"], "message-start", "{text}");
    assert_eq!(events.last().unwrap()["type"], "message-stop", "{text}");
    events
}

#[tokio::test]
async fn a_503_fails_over_to_the_fallback_which_names_itself_on_message_start() {
    let down = FakeUpstream::start(vec![Reply::status(503)]).await;
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat("main", &down.base_url(), json!({ "fallbacks": ["backup"] })),
            chat("backup", &up.base_url(), json!({})),
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = served_answer(&text);
    assert_eq!(events[0]["model"], "backup");
    // A model with a next one is not retried: the next one is tried instead.
    assert_eq!(down.requests().len(), 1);
    assert_eq!(up.requests().len(), 1);
    assert_eq!(up.requests()[0].body["model"], "backup-upstream");
    let metrics = r.state.metrics().render();
    assert!(
        metrics.contains(
            r#"relay_model_failovers_total{from="main",to="backup",code="UPSTREAM_UNAVAILABLE"} 1"#
        ),
        "{metrics}"
    );
}

#[tokio::test]
async fn the_requested_model_that_serves_is_not_named_on_message_start() {
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat("main", &up.base_url(), json!({ "fallbacks": ["backup"] })),
            chat("backup", &up.base_url(), json!({})),
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(served_answer(&text)[0].get("model").is_none(), "{text}");
    assert_eq!(up.requests().len(), 1);
}

#[tokio::test]
async fn a_429_holds_its_host_for_the_retry_after_and_another_host_serves_at_once() {
    // `same-host` shares the rate-limited host, which asked for ten minutes: it is skipped, not called.
    let limited = FakeUpstream::start(vec![Reply::RetryAfter { seconds: 600 }]).await;
    let other = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat(
                "main",
                &limited.base_url(),
                json!({ "fallbacks": ["same-host", "other-host"] }),
            ),
            chat("same-host", &limited.base_url(), json!({})),
            chat("other-host", &other.base_url(), json!({})),
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(served_answer(&text)[0]["model"], "other-host");
    assert_eq!(
        limited.requests().len(),
        1,
        "the held host is not called again"
    );
    assert_eq!(other.requests().len(), 1);
}

#[tokio::test]
async fn a_retry_after_past_the_first_byte_time_with_no_other_host_fails_the_call() {
    let limited = FakeUpstream::start(vec![Reply::RetryAfter { seconds: 600 }]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat(
                "main",
                &limited.base_url(),
                json!({ "fallbacks": ["same-host"] }),
            ),
            chat("same-host", &limited.base_url(), json!({})),
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    assert_eq!(error_code(&text), "UPSTREAM_RATE_LIMITED");
    assert_eq!(limited.requests().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_fails_over() {
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat(
                "main",
                &refused_base_url().await,
                json!({ "fallbacks": ["backup"] }),
            ),
            chat("backup", &up.base_url(), json!({})),
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(served_answer(&text)[0]["model"], "backup");
    assert_eq!(up.requests().len(), 1);
}

#[tokio::test]
async fn a_failover_first_byte_timeout_moves_to_the_next_model() {
    let silent = FakeUpstream::start(vec![Reply::Hang]).await;
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat(
                "main",
                &silent.base_url(),
                json!({ "fallbacks": ["backup"] }),
            ),
            chat("backup", &up.base_url(), json!({})),
        ],
        &db,
        json!({ "limits": { "failoverFirstByteTimeoutMs": 200 } }),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(served_answer(&text)[0]["model"], "backup");
    assert!(
        eventually(std::time::Duration::from_secs(5), || silent
            .disconnected
            .load(std::sync::atomic::Ordering::SeqCst))
        .await,
        "the attempt that timed out was cancelled"
    );
}

/// The model that failed over had accepted the call (200, then nothing before the failover first-byte time):
/// it may have spent the input, so its attempt is charged the bounds beside the usage the fallback reports.
#[tokio::test]
async fn an_accepted_attempt_that_fails_over_is_charged_its_bounds_beside_the_fallbacks_usage() {
    let stalled = FakeUpstream::start(vec![Reply::Stall {
        prefix: String::new(),
    }])
    .await;
    let usage = concat!(
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7,\"total_tokens\":12}}\n\n",
        "data: [DONE]\n\n"
    );
    let up = FakeUpstream::start(vec![Reply::sse(usage)]).await;
    let db = TestDb::new(Backend::Sqlite);
    let spending = json!({ "windows": [ { "windowSeconds": 3600, "inputTokens": 1_000_000 } ] });
    let r = relay_with(
        vec![
            chat(
                "main",
                &stalled.base_url(),
                json!({ "fallbacks": ["backup"] }),
            ),
            chat("backup", &up.base_url(), json!({})),
        ],
        &db,
        json!({ "limits": { "failoverFirstByteTimeoutMs": 200 }, "spending": spending }),
    )
    .await;
    let mut body = first_turn_request("main");
    body["messages"][0]["blocks"][0]["text"] = json!("p".repeat(8_000));
    let (status, text) = post_model(&r, body).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(served_answer(&text)[0]["model"], "backup");
    let spending = r.state.spending();
    for _ in 0..500 {
        if spending.open_calls() == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let lines = spending
        .usage_report("alice", patchbridge_relay::spending::now_seconds())
        .await
        .unwrap();
    let input = lines
        .iter()
        .find(|l| l.kind == patchbridge_protocol::SpendingLimitKind::InputTokens)
        .unwrap()
        .used;
    assert!(
        input >= 8_005,
        "the stalled attempt's bound and the fallback's 5: {input}"
    );
}

#[tokio::test]
async fn nothing_fails_over_once_an_event_went_to_the_browser() {
    let broken = FakeUpstream::start(vec![Reply::sse(read_fixture(
        "openai-chat/error_midstream.sse",
    ))])
    .await;
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat(
                "main",
                &broken.base_url(),
                json!({ "fallbacks": ["backup"] }),
            ),
            chat("backup", &up.base_url(), json!({})),
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = events_of(&text);
    assert!(events[0].get("model").is_none());
    assert_eq!(events.last().unwrap()["type"], "error");
    assert_eq!(events.last().unwrap()["code"], "UPSTREAM_UNAVAILABLE");
    assert_eq!(up.requests().len(), 0);
}

fn with_chat_state(mut request: Value) -> Value {
    request["modelState"] = json!({ "format": "openai-chat/v1", "data": { "messages": {} } });
    request
}

#[tokio::test]
async fn a_request_with_a_model_state_does_not_fail_over_across_formats() {
    let down = FakeUpstream::start(vec![Reply::status(503)]).await;
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(
        "anthropic-messages/recorded/basic_response.sse",
    ))])
    .await;
    let db = TestDb::new(Backend::Sqlite);
    let mut claude = model("claude", "anthropic-messages", &up);
    claude["stateGroup"] = json!("shared");
    let r = relay_with(
        vec![
            chat(
                "main",
                &down.base_url(),
                json!({ "fallbacks": ["claude"], "stateGroup": "main" }),
            ),
            claude,
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, with_chat_state(first_turn_request("main"))).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{text}");
    assert_eq!(error_code(&text), "UPSTREAM_UNAVAILABLE");
    assert_eq!(
        up.requests().len(),
        0,
        "the state is never handed to another format"
    );
    // Without a ModelState the same call fails over.
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(served_answer(&text)[0]["model"], "claude");
}

#[tokio::test]
async fn a_request_with_a_model_state_fails_over_inside_its_state_group() {
    let down = FakeUpstream::start(vec![Reply::status(502)]).await;
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat(
                "main",
                &down.base_url(),
                json!({ "fallbacks": ["outsider", "twin"], "stateGroup": "gpt" }),
            ),
            chat("outsider", &up.base_url(), json!({})),
            chat("twin", &up.base_url(), json!({ "stateGroup": "gpt" })),
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, with_chat_state(first_turn_request("main"))).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(served_answer(&text)[0]["model"], "twin");
    assert_eq!(up.requests().len(), 1);
    assert_eq!(up.requests()[0].body["model"], "twin-upstream");
}

#[tokio::test]
async fn a_fallback_without_tools_is_not_tried_for_a_request_with_tools() {
    let down = FakeUpstream::start(vec![Reply::status(503)]).await;
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat("main", &down.base_url(), json!({ "fallbacks": ["plain"] })),
            chat(
                "plain",
                &up.base_url(),
                json!({ "capabilities": { "tools": false } }),
            ),
        ],
        &db,
        json!({}),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{text}");
    assert_eq!(error_code(&text), "UPSTREAM_UNAVAILABLE");
    assert_eq!(up.requests().len(), 0);
}

#[tokio::test]
async fn each_attempt_is_counted_by_the_spending_limits_of_the_model_serving_it() {
    let down = FakeUpstream::start(vec![Reply::status(503)]).await;
    let up = FakeUpstream::start(vec![Reply::sse(read_fixture(TEXT))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        vec![
            chat("main", &down.base_url(), json!({ "fallbacks": ["backup"] })),
            chat("backup", &up.base_url(), json!({})),
        ],
        &db,
        json!({ "spending": { "models": { "backup": {
            "windows": [ { "windowSeconds": 3600, "calls": 1 } ] } } } }),
    )
    .await;
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    // The backup's own limit is spent: the second call's failover is refused, and the call fails as the
    // requested model failed.
    let (status, text) = post_model(&r, first_turn_request("main")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{text}");
    assert_eq!(error_code(&text), "UPSTREAM_UNAVAILABLE");
    assert_eq!(up.requests().len(), 1);
    assert_eq!(down.requests().len(), 2);
}

fn config_error(models: Value) -> (String, String) {
    set_key();
    let config = json!({ "identity": { "mode": "development" }, "models": models });
    let error = RelayConfig::from_json(&config.to_string())
        .unwrap()
        .validate()
        .expect_err("the configuration is refused");
    (error.path, error.message)
}

fn m(id: &str, fallbacks: &[&str]) -> Value {
    chat(
        id,
        "http://127.0.0.1:9/v1",
        json!({ "fallbacks": fallbacks }),
    )
}

#[test]
fn unknown_self_referencing_and_repeated_fallbacks_are_refused_by_entry() {
    let (path, message) = config_error(json!([m("a", &["b", "nope"]), m("b", &[])]));
    assert_eq!(path, "models[0].fallbacks[1]");
    assert!(message.contains("`nope`"), "{message}");
    let (path, _) = config_error(json!([m("a", &[]), m("b", &["b"])]));
    assert_eq!(path, "models[1].fallbacks[0]");
    let (path, message) = config_error(json!([m("a", &["b", "b"]), m("b", &[])]));
    assert_eq!(path, "models[0].fallbacks[1]");
    assert!(message.contains("twice"), "{message}");
}

#[test]
fn cyclic_fallbacks_are_refused_naming_the_cycle() {
    let (path, message) = config_error(json!([m("a", &["b"]), m("b", &["c"]), m("c", &["a"])]));
    assert_eq!(path, "models[0].fallbacks");
    assert!(message.contains("a → b → c → a"), "{message}");
}

#[test]
fn a_chain_longer_than_four_models_is_refused() {
    let (path, message) = config_error(json!([
        m("a", &["b", "c"]),
        m("b", &["d"]),
        m("c", &["e"]),
        m("d", &[]),
        m("e", &[])
    ]));
    assert_eq!(path, "models[0].fallbacks");
    assert!(message.contains("5 models"), "{message}");
}

#[test]
fn a_state_group_spanning_providers_is_refused() {
    let mut claude = json!({ "id": "claude", "provider": "anthropic-messages", "baseUrl": "http://127.0.0.1:9/v1",
                             "upstreamModel": "c", "apiKey": { "env": "PB_TEST_UPSTREAM_KEY" }, "stateGroup": "g" });
    let (path, message) = config_error(json!([
        chat("a", "http://127.0.0.1:9/v1", json!({ "stateGroup": "g" })),
        claude.take()
    ]));
    assert_eq!(path, "models[1].stateGroup");
    assert!(message.contains("one provider"), "{message}");
}
