//! OpenAI Chat Completions adapter: recorded OpenAI streams, gateway-style streams (reasoning_content,
//! reasoning, interleaved tool-call fragments), exact request bodies, and ModelState round trips.

mod common;

use common::*;
use patchbridge_protocol::{
    Block, BlockKind, Message, ModelState, Role, StopReason, StreamEvent, Usage,
};
use patchbridge_providers::{
    encode_request, Decoder, ModelOptions, ProviderKind, ReasoningEffort, ReasoningOptions,
};
use serde_json::{json, Value};

const KIND: ProviderKind = ProviderKind::OpenAiChat;
const DIR: &str = "openai-chat";

fn f(name: &str) -> String {
    format!("{DIR}/{name}")
}

fn options() -> ModelOptions {
    ModelOptions::new("gpt-4.1-mini")
}

/// A decoder for the first turn that has accepted `chunks` (each must feed without error).
fn fed(chunks: &[&str]) -> (Decoder, Vec<StreamEvent>) {
    let mut d = Decoder::new(KIND, &first_turn()).unwrap();
    let mut out = Vec::new();
    for chunk in chunks {
        d.feed("", chunk, &mut out)
            .unwrap_or_else(|e| panic!("{chunk}: {e}"));
    }
    (d, out)
}

#[test]
fn every_fixture_decodes_to_its_golden_events() {
    check_all_goldens(KIND, DIR);
}

#[test]
fn recorded_text_stream_with_usage_chunk() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("recorded/83b060bae42e.sse"),
    ));
    assert_plain_text_answer(&a, "chatcmpl-ABfw5EzoqmfXjnnsXY7Yd8OC6tb3c", "Foo!", (9, 2));
}

#[test]
fn recorded_tool_call_split_across_chunks() {
    let events = decode_ok(KIND, &first_turn(), &f("recorded/2018feb66ae1.sse"));
    assert_eq!(
        &events[1..4],
        &[
            StreamEvent::BlockStart {
                index: 0,
                block: BlockKind::ToolCall {
                    call_id: "call_4XzlGBLtUe9dy3GVNV4jhq7h".into(),
                    name: "get_weather".into()
                }
            },
            StreamEvent::BlockDelta {
                index: 0,
                delta: "{\"city\":\"New York City\"}".into()
            },
            StreamEvent::block_stop(0),
        ]
    );
    assert_eq!(assemble(&events).stop_reason, StopReason::ToolUse);
}

#[test]
fn recorded_parallel_tool_calls_become_blocks_0_and_1() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("recorded/f82268f2fefd.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::ToolUse);
    let calls: Vec<(&str, &serde_json::Map<String, Value>)> = a
        .message
        .blocks
        .iter()
        .map(|b| match b {
            Block::ToolCall { call_id, input, .. } => (call_id.as_str(), input),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].0, "call_JMW1whyEaYG438VE1OIflxA2");
    assert_eq!(
        calls[0].1,
        &obj(json!({ "city": "Edinburgh", "country": "GB", "units": "c" }))
    );
    assert_eq!(calls[1].0, "call_DNYTawLBoN8fj3KN6qU9N1Ou");
    assert_eq!(
        calls[1].1,
        &obj(json!({ "ticker": "AAPL", "exchange": "NASDAQ" }))
    );
}

#[test]
fn interleaved_fragments_are_assembled_by_index_in_index_order() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("parallel_interleaved.sse"),
    ));
    assert_eq!(
        a.message.blocks,
        vec![
            tool_call("call_a", "todo.add", json!({ "text": "milk" })),
            tool_call("call_b", "todo.add", json!({ "text": "eggs" })),
        ]
    );
}

#[test]
fn recorded_length_finish_is_max_tokens() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("recorded/4cc50a6135d2.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::MaxTokens);
    assert_eq!(a.message.blocks, vec![text("{\"")]);
}

#[test]
fn length_finish_drops_the_cut_tool_call_and_keeps_text() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("length_cuts_tool_call.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::MaxTokens);
    assert_eq!(a.message.blocks, vec![text("Saving the file.")]);
}

#[test]
fn recorded_refusal_deltas_are_text_with_refusal_stop() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("recorded/173417d55340.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::Refusal);
    assert!(
        matches!(&a.message.blocks[..], [Block::Text { text, .. }] if text.starts_with("I'm sorry"))
    );
}

#[test]
fn only_the_first_choice_is_decoded_when_a_server_sends_several() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("recorded/a491adda08c3.sse"),
    ));
    let text = std::fs::read_to_string(fixture(&f("recorded/a491adda08c3.sse"))).unwrap();
    // Expected text: the concatenated content deltas of choice 0 only, read straight from the recording.
    let expected: String = sse_messages(&text)
        .iter()
        .filter(|(_, d)| d != "[DONE]")
        .filter_map(|(_, d)| {
            let v: Value = serde_json::from_str(d).unwrap();
            let c = v["choices"].as_array()?.first()?.clone();
            (c["index"] == json!(0))
                .then(|| c["delta"]["content"].as_str().unwrap_or("").to_owned())
        })
        .collect();
    assert_eq!(a.message.blocks, vec![Block::text(expected)]);
}

#[test]
fn reasoning_content_is_shown_and_kept_in_state_with_usage() {
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("reasoning_content_tool_call.sse"),
    ));
    assert_eq!(a.message.id, "a1b2c3d4-0001");
    assert_eq!(
        a.message.blocks,
        vec![
            reasoning("The user asks for the time. I will call the clock."),
            text("Checking the clock."),
            tool_call("call_00_clock", "local.clock_now", json!({ "tz": "UTC" })),
        ]
    );
    assert_eq!(
        a.model_state,
        Some(ModelState {
            format: "openai-chat/v1".into(),
            data: json!({ "messages": { "a1b2c3d4-0001": {
                "field": "reasoning_content", "text": "The user asks for the time. I will call the clock." } } }),
        })
    );
    assert_eq!(
        a.usage,
        Usage {
            input_tokens: 120,
            output_tokens: 48,
            reasoning_tokens: 30,
            cache_read_tokens: 64,
            cache_write_tokens: 0
        }
    );
}

#[test]
fn reasoning_content_goes_back_inside_the_tool_loop_only() {
    let first = first_turn();
    let a = assemble(&decode_ok(
        KIND,
        &first,
        &f("reasoning_content_tool_call.sse"),
    ));
    let results = tool_result("t1", &[("call_00_clock", "12:00 UTC", false)]);
    let mut next = continue_after(&first, &a, vec![results]);
    let body = encode_request(KIND, &options(), &next).unwrap().body;
    assert_eq!(
        body["messages"][1],
        json!({
            "role": "assistant",
            "content": "Checking the clock.",
            "tool_calls": [{ "id": "call_00_clock", "type": "function",
                             "function": { "name": "local_clock_now", "arguments": "{\"tz\":\"UTC\"}" } }],
            "reasoning_content": "The user asks for the time. I will call the clock.",
        })
    );
    assert_eq!(
        body["messages"][2],
        json!({ "role": "tool", "tool_call_id": "call_00_clock", "content": "12:00 UTC" })
    );

    // A new user turn closes the loop: earlier reasoning is not sent again (but stays in the state).
    next.messages
        .push(assistant("a2", vec![text("It is noon.")]));
    next.messages.push(user("u2", "Thanks"));
    let body = encode_request(KIND, &options(), &next).unwrap().body;
    assert!(body["messages"][1].get("reasoning_content").is_none());
}

#[test]
fn reasoning_field_from_gateways_is_sent_back_under_its_own_name() {
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f("reasoning_field.sse")));
    assert_eq!(a.message.blocks[0], reasoning("Short thought."));
    assert_eq!(
        a.model_state.as_ref().unwrap().data["messages"][&a.message.id]["field"],
        json!("reasoning")
    );
    let body = encode_request(KIND, &options(), &continue_after(&first, &a, vec![]))
        .unwrap()
        .body;
    assert_eq!(
        body["messages"][1],
        json!({ "role": "assistant", "content": "Hi there!", "reasoning": "Short thought." })
    );
}

#[test]
fn stop_finish_with_tool_calls_is_tool_use() {
    // Older Ollama and some gateways finish tool-calling turns with "stop".
    let a = assemble(&decode_ok(
        KIND,
        &first_turn(),
        &f("stop_with_tool_calls.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::ToolUse);
    assert_eq!(
        a.message.blocks,
        vec![tool_call("call_x1", "todo.list", json!({}))]
    );
}

#[test]
fn server_error_chunk_mid_stream_is_upstream_unavailable() {
    let (events, e) = decode_err(KIND, &first_turn(), &f("error_midstream.sse"));
    assert_eq!(e.code().as_str(), "UPSTREAM_UNAVAILABLE");
    assert!(e.retryable());
    assert_eq!(events.len(), 3);
}

#[test]
fn rate_limit_chunk_mid_stream_is_upstream_rate_limited() {
    let (_, e) = decode_err(KIND, &first_turn(), &f("rate_limited_midstream.sse"));
    assert_eq!(e.code().as_str(), "UPSTREAM_RATE_LIMITED");
    assert!(e.retryable());
}

#[test]
fn malformed_chunk_is_an_upstream_protocol_error() {
    let (_, e) = decode_err(KIND, &first_turn(), &f("malformed_json.sse"));
    assert_eq!(e.code().as_str(), "UPSTREAM_PROTOCOL_ERROR");
}

#[test]
fn stream_without_finish_reason_is_an_upstream_protocol_error() {
    let (events, e) = decode_err(KIND, &first_turn(), &f("no_finish_reason.sse"));
    assert_eq!(e.code().as_str(), "UPSTREAM_PROTOCOL_ERROR");
    assert!(!events
        .iter()
        .any(|e| matches!(e, StreamEvent::MessageStop { .. })));
}

#[test]
fn invalid_tool_arguments_with_tool_calls_finish_is_an_upstream_protocol_error() {
    let (mut d, mut out) = fed(&[
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"todo_add","arguments":"[1,2]"}}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    let e = d.feed("", "[DONE]", &mut out).unwrap_err();
    assert_eq!(e.code().as_str(), "UPSTREAM_PROTOCOL_ERROR");
}

#[test]
fn missing_tool_call_id_gets_a_deterministic_one() {
    let (mut d, mut out) = fed(&[
        r#"{"id":"c9","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"todo_list","arguments":"{}"}}]}}]}"#,
        r#"{"id":"c9","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    d.finish(&mut out).unwrap();
    let a = assemble(&out);
    assert_eq!(
        a.message.blocks,
        vec![tool_call("c9-call-0", "todo.list", json!({}))]
    );
}

#[test]
fn encodes_the_exact_request_body() {
    let mut options = options();
    options.max_output_tokens = Some(1000);
    options.system_prompt = Some("Be brief.".into());
    options.reasoning = Some(ReasoningOptions {
        effort: Some(ReasoningEffort::Low),
        ..Default::default()
    });
    let messages = vec![
        Message {
            id: "u1".into(),
            role: Role::User,
            blocks: vec![
                text("Add what is on this photo."),
                image_url("https://example.com/a.png"),
                image_base64("image/jpeg", "/9j/4AAQ"),
            ],
        },
        assistant(
            "a1",
            vec![
                reasoning("shown only"),
                tool_call("call_1", "todo.add", json!({ "text": "milk" })),
                tool_call("call_2", "todo.add", json!({ "text": "eggs" })),
            ],
        ),
        tool_result(
            "t1",
            &[("call_1", "added", false), ("call_2", "list is full", true)],
        ),
    ];
    let mut req = request(messages, None);
    req.tools.truncate(1);
    let up = encode_request(KIND, &options, &req).unwrap();
    assert_eq!(up.path, "/chat/completions");
    assert!(up.headers.is_empty());
    assert_eq!(
        up.body,
        json!({
            "model": "gpt-4.1-mini",
            "messages": [
                { "role": "system", "content": "Be brief." },
                { "role": "user", "content": [
                    { "type": "text", "text": "Add what is on this photo." },
                    { "type": "image_url", "image_url": { "url": "https://example.com/a.png" } },
                    { "type": "image_url", "image_url": { "url": "data:image/jpeg;base64,/9j/4AAQ" } },
                ] },
                { "role": "assistant", "content": null, "tool_calls": [
                    { "id": "call_1", "type": "function", "function": { "name": "todo_add", "arguments": "{\"text\":\"milk\"}" } },
                    { "id": "call_2", "type": "function", "function": { "name": "todo_add", "arguments": "{\"text\":\"eggs\"}" } },
                ] },
                { "role": "tool", "tool_call_id": "call_1", "content": "added" },
                { "role": "tool", "tool_call_id": "call_2", "content": "Error: list is full" },
            ],
            "stream": true,
            "stream_options": { "include_usage": true },
            "tools": [{ "type": "function", "function": { "name": "todo_add", "description": "todo.add tool",
                "parameters": { "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] } } }],
            "max_completion_tokens": 1000,
            "reasoning_effort": "low",
        })
    );
}

#[test]
fn single_text_user_message_is_a_plain_string() {
    let body = encode_request(KIND, &options(), &first_turn())
        .unwrap()
        .body;
    assert_eq!(
        body["messages"],
        json!([{ "role": "user", "content": "Please help." }])
    );
    assert!(body.get("max_completion_tokens").is_none());
}

#[test]
fn state_of_another_format_is_rejected_not_dropped() {
    assert_foreign_state_rejected(KIND, &options(), "anthropic-messages/v1");
}

#[test]
fn state_with_a_malformed_data_shape_is_an_invalid_request() {
    let state = ModelState {
        format: "openai-chat/v1".into(),
        data: json!({ "reasoningByMessageId": {} }),
    };
    let req = request(vec![user("u1", "hi")], Some(state));
    assert_eq!(
        encode_request(KIND, &options(), &req)
            .unwrap_err()
            .code()
            .as_str(),
        "INVALID_REQUEST"
    );
}

#[test]
fn state_without_reasoning_in_the_new_message_keeps_old_entries() {
    // Turn 1 with reasoning, turn 2 (plain text) must still carry turn 1's entry: never drop state.
    let first = first_turn();
    let a = assemble(&decode_ok(
        KIND,
        &first,
        &f("reasoning_content_tool_call.sse"),
    ));
    let results = tool_result("t1", &[("call_00_clock", "noon", false)]);
    let b = assemble(&decode_ok(
        KIND,
        &continue_after(&first, &a, vec![results]),
        &f("recorded/83b060bae42e.sse"),
    ));
    assert_eq!(b.model_state, a.model_state);
}

#[test]
fn content_sent_as_typed_parts_is_decoded() {
    // Mistral-style servers stream `content` as a list of `text` and `thinking` parts.
    let a = assemble(&decode_ok(KIND, &first_turn(), &f("content_parts.sse")));
    assert_eq!(
        a.message.blocks,
        vec![reasoning("Consider it."), text("Done.")]
    );
    assert_eq!(a.stop_reason, StopReason::EndTurn);
}

#[test]
fn reasoning_details_are_merged_kept_and_sent_back_verbatim_in_the_tool_loop() {
    // OpenRouter streams `reasoning_details` fragments (text first, signature later) next to `reasoning`.
    let first = first_turn();
    let a = assemble(&decode_ok(KIND, &first, &f("reasoning_details.sse")));
    assert_eq!(a.message.blocks[0], reasoning("Need the list."));
    let details = json!([{ "type": "reasoning.text", "text": "Need the list.", "signature": "RXF3c2lnbmF0dXJl",
                           "format": "anthropic-claude-v1", "index": 0 }]);
    assert_eq!(
        a.model_state.as_ref().unwrap().data["messages"]["gen-1764480001-rd"],
        json!({ "field": "reasoning", "text": "Need the list.", "details": details })
    );
    let results = tool_result("t1", &[("toolu_vrtx_01List", "[]", false)]);
    let body = encode_request(KIND, &options(), &continue_after(&first, &a, vec![results]))
        .unwrap()
        .body;
    assert_eq!(
        body["messages"][1],
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{ "id": "toolu_vrtx_01List", "type": "function",
                             "function": { "name": "todo_list", "arguments": "{}" } }],
            "reasoning_details": details,
        })
    );
}

#[test]
fn gateway_errors_with_numeric_status_codes_are_classified() {
    for (status, code) in [
        (429, "UPSTREAM_RATE_LIMITED"),
        (502, "UPSTREAM_UNAVAILABLE"),
        (400, "UPSTREAM_REJECTED"),
    ] {
        let (mut d, mut out) =
            fed(&[r#"{"id":"gen-1","choices":[{"index":0,"delta":{"content":"Hi"}}]}"#]);
        let chunk = format!(
            r#"{{"id":"gen-1","error":{{"code":{status},"message":"Provider returned error"}},"choices":[{{"index":0,"delta":{{"content":""}},"finish_reason":"error"}}]}}"#
        );
        assert_eq!(
            d.feed("", &chunk, &mut out).unwrap_err().code().as_str(),
            code,
            "{status}"
        );
    }
}

#[test]
fn finish_reason_error_is_upstream_unavailable() {
    let (mut d, mut out) = fed(&[
        r#"{"id":"gen-2","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"error"}]}"#,
    ]);
    assert_eq!(
        d.feed("", "[DONE]", &mut out).unwrap_err().code().as_str(),
        "UPSTREAM_UNAVAILABLE"
    );
}

#[test]
fn data_after_done_is_ignored() {
    let (mut d, mut out) = fed(&[
        r#"{"id":"c3","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ]);
    assert!(d.is_complete());
    let n = out.len();
    d.feed("", "not even json", &mut out).unwrap();
    d.finish(&mut out).unwrap();
    assert_eq!(out.len(), n);
}

/// Azure OpenAI's first chunk carries only `prompt_filter_results` (empty `id`, no choices): it starts nothing,
/// so the message is named by the completion id of the first real chunk (recorded Azure stream).
#[test]
fn azure_prompt_filter_chunk_starts_nothing_and_the_completion_id_names_the_message() {
    let events = decode_ok(KIND, &first_turn(), &f("recorded/azure-prompt-filter.sse"));
    assert_eq!(
        events[0],
        StreamEvent::MessageStart {
            id: Some("chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j".into()),
            model: None
        }
    );
    let a = assemble(&events);
    assert_eq!(a.message.blocks, vec![text("Hallo Welt!")]);
    assert_eq!(a.stop_reason, StopReason::EndTurn);
}

#[test]
fn a_server_without_ids_still_gets_a_message_id() {
    let (_, events) =
        fed(&[r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}"#]);
    assert_eq!(
        events[0],
        StreamEvent::MessageStart {
            id: Some("assistant".into()),
            model: None
        }
    );
}

/// A conversation can always continue from its messages alone (`modelState: null`); reasoning shown without
/// its state is not sent, and an assistant message left with nothing is skipped.
#[test]
fn any_history_encodes_with_model_state_null() {
    let bodies = assert_history_encodes_without_state(KIND, &options(), &all_fixtures(DIR));
    for body in bodies {
        for m in body["messages"].as_array().unwrap() {
            assert!(m.get("reasoning_content").is_none() && m.get("reasoning").is_none());
            assert!(m.get("reasoning_details").is_none());
        }
    }
    let messages = vec![
        user("u1", "hi"),
        assistant("a1", vec![reasoning("hmm")]),
        user("u2", "hello?"),
    ];
    let body = encode_request(KIND, &options(), &request(messages, None))
        .unwrap()
        .body;
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["user", "user"]);
}

#[test]
fn url_citation_annotations_of_the_message_become_sources_of_its_text() {
    let events = decode_ok(KIND, &first_turn(), &f("url_citation_annotations.sse"));
    let a = assemble(&events);
    assert_eq!(
        cited(&a),
        vec![(
            "The Berlin marathon is on 27 September 2026 ([example.org](https://www.example.org/marathon))."
                .to_owned(),
            // The annotation with a `data:` URL is dropped.
            vec!["https://www.example.org/marathon".to_owned()]
        )]
    );
    let wire = serde_json::to_string(&events).unwrap();
    assert!(!wire.contains("data:text") && !wire.contains("Not a web link"));
}

#[test]
fn a_pdf_becomes_a_file_part_and_a_text_file_a_text_part_headed_with_its_name() {
    let messages = vec![Message {
        id: "u1".into(),
        role: Role::User,
        blocks: vec![
            text("Compare them."),
            pdf("report.pdf", "JVBERi0xLjcK"),
            text_file("data.csv", "text/csv", "a,b\n1,2"),
        ],
    }];
    let up = encode_request(KIND, &options(), &request(messages, None)).unwrap();
    assert_eq!(
        up.body["messages"],
        json!([{ "role": "user", "content": [
            { "type": "text", "text": "Compare them." },
            { "type": "file", "file": { "file_data": "data:application/pdf;base64,JVBERi0xLjcK", "filename": "report.pdf" } },
            { "type": "text", "text": "--- file data.csv (text/csv) ---\na,b\n1,2\n--- end of file data.csv ---" },
        ] }])
    );
}

const SIGNATURE_A: &str = "EjQKMgHR7Yp2c2lnbmF0dXJlIEEgZm9yIGNoZWNrX2ZsaWdodCBBQTEwMA==";
const TEXT_SIGNATURE: &str = "CpwBAdHtim9sIGZsaWdodCBzdGF0dXMgcmVhc29uaW5nIHNpZ25hdHVyZQ==";

#[test]
fn gemini_thought_signatures_go_back_on_their_own_tool_call_and_message() {
    let first = first_turn();
    let a = assemble(&decode_ok(
        KIND,
        &first,
        &f("gemini_thought_signatures.sse"),
    ));
    assert_eq!(a.stop_reason, StopReason::ToolUse);
    let results = tool_result(
        "t1",
        &[
            ("function-call-11617238398356281340", "on time", false),
            ("function-call-11617238398356281341", "delayed", false),
        ],
    );
    let body = encode_request(KIND, &options(), &continue_after(&first, &a, vec![results]))
        .unwrap()
        .body;
    assert_eq!(
        body["messages"][1],
        json!({
            "role": "assistant",
            "content": "I will check both flights.",
            "tool_calls": [
                { "id": "function-call-11617238398356281340", "type": "function",
                  "function": { "name": "check_flight", "arguments": "{\"flight\":\"AA100\"}" },
                  "extra_content": { "google": { "thought_signature": SIGNATURE_A } } },
                { "id": "function-call-11617238398356281341", "type": "function",
                  "function": { "name": "check_flight", "arguments": "{\"flight\":\"BA200\"}" } },
            ],
            "extra_content": { "google": { "thought_signature": TEXT_SIGNATURE } },
        })
    );
}

#[test]
fn a_message_of_one_text_file_is_sent_as_parts_not_as_a_plain_string() {
    let messages = vec![Message {
        id: "u1".into(),
        role: Role::User,
        blocks: vec![text_file("a.json", "application/json", "{}")],
    }];
    let up = encode_request(KIND, &options(), &request(messages, None)).unwrap();
    assert_eq!(
        up.body["messages"][0]["content"],
        json!([{ "type": "text", "text": "--- file a.json (application/json) ---\n{}\n--- end of file a.json ---" }])
    );
}

#[test]
fn extra_content_stays_with_its_call_after_the_tool_loop_ends() {
    let first = first_turn();
    let a = assemble(&decode_ok(
        KIND,
        &first,
        &f("gemini_thought_signatures.sse"),
    ));
    let results = tool_result(
        "t1",
        &[
            ("function-call-11617238398356281340", "on time", false),
            ("function-call-11617238398356281341", "delayed", false),
        ],
    );
    let mut next = continue_after(&first, &a, vec![results]);
    next.messages
        .push(assistant("a2", vec![text("One is delayed.")]));
    next.messages.push(user("u2", "Which one?"));
    let body = encode_request(KIND, &options(), &next).unwrap().body;
    assert_eq!(
        body["messages"][1]["tool_calls"][0]["extra_content"]["google"]["thought_signature"],
        SIGNATURE_A
    );
    assert!(body["messages"][1]["tool_calls"][1]
        .get("extra_content")
        .is_none());
}

#[test]
fn extra_content_split_over_call_fragments_is_merged_and_kept_by_call_id() {
    let (mut d, mut out) = fed(&[
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"todo_list","arguments":""}}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"},"extra_content":{"google":{"thought_signature":"U2ln"}}}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"extra_content":{"vendor":{"n":1}}}]},"finish_reason":"tool_calls"}]}"#,
    ]);
    d.feed("", "[DONE]", &mut out).unwrap();
    let a = assemble(&out);
    assert_eq!(
        a.model_state.unwrap().data,
        json!({ "messages": { "c1": { "calls": { "call_x": { "extra_content":
            { "google": { "thought_signature": "U2ln" }, "vendor": { "n": 1 } } } } } } })
    );
}
