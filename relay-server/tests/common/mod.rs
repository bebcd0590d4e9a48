//! Test helpers: relays built from config JSON (oneshot or served on 127.0.0.1), a fake upstream provider
//! server that records what it receives and replays scripted replies, SSE parsing, and test databases
//! (a SQLite file in a temp dir, or a unique PostgreSQL schema per test).
#![allow(dead_code)]

pub mod identity;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http_body_util::BodyExt;
use patchbridge_relay::config::RelayConfig;
use patchbridge_relay::store::Store;
use patchbridge_relay::{router, AppState};
use serde_json::{json, Value};
use tower::ServiceExt;

pub const PG_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
// A loopback name: the development identity most tests use refuses other hosts (DNS rebinding).
pub const ORIGIN: &str = "http://localhost";
pub const HOST: &str = "localhost";

// ---------------------------------------------------------------------------------------------------------
// Databases

/// Which backend a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database for one test: `database` config section plus what must live as long as it.
pub struct TestDb {
    pub backend: Backend,
    pub config: Value,
    _dir: Option<tempfile::TempDir>,
    pub schema: Option<String>,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

pub fn unique(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    format!(
        "{prefix}_{}_{}_{}",
        std::process::id(),
        n,
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    )
}

impl TestDb {
    pub fn new(backend: Backend) -> TestDb {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("relay.sqlite3").display());
                TestDb {
                    backend,
                    config: json!({ "url": url }),
                    _dir: Some(dir),
                    schema: None,
                }
            }
            Backend::Postgres => {
                let schema = unique("pbtest");
                TestDb {
                    backend,
                    config: json!({ "url": PG_URL, "schema": schema }),
                    _dir: None,
                    schema: Some(schema),
                }
            }
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(schema) = &self.schema {
            // Best effort: psql may be absent; a leftover schema has a unique name and harms nothing.
            let _ = std::process::Command::new("psql")
                .args([
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                    "-d",
                    "test",
                    "-q",
                    "-c",
                ])
                .arg(format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Relays

/// A relay configured from JSON (merged over defaults suitable for tests).
#[derive(Clone)]
pub struct Relay {
    pub state: AppState,
    pub app: Router,
}

/// Development identity, test origin allow-listed nowhere (same-origin via Host), the given models.
pub fn base_config(db: &TestDb, extra: Value) -> Value {
    let mut config = json!({
        "server": { "bind": "127.0.0.1:0", "basePath": "/api" },
        "identity": { "mode": "development" },
        "database": db.config.clone(),
        "demo": true
    });
    merge(&mut config, extra);
    config
}

pub fn merge(target: &mut Value, extra: Value) {
    match (target, extra) {
        (Value::Object(t), Value::Object(e)) => {
            for (k, v) in e {
                match t.get_mut(&k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        t.insert(k, v);
                    }
                }
            }
        }
        (t, e) => *t = e,
    }
}

pub async fn relay(config: Value) -> Relay {
    let config = RelayConfig::from_json(&config.to_string()).expect("test config parses");
    let validated = config.validate().expect("test config validates");
    let store = Store::connect(&validated.database)
        .await
        .expect("store opens");
    let state = AppState::new(validated, store).unwrap();
    let app = router(state.clone());
    Relay { state, app }
}

impl Relay {
    pub async fn send(&self, request: Request<Body>) -> Response {
        self.app.clone().oneshot(request).await.unwrap()
    }

    /// A JSON request as the browser of `user` sends it (same origin, JSON content type).
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        user: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let response = self.send(req(method, path, user, body)).await;
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        (status, value)
    }

    /// Serves the router on 127.0.0.1:0 (for tests that need a real socket).
    pub async fn serve(&self) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = self.app.clone();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        addr
    }
}

pub fn req(method: &str, path: &str, user: &str, body: Option<Value>) -> Request<Body> {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("host", HOST);
    if !user.is_empty() {
        builder = builder.header("x-patchbridge-user", user);
    }
    if method != "GET" {
        builder = builder.header("origin", ORIGIN);
    }
    match body {
        Some(b) => builder
            .header("content-type", "application/json")
            .body(Body::from(b.to_string()))
            .unwrap(),
        None => builder.body(Body::empty()).unwrap(),
    }
}

pub async fn body_text(response: Response) -> String {
    String::from_utf8(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap()
}

/// Parses an SSE body into `(event name, data JSON)` pairs.
pub fn parse_sse(text: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut event = String::new();
        let mut data = Vec::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                event = v.trim_start().to_owned();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
            }
        }
        if !data.is_empty() {
            out.push((
                event,
                serde_json::from_str(&data.join("\n")).expect("event data is JSON"),
            ));
        }
    }
    out
}

/// The events of an SSE body, each checked to carry `event:` equal to its JSON `type`.
pub fn events_of(text: &str) -> Vec<Value> {
    parse_sse(text)
        .into_iter()
        .map(|(name, data)| {
            assert_eq!(
                Some(name.as_str()),
                data["type"].as_str(),
                "SSE event name equals JSON type"
            );
            data
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------------------
// Fake upstream provider

/// One scripted reply of the fake upstream.
#[derive(Clone, Debug)]
pub enum Reply {
    /// 200 `text/event-stream`, body sent in chunks of `chunk` bytes with `delay` between chunks.
    Sse {
        /// Bytes, not text: a test may send a body that is not UTF-8.
        body: Vec<u8>,
        chunk: usize,
        delay: Duration,
    },
    /// A non-2xx JSON error.
    Status { status: u16, body: String },
    /// 429 with a `Retry-After` header (seconds).
    RetryAfter { seconds: u64 },
    /// Headers never come.
    Hang,
    /// 200 with `prefix` sent, then silence (until the client goes away).
    Stall { prefix: String },
}

impl Reply {
    /// A non-2xx answer with an empty JSON object as its body.
    pub fn status(status: u16) -> Reply {
        Reply::Status {
            status,
            body: "{}".into(),
        }
    }

    pub fn sse(body: impl Into<String>) -> Reply {
        Reply::Sse {
            body: body.into().into_bytes(),
            chunk: usize::MAX,
            delay: Duration::ZERO,
        }
    }
}

/// What the fake upstream received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: axum::http::HeaderMap,
    pub body: Value,
}

#[derive(Clone)]
pub struct FakeUpstream {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Recorded>>>,
    replies: Arc<Mutex<Vec<Reply>>>,
    /// Set when a streaming reply's body was dropped before it finished (the client disconnected).
    pub disconnected: Arc<AtomicBool>,
    pub stream_started: Arc<AtomicBool>,
}

struct DisconnectFlag {
    flag: Arc<AtomicBool>,
    finished: bool,
}

impl Drop for DisconnectFlag {
    fn drop(&mut self) {
        if !self.finished {
            self.flag.store(true, Ordering::SeqCst);
        }
    }
}

impl FakeUpstream {
    /// Starts a server that answers the scripted replies in order (the last one repeats).
    pub async fn start(replies: Vec<Reply>) -> FakeUpstream {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let fake = FakeUpstream {
            addr,
            received: Arc::default(),
            replies: Arc::new(Mutex::new(replies)),
            disconnected: Arc::default(),
            stream_started: Arc::default(),
        };
        let handler_state = fake.clone();
        let app = Router::new().fallback(move |request: axum::extract::Request| {
            let fake = handler_state.clone();
            async move { fake.handle(request).await }
        });
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        fake
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.received.lock().unwrap().clone()
    }

    async fn handle(&self, request: axum::extract::Request) -> Response {
        let (parts, body) = request.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        self.received.lock().unwrap().push(Recorded {
            path: parts.uri.path().to_owned(),
            headers: parts.headers,
            body,
        });
        let reply = {
            let mut replies = self.replies.lock().unwrap();
            if replies.len() > 1 {
                replies.remove(0)
            } else {
                replies[0].clone()
            }
        };
        match reply {
            Reply::Status { status, body } => (
                StatusCode::from_u16(status).unwrap(),
                [("content-type", "application/json")],
                body,
            )
                .into_response(),
            Reply::RetryAfter { seconds } => (
                StatusCode::TOO_MANY_REQUESTS,
                [
                    ("content-type", "application/json".to_owned()),
                    ("retry-after", seconds.to_string()),
                ],
                "{}",
            )
                .into_response(),
            Reply::Hang => {
                let _guard = DisconnectFlag {
                    flag: self.disconnected.clone(),
                    finished: false,
                };
                self.stream_started.store(true, Ordering::SeqCst);
                std::future::pending::<()>().await;
                unreachable!()
            }
            Reply::Sse { body, chunk, delay } => {
                let chunk = chunk.max(1);
                let pieces: Vec<Vec<u8>> = body.chunks(chunk).map(|c| c.to_vec()).collect();
                let flag = self.disconnected.clone();
                let stream = async_stream::stream! {
                    let mut guard = DisconnectFlag { flag, finished: false };
                    for (i, piece) in pieces.into_iter().enumerate() {
                        if i > 0 && !delay.is_zero() {
                            tokio::time::sleep(delay).await;
                        }
                        yield Ok::<_, std::convert::Infallible>(bytes::Bytes::from(piece));
                    }
                    guard.finished = true;
                };
                sse_response(Body::from_stream(stream))
            }
            Reply::Stall { prefix } => {
                let flag = self.disconnected.clone();
                let started = self.stream_started.clone();
                let stream = async_stream::stream! {
                    let _guard = DisconnectFlag { flag, finished: false };
                    started.store(true, Ordering::SeqCst);
                    yield Ok::<_, std::convert::Infallible>(bytes::Bytes::from(prefix));
                    std::future::pending::<()>().await;
                };
                sse_response(Body::from_stream(stream))
            }
        }
    }
}

fn sse_response(body: Body) -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(body)
        .unwrap()
}

/// Polls `check` until it is true or `timeout` passes.
pub async fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    check()
}

/// Path of a providers-crate fixture file.
pub fn provider_fixture(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("providers/fixtures")
        .join(rel)
}

/// The request every providers-crate golden file answers (`first_turn()` of its tests): one user message and
/// the page tools, no ModelState.
pub fn first_turn_request(model: &str) -> Value {
    json!({
        "model": model,
        "messages": [ { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": "Please help." } ] } ],
        "modelState": null,
        "tools": [
            { "name": "todo.add", "description": "todo.add tool",
              "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] } },
            { "name": "todo.list", "description": "todo.list tool", "inputSchema": { "type": "object", "properties": {} } },
            { "name": "local.clock_now", "description": "local.clock_now tool",
              "inputSchema": { "type": "object", "properties": { "tz": { "type": "string" } } } },
            { "name": "weather_get", "description": "weather_get tool",
              "inputSchema": { "type": "object", "properties": { "city": { "type": "string" } } } }
        ]
    })
}

// ---------------------------------------------------------------------------------------------------------
// Relays with upstream models

pub const KEY: &str = "sk-test-relay-key-0123456789";

pub fn set_key() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY (edition 2021: set_var is safe): every test sets the same value before any thread reads it.
    ONCE.call_once(|| std::env::set_var("PB_TEST_UPSTREAM_KEY", KEY));
}

pub fn model(id: &str, provider: &str, fake: &FakeUpstream) -> Value {
    json!({ "id": id, "provider": provider, "baseUrl": fake.base_url(), "upstreamModel": format!("{id}-upstream"),
            "apiKey": { "env": "PB_TEST_UPSTREAM_KEY" } })
}

/// A relay (SQLite) with one model of each provider at `fake`, plus `extra` config.
pub async fn relay_for(fake: &FakeUpstream, db: &TestDb, extra: Value) -> Relay {
    set_key();
    let mut config = base_config(
        db,
        json!({ "models": [
            model("chat", "openai-chat", fake),
            model("responses", "openai-responses", fake),
            model("claude", "anthropic-messages", fake),
        ] }),
    );
    merge(&mut config, extra);
    relay(config).await
}

pub async fn post_model(r: &Relay, body: Value) -> (StatusCode, String) {
    let response = r.send(req("POST", "/api/model", "alice", Some(body))).await;
    let status = response.status();
    (status, body_text(response).await)
}

pub fn read_fixture(rel: &str) -> String {
    std::fs::read_to_string(provider_fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A fake upstream answering `replies`, and a relay (on a fresh SQLite database, returned to keep it alive)
/// with one model of each provider pointing at it.
pub async fn relay_with_upstream(
    replies: Vec<Reply>,
    extra: Value,
) -> (FakeUpstream, Relay, TestDb) {
    let fake = FakeUpstream::start(replies).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_for(&fake, &db, extra).await;
    (fake, r, db)
}

/// The `error.code` of a JSON error response body.
pub fn error_code(body: &str) -> String {
    let value: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    value["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A recorded Chat Completions text answer (`fixtures/openai-chat/recorded/173417d55340.sse`).
pub fn text_stream() -> String {
    read_fixture("openai-chat/recorded/173417d55340.sse")
}

/// `POST /api/model` over a real socket, as alice's browser on the relay's own origin.
pub fn browser_call(client: &reqwest::Client, addr: SocketAddr) -> reqwest::RequestBuilder {
    client
        .post(format!("http://{addr}/api/model"))
        .header("content-type", "application/json")
        .header("origin", format!("http://{addr}"))
        .header("x-patchbridge-user", "alice")
        .body(first_turn_request("chat").to_string())
}

/// A relay whose upstream sends the first event of [`text_stream`] and then nothing (until the client goes
/// away), with `limits.idleTimeoutMs` set to `idle_timeout_ms`.
pub async fn relay_stalling_after_first_event(
    idle_timeout_ms: u64,
) -> (FakeUpstream, Relay, TestDb) {
    let first = text_stream().split("\n\n").next().unwrap().to_owned() + "\n\n";
    relay_with_upstream(
        vec![Reply::Stall { prefix: first }],
        json!({ "limits": { "idleTimeoutMs": idle_timeout_ms } }),
    )
    .await
}
