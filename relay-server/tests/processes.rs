//! The real `patchbridge-relay` binary: start-up refuses bad configuration (before the port opens), two relay
//! processes share one PostgreSQL with the revision check holding across them, and kill -9 during writes
//! loses no acknowledged write (SQLite and PostgreSQL).

mod common;

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::{Backend, TestDb};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Per conversation: the last acknowledged revision and the message ids it holds.
type Acknowledged = std::sync::Arc<std::sync::Mutex<HashMap<String, (u64, Vec<String>)>>>;

const BIN: &str = env!("CARGO_BIN_EXE_patchbridge-relay");

struct Running {
    child: Child,
    url: String,
}

fn write_config(dir: &Path, name: &str, config: &Value) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(config).unwrap()).unwrap();
    path
}

/// Starts the binary and waits for its "listening on" line.
async fn start(config: &Path) -> Running {
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(config)
        .env("PATCHBRIDGE_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("patchbridge-relay listening on ") {
                return url.to_owned();
            }
        }
        panic!("relay exited before listening");
    })
    .await
    .expect("relay starts within 30 s");
    Running { child, url }
}

/// Runs the binary expecting a start-up failure; returns stderr.
async fn start_fails(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env("PATCHBRIDGE_LOG", "error")
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(30), cmd.output())
        .await
        .expect("exits")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !stdout.contains("listening"),
        "never opened its port: {stdout}"
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit code 2 for configuration errors"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn call(
    client: &reqwest::Client,
    base: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> reqwest::Result<(u16, Value)> {
    let mut rb = client
        .request(method, format!("{base}{path}"))
        .header("x-patchbridge-user", "alice")
        .header("origin", base);
    if let Some(b) = body {
        rb = rb
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let response = rb.send().await?;
    let status = response.status().as_u16();
    let text = response.text().await?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// Creates an empty conversation for alice; returns its id.
async fn create(http: &reqwest::Client, base: &str) -> String {
    let (status, created) = call(
        http,
        base,
        reqwest::Method::POST,
        "/api/conversations",
        Some(json!({})),
    )
    .await
    .unwrap();
    assert_eq!(status, 201, "{created}");
    created["conversation"]["id"].as_str().unwrap().to_owned()
}

fn relay_config(db: &TestDb) -> Value {
    json!({
        "server": { "bind": "127.0.0.1:0", "basePath": "/api" },
        "identity": { "mode": "development" },
        "database": db.config.clone(),
        "demo": true
    })
}

#[tokio::test]
async fn bad_configuration_stops_start_up_with_the_field_path() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = write_config(
        dir.path(),
        "unknown.json",
        &json!({ "demo": true, "server": { "bnd": "x" } }),
    );
    let err = start_fails(&["--config", unknown.to_str().unwrap()], &[]).await;
    assert!(err.contains("server.bnd"), "{err}");

    let dup = dir.path().join("dup.json");
    std::fs::write(
        &dup,
        r#"{"demo": true, "server": {"bind": "127.0.0.1:0", "bind": "0.0.0.0:80"}}"#,
    )
    .unwrap();
    let err = start_fails(&["--config", dup.to_str().unwrap()], &[]).await;
    assert!(
        err.contains("duplicate key `bind`") && err.contains("server.bind"),
        "{err}"
    );

    let key = dir.path().join("key");
    std::fs::write(&key, "sk-x").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let perms = write_config(
        dir.path(),
        "perms.json",
        &json!({ "models": [ { "id": "a", "provider": "openai-chat", "baseUrl": "https://api.openai.com/v1",
                               "upstreamModel": "gpt", "apiKey": { "file": key } } ] }),
    );
    let err = start_fails(&["--config", perms.to_str().unwrap()], &[]).await;
    assert!(
        err.contains("models[0].apiKey") && err.contains("0644"),
        "{err}"
    );

    // An explicit but invalid provider never falls back to the demo, even with --demo.
    let invalid = write_config(
        dir.path(),
        "invalid.json",
        &json!({ "models": [ { "id": "a", "provider": "openai-chat", "baseUrl": "https://api.openai.com/v1",
                               "upstreamModel": "gpt", "apiKey": { "env": "PB_SURELY_UNSET_KEY_VAR" } } ] }),
    );
    let err = start_fails(&["--config", invalid.to_str().unwrap(), "--demo"], &[]).await;
    assert!(
        err.contains("models[0].apiKey") && err.contains("PB_SURELY_UNSET_KEY_VAR"),
        "{err}"
    );

    // Env overrides are validated too.
    let ok = write_config(dir.path(), "ok.json", &json!({ "demo": true }));
    let err = start_fails(
        &["--config", ok.to_str().unwrap()],
        &[("PATCHBRIDGE_BIND", "not-an-address")],
    )
    .await;
    assert!(err.contains("server.bind"), "{err}");
    let err = start_fails(&["--bogus"], &[]).await;
    assert!(err.contains("unknown argument"), "{err}");
}

/// Two relay processes on one PostgreSQL: concurrent compare-and-set writes through both; each revision is won
/// exactly once and both processes read the same final state. Both start at the same moment on a fresh schema
/// (pins the bug where concurrent `CREATE SCHEMA IF NOT EXISTS` made one replica fail to start).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_relay_processes_share_one_postgres() {
    let db = TestDb::new(Backend::Postgres);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "relay.json", &relay_config(&db));
    let (a, b) = tokio::join!(start(&config), start(&config));
    let http = client();
    let path = format!("/api/conversations/{}", create(&http, &a.url).await);

    const WRITERS: usize = 8;
    const EACH: usize = 4;
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let base = if w % 2 == 0 {
            a.url.clone()
        } else {
            b.url.clone()
        };
        let http = http.clone();
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let mut won = Vec::new();
            while won.len() < EACH {
                let (_, read) = call(&http, &base, reqwest::Method::GET, &path, None)
                    .await
                    .unwrap();
                let rev = read["conversation"]["revision"].as_u64().unwrap();
                let mut ctx = read["context"].clone();
                let tag = format!("w{w}-{}", won.len());
                ctx["messages"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({ "id": tag, "role": "user", "blocks": [] }));
                let (status, body) = call(
                    &http,
                    &base,
                    reqwest::Method::PUT,
                    &path,
                    Some(json!({ "expectedRevision": rev, "context": ctx })),
                )
                .await
                .unwrap();
                match status {
                    200 => won.push(body["conversation"]["revision"].as_u64().unwrap()),
                    409 => {}
                    other => panic!("{other}: {body}"),
                }
            }
            won
        }));
    }
    let mut revisions = Vec::new();
    for t in tasks {
        revisions.extend(t.await.unwrap());
    }
    revisions.sort();
    let expected: Vec<u64> = (2..=(WRITERS * EACH) as u64 + 1).collect();
    assert_eq!(
        revisions, expected,
        "each revision won exactly once across both processes"
    );
    let (_, from_a) = call(&http, &a.url, reqwest::Method::GET, &path, None)
        .await
        .unwrap();
    let (_, from_b) = call(&http, &b.url, reqwest::Method::GET, &path, None)
        .await
        .unwrap();
    assert_eq!(from_a, from_b);
    assert_eq!(
        from_a["context"]["messages"].as_array().unwrap().len(),
        WRITERS * EACH,
        "nothing lost"
    );
}

/// kill -9 while writers are busy, restart on the same database: every acknowledged write is there.
async fn kill_9_during_writes_loses_no_acknowledged_write(backend: Backend) {
    let db = TestDb::new(backend);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "relay.json", &relay_config(&db));
    let mut relay = start(&config).await;
    let http = client();

    const CONVERSATIONS: usize = 6;
    let mut ids = Vec::new();
    for _ in 0..CONVERSATIONS {
        ids.push(create(&http, &relay.url).await);
    }
    // One writer per conversation: writes a growing message list; records each acknowledged revision.
    let acknowledged: Acknowledged = Default::default();
    let mut tasks = Vec::new();
    for id in ids.clone() {
        let http = http.clone();
        let base = relay.url.clone();
        let acknowledged = acknowledged.clone();
        tasks.push(tokio::spawn(async move {
            let mut rev = 1u64;
            let mut tags: Vec<String> = Vec::new();
            loop {
                let tag = format!("{id}-{}", tags.len());
                let mut next = tags.clone();
                next.push(tag);
                let messages: Vec<Value> = next.iter().map(|t| json!({ "id": t, "role": "user", "blocks": [] })).collect();
                let body = json!({ "expectedRevision": rev, "context": { "messages": messages, "modelState": null } });
                match call(&http, &base, reqwest::Method::PUT, &format!("/api/conversations/{id}"), Some(body)).await {
                    Ok((200, b)) => {
                        rev = b["conversation"]["revision"].as_u64().unwrap();
                        tags = next;
                        acknowledged.lock().unwrap().insert(id.clone(), (rev, tags.clone()));
                    }
                    Ok((status, b)) => panic!("{status}: {b}"),
                    Err(_) => return, // the relay was killed
                }
            }
        }));
    }
    // Let writes flow, then kill -9 in the middle of them.
    let enough = common::eventually(Duration::from_secs(20), || {
        let a = acknowledged.lock().unwrap();
        a.len() == CONVERSATIONS && a.values().all(|(rev, _)| *rev >= 4)
    })
    .await;
    assert!(enough, "writes are being acknowledged");
    relay.child.start_kill().unwrap(); // SIGKILL
    let _ = relay.child.wait().await;
    for t in tasks {
        t.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();

    let restarted = start(&config).await;
    for id in &ids {
        let (rev, tags) = &acknowledged[id];
        let (status, read) = call(
            &http,
            &restarted.url,
            reqwest::Method::GET,
            &format!("/api/conversations/{id}"),
            None,
        )
        .await
        .unwrap();
        assert_eq!(status, 200, "{read}");
        let stored_rev = read["conversation"]["revision"].as_u64().unwrap();
        // The write in flight at the kill may or may not have committed; nothing acknowledged may be missing.
        assert!(
            stored_rev == *rev || stored_rev == rev + 1,
            "{id}: acknowledged {rev}, stored {stored_rev}"
        );
        let stored: Vec<&str> = read["context"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        for tag in tags {
            assert!(
                stored.contains(&tag.as_str()),
                "{id}: acknowledged write {tag} lost after kill -9"
            );
        }
    }
    let total: u64 = acknowledged.values().map(|(r, _)| r - 1).sum();
    eprintln!("{backend:?}: {total} acknowledged writes survived kill -9");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_during_writes_sqlite() {
    kill_9_during_writes_loses_no_acknowledged_write(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_during_writes_postgres() {
    kill_9_during_writes_loses_no_acknowledged_write(Backend::Postgres).await;
}

#[tokio::test]
async fn binary_serves_health_readiness_metrics_and_static_files() {
    let db = TestDb::new(Backend::Sqlite);
    let dir = tempfile::tempdir().unwrap();
    let npm = dir.path().join("npm");
    std::fs::create_dir_all(npm.join("pkg")).unwrap();
    std::fs::write(npm.join("index.js"), "export const x = 1;\n").unwrap();
    std::fs::write(npm.join("pkg/a.wasm"), b"\0asm").unwrap();
    let examples = dir.path().join("examples");
    std::fs::create_dir_all(examples.join("demo")).unwrap();
    std::fs::write(
        examples.join("demo/index.html"),
        "<!doctype html><title>demo</title>",
    )
    .unwrap();
    let mut config = relay_config(&db);
    config["server"]["npmDir"] = json!(npm);
    config["server"]["examplesDir"] = json!(examples);
    let path = write_config(dir.path(), "relay.json", &config);
    let relay = start(&path).await;
    let http = client();
    for (p, expect) in [
        ("/healthz", "ok"),
        ("/readyz", "ready"),
        ("/npm/index.js", "export const x"),
        ("/examples/demo/index.html", "<title>demo"),
    ] {
        let response = http.get(format!("{}{p}", relay.url)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{p}");
        let ct = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let text = response.text().await.unwrap();
        assert!(text.contains(expect), "{p}: {text}");
        if p.ends_with(".js") {
            assert!(ct.contains("javascript"), "{p}: {ct}");
        }
    }
    let wasm = http
        .get(format!("{}/npm/pkg/a.wasm", relay.url))
        .send()
        .await
        .unwrap();
    assert_eq!(wasm.headers()["content-type"], "application/wasm");
    let metrics = http
        .get(format!("{}/metrics", relay.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("relay_http_requests_total"), "{metrics}");
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let root = no_redirects
        .get(format!("{}/", relay.url))
        .send()
        .await
        .unwrap();
    assert_eq!(root.status(), 307);
    assert_eq!(
        root.headers()["location"],
        "/examples/demo/",
        "`/` opens the demo page"
    );
    let missing = http
        .get(format!("{}/npm/../Cargo.toml", relay.url))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

/// SIGTERM while a model stream is open: the relay stops accepting connections at once, lets the open stream
/// run to its end (the browser gets every event through `message-stop`, nothing cut), then exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_drains_an_open_stream_and_exits_0() {
    // A stream of ~3 s: the relay is told to stop while it is in the middle of it.
    let fake = common::FakeUpstream::start(vec![common::Reply::Sse {
        body: common::read_fixture("openai-chat/recorded/173417d55340.sse").into_bytes(),
        chunk: 96,
        delay: Duration::from_millis(100),
    }])
    .await;
    common::set_key(); // the child inherits the key's environment variable
    let db = TestDb::new(Backend::Sqlite);
    let dir = tempfile::tempdir().unwrap();
    let mut config = relay_config(&db);
    config["models"] = json!([common::model("chat", "openai-chat", &fake)]);
    let mut relay = start(&write_config(dir.path(), "relay.json", &config)).await;

    let http = client();
    let mut response = http
        .post(format!("{}/api/model", relay.url))
        .header("content-type", "application/json")
        .header("origin", &relay.url)
        .header("x-patchbridge-user", "alice")
        .body(common::first_turn_request("chat").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = String::from_utf8(response.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    assert!(body.contains("message-start"), "{body}");

    let pid = relay.child.id().expect("running") as libc::pid_t;
    // SAFETY: plain kill(2) on the child this test started.
    #[allow(unsafe_code)]
    let signalled = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(signalled, 0);
    // The listener closes at once: a new connection is refused while the open stream goes on.
    let refused = common::eventually(Duration::from_secs(5), || {
        std::net::TcpStream::connect(relay.url.trim_start_matches("http://")).is_err()
    })
    .await;
    assert!(refused, "no new connections after SIGTERM");
    assert!(
        !fake.disconnected.load(std::sync::atomic::Ordering::SeqCst),
        "the upstream stream is not cut"
    );

    while let Some(chunk) = response.chunk().await.unwrap() {
        body.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let events = common::events_of(&body);
    assert_eq!(events[0]["type"], "message-start");
    assert_eq!(
        events.last().unwrap()["type"],
        "message-stop",
        "the open stream ran to its end: {events:?}"
    );
    let status = tokio::time::timeout(Duration::from_secs(10), relay.child.wait())
        .await
        .expect("exits once the stream ended")
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

/// Logs written to a file or a pipe (a service manager, a container runtime) are plain text: terminal colour
/// codes would end up as escape bytes in every collected log line.
#[tokio::test]
async fn logs_to_a_file_carry_no_terminal_colour_codes() {
    let db = TestDb::new(Backend::Sqlite);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "relay.json", &relay_config(&db));
    let log_path = dir.path().join("relay.log");
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(&config)
        .env("PATCHBRIDGE_LOG", "info")
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("patchbridge-relay listening on ") {
                return;
            }
        }
        panic!("relay exited before listening");
    })
    .await
    .expect("relay starts within 30 s");
    child.kill().await.unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains(" INFO "), "info lines were written: {log}");
    assert!(!log.contains('\u{1b}'), "no escape bytes: {log:?}");
}
