//! Anthropic Messages adapter: decoding fixtures (recorded and documented-format), encoding exact request
//! bodies, and ModelState round trips.

mod common;

use common::*;
use patchbridge_protocol::{Block, Message, ModelState, Role, StopReason, StreamEvent, Usage};
use patchbridge_providers::{
    encode_request, validate_options, ModelOptions, ProviderKind, ReasoningOptions,
};
use serde_json::{json, Value};

const KIND: ProviderKind = ProviderKind::AnthropicMessages;
const DIR: &str = "anthropic-messages";

fn f(name: &str) -> String {
    format!("{DIR}/{name}")
}

/// Caching off: these tests pin the content mapping; the breakpoints have their own tests (`prompt_caching.rs`).
fn options() -> ModelOptions {
    let mut options = ModelOptions::new("claude-sonnet-4-5");
    options.prompt_caching = false;
    options
}

#[test]
fn every_fixture_decodes_to_its_golden_events() {
    check_all_goldens(KIND, DIR);
}

#[test]
fn recorded_text_stream_decodes_exactly() {
    let events = decode_ok(KIND, &first_turn(), &f("recorded/basic_response.sse"));
    assert_eq!(
        events,
        vec![
            StreamEvent::MessageStart {
                id: Some("msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK".into()),
                model: None
            },
            StreamEvent::BlockStart {
                index: 0,
                block: patchbridge_protocol::BlockKind::Text
            },
            StreamEvent::BlockDelta {
                index: 0,
                delta: "Hello".into()
            },
            StreamEvent::BlockDelta {
                index: 0,
                delta: " there".into()
            },
            StreamEvent::BlockDelta {
                index: 0,
                delta: "!".into()
            },
            StreamEvent::block_stop(0),
            StreamEvent::MessageStop {
                stop_reason: StopReason::EndTurn,
                usage: Usage {
                    input_tokens: 11,
                    output_tokens: 6,
                    ..Usage::default()
                },
                model_state: None,
            },
        ]
    );
}

#[test]
fn tool_input_split_across_chunks_becomes_one_object() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("recorded/tool_use_response.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::ToolUse);
    assert_eq!(
        a.message.blocks[1],
        tool_call(
            "toolu_01NRLabsLyVHZPKxbKvkfSMn",
            "get_weather",
            json!({ "location": "Paris" })
        )
    );
    assert_eq!(
        a.model_state, None,
        "text and tool use need no private state"
    );
}

#[test]
fn thinking_with_signature_is_shown_and_kept_in_state() {
    let events = decode_ok(KIND, &first_turn(), &f("thinking_tool_use.sse"));
    let a = assemble(&events);
    assert_eq!(a.message.id, "msg_01ThinkTool");
    assert_eq!(
        a.message.blocks,
        vec![
            reasoning("The user wants a todo added. I should call todo_add."),
            text("Adding it now."),
            // The provider-safe name maps back to the page's dotted name.
            tool_call("toolu_01AddMilk", "todo.add", json!({ "text": "buy milk" })),
        ]
    );
    assert_eq!(
        a.model_state,
        Some(ModelState {
            format: "anthropic-messages/v1".into(),
            data: json!({ "messages": { "msg_01ThinkTool": { "content": [
                { "raw": { "type": "thinking", "thinking": "The user wants a todo added. I should call todo_add.",
                           "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+XT6jmFbt9ofnKa+0WXGJwWo7sUtF1RGTktw=" },
                  "blocks": [0] },
                { "blocks": [1] },
                { "blocks": [2] },
            ] } } }),
        })
    );
}

#[test]
fn usage_counts_cache_reads_and_writes_as_input() {
    let a = assemble(&decode_ok(KIND, &first_turn(), &f("thinking_tool_use.sse")));
    assert_eq!(
        a.usage,
        Usage {
            input_tokens: 512 + 100 + 2048,
            output_tokens: 87,
            reasoning_tokens: 0,
            cache_read_tokens: 2048,
            cache_write_tokens: 100
        }
    );
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("recorded/stream-a-refusal.sse"),
    ));
    assert_eq!(a.usage.reasoning_tokens, 67);
    assert_eq!(a.usage.output_tokens, 106);
}

/// Decodes `fixture` as the answer to turn 1, then encodes turn 2 (the tool results) with the produced state.
fn tool_loop_body(fixture: &str, results: &[(&str, &str, bool)]) -> (Value, Message) {
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f(fixture)));
    let next = continue_after(&first, &a, vec![tool_result("t1", results)]);
    (
        encode_request(KIND, &options(), &next).unwrap().body,
        a.message,
    )
}

#[test]
fn signature_goes_back_verbatim_at_its_position_in_the_tool_loop() {
    let (body, _) = tool_loop_body(
        "thinking_tool_use.sse",
        &[("toolu_01AddMilk", "added #3", false)],
    );
    assert_eq!(
        body["messages"],
        json!([
            { "role": "user", "content": [{ "type": "text", "text": "Please help." }] },
            { "role": "assistant", "content": [
                { "type": "thinking", "thinking": "The user wants a todo added. I should call todo_add.",
                  "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+XT6jmFbt9ofnKa+0WXGJwWo7sUtF1RGTktw=" },
                { "type": "text", "text": "Adding it now." },
                { "type": "tool_use", "id": "toolu_01AddMilk", "name": "todo_add", "input": { "text": "buy milk" } },
            ] },
            { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "toolu_01AddMilk", "content": "added #3" }] },
        ])
    );
}

#[test]
fn redacted_thinking_goes_back_unchanged_before_the_signed_thinking() {
    let (body, message) = tool_loop_body(
        "redacted_thinking.sse",
        &[("toolu_01Clock", "12:00", false)],
    );
    // Only the readable thinking is shown; the redacted block exists only in ModelState.
    assert_eq!(message.blocks[0], reasoning("Checking the clock tool."));
    assert_eq!(message.blocks.len(), 2);
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            { "type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabqlRFzHW4DpEqSLKhTZ" },
            { "type": "thinking", "thinking": "Checking the clock tool.", "signature": "c2lnLXR3bw==" },
            { "type": "tool_use", "id": "toolu_01Clock", "name": "clock_now", "input": {} },
        ])
    );
}

#[test]
fn parallel_tool_uses_get_neutral_indexes_and_results_merge_into_one_user_message() {
    let events = decode_ok(KIND, &first_turn(), &f("parallel_tool_use.sse"));
    let starts: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::BlockStart { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![0, 1]);
    let (body, _) = tool_loop_body(
        "parallel_tool_use.sse",
        &[
            ("toolu_01A", "sunny", false),
            ("toolu_01B", "timeout", true),
        ],
    );
    assert_eq!(
        body["messages"][2],
        json!({ "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "toolu_01A", "content": "sunny" },
            { "type": "tool_result", "tool_use_id": "toolu_01B", "content": "timeout", "is_error": true },
        ] })
    );
}

#[test]
fn user_text_after_tool_results_joins_the_same_user_turn() {
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f("parallel_tool_use.sse")));
    let next = continue_after(
        &first,
        &a,
        vec![
            tool_result("t1", &[("toolu_01A", "sunny", false)]),
            tool_result("t2", &[("toolu_01B", "rain", false)]),
            user("u2", "And tomorrow?"),
        ],
    );
    let body = encode_request(KIND, &options(), &next).unwrap().body;
    assert_eq!(body["messages"].as_array().unwrap().len(), 3);
    assert_eq!(
        body["messages"][2]["content"],
        json!([
            { "type": "tool_result", "tool_use_id": "toolu_01A", "content": "sunny" },
            { "type": "tool_result", "tool_use_id": "toolu_01B", "content": "rain" },
            { "type": "text", "text": "And tomorrow?" },
        ])
    );
}

#[test]
fn max_tokens_keeps_shown_text_and_drops_the_cut_tool_call() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("recorded/incomplete_partial_json_response.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::MaxTokens);
    assert_eq!(a.message.blocks.len(), 1);
    assert!(
        matches!(&a.message.blocks[0], Block::Text { text, .. } if text.ends_with("Let me do that for you now."))
    );
}

#[test]
fn max_tokens_inside_thinking_keeps_the_shown_reasoning_without_state() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("max_tokens_in_thinking.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::MaxTokens);
    assert_eq!(
        a.message.blocks,
        vec![reasoning("Let me think about this for a very long")]
    );
    // An unsigned thinking block cannot be sent back, so there is nothing private to carry.
    assert_eq!(a.model_state, None);
}

#[test]
fn pause_turn_maps_and_server_tool_use_is_kept_verbatim() {
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f("pause_turn.sse")));
    assert_eq!(a.stop_reason, StopReason::PauseTurn);
    assert_eq!(a.message.blocks, vec![text("Searching.")]);
    // The runtime calls again with the paused message appended; the server tool call goes back as it was.
    let body = encode_request(KIND, &options(), &continue_after(&first, &a, vec![]))
        .unwrap()
        .body;
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            { "type": "text", "text": "Searching." },
            { "type": "server_tool_use", "id": "srvtoolu_01P", "name": "web_search", "input": { "query": "eclipse 2026" } },
        ])
    );
}

#[test]
fn refusal_maps_to_refusal() {
    for file in [
        "recorded/refusal_response.sse",
        "recorded/stream-a-refusal.sse",
        "recorded/stream-a-toolrefusal.sse",
    ] {
        let a = assemble(&decode_ok(KIND, &first_turn(), &f(file)));
        assert_eq!(a.stop_reason, StopReason::Refusal, "{file}");
    }
}

#[test]
fn error_event_mid_stream_is_upstream_unavailable_and_retryable() {
    let (events, e) = decode_err(KIND, &first_turn(), &f("error_midstream.sse"));
    assert_eq!(e.code().as_str(), "UPSTREAM_UNAVAILABLE");
    assert!(e.retryable());
    assert!(
        !e.message().contains("Overloaded"),
        "upstream text is never echoed to the browser"
    );
    assert_eq!(
        events.len(),
        3,
        "text streamed before the error: {events:?}"
    );
}

#[test]
fn malformed_json_is_an_upstream_protocol_error() {
    let (_, e) = decode_err(KIND, &first_turn(), &f("malformed_json.sse"));
    assert_eq!(e.code().as_str(), "UPSTREAM_PROTOCOL_ERROR");
    assert!(!e.retryable());
}

#[test]
fn stream_without_message_stop_is_an_upstream_protocol_error() {
    let (events, e) = decode_err(KIND, &first_turn(), &f("no_message_stop.sse"));
    assert_eq!(e.code().as_str(), "UPSTREAM_PROTOCOL_ERROR");
    assert!(!events
        .iter()
        .any(|e| matches!(e, StreamEvent::MessageStop { .. })));
}

#[test]
fn encodes_the_exact_request_body() {
    let mut options = ModelOptions::new("claude-sonnet-4-5");
    options.max_output_tokens = Some(4096);
    options.system_prompt = Some("Be brief.".into());
    options.reasoning = Some(ReasoningOptions {
        budget_tokens: Some(2048),
        ..Default::default()
    });
    let req = patchbridge_protocol::ModelRequest {
        model: None,
        messages: vec![Message {
            id: "u1".into(),
            role: Role::User,
            blocks: vec![
                text("What is on these?"),
                image_url("https://example.com/a.png"),
                image_base64("image/png", "iVBORw0KGgo="),
            ],
        }],
        model_state: None,
        tools: vec![tool(
            "todo.add",
            json!({ "type": "object", "properties": { "text": { "type": "string" } } }),
        )],
        conversation_id: Some("c_1".into()),
    };
    let up = encode_request(KIND, &options, &req).unwrap();
    assert_eq!(up.path, "/messages");
    assert_eq!(
        up.headers,
        vec![("anthropic-version", "2023-06-01".to_string())]
    );
    assert_eq!(
        up.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "stream": true,
            // Prompt caching is on by default: breakpoints on the system prompt, the last tool and the newest
            // message's last block.
            "system": [{ "type": "text", "text": "Be brief.", "cache_control": { "type": "ephemeral" } }],
            "messages": [{ "role": "user", "content": [
                { "type": "text", "text": "What is on these?" },
                { "type": "image", "source": { "type": "url", "url": "https://example.com/a.png" } },
                { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" },
                  "cache_control": { "type": "ephemeral" } },
            ] }],
            "tools": [{ "name": "todo_add", "description": "todo.add tool",
                        "input_schema": { "type": "object", "properties": { "text": { "type": "string" } } },
                        "cache_control": { "type": "ephemeral" } }],
            "thinking": { "type": "enabled", "budget_tokens": 2048 },
        })
    );
}

#[test]
fn default_max_tokens_is_sent_because_anthropic_requires_it() {
    let body = encode_request(KIND, &options(), &first_turn())
        .unwrap()
        .body;
    assert_eq!(body["max_tokens"], json!(8192));
}

#[test]
fn thinking_budget_not_below_max_tokens_is_rejected_at_configuration() {
    let mut options = options();
    options.max_output_tokens = Some(2048);
    options.reasoning = Some(ReasoningOptions {
        budget_tokens: Some(2048),
        ..Default::default()
    });
    let e = validate_options(KIND, &options).unwrap_err();
    assert_eq!(e.code().as_str(), "INVALID_REQUEST");
}

#[test]
fn state_of_another_format_is_rejected_not_dropped() {
    let e = assert_foreign_state_rejected(KIND, &options(), "openai-responses/v1");
    assert!(
        e.message().contains("openai-responses/v1")
            && e.message().contains("anthropic-messages/v1")
    );
}

#[test]
fn state_entry_that_does_not_match_its_message_is_rejected() {
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f("thinking_tool_use.sse")));
    let mut edited = a.message.clone();
    edited.blocks.remove(1); // someone dropped the text block: positions no longer line up
    let mut messages = first.messages.clone();
    messages.push(edited);
    let e = encode_request(KIND, &options(), &request(messages, a.model_state)).unwrap_err();
    assert_eq!(e.code().as_str(), "MODEL_STATE_MISMATCH");
    assert_eq!(e.message_id(), Some("msg_01ThinkTool"));
    assert!(e.message().contains("msg_01ThinkTool"));
    assert!(e.message().contains("new conversation"));
}

#[test]
fn full_next_state_keeps_referenced_entries_and_drops_orphans() {
    // Turn 1 produces an entry for msg_01ThinkTool.
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f("thinking_tool_use.sse")));
    let mut state = a.model_state.clone().unwrap();
    // An entry for a message that is no longer in the conversation (e.g. the user edited history).
    state.data["messages"]["gone"] =
        json!({ "content": [{ "raw": { "type": "redacted_thinking", "data": "x" } }] });
    let mut second = continue_after(
        &first,
        &a,
        vec![tool_result("t1", &[("toolu_01AddMilk", "ok", false)])],
    );
    second.model_state = Some(state);
    let b = assemble(&decode_ok(KIND, &second, &f("redacted_thinking.sse")));
    let data = b.model_state.unwrap().data;
    let keys: Vec<&String> = data["messages"].as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["msg_01Redacted", "msg_01ThinkTool"]);
    assert_eq!(
        data["messages"]["msg_01ThinkTool"],
        a.model_state.unwrap().data["messages"]["msg_01ThinkTool"]
    );
}

#[test]
fn reused_provider_message_id_is_made_unique() {
    // A conversation that already holds a message with the id the provider sends again.
    let req = request(
        vec![user("msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK", "hi")],
        None,
    );
    let a = assemble(&decode_ok(KIND, &req, &f("recorded/basic_response.sse")));
    assert_eq!(a.message.id, "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK-1");
}

#[test]
fn reasoning_without_state_is_not_sent_and_empty_assistant_messages_are_skipped() {
    let messages = vec![
        user("u1", "hi"),
        assistant("a1", vec![reasoning("hmm")]),
        user("u2", "hello?"),
    ];
    let body = encode_request(KIND, &options(), &request(messages, None))
        .unwrap()
        .body;
    assert_eq!(
        body["messages"],
        json!([{ "role": "user", "content": [{ "type": "text", "text": "hi" }, { "type": "text", "text": "hello?" }] }])
    );
}

#[test]
fn image_in_an_assistant_message_is_an_invalid_request() {
    let messages = vec![
        user("u1", "hi"),
        assistant("a1", vec![image_url("https://x/y.png")]),
    ];
    let e = encode_request(KIND, &options(), &request(messages, None)).unwrap_err();
    assert_eq!(e.code().as_str(), "INVALID_REQUEST");
}

#[test]
fn provider_block_indexes_are_renumbered_from_zero() {
    // Anthropic's text block is its index 2 (after two server tool blocks); the neutral index is 0.
    let events = decode_ok(KIND, &first_turn(), &f("recorded/stream-a-toolrefusal.sse"));
    assert_eq!(
        events[1],
        StreamEvent::BlockStart {
            index: 0,
            block: patchbridge_protocol::BlockKind::Text
        }
    );
    let a = assemble(&events);
    assert_eq!(a.message.blocks.len(), 1);
    let parts = &a.model_state.unwrap().data["messages"]["msg_fixture_atool_0001"]["content"];
    assert_eq!(parts[0]["raw"]["type"], json!("server_tool_use"));
    assert_eq!(parts[1]["raw"]["type"], json!("web_search_tool_result"));
    assert_eq!(parts[2], json!({ "blocks": [0] }));
}

#[test]
fn error_event_for_rate_limit_is_retryable_rate_limited() {
    let (events, e) = decode_err(KIND, &first_turn(), &f("error_rate_limited.sse"));
    assert_eq!(events.len(), 1);
    assert_eq!(e.code().as_str(), "UPSTREAM_RATE_LIMITED");
    assert!(e.retryable());
    assert!(e
        .to_string()
        .contains("rate_limit_error: Number of request tokens"));
}

/// A conversation can always continue from its messages alone (`modelState: null`): thinking without its
/// signed block is not sent, and a running tool loop whose assistant message has no thinking to send back
/// continues without thinking (Anthropic requires that message to start with its signed thinking otherwise).
#[test]
fn any_history_encodes_with_model_state_null() {
    let mut thinking = options();
    thinking.reasoning = Some(ReasoningOptions {
        budget_tokens: Some(2048),
        ..Default::default()
    });
    for body in assert_history_encodes_without_state(KIND, &thinking, &all_fixtures(DIR)) {
        for m in body["messages"].as_array().unwrap() {
            for b in m["content"].as_array().unwrap() {
                assert!(!matches!(
                    b["type"].as_str(),
                    Some("thinking" | "redacted_thinking")
                ));
            }
        }
    }
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f("thinking_tool_use.sse")));
    let mut stateless = next_turn(&first, &a);
    stateless.model_state = None;
    let body = encode_request(KIND, &thinking, &stateless).unwrap().body;
    assert!(body.get("thinking").is_none(), "{body}");
    // With its state the same loop keeps thinking on, and a new user turn thinks again.
    let with_state = next_turn(&first, &a);
    let body = encode_request(KIND, &thinking, &with_state).unwrap().body;
    assert_eq!(body["thinking"]["type"], json!("enabled"));
    let mut new_turn = stateless.clone();
    new_turn
        .messages
        .push(assistant("a2", vec![text("Added.")]));
    new_turn.messages.push(user("u3", "thanks"));
    let body = encode_request(KIND, &thinking, &new_turn).unwrap().body;
    assert_eq!(body["thinking"]["type"], json!("enabled"));
}

#[test]
fn web_search_results_and_citations_become_sources_of_the_text_they_belong_to() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("web_search_citations.sse"),
    ));
    assert_eq!(
        cited(&a),
        vec![
            // The search results go on the first text after the search; the result whose URL is not a web link
            // is dropped.
            (
                "Here is what I found. ".into(),
                vec![
                    "https://www.example.org/eclipse-2026".into(),
                    "https://safety.example.net/eclipse-glasses".into(),
                ]
            ),
            // Two citations of one passage (different encrypted_index) are one source.
            (
                "The total eclipse of 12 August 2026 crosses Greenland, Iceland and Spain".into(),
                vec!["https://www.example.org/eclipse-2026".into()]
            ),
            (". ".into(), vec![]),
            (
                "Watch the partial phases only through certified eclipse glasses".into(),
                vec!["https://safety.example.net/eclipse-glasses".into()]
            ),
            (".".into(), vec![]),
        ]
    );
    let Block::Text { sources, .. } = &a.message.blocks[1] else {
        panic!("text expected")
    };
    assert_eq!(
        sources[0].cited_text.as_deref(),
        Some("The total eclipse of 12 August 2026 crosses Greenland, Iceland and Spain.")
    );
}

#[test]
fn citation_internals_stay_out_of_the_blocks_and_search_results_stay_in_model_state() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("web_search_citations.sse"),
    ));
    // What can be shown: no `javascript:` URL, no provider-private field.
    let blocks = serde_json::to_string(&a.message).unwrap();
    for private in [
        "javascript:",
        "encrypted_index",
        "EpABCioICBgCIiRiY2Jj",
        "encrypted_content",
    ] {
        assert!(!blocks.contains(private), "{private} in {blocks}");
    }
    // The search result block goes back to Anthropic verbatim, from ModelState.
    let state = serde_json::to_string(&a.model_state).unwrap();
    assert!(
        state.contains("EqgfCioIARgBIiQ3YTAwMjMxMC1kYjE3LTQ1"),
        "{state}"
    );
}

#[test]
fn document_citations_become_sources_named_by_the_document_title() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("document_citations.sse"),
    ));
    assert_eq!(
        cited(&a)
            .into_iter()
            .flat_map(|(_, s)| s)
            .collect::<Vec<_>>(),
        vec![
            "Example Document".to_owned(),
            "Weather report.pdf".to_owned()
        ]
    );
    let Block::Text { sources, .. } = &a.message.blocks[3] else {
        panic!("text expected")
    };
    assert_eq!(sources[0].url, None);
    assert_eq!(sources[0].cited_text.as_deref(), Some("The sky is blue."));
}

#[test]
fn sources_are_never_sent_back_to_anthropic() {
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f("web_search_citations.sse")));
    let body = encode_request(KIND, &options(), &next_turn(&first, &a))
        .unwrap()
        .body
        .to_string();
    assert!(
        !body.contains("citations") && !body.contains("sources"),
        "{body}"
    );
    assert!(body.contains("Watch the partial phases only through certified eclipse glasses"));
}

#[test]
fn a_citations_delta_outside_a_text_block_is_a_protocol_error() {
    let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_x\",\"usage\":{\"input_tokens\":1}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"type\":\"web_search_result_location\",\"url\":\"https://e.org\",\"title\":\"E\"}}}\n\n";
    let mut decoder = patchbridge_providers::Decoder::new(KIND, &first_turn()).unwrap();
    let mut out = Vec::new();
    let error = sse_messages(stream)
        .into_iter()
        .find_map(|(event, data)| decoder.feed(&event, &data, &mut out).err())
        .expect("refused");
    assert_eq!(error.code().as_str(), "UPSTREAM_PROTOCOL_ERROR");
    assert!(error.to_string().contains("not a text block"), "{error}");
}

/// A person's message with a PDF and a Markdown file (`docs/protocol.md` §3.1): Anthropic `document` blocks, the
/// PDF with its base64 source, the Markdown as a `text/plain` text source (the only text type Anthropic takes),
/// both titled with the file name.
fn documents_message() -> Vec<Message> {
    vec![Message {
        id: "u1".into(),
        role: Role::User,
        blocks: vec![
            text("Compare them."),
            pdf("report.pdf", "JVBERi0xLjcK"),
            text_file("notes.md", "text/markdown", "# Notes\n- one"),
        ],
    }]
}

#[test]
fn a_pdf_and_a_text_file_become_document_blocks_with_base64_and_text_sources() {
    let up = encode_request(KIND, &options(), &request(documents_message(), None)).unwrap();
    assert_eq!(
        up.body["messages"],
        json!([{ "role": "user", "content": [
            { "type": "text", "text": "Compare them." },
            { "type": "document", "title": "report.pdf",
              "source": { "type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjcK" } },
            { "type": "document", "title": "notes.md",
              "source": { "type": "text", "media_type": "text/plain", "data": "# Notes\n- one" } },
        ] }])
    );
}

#[test]
fn a_document_block_takes_the_prompt_cache_breakpoint_of_the_newest_message() {
    let mut options = options();
    options.prompt_caching = true;
    let mut messages = documents_message();
    messages[0].blocks.truncate(2);
    let up = encode_request(KIND, &options, &request(messages, None)).unwrap();
    assert_eq!(
        up.body["messages"][0]["content"][1]["cache_control"],
        json!({ "type": "ephemeral" })
    );
}

#[test]
fn documents_outside_the_protocols_rules_are_invalid_requests_before_any_upstream_call() {
    for bad in [
        text_file("main.ts", "video/mp2t", "let a = 1;"),
        text_file("a.pdf", "application/pdf", "%PDF-1.7"),
        pdf("a.pdf", "iVBORw0KGgo="),
        pdf("a.pdf", "data:application/pdf;base64,JVBERi0x"),
        pdf("dir/a.pdf", "JVBERi0x"),
    ] {
        let messages = vec![Message {
            id: "u1".into(),
            role: Role::User,
            blocks: vec![bad.clone()],
        }];
        let e = encode_request(KIND, &options(), &request(messages, None)).unwrap_err();
        assert_eq!(e.code().as_str(), "INVALID_REQUEST", "{bad:?}");
        assert!(e.message().contains("document"), "{}", e.message());
    }
    let misplaced = vec![
        user("u1", "hi"),
        assistant("a1", vec![text_file("a.txt", "text/plain", "x")]),
    ];
    let e = encode_request(KIND, &options(), &request(misplaced, None)).unwrap_err();
    assert!(e.message().contains("document block"), "{}", e.message());
}
