//! Per-user spending limits through the relay's HTTP path, on SQLite (one relay) and PostgreSQL (two relays on
//! one schema, as replicas): calls and tokens over fixed and sliding windows, concurrent calls, a model's own
//! limits, the 429 `SPENDING_LIMIT_REACHED` answer (code, `Retry-After`, the limit) given before any upstream
//! call, usage counted from `message-stop` (or the output bound when a stream ends without it), a running call
//! never cut, racing calls admitted exactly up to the limit, the refusal metrics and the `usage` subcommand.

mod common;

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use common::*;
use patchbridge_protocol::SpendingLimitKind;
use patchbridge_relay::spending::{now_seconds, UsageLine};
use serde_json::{json, Value};
use tokio::sync::Barrier;

/// An OpenAI Chat Completions stream saying "Hi", with the given usage chunk (none when `None`).
fn chat_stream(usage: Option<(u64, u64)>) -> String {
    let chunk = |body: Value| format!("data: {body}\n\n");
    let mut out = chunk(json!({ "id": "c1", "object": "chat.completion.chunk",
        "choices": [ { "index": 0, "delta": { "role": "assistant", "content": "Hi" }, "finish_reason": null } ] }));
    out += &chunk(json!({ "id": "c1", "object": "chat.completion.chunk",
        "choices": [ { "index": 0, "delta": {}, "finish_reason": "stop" } ] }));
    if let Some((input, output)) = usage {
        out += &chunk(
            json!({ "id": "c1", "object": "chat.completion.chunk", "choices": [],
            "usage": { "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output } }),
        );
    }
    out + "data: [DONE]\n\n"
}

/// A relay on `db` with models `chat` and `big` (OpenAI Chat at `fake`), `extra` merged in.
async fn spending_relay(fake: &FakeUpstream, db: &TestDb, spending: Value, extra: Value) -> Relay {
    set_key();
    let mut config = base_config(
        db,
        json!({ "models": [ model("chat", "openai-chat", fake), model("big", "openai-chat", fake) ],
                "spending": spending }),
    );
    merge(&mut config, extra);
    relay(config).await
}

fn request(model: &str) -> Value {
    json!({ "model": model, "modelState": null,
            "messages": [ { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": "hello" } ] } ] })
}

/// One model call of `user`, read to its end: status, `Retry-After`, body.
async fn call(r: &Relay, user: &str, model: &str) -> (StatusCode, Option<u64>, String) {
    let response = r
        .send(req("POST", "/api/model", user, Some(request(model))))
        .await;
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse().unwrap());
    (status, retry_after, body_text(response).await)
}

/// Waits until no call of the relay is still open (every ended call has been settled).
async fn settled(r: &Relay) {
    for _ in 0..500 {
        if r.state.spending().open_calls() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the calls were never settled");
}

/// `user`'s usage of every limit, as the relay (configured with `spending`) counts it.
async fn report(r: &Relay, spending: Value, user: &str) -> Vec<UsageLine> {
    let policy = spending_config(spending);
    let lines = r
        .state
        .spending()
        .usage_report(user, now_seconds())
        .await
        .unwrap();
    assert_eq!(
        policy.usage(&Default::default(), 0).len(),
        lines.len(),
        "the relay runs the limits the test configured"
    );
    lines
}

fn spending_config(spending: Value) -> patchbridge_relay::spending::Policy {
    let config: patchbridge_relay::spending::SpendingConfig =
        serde_json::from_value(spending).unwrap();
    config
        .validate(&[("chat".into(), None), ("big".into(), None)], 60)
        .unwrap()
}

/// `used` of the report line for (`model`, `kind`, `window`).
fn used(
    lines: &[UsageLine],
    model: Option<&str>,
    kind: SpendingLimitKind,
    window: Option<u64>,
) -> i64 {
    lines
        .iter()
        .find(|l| l.model.as_deref() == model && l.kind == kind && l.window_seconds == window)
        .unwrap_or_else(|| panic!("no line for {model:?} {kind} {window:?} in {lines:?}"))
        .used
}

fn error(body: &str) -> Value {
    serde_json::from_str::<Value>(body).unwrap()["error"].clone()
}

#[tokio::test]
async fn calls_past_a_fixed_window_are_refused_with_429_the_code_retry_after_and_the_limit_before_any_upstream_call(
) {
    let fake = FakeUpstream::start(vec![Reply::sse(chat_stream(Some((10, 2))))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let spending = json!({ "windows": [ { "windowSeconds": 3600, "calls": 2 } ] });
    let r = spending_relay(&fake, &db, spending, json!({})).await;
    for _ in 0..2 {
        let (status, _, body) = call(&r, "alice", "chat").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, retry_after, body) = call(&r, "alice", "chat").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let error = error(&body);
    assert_eq!(error["code"], "SPENDING_LIMIT_REACHED");
    assert_eq!(error["retryable"], true);
    assert_eq!(
        error["limit"],
        json!({ "kind": "calls", "max": 2, "windowSeconds": 3600, "sliding": false })
    );
    // A fixed hour ends at the next multiple of 3600 s since the epoch.
    let seconds = error["retryAfterSeconds"].as_u64().unwrap();
    let left = 3600 - (now_seconds() as u64 % 3600);
    assert!(
        seconds >= left.saturating_sub(5) && seconds <= 3600,
        "{seconds} vs {left}"
    );
    assert_eq!(retry_after, Some(seconds));
    assert_eq!(
        fake.requests().len(),
        2,
        "the refused call never went upstream"
    );
    // Another user has their own counters.
    assert_eq!(call(&r, "bob", "chat").await.0, StatusCode::OK);
}

#[tokio::test]
async fn input_tokens_reported_by_the_provider_are_counted_over_a_sliding_window_and_refuse_the_next_call(
) {
    let fake = FakeUpstream::start(vec![Reply::sse(chat_stream(Some((600, 3))))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let spending =
        json!({ "windows": [ { "windowSeconds": 600, "sliding": true, "inputTokens": 1000 } ] });
    let r = spending_relay(&fake, &db, spending.clone(), json!({})).await;
    assert_eq!(call(&r, "alice", "chat").await.0, StatusCode::OK);
    settled(&r).await;
    assert_eq!(
        used(
            &report(&r, spending.clone(), "alice").await,
            None,
            SpendingLimitKind::InputTokens,
            Some(600)
        ),
        600
    );
    assert_eq!(call(&r, "alice", "chat").await.0, StatusCode::OK);
    settled(&r).await;
    let (status, retry_after, body) = call(&r, "alice", "chat").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let error = error(&body);
    assert_eq!(
        error["limit"],
        json!({ "kind": "inputTokens", "max": 1000, "windowSeconds": 600, "sliding": true })
    );
    // Both calls were counted in the last 10 s slice: the window admits again once it has slid past them.
    let seconds = retry_after.unwrap();
    assert!((590..=600).contains(&seconds), "{seconds}");
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn output_tokens_past_the_limit_never_cut_the_running_call_and_the_next_call_is_refused() {
    let fake = FakeUpstream::start(vec![Reply::sse(chat_stream(Some((5, 900))))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let spending = json!({ "windows": [ { "windowSeconds": 86400, "outputTokens": 100 } ] });
    let r = spending_relay(&fake, &db, spending, json!({})).await;
    let (status, _, body) = call(&r, "alice", "chat").await;
    assert_eq!(status, StatusCode::OK);
    let events = events_of(&body);
    let stop = events.last().unwrap();
    assert_eq!(
        stop["type"], "message-stop",
        "the call ran to its end: {events:?}"
    );
    assert_eq!(stop["usage"]["outputTokens"], 900);
    settled(&r).await;
    let (status, _, body) = call(&r, "alice", "chat").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error(&body)["limit"]["kind"], "outputTokens");
}

#[tokio::test]
async fn a_stream_that_ends_without_usage_counts_the_models_output_bound_or_the_configured_default()
{
    let fake = FakeUpstream::start(vec![
        // A clean end without a usage chunk, then a stream cut before its end.
        Reply::sse(chat_stream(None)),
        Reply::sse(read_fixture("openai-chat/no_finish_reason.sse")),
    ])
    .await;
    let db = TestDb::new(Backend::Sqlite);
    let spending = json!({ "windows": [ { "windowSeconds": 86400, "outputTokens": 100000 } ],
                           "defaultOutputTokens": 777 });
    let mut config_models = json!({ "models": [ model("chat", "openai-chat", &fake), model("big", "openai-chat", &fake) ] });
    config_models["models"][0]["maxOutputTokens"] = json!(300);
    let r = spending_relay(&fake, &db, spending.clone(), config_models).await;
    assert_eq!(call(&r, "alice", "chat").await.0, StatusCode::OK);
    settled(&r).await;
    let (status, _, body) = call(&r, "alice", "chat").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(events_of(&body).last().unwrap()["type"], "error", "{body}");
    settled(&r).await;
    let lines = report(&r, spending.clone(), "alice").await;
    assert_eq!(
        used(&lines, None, SpendingLimitKind::OutputTokens, Some(86400)),
        600
    );
    // A model without maxOutputTokens is charged spending.defaultOutputTokens.
    assert_eq!(call(&r, "bob", "big").await.0, StatusCode::OK);
    settled(&r).await;
    let lines = report(&r, spending, "bob").await;
    assert_eq!(
        used(&lines, None, SpendingLimitKind::OutputTokens, Some(86400)),
        777
    );
}

#[tokio::test]
async fn a_call_the_provider_refuses_counts_as_a_call_but_spends_no_tokens() {
    let fake = FakeUpstream::start(vec![Reply::status(400)]).await;
    let db = TestDb::new(Backend::Sqlite);
    let spending =
        json!({ "windows": [ { "windowSeconds": 60, "calls": 10, "outputTokens": 10 } ] });
    let r = spending_relay(&fake, &db, spending.clone(), json!({})).await;
    assert_eq!(call(&r, "alice", "chat").await.0, StatusCode::BAD_GATEWAY);
    settled(&r).await;
    let lines = report(&r, spending, "alice").await;
    assert_eq!(used(&lines, None, SpendingLimitKind::Calls, Some(60)), 1);
    assert_eq!(
        used(&lines, None, SpendingLimitKind::OutputTokens, Some(60)),
        0
    );
}

#[tokio::test]
async fn a_models_own_limit_applies_on_top_of_the_limits_for_all_models_and_names_the_model() {
    let fake = FakeUpstream::start(vec![Reply::sse(chat_stream(Some((1, 1))))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let spending = json!({ "windows": [ { "windowSeconds": 3600, "calls": 3 } ],
                           "models": { "big": { "windows": [ { "windowSeconds": 3600, "calls": 1 } ] } } });
    let r = spending_relay(&fake, &db, spending, json!({})).await;
    assert_eq!(call(&r, "alice", "big").await.0, StatusCode::OK);
    let (status, _, body) = call(&r, "alice", "big").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error(&body)["limit"]["model"], "big");
    assert_eq!(call(&r, "alice", "chat").await.0, StatusCode::OK);
    assert_eq!(call(&r, "alice", "chat").await.0, StatusCode::OK);
    // `big`'s call counts for all models too: the fourth call of any model is refused by the shared limit.
    let (status, _, body) = call(&r, "alice", "chat").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error(&body)["limit"].get("model"), None);
}

#[tokio::test]
async fn calls_past_the_concurrency_limit_are_refused_while_the_others_run_and_admitted_once_one_ends(
) {
    let first = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n";
    let fake = FakeUpstream::start(vec![Reply::Stall {
        prefix: first.into(),
    }])
    .await;
    let db = TestDb::new(Backend::Sqlite);
    let spending =
        json!({ "windows": [ { "windowSeconds": 60, "calls": 100 } ], "maxConcurrentCalls": 2 });
    let r = spending_relay(&fake, &db, spending.clone(), json!({})).await;
    let open = |user: &'static str| {
        let r = r.clone();
        async move {
            r.send(req("POST", "/api/model", user, Some(request("chat"))))
                .await
        }
    };
    let one = open("alice").await;
    let two = open("alice").await;
    assert_eq!(
        (one.status(), two.status()),
        (StatusCode::OK, StatusCode::OK)
    );
    let (status, retry_after, body) = call(&r, "alice", "chat").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(
        error(&body)["limit"],
        json!({ "kind": "concurrentCalls", "max": 2 })
    );
    assert!(retry_after.unwrap() >= 1);
    let lines = report(&r, spending, "alice").await;
    assert_eq!(
        used(&lines, None, SpendingLimitKind::ConcurrentCalls, None),
        2
    );
    // The browser goes away from one call: its running mark ends with it.
    drop(one);
    let mut admitted = None;
    for _ in 0..200 {
        let response = open("alice").await;
        if response.status() == StatusCode::OK {
            admitted = Some(response);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(admitted.is_some(), "a call was admitted once one had ended");
    drop(two);
}

#[tokio::test]
async fn refusals_are_counted_in_the_metrics_by_limit_without_user_ids() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(
        &db,
        json!({ "spending": { "windows": [ { "windowSeconds": 120, "sliding": true, "calls": 1 } ] } }),
    ))
    .await;
    assert_eq!(
        call(&r, "secret-user-77", "scripted").await.0,
        StatusCode::OK
    );
    assert_eq!(
        call(&r, "secret-user-77", "scripted").await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    let response = r.send(req("GET", "/metrics", "", None)).await;
    let text = body_text(response).await;
    assert!(
        text.contains(
            r#"relay_spending_refusals_total{limit="calls",window="120s sliding",model=""} 1"#
        ),
        "{text}"
    );
    assert!(!text.contains("secret-user-77"));
}

/// `racers` calls of one user at once, spread over `relays`; returns how many were admitted and refused.
async fn race(relays: &[Relay], racers: usize) -> (usize, usize) {
    let barrier = Arc::new(Barrier::new(racers));
    let mut tasks = Vec::new();
    for i in 0..racers {
        let r = relays[i % relays.len()].clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            call(&r, "racer", "scripted").await.0
        }));
    }
    let (mut ok, mut refused) = (0, 0);
    for task in tasks {
        match task.await.unwrap() {
            StatusCode::OK => ok += 1,
            StatusCode::TOO_MANY_REQUESTS => refused += 1,
            other => panic!("unexpected {other}"),
        }
    }
    (ok, refused)
}

fn race_config(db: &TestDb) -> Value {
    base_config(
        db,
        json!({ "spending": { "windows": [ { "windowSeconds": 3600, "calls": 5 } ], "maxConcurrentCalls": 1000 },
                "database": { "maxConnections": 8 } }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_relays_on_one_postgres_schema_admit_exactly_the_allowed_calls_of_a_user_under_racing_calls(
) {
    let db = TestDb::new(Backend::Postgres);
    let config = race_config(&db);
    let relays = [relay(config.clone()).await, relay(config).await];
    assert_eq!(race(&relays, 24).await, (5, 19));
    // Both replicas see the same counters afterwards.
    for r in &relays {
        assert_eq!(
            call(r, "racer", "scripted").await.0,
            StatusCode::TOO_MANY_REQUESTS
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_calls_on_sqlite_are_admitted_exactly_up_to_the_limit() {
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(race_config(&db)).await;
    assert_eq!(race(&[r], 24).await, (5, 19));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_concurrency_limit_holds_across_two_relays_on_one_postgres_schema() {
    let first = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n";
    let fake = FakeUpstream::start(vec![Reply::Stall {
        prefix: first.into(),
    }])
    .await;
    let db = TestDb::new(Backend::Postgres);
    let spending =
        json!({ "windows": [ { "windowSeconds": 60, "calls": 100 } ], "maxConcurrentCalls": 3 });
    let a = spending_relay(&fake, &db, spending.clone(), json!({})).await;
    let b = spending_relay(&fake, &db, spending, json!({})).await;
    let barrier = Arc::new(Barrier::new(8));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let r = if i % 2 == 0 { a.clone() } else { b.clone() };
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            r.send(req("POST", "/api/model", "carol", Some(request("chat"))))
                .await
        }));
    }
    let mut open = Vec::new();
    let mut refused = 0;
    for task in tasks {
        let response = task.await.unwrap();
        match response.status() {
            StatusCode::OK => open.push(response),
            StatusCode::TOO_MANY_REQUESTS => refused += 1,
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!((open.len(), refused), (3, 5));
}

#[tokio::test]
async fn the_usage_subcommand_prints_a_users_usage_of_every_limit_from_the_relays_database() {
    let db = TestDb::new(Backend::Sqlite);
    let spending =
        json!({ "windows": [ { "windowSeconds": 3600, "calls": 7 } ], "maxConcurrentCalls": 3 });
    let config = base_config(&db, json!({ "spending": spending }));
    let r = relay(config.clone()).await;
    for _ in 0..2 {
        assert_eq!(call(&r, "dana", "scripted").await.0, StatusCode::OK);
    }
    settled(&r).await;
    // The relay counts in memory and writes behind; the subcommand reads what was written.
    r.state.spending().flush().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("relay.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_patchbridge-relay"))
        .args(["usage", "--user", "dana", "--config"])
        .arg(&path)
        .env_remove("PATCHBRIDGE_CONFIG")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in {text}"))
            .split_whitespace()
            .rev()
            .take(2)
            .collect::<Vec<_>>()
    };
    assert_eq!(line("3600 s fixed"), ["7", "2"]);
    assert_eq!(line("running now"), ["3", "0"]);
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_patchbridge-relay"))
        .args(["usage", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn an_unknown_key_in_the_spending_section_is_refused_with_its_path() {
    let e = patchbridge_relay::config::RelayConfig::from_json(
        r#"{ "spending": { "windows": [ { "windowSeconds": 60, "call": 3 } ] } }"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "spending.windows[0].call");
}

/// The issue's case: an 8,000-character prompt against 6,000 input tokens a day. A provider reporting 2,000
/// input tokens per call refuses the 4th call of streams read to the end; streams the browser closes before
/// the usage arrives are charged the request's input bound (8,000 bytes and more) and refused sooner, never
/// admitted without bound.
#[tokio::test]
async fn streams_closed_before_their_usage_are_charged_the_input_bound_and_refused_like_streams_read_to_the_end(
) {
    let prompt = "p".repeat(8_000);
    let body = json!({ "model": "chat", "modelState": null,
        "messages": [ { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": prompt } ] } ] });
    let spending = json!({ "windows": [ { "windowSeconds": 86_400, "inputTokens": 6_000 } ] });
    let admitted = |statuses: &[StatusCode]| {
        statuses
            .iter()
            .take_while(|s| **s == StatusCode::OK)
            .count()
    };

    let fake = FakeUpstream::start(vec![Reply::sse(chat_stream(Some((2_000, 10))))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = spending_relay(&fake, &db, spending.clone(), json!({})).await;
    let mut read_to_end = Vec::new();
    for _ in 0..8 {
        let response = r
            .send(req("POST", "/api/model", "erin", Some(body.clone())))
            .await;
        read_to_end.push(response.status());
        body_text(response).await;
        settled(&r).await;
    }
    assert_eq!(admitted(&read_to_end), 3, "{read_to_end:?}");
    assert!(read_to_end[3..]
        .iter()
        .all(|s| *s == StatusCode::TOO_MANY_REQUESTS));

    // The same calls, each closed after its first event (the usage never comes).
    let first = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n";
    let stalling = FakeUpstream::start(vec![Reply::Stall {
        prefix: first.into(),
    }])
    .await;
    let db = TestDb::new(Backend::Sqlite);
    let r = spending_relay(&stalling, &db, spending.clone(), json!({})).await;
    let mut closed_early = Vec::new();
    for _ in 0..8 {
        let response = r
            .send(req("POST", "/api/model", "erin", Some(body.clone())))
            .await;
        closed_early.push(response.status());
        if response.status() == StatusCode::OK {
            let mut body = response.into_body();
            // The first event arrived: the provider accepted the call. Then the browser goes away.
            let frame = http_body_util::BodyExt::frame(&mut body).await;
            assert!(frame.is_some());
            drop(body);
        }
        settled(&r).await;
    }
    assert!(
        admitted(&closed_early) <= admitted(&read_to_end),
        "closing streams early spends more: {closed_early:?} vs {read_to_end:?}"
    );
    assert!(closed_early[admitted(&closed_early)..]
        .iter()
        .all(|s| *s == StatusCode::TOO_MANY_REQUESTS));
    let lines = report(&r, spending, "erin").await;
    let charged = used(&lines, None, SpendingLimitKind::InputTokens, Some(86_400));
    assert!(
        charged >= 8_000 * admitted(&closed_early) as i64,
        "each closed call is charged at least its prompt's bytes: {charged}"
    );
}

/// A request whose prompt is 8,000 bytes: its input bound is at least 8,000 tokens.
fn long_request(model: &str) -> Value {
    json!({ "model": model, "modelState": null,
        "messages": [ { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": "p".repeat(8_000) } ] } ] })
}

/// The relay answers the browser only once the first event exists, so a browser that gives up before it drops
/// the call while the provider holds the request: headers never sent (`Hang`), or a 200 whose body has not
/// started (`Stall`). The provider may be running it either way; the call is charged the bounds.
#[tokio::test]
async fn a_browser_that_hangs_up_while_the_provider_holds_the_request_is_charged_the_bounds() {
    let spending = json!({ "windows": [ { "windowSeconds": 86_400, "inputTokens": 1_000_000, "outputTokens": 1_000_000 } ] });
    for (user, reply) in [
        ("gus", Reply::Hang),
        (
            "hal",
            Reply::Stall {
                prefix: String::new(),
            },
        ),
    ] {
        let fake = FakeUpstream::start(vec![reply]).await;
        let db = TestDb::new(Backend::Sqlite);
        let r = spending_relay(&fake, &db, spending.clone(), json!({})).await;
        let pending = r.send(req("POST", "/api/model", user, Some(long_request("chat"))));
        assert!(
            tokio::time::timeout(Duration::from_millis(500), pending)
                .await
                .is_err(),
            "the relay answered before the first event"
        );
        assert_eq!(fake.requests().len(), 1, "the provider got the call");
        settled(&r).await;
        let lines = report(&r, spending.clone(), user).await;
        let input = used(&lines, None, SpendingLimitKind::InputTokens, Some(86_400));
        assert!(input >= 8_000, "{user}: input charged {input}");
        assert_eq!(
            used(&lines, None, SpendingLimitKind::OutputTokens, Some(86_400)),
            4096,
            "{user}: the default output bound"
        );
    }
}

/// A provider that accepts the call (200) and ends the stream before any event: it may have spent the input.
#[tokio::test]
async fn a_call_the_provider_accepts_and_cuts_before_any_event_is_charged_the_bounds() {
    let fake = FakeUpstream::start(vec![Reply::sse("")]).await;
    let db = TestDb::new(Backend::Sqlite);
    let spending = json!({ "windows": [ { "windowSeconds": 3600, "inputTokens": 1_000_000 } ] });
    let r = spending_relay(&fake, &db, spending.clone(), json!({})).await;
    let response = r
        .send(req("POST", "/api/model", "ida", Some(long_request("chat"))))
        .await;
    let text = body_text(response).await;
    assert!(
        text.contains("\"error\""),
        "the cut is the stream's error: {text}"
    );
    settled(&r).await;
    let lines = report(&r, spending, "ida").await;
    let input = used(&lines, None, SpendingLimitKind::InputTokens, Some(3600));
    assert!(input >= 8_000, "input charged {input}");
}

#[tokio::test]
async fn counts_written_behind_are_loaded_by_the_next_relay_on_the_same_database() {
    let fake = FakeUpstream::start(vec![Reply::sse(chat_stream(Some((5, 7))))]).await;
    let db = TestDb::new(Backend::Sqlite);
    let spending = json!({ "windows": [ { "windowSeconds": 3600, "calls": 3 } ] });
    let first = spending_relay(&fake, &db, spending.clone(), json!({})).await;
    for _ in 0..2 {
        assert_eq!(call(&first, "fay", "chat").await.0, StatusCode::OK);
    }
    settled(&first).await;
    assert_eq!(
        first.state.spending().close(Duration::from_secs(5)).await,
        0
    );
    drop(first);
    let second = spending_relay(&fake, &db, spending.clone(), json!({})).await;
    assert_eq!(call(&second, "fay", "chat").await.0, StatusCode::OK);
    let (status, _, body) = call(&second, "fay", "chat").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let lines = report(&second, spending, "fay").await;
    assert_eq!(used(&lines, None, SpendingLimitKind::Calls, Some(3600)), 3);
}
