//! The spending limits of the real `patchbridge-relay` binary across its ends: a SIGKILL mid-call leaves no
//! running call behind (the user with `maxConcurrentCalls: 1` calls again at once after the restart) and keeps
//! the calls counted before it; a SIGTERM mid-call settles that call into the database before the store
//! closes; a crashed relay's running mark in a shared PostgreSQL names its instance and ends within a minute.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::{Backend, FakeUpstream, Reply, TestDb};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_patchbridge-relay");
const FIRST: &str = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n";

struct Running {
    child: Child,
    url: String,
}

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

fn signal(relay: &Running, signal: libc::c_int) {
    let pid = relay.child.id().expect("running") as libc::pid_t;
    // SAFETY: plain kill(2) on the child this test started.
    #[allow(unsafe_code)]
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(sent, 0);
}

fn config(dir: &Path, db: &TestDb, fake: &FakeUpstream, spending: Value) -> std::path::PathBuf {
    common::set_key(); // the child inherits the key's environment variable
    let config = json!({
        "server": { "bind": "127.0.0.1:0", "basePath": "/api" },
        "identity": { "mode": "development" },
        "database": db.config.clone(),
        "limits": { "shutdownGraceMs": 5000 },
        "models": [ common::model("chat", "openai-chat", fake) ],
        "spending": spending,
    });
    let path = dir.join("relay.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    path
}

/// Starts a model call of `user`; returns the response once its first bytes arrived (or its refusal).
async fn open_call(relay: &Running, user: &str, prompt: &str) -> reqwest::Response {
    let body = json!({ "model": "chat", "modelState": null,
        "messages": [ { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": prompt } ] } ] });
    let mut response = reqwest::Client::new()
        .post(format!("{}/api/model", relay.url))
        .header("content-type", "application/json")
        .header("origin", &relay.url)
        .header("x-patchbridge-user", user)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    if response.status() == 200 {
        let first = response.chunk().await.unwrap().unwrap();
        assert!(String::from_utf8_lossy(&first).contains("message-start"));
    }
    response
}

/// `(calls, input tokens)` stored for `user` in slices of `slice_seconds`.
async fn stored(db: &TestDb, user: &str, slice_seconds: i64) -> (i64, i64) {
    let store = patchbridge_relay::store::Store::connect(
        &serde_json::from_value(db.config.clone()).unwrap(),
    )
    .await
    .unwrap();
    let query = "SELECT CAST(COALESCE(SUM(calls), 0) AS BIGINT), CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT) \
                 FROM spending_usage WHERE user_id = $1 AND slice_seconds = $2";
    let row: (i64, i64) = match &store {
        patchbridge_relay::store::Store::Sqlite(s) => sqlx::query_as(query)
            .bind(user)
            .bind(slice_seconds)
            .fetch_one(s.pool())
            .await
            .unwrap(),
        patchbridge_relay::store::Store::Postgres(pool) => sqlx::query_as(query)
            .bind(user)
            .bind(slice_seconds)
            .fetch_one(pool)
            .await
            .unwrap(),
    };
    store.close().await;
    row
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_call_then_restart_frees_the_running_call_at_once_and_keeps_the_counted_calls()
{
    // The first call reads to its end; every later one stalls after its first event.
    let fake = FakeUpstream::start(vec![
        Reply::sse(format!("{FIRST}data: [DONE]\n\n")),
        Reply::Stall {
            prefix: FIRST.into(),
        },
    ])
    .await;
    let db = TestDb::new(Backend::Sqlite);
    let dir = tempfile::tempdir().unwrap();
    let spending =
        json!({ "windows": [ { "windowSeconds": 3600, "calls": 3 } ], "maxConcurrentCalls": 1 });
    let path = config(dir.path(), &db, &fake, spending);
    let mut relay = start(&path).await;

    let done = open_call(&relay, "gus", "hello").await;
    assert_eq!(done.status(), 200);
    done.text().await.unwrap();
    let running = open_call(&relay, "gus", "hello").await;
    assert_eq!(running.status(), 200);
    let refused = open_call(&relay, "gus", "hello").await;
    assert_eq!(refused.status(), 429, "one call at a time");
    let body: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["limit"]["kind"], "concurrentCalls");
    // The two admitted calls reach the database (written behind) before the kill.
    let mut written = false;
    for _ in 0..100 {
        if stored(&db, "gus", 3600).await.0 == 2 {
            written = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(written, "the counted calls were written behind");
    signal(&relay, libc::SIGKILL);
    relay.child.wait().await.unwrap();
    drop(running);

    let relay = start(&path).await;
    // No running call survives the process: the user calls again at once.
    let again = open_call(&relay, "gus", "hello").await;
    assert_eq!(
        again.status(),
        200,
        "the killed relay's call no longer counts as running"
    );
    drop(again);
    // And the calls counted before the kill still count: 3 of 3 are used.
    let mut last = None;
    for _ in 0..100 {
        let response = open_call(&relay, "gus", "hello").await;
        if response.status() == 429 {
            let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
            last = Some(body["error"]["limit"]["kind"].clone());
            if body["error"]["limit"]["kind"] == "calls" {
                break;
            }
        }
        // Refused as running while the dropped call is being settled: try again.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        last,
        Some(json!("calls")),
        "the calls limit refuses the 4th call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_mid_call_settles_it_into_the_database_before_the_relay_exits() {
    let fake = FakeUpstream::start(vec![Reply::Stall {
        prefix: FIRST.into(),
    }])
    .await;
    let db = TestDb::new(Backend::Sqlite);
    let dir = tempfile::tempdir().unwrap();
    let spending = json!({ "windows": [ { "windowSeconds": 86_400, "inputTokens": 1_000_000 } ] });
    let mut relay = start(&config(dir.path(), &db, &fake, spending)).await;
    let prompt = "q".repeat(3_000);
    let running = open_call(&relay, "hal", &prompt).await;
    assert_eq!(running.status(), 200);

    signal(&relay, libc::SIGTERM);
    // The browser goes away while the relay drains: the call ends without usage.
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(running);
    let status = tokio::time::timeout(Duration::from_secs(20), relay.child.wait())
        .await
        .expect("exits")
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let (calls, input) = stored(&db, "hal", 86_400).await;
    assert_eq!(calls, 1, "the call was counted");
    assert!(
        input >= 3_000,
        "the call cut before its usage was charged its input bound before the store closed: {input}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_relays_running_mark_on_postgres_names_its_instance_and_ends_within_a_minute() {
    let fake = FakeUpstream::start(vec![Reply::Stall {
        prefix: FIRST.into(),
    }])
    .await;
    let db = TestDb::new(Backend::Postgres);
    let dir = tempfile::tempdir().unwrap();
    let spending =
        json!({ "windows": [ { "windowSeconds": 3600, "calls": 100 } ], "maxConcurrentCalls": 1 });
    let path = config(dir.path(), &db, &fake, spending);
    let mut first = start(&path).await;
    let running = open_call(&first, "ida", "hello").await;
    assert_eq!(running.status(), 200);
    signal(&first, libc::SIGKILL);
    first.child.wait().await.unwrap();
    drop(running);

    let store = patchbridge_relay::store::Store::connect(
        &serde_json::from_value(db.config.clone()).unwrap(),
    )
    .await
    .unwrap();
    let patchbridge_relay::store::Store::Postgres(pool) = &store else {
        unreachable!()
    };
    let (instance, lease_until): (String, i64) =
        sqlx::query_as("SELECT instance_id, lease_until FROM spending_calls WHERE user_id = 'ida'")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(
        instance.len(),
        32,
        "the mark names the relay instance: {instance}"
    );
    let now = patchbridge_relay::spending::now_seconds();
    assert!(
        lease_until <= now + patchbridge_relay::spending::MARK_LEASE_SECONDS,
        "the mark ends within a minute of the crash"
    );

    let second = start(&path).await;
    let refused = open_call(&second, "ida", "hello").await;
    assert_eq!(
        refused.status(),
        429,
        "the mark counts until its lease ends"
    );
    // A minute passes for the mark (moved back rather than waited for): the dead relay renews nothing.
    sqlx::query("UPDATE spending_calls SET lease_until = lease_until - $1")
        .bind(patchbridge_relay::spending::MARK_LEASE_SECONDS)
        .execute(pool)
        .await
        .unwrap();
    let again = open_call(&second, "ida", "hello").await;
    assert_eq!(again.status(), 200, "an expired mark no longer counts");
    store.close().await;
}
