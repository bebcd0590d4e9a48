//! The providers crate's fixture streams replayed by fake upstream servers (real HTTP on 127.0.0.1) through the
//! relay's whole HTTP path, whole and split at awkward byte offsets, compared with the providers crate's golden
//! neutral events; and the exact request bodies, paths and headers the relay sends upstream.

mod common;

use std::time::Duration;

use axum::http::StatusCode;
use common::*;
use patchbridge_protocol::ModelRequest;
use patchbridge_providers::{encode_request, ProviderKind};
use serde_json::{json, Value};

fn golden(rel: &str) -> Vec<Value> {
    read_fixture(rel)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn fixtures_of(dir: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for sub in ["", "/recorded"] {
        let path = provider_fixture(&format!("{dir}{sub}"));
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for e in entries {
            let name = e.unwrap().file_name().into_string().unwrap();
            if let Some(stem) = name.strip_suffix(".sse") {
                let expected = if sub.is_empty() {
                    format!("{dir}/expected/{stem}.jsonl")
                } else {
                    format!("{dir}/expected/recorded-{stem}.jsonl")
                };
                out.push((format!("{dir}{sub}/{name}"), expected));
            }
        }
    }
    out.sort();
    out
}

/// Replays every fixture of one provider through the relay's HTTP path and compares the neutral events with
/// the providers crate's golden files, for the whole body and for bodies split into 1- and 7-byte chunks.
async fn replay_all_goldens(provider: &str, model_id: &str, dir: &str) {
    let files = fixtures_of(dir);
    assert!(
        files.len() >= 5,
        "fixtures for {dir} exist ({} found)",
        files.len()
    );
    for (fixture, expected_file) in files {
        let expected = golden(&expected_file);
        for chunk in [usize::MAX, 7, 1] {
            let fake = FakeUpstream::start(vec![Reply::Sse {
                body: read_fixture(&fixture).into_bytes(),
                chunk,
                delay: Duration::ZERO,
            }])
            .await;
            let db = TestDb::new(Backend::Sqlite);
            let r = relay_for(&fake, &db, json!({})).await;
            let (status, text) = post_model(&r, first_turn_request(model_id)).await;
            assert_eq!(status, StatusCode::OK, "{fixture}: {text}");
            let events = events_of(&text);
            assert_eq!(
                events, expected,
                "{provider} {fixture} (chunk {chunk}) differs from {expected_file}"
            );
            // A retryable failure before the first event is retried once (docs/protocol.md §4, retry rule);
            // nothing is retried once an event went to the browser.
            let retried_before_any_event =
                expected[0]["type"] == "error" && expected[0]["retryable"] == true;
            assert_eq!(
                fake.requests().len(),
                if retried_before_any_event { 2 } else { 1 },
                "{fixture}: one upstream call, never retried after the stream began"
            );
        }
    }
}

#[tokio::test]
async fn openai_chat_fixtures_replay_to_golden_events() {
    replay_all_goldens("openai-chat", "chat", "openai-chat").await;
}

#[tokio::test]
async fn openai_responses_fixtures_replay_to_golden_events() {
    replay_all_goldens("openai-responses", "responses", "openai-responses").await;
}

#[tokio::test]
async fn anthropic_fixtures_replay_to_golden_events() {
    replay_all_goldens("anthropic-messages", "claude", "anthropic-messages").await;
}

/// The upstream receives exactly the adapter's encoding of the request, at the adapter's path, with the
/// provider's auth header built from the secret and the adapter's extra headers.
#[tokio::test]
async fn upstream_gets_exact_body_path_and_auth_headers() {
    let cases = [
        (
            "chat",
            ProviderKind::OpenAiChat,
            "openai-chat/recorded/173417d55340.sse",
        ),
        (
            "responses",
            ProviderKind::OpenAiResponses,
            "openai-responses/text.sse",
        ),
        (
            "claude",
            ProviderKind::AnthropicMessages,
            "anthropic-messages/recorded/basic_response.sse",
        ),
    ];
    for (id, kind, fixture) in cases {
        let fake = FakeUpstream::start(vec![Reply::sse(read_fixture(fixture))]).await;
        let db = TestDb::new(Backend::Sqlite);
        let r = relay_for(&fake, &db, json!({})).await;
        let request = first_turn_request(id);
        let (status, text) = post_model(&r, request.clone()).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        let got = fake.requests();
        assert_eq!(got.len(), 1);
        let neutral: ModelRequest = serde_json::from_value(request).unwrap();
        let options = patchbridge_providers::ModelOptions::new(format!("{id}-upstream"));
        let expected = encode_request(kind, &options, &neutral).unwrap();
        assert_eq!(got[0].path, format!("/v1{}", expected.path), "{id}");
        assert_eq!(
            got[0].body, expected.body,
            "{id}: body is the adapter's encoding, unmodified"
        );
        assert_eq!(got[0].body["stream"], true);
        assert_eq!(got[0].body["model"], format!("{id}-upstream"));
        let h = &got[0].headers;
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["accept"], "text/event-stream");
        for (name, value) in &expected.headers {
            assert_eq!(h[*name], value.as_str(), "{id}: adapter header {name}");
        }
        match kind {
            ProviderKind::AnthropicMessages => {
                assert_eq!(h["x-api-key"], KEY);
                assert!(h.get("authorization").is_none());
                assert!(h.get("anthropic-version").is_some());
            }
            _ => {
                assert_eq!(h["authorization"], format!("Bearer {KEY}"));
                assert!(h.get("x-api-key").is_none());
            }
        }
    }
}
