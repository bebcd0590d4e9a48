//! `patchbridge-relay demo` and `patchbridge-relay healthcheck` as the real binary, and the serving of an embedded
//! site: the demo started in an empty folder makes its data folder there and serves its page and API (with the
//! development identity); a real provider gets the key from the named variable; a refused start leaves the
//! folder empty; the health check answers by exit code; a configuration file's directories are relative to the
//! file. How an embedded tree is served is tested on a fixture tree (`tests/fixtures/site/`), so it is covered
//! whether or not the package was built before the tests; the Chromium journey on the real page is
//! `tests/e2e/relay-demo-mode.test.mjs`.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use common::{body_text, events_of, read_fixture, relay, req, FakeUpstream, Reply};
use include_dir::{include_dir, Dir};
use patchbridge_relay::config::RelayConfig;
use patchbridge_relay::embedded_site::{EmbeddedSite, DEMO_SITE_SOURCE};
use patchbridge_relay::static_files::PAGE_CSP;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_patchbridge-relay");

static FIXTURE_SITE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tests/fixtures/site");

struct Demo {
    child: Child,
    url: String,
    /// Everything it printed on stdout up to its last start-up line.
    stdout: String,
}

/// `patchbridge-relay demo ARGS` in `cwd` with only `env` (no PATCHBRIDGE_* from the test's environment), up to
/// its last start-up line.
async fn start_demo(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Demo {
    let mut child = Command::new(BIN)
        .arg("demo")
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATCHBRIDGE_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stdout = String::new();
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            stdout.push_str(&line);
            stdout.push('\n');
            // `open ...` follows when the page is built in; `data:` is the last line otherwise.
            let last = if DEMO_SITE_SOURCE == "none" {
                "data: "
            } else {
                "open "
            };
            if line.starts_with(last) {
                return;
            }
        }
        panic!("demo exited before it started: {stdout}");
    })
    .await
    .expect("demo starts within 30 s");
    let url = stdout
        .lines()
        .find_map(|l| l.strip_prefix("patchbridge-relay listening on "))
        .expect("listening line")
        .to_owned();
    Demo { child, url, stdout }
}

/// Runs the binary with `args` (environment cleared but for `env`) to its end: exit code, stdout, stderr.
async fn run_to_end(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        Command::new(BIN)
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("PATCHBRIDGE_LOG", "error")
            .envs(env.iter().copied())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("exits")
    .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn stop(mut demo: Demo) {
    let pid = demo.child.id().expect("running") as i32;
    // SAFETY: kill(2) on the child this test spawned and has not reaped yet.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let status = tokio::time::timeout(Duration::from_secs(30), demo.child.wait())
        .await
        .expect("stops")
        .unwrap();
    assert!(status.success(), "SIGTERM ends the demo cleanly: {status}");
}

#[tokio::test]
async fn demo_in_an_empty_folder_makes_patchbridge_data_there_and_serves_its_page_and_the_api() {
    let folder = tempfile::tempdir().unwrap();
    let demo = start_demo(folder.path(), &["--port", "0"], &[]).await;
    let data = folder.path().join("patchbridge-data");
    assert!(
        demo.stdout
            .contains("model: scripted demo model (not AI)\n"),
        "{}",
        demo.stdout
    );
    assert!(
        demo.stdout.contains(&format!("data: {}\n", data.display())),
        "{}",
        demo.stdout
    );
    assert!(
        data.join("relay.sqlite3").is_file(),
        "SQLite in the data folder"
    );
    let http = client();

    let ready = http
        .get(format!("{}/readyz", demo.url))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    // The development identity: a user id in the header is enough, none is 401.
    let models = http
        .get(format!("{}/api/models", demo.url))
        .header("x-patchbridge-user", "ana")
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    let models: Value = serde_json::from_str(&models.text().await.unwrap()).unwrap();
    assert_eq!(models["defaultModel"], "scripted", "{models}");
    assert_eq!(models["models"][0]["previewOnly"], true, "{models}");
    let anonymous = http
        .get(format!("{}/api/models", demo.url))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);

    let root = http.get(format!("{}/", demo.url)).send().await.unwrap();
    if DEMO_SITE_SOURCE == "none" {
        assert_eq!(root.status(), 404);
        assert!(root
            .text()
            .await
            .unwrap()
            .contains("compiled without the demo page"));
    } else {
        assert_eq!(root.status(), 307);
        assert_eq!(root.headers()[header::LOCATION], "/examples/demo/");
        let page = http
            .get(format!("{}/examples/demo/", demo.url))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200);
        assert_eq!(page.headers()[header::CONTENT_SECURITY_POLICY], PAGE_CSP);
        assert!(page.text().await.unwrap().contains("<patchbridge-agent"));
        let wasm = http
            .get(format!("{}/npm/pkg/patchbridge_agent_bg.wasm", demo.url))
            .send()
            .await
            .unwrap();
        assert_eq!(wasm.status(), 200);
        assert_eq!(wasm.headers()[header::CONTENT_TYPE], "application/wasm");
        assert_eq!(&wasm.bytes().await.unwrap()[..4], b"\0asm");
    }

    // The health check: by URL, and by the bind it would read from the environment.
    let (code, stdout, _) = run_to_end(
        folder.path(),
        &["healthcheck", "--url", &format!("{}/readyz", demo.url)],
        &[],
    )
    .await;
    assert_eq!(
        (code, stdout.trim()),
        (0, format!("ready: {}/readyz", demo.url).as_str())
    );
    let bind = demo.url.strip_prefix("http://").unwrap().to_owned();
    let (code, _, stderr) = run_to_end(
        folder.path(),
        &["healthcheck"],
        &[("PATCHBRIDGE_BIND", &bind)],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");

    let url = demo.url.clone();
    stop(demo).await;
    let (code, _, stderr) = run_to_end(
        folder.path(),
        &["healthcheck", "--url", &format!("{url}/readyz")],
        &[],
    )
    .await;
    assert_eq!(code, 1, "a stopped relay is unhealthy");
    assert!(stderr.contains(&format!("{url}/readyz")), "{stderr}");
}

#[tokio::test]
async fn demo_with_a_provider_sends_the_key_from_the_named_variable_to_that_provider() {
    let fake = FakeUpstream::start(vec![Reply::sse(read_fixture(
        "openai-chat/content_parts.sse",
    ))])
    .await;
    let folder = tempfile::tempdir().unwrap();
    let base_url = fake.base_url();
    let demo = start_demo(
        folder.path(),
        &[
            "--port",
            "0",
            "--provider",
            "openai-compatible",
            "--base-url",
            &base_url,
            "--model",
            "local-m",
            "--api-key-env",
            "PB_DEMO_KEY",
        ],
        &[
            ("PB_DEMO_KEY", "sk-demo-key-42"),
            ("OPENAI_API_KEY", "sk-never-sent"),
        ],
    )
    .await;
    assert!(
        demo.stdout.contains("model: local-m (OpenAI-compatible)\n"),
        "{}",
        demo.stdout
    );
    let http = client();
    let models = http
        .get(format!("{}/api/models", demo.url))
        .header("x-patchbridge-user", "ana")
        .send()
        .await
        .unwrap();
    let models: Value = serde_json::from_str(&models.text().await.unwrap()).unwrap();
    assert_eq!(models["defaultModel"], "local-m", "{models}");
    assert_eq!(
        models["models"][0]["previewOnly"], false,
        "a real model has no demo banner: {models}"
    );

    let response = http
        .post(format!("{}/api/model", demo.url))
        .header("x-patchbridge-user", "ana")
        .header("origin", &demo.url)
        .header("content-type", "application/json")
        .body(
            json!({ "messages": [ { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": "hi" } ] } ],
                    "modelState": null })
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let events = events_of(&response.text().await.unwrap());
    assert_eq!(events.last().unwrap()["type"], "message-stop", "{events:?}");
    assert!(
        events.iter().any(|e| e["delta"] == "Done."),
        "the provider's answer: {events:?}"
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].headers[header::AUTHORIZATION],
        "Bearer sk-demo-key-42"
    );
    assert_eq!(requests[0].body["model"], "local-m");
    stop(demo).await;
}

#[tokio::test]
async fn a_refused_demo_start_says_why_and_leaves_the_folder_empty() {
    let folder = tempfile::tempdir().unwrap();
    for (args, env, expected) in [
        (
            &["demo", "--provider", "openai"][..],
            &[][..],
            "OPENAI_API_KEY",
        ),
        (
            &["demo", "--provider", "anthropic"][..],
            &[("OPENAI_API_KEY", "sk-1")][..],
            "ANTHROPIC_API_KEY",
        ),
        (
            &["demo", "--port", "70000"][..],
            &[][..],
            "--port must be a number from 0 to 65535",
        ),
        (
            &["demo"][..],
            &[("PATCHBRIDGE_BIND", "0.0.0.0:0")][..],
            "identity.mode",
        ),
    ] {
        let (code, stdout, stderr) = run_to_end(folder.path(), args, env).await;
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            !stdout.contains("listening"),
            "{args:?}: never opened its port"
        );
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(
            std::fs::read_dir(folder.path()).unwrap().count(),
            0,
            "{args:?}: nothing created"
        );
    }
}

#[test]
fn a_config_files_directories_are_relative_to_the_file_not_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("site/npm")).unwrap();
    std::fs::create_dir_all(dir.path().join("conf")).unwrap();
    let file = dir.path().join("conf/relay.json");
    std::fs::write(
        &file,
        json!({ "demo": true, "server": { "npmDir": "../site/npm", "examplesDir": dir.path().join("site") } }).to_string(),
    )
    .unwrap();
    let config = RelayConfig::from_file(&file).unwrap();
    assert_eq!(
        config.server.npm_dir.as_deref(),
        Some(dir.path().join("conf/../site/npm").as_path())
    );
    assert_eq!(
        config.server.examples_dir.as_deref(),
        Some(dir.path().join("site").as_path()),
        "absolute stays"
    );
    config
        .validate()
        .expect("valid whatever the working directory");
}

/// A relay (in process, SQLite) serving the fixture tree as its embedded site, plus `server` settings.
async fn fixture_relay(server: Value) -> (common::Relay, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("relay.sqlite3").display());
    let r = relay(json!({
        "server": server, "identity": { "mode": "development" }, "database": { "url": url }, "demo": true
    }))
    .await;
    let state = r
        .state
        .clone()
        .with_site(EmbeddedSite::from_dir(&FIXTURE_SITE));
    (
        common::Relay {
            app: patchbridge_relay::router(state.clone()),
            state,
        },
        dir,
    )
}

fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .header("host", "127.0.0.1")
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn an_embedded_site_serves_its_files_with_the_page_policy_and_nothing_hidden() {
    let (r, _db) = fixture_relay(json!({})).await;

    let root = r.send(get("/")).await;
    assert_eq!(root.status(), StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(root.headers()[header::LOCATION], "/examples/demo/");
    let bare = r.send(get("/examples/demo")).await;
    assert_eq!(
        bare.status(),
        StatusCode::TEMPORARY_REDIRECT,
        "a directory gets its slash, for relative links"
    );
    assert_eq!(bare.headers()[header::LOCATION], "/examples/demo/");

    for (path, content_type, body) in [
        ("/examples/demo/", "text/html", "fixture demo page"),
        (
            "/examples/demo/index.html",
            "text/html",
            "fixture demo page",
        ),
        (
            "/npm/dist/patchbridge-agent.js",
            "text/javascript",
            "export const fixture = 1;",
        ),
        (
            "/npm/pkg/patchbridge_agent_bg.wasm",
            "application/wasm",
            "\0asm\u{1}\0\0\0",
        ),
    ] {
        let response = r.send(get(path)).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            content_type,
            "{path}"
        );
        assert_eq!(
            response.headers()[header::CONTENT_SECURITY_POLICY],
            PAGE_CSP,
            "{path}"
        );
        assert_eq!(
            response.headers()[header::X_CONTENT_TYPE_OPTIONS],
            "nosniff",
            "{path}"
        );
        assert!(body_text(response).await.contains(body), "{path}");
    }
    let head = r
        .send(
            Request::head("/npm/dist/patchbridge-agent.js")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(head.status(), StatusCode::OK);
    let post = r
        .send(req(
            "POST",
            "/npm/dist/patchbridge-agent.js",
            "ana",
            Some(json!({})),
        ))
        .await;
    assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(post.headers()[header::ALLOW], "GET, HEAD");
    for path in [
        "/npm/dist/.hidden",
        "/npm/dist/%2ehidden",
        "/npm/dist/../../examples/demo/index.html",
        "/npm/dist/missing.js",
        "/npm/pkg/patchbridge_agent.js",
        "/examples/",
        "/README.md",
    ] {
        assert_eq!(
            r.send(get(path)).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_configured_directory_wins_over_the_embedded_site() {
    let examples = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(examples.path().join("demo")).unwrap();
    std::fs::write(examples.path().join("demo/index.html"), "<p>from disk</p>").unwrap();
    let (r, _db) = fixture_relay(json!({ "examplesDir": examples.path() })).await;
    let page = r.send(get("/examples/demo/")).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(body_text(page).await, "<p>from disk</p>");
    // What no directory replaces is still the embedded tree's.
    let script = r.send(get("/npm/dist/patchbridge-agent.js")).await;
    assert!(body_text(script).await.contains("fixture"));
}
