//! What the relay's log lines say about the request that wrote them, read from one process-wide subscriber.
//!
//! The response body streams outside the request's span (`src/request_span.rs`), so the lines a body writes
//! enter the span themselves; these tests pin that each names its request. They share one global subscriber
//! (the relay's field format, DEBUG and above) and find their own lines by a request id of their own: thread-local
//! subscribers (`set_default`) race with the other tests' threads over tracing's cached callsite interest and can
//! drop a span now and then.

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::*;
use serde_json::json;

#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every line the process logged so far.
fn logged() -> &'static Lines {
    static LINES: OnceLock<Lines> = OnceLock::new();
    LINES.get_or_init(|| {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .fmt_fields(patchbridge_relay::logging::human_fields())
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("the only subscriber of this test binary");
        lines
    })
}

/// Everything logged so far.
fn all_lines() -> String {
    String::from_utf8_lossy(&logged().0.lock().unwrap()).into_owned()
}

/// The first line holding every one of `needles`, waited for up to three seconds.
async fn line_with(needles: &[&str]) -> String {
    let find = || {
        all_lines()
            .lines()
            .find(|line| needles.iter().all(|n| line.contains(n)))
            .map(str::to_owned)
    };
    eventually(Duration::from_secs(3), || find().is_some()).await;
    find().unwrap_or_else(|| panic!("no line with {needles:?} in:\n{}", all_lines()))
}

/// The line that says a browser went away names its request: it is written when hyper drops the response body.
#[tokio::test]
async fn the_disconnect_log_line_names_the_request() {
    logged();
    let (_fake, r, _db) = relay_stalling_after_first_event(600000).await;
    let addr = r.serve().await;
    let client = reqwest::Client::new();
    let mut response = browser_call(&client, addr)
        .header("x-request-id", "req-disconnect-1")
        .send()
        .await
        .unwrap();
    let _ = response.chunk().await.unwrap().unwrap();
    drop(response);
    drop(client);
    line_with(&["browser disconnected", "req-disconnect-1"]).await;
    // The call's first line, from the handler, carries it too.
    line_with(&["model call", "req-disconnect-1"]).await;
}

/// The line a call that ends normally writes enters the span once: the request id appears once.
#[tokio::test]
async fn the_finished_log_line_names_the_request_once() {
    logged();
    let (_fake, r, _db) = relay_with_upstream(vec![Reply::sse(text_stream())], json!({})).await;
    let addr = r.serve().await;
    let response = browser_call(&reqwest::Client::new(), addr)
        .header("x-request-id", "req-finished-2")
        .send()
        .await
        .unwrap();
    assert!(response.text().await.unwrap().contains("message-stop"));
    let line = line_with(&["model call finished", "req-finished-2"]).await;
    assert_eq!(line.matches("req-finished-2").count(), 1, "{line}");
}

/// A failure in the middle of the stream (the upstream goes idle after its first event) is logged from the
/// response body, outside the handler: the line still names the request, once.
#[tokio::test]
async fn a_mid_stream_failure_log_line_names_the_request() {
    logged();
    let (_fake, r, _db) = relay_stalling_after_first_event(300).await;
    let addr = r.serve().await;
    let response = browser_call(&reqwest::Client::new(), addr)
        .header("x-request-id", "req-midstream-3")
        .send()
        .await
        .unwrap();
    let body = response.text().await.unwrap();
    assert!(body.contains("UPSTREAM_TIMEOUT"), "{body}");
    let line = line_with(&["request failed", "UPSTREAM_TIMEOUT", "req-midstream-3"]).await;
    assert_eq!(line.matches("req-midstream-3").count(), 1, "{line}");
}

/// In-stream provider error events are logged through a redaction that knows the configured API key, so a key
/// without an `sk-` prefix echoed by the provider (a gateway quoting the bad key) never reaches the log.
#[tokio::test]
async fn in_stream_error_logs_are_redacted_of_the_api_key() {
    const PLAIN_KEY: &str = "gwkey-0123456789-abcdefghij";
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::env::set_var("PB_TEST_PLAIN_KEY", PLAIN_KEY));
    logged();

    let in_stream = format!(
        "data: {{\"error\":{{\"message\":\"invalid api key {PLAIN_KEY}\",\"type\":\"invalid_request_error\"}}}}\n\n"
    );
    let http_error = format!(r#"{{"error":{{"message":"invalid api key {PLAIN_KEY}"}}}}"#);
    let fake = FakeUpstream::start(vec![
        Reply::sse(in_stream),
        Reply::Status {
            status: 401,
            body: http_error,
        },
    ])
    .await;
    let db = TestDb::new(Backend::Sqlite);
    let mut gateway = model("gateway", "openai-chat", &fake);
    gateway["apiKey"] = json!({ "env": "PB_TEST_PLAIN_KEY" });
    let r = relay(base_config(&db, json!({ "models": [gateway] }))).await;
    for expected in ["UPSTREAM_REJECTED", "UPSTREAM_REJECTED"] {
        let (_, text) = post_model(&r, first_turn_request("gateway")).await;
        assert!(text.contains(expected), "{text}");
        assert!(
            !text.contains(PLAIN_KEY),
            "never echoed to the browser: {text}"
        );
    }
    assert_eq!(fake.requests().len(), 2);
    let logged = all_lines();
    assert!(
        logged.contains("invalid api key"),
        "the upstream text is logged: {logged}"
    );
    assert!(
        !logged.contains(PLAIN_KEY),
        "the key is redacted in the log: {logged}"
    );
}
