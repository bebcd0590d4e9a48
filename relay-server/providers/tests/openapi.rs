//! Encoded OpenAI request bodies validated against OpenAI's own OpenAPI schemas
//! (`fixtures/openapi/openai-requests.schema.json`, extracted from the spec by `extract.py`).

mod common;

use common::*;
use patchbridge_protocol::{Message, ModelRequest, Role};
use patchbridge_providers::{
    encode_request, ModelOptions, ProviderKind, ReasoningEffort, ReasoningOptions, ReasoningSummary,
};
use serde_json::{json, Value};

fn validator(root: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(fixture("openapi/openai-requests.schema.json")).unwrap();
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    schema["$ref"] = json!(format!("#/$defs/{root}"));
    jsonschema::validator_for(&schema).expect("the extracted schema compiles")
}

fn errors(validator: &jsonschema::Validator, body: &Value) -> Vec<String> {
    validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn full_options() -> ModelOptions {
    let mut options = ModelOptions::new("gpt-4.1-mini");
    options.max_output_tokens = Some(1000);
    options.system_prompt = Some("Be brief.".into());
    options.reasoning = Some(ReasoningOptions {
        effort: Some(ReasoningEffort::High),
        summary: Some(ReasoningSummary::Auto),
        ..Default::default()
    });
    options
}

/// A conversation with every block kind: images, documents, text, tool calls with results (one failed), and a
/// follow-up.
fn rich_conversation() -> Vec<Message> {
    vec![
        Message {
            id: "u1".into(),
            role: Role::User,
            blocks: vec![
                text("Add what is on these."),
                image_url("https://example.com/a.png"),
                image_base64("image/png", "iVBORw0KGgo="),
                pdf("list.pdf", "JVBERi0xLjcK"),
                text_file("more.csv", "text/csv", "item\nbread\n"),
            ],
        },
        assistant(
            "a1",
            vec![
                reasoning("two items"),
                text("Adding both."),
                tool_call("call_1", "todo.add", json!({ "text": "milk" })),
                tool_call("call_2", "todo.add", json!({ "text": "eggs" })),
            ],
        ),
        tool_result(
            "t1",
            &[("call_1", "added", false), ("call_2", "full", true)],
        ),
        assistant("a2", vec![text("One failed.")]),
        user("u2", "Thanks"),
    ]
}

fn assert_valid(kind: ProviderKind, root: &str, request: &ModelRequest, options: &ModelOptions) {
    let body = encode_request(kind, options, request).unwrap().body;
    let v = validator(root);
    let errs = errors(&v, &body);
    assert!(
        errs.is_empty(),
        "{root} rejects the body:\n{}\n{body:#}",
        errs.join("\n")
    );
}

#[test]
fn chat_request_bodies_match_the_openapi_schema() {
    let kind = ProviderKind::OpenAiChat;
    assert_valid(
        kind,
        "CreateChatCompletionRequest",
        &first_turn(),
        &ModelOptions::new("gpt-4.1-mini"),
    );
    assert_valid(
        kind,
        "CreateChatCompletionRequest",
        &request(rich_conversation(), None),
        &full_options(),
    );
}

#[test]
fn chat_tool_loop_with_gateway_reasoning_matches_the_schema_except_the_gateway_field() {
    // `reasoning_content` is a gateway extension OpenAI's schema does not list; it is only ever sent to a
    // server that produced it. Everything else must match the schema.
    let first = first_turn();
    let a = assemble(&decode_ok(
        ProviderKind::OpenAiChat,
        &first,
        "openai-chat/reasoning_content_tool_call.sse",
    ));
    let results = tool_result("t1", &[("call_00_clock", "noon", false)]);
    let mut body = encode_request(
        ProviderKind::OpenAiChat,
        &full_options(),
        &continue_after(&first, &a, vec![results]),
    )
    .unwrap()
    .body;
    assert!(body["messages"][2]
        .as_object_mut()
        .unwrap()
        .remove("reasoning_content")
        .is_some());
    let errs = errors(&validator("CreateChatCompletionRequest"), &body);
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

#[test]
fn responses_request_bodies_match_the_openapi_schema() {
    let kind = ProviderKind::OpenAiResponses;
    assert_valid(
        kind,
        "CreateResponse",
        &first_turn(),
        &ModelOptions::new("o4-mini"),
    );
    assert_valid(
        kind,
        "CreateResponse",
        &request(rich_conversation(), None),
        &full_options(),
    );
}

#[test]
fn responses_body_with_an_encrypted_reasoning_item_matches_the_schema() {
    let first = first_turn();
    let a = assemble(&decode_ok(
        ProviderKind::OpenAiResponses,
        &first,
        "openai-responses/reasoning_tool_call.sse",
    ));
    let results = tool_result("t1", &[("call_milk", "ok", false)]);
    assert_valid(
        ProviderKind::OpenAiResponses,
        "CreateResponse",
        &continue_after(&first, &a, vec![results]),
        &full_options(),
    );
}

#[test]
fn the_schema_check_rejects_a_wrong_body() {
    // Guards the guard: a schema that accepted anything would make the tests above meaningless.
    let mut body = encode_request(ProviderKind::OpenAiChat, &full_options(), &first_turn())
        .unwrap()
        .body;
    body["stream_options"] = json!({ "include_usage": "yes" });
    assert!(!errors(&validator("CreateChatCompletionRequest"), &body).is_empty());
    let mut body = encode_request(
        ProviderKind::OpenAiResponses,
        &full_options(),
        &first_turn(),
    )
    .unwrap()
    .body;
    body["input"][0]["content"][0]["type"] = json!("text");
    body["reasoning"]["effort"] = json!("extreme");
    assert!(!errors(&validator("CreateResponse"), &body).is_empty());
    // And a file part in the wrong shape (`file_data` outside `file`, a number) for both formats.
    let rich = request(rich_conversation(), None);
    let mut body = encode_request(ProviderKind::OpenAiChat, &full_options(), &rich)
        .unwrap()
        .body;
    body["messages"][1]["content"][3]["file"] = json!(7);
    assert!(!errors(&validator("CreateChatCompletionRequest"), &body).is_empty());
    let mut body = encode_request(ProviderKind::OpenAiResponses, &full_options(), &rich)
        .unwrap()
        .body;
    body["input"][0]["content"][3]["file_data"] = json!(7);
    assert!(!errors(&validator("CreateResponse"), &body).is_empty());
}

#[test]
fn responses_bodies_with_phases_interleaved_items_and_cache_key_match_the_schema() {
    for fixture in [
        "openai-responses/recorded/vercel-phase.sse",
        "openai-responses/interleaved_reasoning_done_last.sse",
        "openai-responses/interleaved_deltas.sse",
    ] {
        let first = first_turn();
        let a = assemble(&decode_ok(ProviderKind::OpenAiResponses, &first, fixture));
        let mut next = next_turn(&first, &a);
        next.conversation_id = Some("c_schema".into());
        let body = encode_request(ProviderKind::OpenAiResponses, &full_options(), &next)
            .unwrap()
            .body;
        assert!(body.get("prompt_cache_key").is_some());
        assert!(
            fixture.contains("deltas") || body.to_string().contains("\"phase\""),
            "{fixture}: the phase is sent"
        );
        let errs = errors(&validator("CreateResponse"), &body);
        assert!(errs.is_empty(), "{fixture}:\n{}\n{body:#}", errs.join("\n"));
    }
}

#[test]
fn the_schema_check_rejects_an_unknown_phase() {
    let first = first_turn();
    let a = assemble(&decode_ok(
        ProviderKind::OpenAiResponses,
        &first,
        "openai-responses/recorded/vercel-phase.sse",
    ));
    let mut body = encode_request(
        ProviderKind::OpenAiResponses,
        &full_options(),
        &next_turn(&first, &a),
    )
    .unwrap()
    .body;
    body["input"][1]["phase"] = json!("draft");
    assert!(!errors(&validator("CreateResponse"), &body).is_empty());
}
