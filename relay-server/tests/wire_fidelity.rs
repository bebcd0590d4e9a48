//! Provider state and caching through the relay's whole HTTP path, against a fake upstream: the second call of
//! an Anthropic tool loop carries the prompt-cache breakpoints and its cached-token usage reaches
//! `message-stop`; `promptCaching: false` switches the breakpoints off; a ModelState that no longer matches
//! its message answers `MODEL_STATE_MISMATCH` naming the message, and the same messages continue with
//! `modelState: null`.

mod common;

use axum::http::StatusCode;
use common::*;
use serde_json::{json, Value};

/// The assistant message a `message-start` … `message-stop` stream describes, and its `message-stop`.
fn assemble(events: &[Value]) -> (Value, Value) {
    let mut blocks: Vec<Value> = Vec::new();
    let mut id = Value::Null;
    let mut stop = Value::Null;
    for e in events {
        match e["type"].as_str().unwrap() {
            "message-start" => id = e["id"].clone(),
            "block-start" => {
                let mut block = e["block"].clone();
                match block["type"].as_str().unwrap() {
                    "tool-call" => block["input"] = json!(""),
                    _ => block["text"] = json!(""),
                }
                blocks.push(block);
            }
            "block-delta" => {
                let block = &mut blocks[e["index"].as_u64().unwrap() as usize];
                let key = if block["type"] == "tool-call" {
                    "input"
                } else {
                    "text"
                };
                let text = format!(
                    "{}{}",
                    block[key].as_str().unwrap(),
                    e["delta"].as_str().unwrap()
                );
                block[key] = json!(text);
            }
            "block-stop" => {
                let block = &mut blocks[e["index"].as_u64().unwrap() as usize];
                if block["type"] == "tool-call" {
                    block["input"] =
                        serde_json::from_str(block["input"].as_str().unwrap()).unwrap();
                }
            }
            "message-stop" => stop = e.clone(),
            other => panic!("unexpected event {other}: {e}"),
        }
    }
    (
        json!({ "id": id, "role": "assistant", "blocks": blocks }),
        stop,
    )
}

fn tool_results_for(assistant: &Value) -> Value {
    let results: Vec<Value> = assistant["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool-call")
        .map(|b| json!({ "type": "tool-result", "callId": b["callId"], "content": "added", "isError": false }))
        .collect();
    json!({ "id": "t1", "role": "tool", "blocks": results })
}

/// Every place a breakpoint sits in an upstream body, as a JSON pointer.
fn breakpoints(body: &Value) -> Vec<String> {
    fn walk(v: &Value, path: String, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if map.contains_key("cache_control") {
                    out.push(path.clone());
                }
                for (k, x) in map {
                    walk(x, format!("{path}/{k}"), out);
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(x, format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, String::new(), &mut out);
    out
}

/// Runs a two-call tool loop against the `claude` model; returns the upstream bodies and the second call's
/// `message-stop`.
async fn tool_loop(extra: Value) -> (Vec<Value>, Value) {
    let (fake, r, _db) = relay_with_upstream(
        vec![
            Reply::sse(read_fixture(
                "anthropic-messages/recorded/tool_use_response.sse",
            )),
            Reply::sse(read_fixture("anthropic-messages/cache_read_text.sse")),
        ],
        extra,
    )
    .await;
    let mut request = first_turn_request("claude");
    let (status, text) = post_model(&r, request.clone()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let (assistant, stop) = assemble(&events_of(&text));
    assert_eq!(stop["stopReason"], "tool-use");
    let results = tool_results_for(&assistant);
    let messages = request["messages"].as_array_mut().unwrap();
    messages.push(assistant);
    messages.push(results);
    request["modelState"] = stop["modelState"].clone();
    let (status, text) = post_model(&r, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let (_, stop) = assemble(&events_of(&text));
    let bodies = fake.requests().into_iter().map(|r| r.body).collect();
    (bodies, stop)
}

#[tokio::test]
async fn second_call_of_a_tool_loop_sends_cache_breakpoints_and_cached_usage_reaches_message_stop()
{
    let (bodies, stop) = tool_loop(json!({})).await;
    assert_eq!(bodies.len(), 2);
    // Call 1: the tools and the newest (only) message. Call 2: the tools, the message where call 1 put its
    // breakpoint (so it reads what call 1 wrote) and the newest turn, the tool results.
    assert_eq!(
        breakpoints(&bodies[0]),
        vec!["/messages/0/content/0", "/tools/3"]
    );
    assert_eq!(
        breakpoints(&bodies[1]),
        vec!["/messages/0/content/0", "/messages/2/content/0", "/tools/3"]
    );
    assert_eq!(
        bodies[1]["messages"][2]["content"][0]["type"],
        "tool_result"
    );
    assert_eq!(
        bodies[1]["messages"][2]["content"][0]["cache_control"],
        json!({ "type": "ephemeral" })
    );
    assert_eq!(stop["usage"]["cacheReadTokens"], 2048);
    assert_eq!(stop["usage"]["cacheWriteTokens"], 180);
    assert_eq!(stop["usage"]["inputTokens"], 14 + 180 + 2048);
}

#[tokio::test]
async fn prompt_caching_false_sends_no_breakpoints() {
    let db = TestDb::new(Backend::Sqlite);
    let fake = FakeUpstream::start(vec![Reply::sse(read_fixture(
        "anthropic-messages/recorded/basic_response.sse",
    ))])
    .await;
    set_key();
    let mut claude = model("claude", "anthropic-messages", &fake);
    claude["promptCaching"] = json!(false);
    claude["systemPrompt"] = json!("Be brief.");
    let r = relay(base_config(&db, json!({ "models": [claude] }))).await;
    let (status, text) = post_model(&r, first_turn_request("claude")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let body = &fake.requests()[0].body;
    assert!(breakpoints(body).is_empty(), "{body}");
    assert_eq!(body["system"], "Be brief.");
}

#[tokio::test]
async fn mismatched_model_state_names_the_message_and_the_messages_continue_without_it() {
    let (fake, r, _db) = relay_with_upstream(
        vec![
            Reply::sse(read_fixture("openai-responses/recorded/vercel-phase.sse")),
            Reply::sse(read_fixture("openai-responses/text.sse")),
        ],
        json!({}),
    )
    .await;
    let mut request = first_turn_request("responses");
    let (status, text) = post_model(&r, request.clone()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let (mut assistant, stop) = assemble(&events_of(&text));
    assert_eq!(assistant["id"], "resp_phase_001");
    // The user's page dropped the commentary block; the stored state still describes two messages.
    assistant["blocks"].as_array_mut().unwrap().remove(0);
    let messages = request["messages"].as_array_mut().unwrap();
    messages.push(assistant);
    messages.push(
        json!({ "id": "u2", "role": "user", "blocks": [{ "type": "text", "text": "and Spain?" }] }),
    );
    request["modelState"] = stop["modelState"].clone();
    let (status, text) = post_model(&r, request.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    let error: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(error["error"]["code"], "MODEL_STATE_MISMATCH");
    assert_eq!(error["error"]["messageId"], "resp_phase_001");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("new conversation"));
    assert_eq!(fake.requests().len(), 1, "nothing went upstream");
    // The way forward: the same messages without state.
    request["modelState"] = Value::Null;
    let (status, text) = post_model(&r, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let sent = &fake.requests()[1].body;
    assert_eq!(
        sent["input"][1],
        json!({ "type": "message", "role": "assistant", "content": "The capital of France is Paris." })
    );
}
