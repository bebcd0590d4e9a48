//! `patchbridge-relay usage` reads only what it uses: run against the configuration of a relay whose model API
//! key variable is unset, whose identity key set is unreachable and whose served directory is gone (a
//! configuration the relay itself refuses to start with), it prints the user's spending from the database.

mod common;

use std::time::Duration;

use axum::http::StatusCode;
use common::*;
use serde_json::json;

#[tokio::test]
async fn usage_runs_with_only_the_database_settings_usable() {
    let db = TestDb::new(Backend::Sqlite);
    let spending = json!({ "windows": [ { "windowSeconds": 3600, "calls": 9 } ] });
    let r = relay(base_config(&db, json!({ "spending": spending }))).await;
    for _ in 0..2 {
        let response = r
            .send(req(
                "POST",
                "/api/model",
                "erin",
                Some(first_turn_request("scripted")),
            ))
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        body_text(response).await;
    }

    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let operator_config = json!({
        "server": { "bind": "127.0.0.1:0", "npmDir": "/nonexistent/patchbridge-npm" },
        "identity": { "mode": "jwt", "jwksUrl": format!("http://{closed}/jwks.json") },
        "database": db.config.clone(),
        "spending": spending,
        "models": [{ "id": "gpt", "provider": "openai-chat", "baseUrl": "https://api.openai.com/v1",
                     "upstreamModel": "gpt-4.1-mini",
                     "apiKey": { "env": "PB_USAGE_TEST_KEY_THAT_IS_NEVER_SET" } }],
    });
    let parsed =
        patchbridge_relay::config::RelayConfig::from_json(&operator_config.to_string()).unwrap();
    assert!(
        parsed.validate().is_err(),
        "the relay itself would refuse it"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("relay.json");
    std::fs::write(&path, operator_config.to_string()).unwrap();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_patchbridge-relay"))
            .args(["usage", "--user", "erin", "--config"])
            .arg(&path)
            .env_remove("PATCHBRIDGE_CONFIG")
            .env_remove("PB_USAGE_TEST_KEY_THAT_IS_NEVER_SET")
            .output()
            .unwrap()
    };
    // The calls' usage is recorded after their streams end: read until both are there.
    let mut last = String::new();
    for _ in 0..300 {
        let out = run();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let used: Vec<&str> = stdout
            .lines()
            .find(|l| l.contains("3600 s fixed"))
            .unwrap_or_else(|| panic!("no window line in {stdout}"))
            .split_whitespace()
            .rev()
            .take(2)
            .collect();
        if used == ["9", "2"] {
            return;
        }
        last = stdout;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the usage never showed 2 calls: {last}");
}
