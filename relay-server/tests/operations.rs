//! The real `patchbridge-relay` binary under connection pressure: the connection limit is reached and logged
//! and released again, accept failures from running out of file descriptors are logged as `EMFILE` (and the
//! relay recovers), and SIGTERM ends the process within the shutdown grace even with a half-sent request.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Backend, TestDb};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_patchbridge-relay");

struct Running {
    child: Child,
    addr: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Running {
    fn log_contains(&self, needle: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(needle))
    }
}

fn config(db: &TestDb, limits: Value) -> Value {
    json!({
        "server": { "bind": "127.0.0.1:0" },
        "identity": { "mode": "development" },
        "database": db.config.clone(),
        "limits": limits,
        "demo": true
    })
}

/// Starts the binary (through `sh -c` so a test can set `ulimit` first) and collects its log lines.
async fn start(dir: &Path, config: &Value, shell_prefix: &str) -> Running {
    let path = dir.join("relay.json");
    std::fs::write(&path, serde_json::to_vec(config).unwrap()).unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{shell_prefix} exec \"$0\" --config \"$1\""))
        .arg(BIN)
        .arg(&path)
        .env("PATCHBRIDGE_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let sink = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            sink.lock().unwrap().push(line);
        }
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stdout.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("patchbridge-relay listening on http://") {
                return url.to_owned();
            }
        }
        panic!("relay exited before listening: {:?}", log.lock().unwrap());
    })
    .await
    .expect("relay starts within 30 s");
    Running { child, addr, log }
}

/// One `GET /healthz` on a fresh connection; the status line, or `None` within `limit`.
async fn healthz(addr: &str, limit: Duration) -> Option<String> {
    tokio::time::timeout(limit, async {
        let mut stream = TcpStream::connect(addr).await.ok()?;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.ok()?;
        let text = String::from_utf8_lossy(&answer).into_owned();
        text.lines().next().map(str::to_owned)
    })
    .await
    .ok()
    .flatten()
}

async fn eventually_logged(relay: &Running, needle: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if relay.log_contains(needle) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    relay.log_contains(needle)
}

#[tokio::test]
async fn connection_limit_is_logged_and_released_by_the_header_timeout() {
    let db = TestDb::new(Backend::Sqlite);
    let dir = tempfile::tempdir().unwrap();
    let relay = start(
        dir.path(),
        &config(
            &db,
            json!({ "maxConnections": 3, "headerReadTimeoutMs": 1500 }),
        ),
        "",
    )
    .await;
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(TcpStream::connect(&relay.addr).await.unwrap());
    }
    assert!(
        eventually_logged(&relay, "connection limit reached", Duration::from_secs(5)).await,
        "{:?}",
        relay.log.lock().unwrap()
    );
    // The fourth client waits in the backlog until the idle ones time out, then is served.
    let started = Instant::now();
    let status = healthz(&relay.addr, Duration::from_secs(10)).await;
    assert_eq!(status.as_deref(), Some("HTTP/1.1 200 OK"));
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    drop(idle);
}

#[tokio::test]
async fn running_out_of_descriptors_is_logged_as_emfile_and_recovers() {
    let db = TestDb::new(Backend::Sqlite);
    let dir = tempfile::tempdir().unwrap();
    let relay = start(
        dir.path(),
        &config(&db, json!({ "headerReadTimeoutMs": 60000 })),
        "ulimit -n 48 &&",
    )
    .await;
    assert!(
        eventually_logged(
            &relay,
            "file descriptor limit is below",
            Duration::from_secs(5)
        )
        .await,
        "{:?}",
        relay.log.lock().unwrap()
    );
    let mut held = Vec::new();
    for _ in 0..80 {
        match TcpStream::connect(&relay.addr).await {
            Ok(stream) => held.push(stream),
            Err(_) => break,
        }
    }
    assert!(
        eventually_logged(&relay, "EMFILE", Duration::from_secs(5)).await,
        "{:?}",
        relay.log.lock().unwrap()
    );
    drop(held);
    // Once descriptors are free again the relay answers.
    let mut answered = None;
    for _ in 0..50 {
        answered = healthz(&relay.addr, Duration::from_secs(2)).await;
        if answered.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(answered.as_deref(), Some("HTTP/1.1 200 OK"));
}

#[tokio::test]
async fn sigterm_ends_the_process_within_the_grace_despite_a_half_sent_request() {
    let db = TestDb::new(Backend::Sqlite);
    let dir = tempfile::tempdir().unwrap();
    let mut relay = start(
        dir.path(),
        &config(
            &db,
            json!({ "shutdownGraceMs": 1000, "headerReadTimeoutMs": 60000, "requestBodyTimeoutMs": 60000 }),
        ),
        "",
    )
    .await;
    let mut slow_body = TcpStream::connect(&relay.addr).await.unwrap();
    slow_body
        .write_all(
            b"POST /api/conversations HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n\
              x-patchbridge-user: alice\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
        )
        .await
        .unwrap();
    let mut slow_head = TcpStream::connect(&relay.addr).await.unwrap();
    slow_head
        .write_all(b"GET /healthz HTTP/1.1\r\nHo")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pid = relay.child.id().unwrap() as i32;
    // SAFETY: signalling our own child process.
    #[allow(unsafe_code)]
    let signalled = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(signalled, 0);
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(10), relay.child.wait())
        .await
        .expect("exits within the grace period and a margin")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
