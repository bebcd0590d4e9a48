//! The scripted demo model: well-formed streams, obvious requests become tool calls with valid input, tool
//! results are summarised, the first answer of a conversation (only) says it is a scripted demo, and ModelState passes through.

use patchbridge_protocol::{Block, ModelState, StopReason, ToolDefinition};
use patchbridge_relay::model::scripted::{respond, DISCLAIMER};
use serde_json::{json, Value};
use support::*;

/// `todo.add` and `todo.list` of the page tools, and a clock whose required argument has a default.
fn todo_tools() -> Vec<ToolDefinition> {
    let mut tools = page_tools()[..2].to_vec();
    tools.push(tool(
        "clock.now",
        json!({ "type": "object", "properties": { "timeZone": { "type": "string", "default": "UTC" } },
                "required": ["timeZone"] }),
    ));
    tools
}

fn ask(text: &str) -> patchbridge_protocol::ModelRequest {
    let mut r = request(vec![user("u1", text)], None);
    r.tools = todo_tools();
    r
}

fn text_of(a: &Assembled) -> String {
    a.message
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn call_of(a: &Assembled) -> Option<(String, Value)> {
    a.message.blocks.iter().find_map(|b| match b {
        Block::ToolCall { name, input, .. } => Some((name.clone(), Value::Object(input.clone()))),
        _ => None,
    })
}

#[test]
fn add_todo_calls_the_add_tool_with_the_item_as_valid_input() {
    let a = assemble(&respond(&ask("add todo buy milk")));
    assert_eq!(a.stop_reason, StopReason::ToolUse);
    assert_eq!(
        call_of(&a),
        Some(("todo.add".into(), json!({ "text": "buy milk" })))
    );
    assert!(text_of(&a).starts_with(DISCLAIMER));
}

#[test]
fn add_phrasings_strip_filler_words() {
    for (said, item) in [
        ("Add a todo: call mom", "call mom"),
        ("add \"water plants\" to my todo list", "water plants"),
        ("Add eggs to my list please", "eggs"),
    ] {
        let a = assemble(&respond(&ask(said)));
        assert_eq!(
            call_of(&a),
            Some(("todo.add".into(), json!({ "text": item }))),
            "{said}"
        );
    }
}

#[test]
fn list_todos_calls_the_list_tool_with_empty_input() {
    let a = assemble(&respond(&ask("list todos")));
    assert_eq!(call_of(&a), Some(("todo.list".into(), json!({}))));
}

#[test]
fn what_time_is_it_calls_the_clock_filling_required_defaults() {
    let a = assemble(&respond(&ask("What time is it?")));
    assert_eq!(
        call_of(&a),
        Some(("clock.now".into(), json!({ "timeZone": "UTC" })))
    );
}

#[test]
fn no_matching_tool_means_no_call() {
    let mut r = ask("add todo buy milk");
    r.tools.clear();
    let a = assemble(&respond(&r));
    assert_eq!(a.stop_reason, StopReason::EndTurn);
    assert_eq!(call_of(&a), None);
    assert!(text_of(&a).contains("buy milk"), "echoes: {}", text_of(&a));
}

#[test]
fn tool_result_is_summarised_and_never_calls_again() {
    let mut r = ask("add todo buy milk");
    let first = assemble(&respond(&r));
    let Some(Block::ToolCall { call_id, .. }) = first
        .message
        .blocks
        .iter()
        .find(|b| matches!(b, Block::ToolCall { .. }))
        .cloned()
    else {
        panic!("expected a tool call")
    };
    r.messages.push(first.message);
    r.messages.push(tool_result(
        "t1",
        &[(&call_id, "Added \"buy milk\" (3 open)", false)],
    ));
    let second = assemble(&respond(&r));
    assert_eq!(second.stop_reason, StopReason::EndTurn);
    assert_eq!(call_of(&second), None);
    let text = text_of(&second);
    assert!(
        !text.contains(DISCLAIMER),
        "said once per conversation, in its first answer: {text}"
    );
    assert!(
        text.contains("todo.add returned: Added \"buy milk\" (3 open)"),
        "{text}"
    );
}

#[test]
fn tool_error_is_reported_as_an_error() {
    let mut r = ask("list todos");
    let first = assemble(&respond(&r));
    let call_id = match &first.message.blocks[1] {
        Block::ToolCall { call_id, .. } => call_id.clone(),
        other => panic!("{other:?}"),
    };
    r.messages.push(first.message);
    r.messages.push(tool_result(
        "t1",
        &[(&call_id, "storage unavailable", true)],
    ));
    assert!(text_of(&assemble(&respond(&r)))
        .contains("todo.list reported an error: storage unavailable"));
}

#[test]
fn greets_and_names_the_page_tools() {
    let text = text_of(&assemble(&respond(&ask("Hello"))));
    assert!(text.starts_with(DISCLAIMER));
    assert!(text.contains("todo.add, todo.list, clock.now"), "{text}");
    assert!(text.contains("do not understand language"));
}

#[test]
fn echoes_anything_else() {
    let a = assemble(&respond(&ask("Tell me about the moon")));
    assert_eq!(a.stop_reason, StopReason::EndTurn);
    assert!(text_of(&a).contains("You wrote: \"Tell me about the moon\""));
}

#[test]
fn words_inside_other_words_do_not_trigger_tools() {
    // "address" contains "add", "timeless" contains "time": neither is a request.
    for said in ["my address is 5 Main St", "a timeless classic"] {
        assert_eq!(call_of(&assemble(&respond(&ask(said)))), None, "{said}");
    }
}

#[test]
fn model_state_of_another_provider_passes_through_unchanged() {
    let mut r = ask("hello");
    let state = ModelState {
        format: "anthropic-messages/v1".into(),
        data: json!({ "messages": { "m": { "content": [] } } }),
    };
    r.model_state = Some(state.clone());
    assert_eq!(assemble(&respond(&r)).model_state, Some(state));
}

#[test]
fn is_deterministic_and_ids_are_unique_in_the_conversation() {
    let mut r = ask("hello");
    r.messages
        .insert(0, assistant("scripted-1", vec![text("x")]));
    let a = respond(&r);
    assert_eq!(a, respond(&r));
    let id = assemble(&a).message.id;
    assert!(!r.messages.iter().any(|m| m.id == id), "{id}");
}

#[test]
fn empty_conversation_gets_a_greeting() {
    let mut r = ask("x");
    r.messages.clear();
    assert!(text_of(&assemble(&respond(&r))).contains("scripted demo model"));
}

#[test]
fn camel_case_tool_names_are_recognised() {
    let mut r = ask("add todo walk the dog");
    r.tools = vec![tool(
        "addTodo",
        json!({ "type": "object", "properties": { "title": { "type": "string" } } }),
    )];
    assert_eq!(
        call_of(&assemble(&respond(&r))),
        Some(("addTodo".into(), json!({ "title": "walk the dog" })))
    );
}

#[test]
fn the_tool_named_after_what_the_user_mentions_wins() {
    let mut r = ask("list notes");
    r.tools = vec![
        tool("todo.list", json!({ "type": "object", "properties": {} })),
        tool("notes.list", json!({ "type": "object", "properties": {} })),
    ];
    assert_eq!(
        call_of(&assemble(&respond(&r))).map(|c| c.0),
        Some("notes.list".into())
    );
    r.messages = vec![user("u1", "show my todos")];
    assert_eq!(
        call_of(&assemble(&respond(&r))).map(|c| c.0),
        Some("todo.list".into())
    );
    r.tools.reverse();
    assert_eq!(
        call_of(&assemble(&respond(&r))).map(|c| c.0),
        Some("todo.list".into())
    );
}

// Requests, messages and the stream check come from the providers crate's test helpers (one copy for both
// crates' tests; the relay depends on that crate, so the module compiles here as well).
#[path = "../providers/tests/common/mod.rs"]
mod support;

/// "sloppy add todo …": the first call sends the text as a list (a type mistake); once the runtime answers with
/// its `[invalid arguments]` error result, the next step repairs the call; a tool's own error is only reported.
#[test]
fn a_sloppy_request_makes_one_invalid_call_and_repairs_it_after_the_refusal() {
    let mut r = ask("sloppy add todo buy milk");
    let first = assemble(&respond(&r));
    assert_eq!(
        call_of(&first),
        Some(("todo.add".into(), json!({ "text": ["buy milk"] })))
    );
    assert!(text_of(&first).contains("sloppily"), "{}", text_of(&first));
    let Some(Block::ToolCall { call_id, .. }) = first.message.blocks.get(1).cloned() else {
        panic!("expected a tool call")
    };
    r.messages.push(first.message.clone());
    let refusal = "[invalid arguments] The call to todo.add was not run: its arguments do not match the tool's inputSchema. Correct them and call the tool again.\n- \"/text\": expected type string; got array of 1 items";
    r.messages
        .push(tool_result("t1", &[(&call_id, refusal, true)]));
    let second = assemble(&respond(&r));
    assert_eq!(second.stop_reason, StopReason::ToolUse);
    assert_eq!(
        call_of(&second),
        Some(("todo.add".into(), json!({ "text": "buy milk" })))
    );
    assert!(
        text_of(&second).contains("Repairing"),
        "{}",
        text_of(&second)
    );

    // A tool's own error result is summarised, not repaired.
    let mut own_error = r.clone();
    own_error.messages.pop();
    own_error
        .messages
        .push(tool_result("t1", &[(&call_id, "the list is full", true)]));
    let summary = assemble(&respond(&own_error));
    assert_eq!(summary.stop_reason, StopReason::EndTurn);
    assert!(text_of(&summary).contains("reported an error: the list is full"));
}
