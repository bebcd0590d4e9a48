//! Prompt caching requests: Anthropic `cache_control` breakpoints on the stable prefix of every call of a tool
//! loop (tools, system prompt, the conversation so far), at most four, never on thinking blocks; switched off
//! per model by `promptCaching: false`.

mod common;

use common::*;
use patchbridge_providers::{encode_request, ModelOptions, ProviderKind, ReasoningOptions};
use serde_json::{json, Value};

const KIND: ProviderKind = ProviderKind::AnthropicMessages;

fn options() -> ModelOptions {
    let mut options = ModelOptions::new("claude-sonnet-4-5");
    options.system_prompt = Some("You manage a todo list.".into());
    options
}

/// Every place a breakpoint sits, as a JSON pointer.
fn breakpoints(body: &Value) -> Vec<String> {
    fn walk(v: &Value, path: String, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if map.get("cache_control") == Some(&json!({ "type": "ephemeral" })) {
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
    // Object keys keep the request's own order; compare the set of places, not the walk order.
    out.sort();
    out
}

#[test]
fn second_call_of_a_tool_loop_marks_tools_system_the_previous_prefix_and_the_newest_turn() {
    let first = first_turn();
    let call1 = encode_request(KIND, &options(), &first).unwrap().body;
    assert_eq!(
        breakpoints(&call1),
        vec!["/messages/0/content/0", "/system/0", "/tools/3"]
    );
    let a = assemble(&decode_ok(
        KIND,
        &first,
        "anthropic-messages/recorded/tool_use_response.sse",
    ));
    let second = next_turn(&first, &a);
    let call2 = encode_request(KIND, &options(), &second).unwrap().body;
    // messages: 0 user "Please help." (where call 1 put its breakpoint), 1 assistant (text + tool_use),
    // 2 user (tool_result, the newest turn).
    assert_eq!(
        breakpoints(&call2),
        vec![
            "/messages/0/content/0",
            "/messages/2/content/0",
            "/system/0",
            "/tools/3"
        ]
    );
    assert_eq!(
        call2["messages"][2]["content"][0]["type"],
        json!("tool_result")
    );
    // The prefix call 1 wrote is byte-identical at the start of call 2 (the breakpoint marker aside).
    assert_eq!(call1["tools"], call2["tools"]);
    assert_eq!(call1["system"], call2["system"]);
    assert_eq!(call1["messages"][0], call2["messages"][0]);
}

#[test]
fn thinking_blocks_never_carry_a_breakpoint_and_there_are_never_more_than_four() {
    let mut opts = options();
    opts.reasoning = Some(ReasoningOptions {
        budget_tokens: Some(2048),
        ..Default::default()
    });
    let first = first_turn();
    let a = assemble(&decode_ok(
        KIND,
        &first,
        "anthropic-messages/thinking_tool_use.sse",
    ));
    let mut conversation = next_turn(&first, &a);
    // A long conversation: several earlier turns.
    for n in 0..5 {
        conversation
            .messages
            .push(assistant(&format!("x{n}"), vec![text("Noted.")]));
        conversation.messages.push(user(&format!("y{n}"), "More."));
    }
    let body = encode_request(KIND, &opts, &conversation).unwrap().body;
    let marks = breakpoints(&body);
    assert!(marks.len() <= 4, "{marks:?}");
    for m in &marks {
        let block = body.pointer(m).unwrap();
        assert!(
            !matches!(
                block["type"].as_str(),
                Some("thinking" | "redacted_thinking")
            ),
            "{m}"
        );
    }
    // The assistant message whose thinking goes back verbatim: its thinking block is untouched.
    let thinking = &body["messages"][1]["content"][0];
    assert_eq!(thinking["type"], json!("thinking"));
    assert!(thinking.get("cache_control").is_none());
}

#[test]
fn prompt_caching_off_sends_no_breakpoint_and_a_plain_system_prompt() {
    let mut opts = options();
    opts.prompt_caching = false;
    let first = first_turn();
    let a = assemble(&decode_ok(
        KIND,
        &first,
        "anthropic-messages/recorded/tool_use_response.sse",
    ));
    let body = encode_request(KIND, &opts, &next_turn(&first, &a))
        .unwrap()
        .body;
    assert!(breakpoints(&body).is_empty());
    assert_eq!(body["system"], json!("You manage a todo list."));
}

#[test]
fn cache_read_and_write_tokens_reach_the_neutral_usage() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        "anthropic-messages/cache_read_text.sse",
    ));
    assert_eq!(a.usage.cache_read_tokens, 2048);
    assert_eq!(a.usage.cache_write_tokens, 180);
    // Neutral input counts every input token, cached or not.
    assert_eq!(a.usage.input_tokens, 14 + 180 + 2048);
}
