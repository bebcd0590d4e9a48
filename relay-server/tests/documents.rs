//! Documents and images through the real relay (`POST /api/model` over HTTP to a fake upstream speaking each
//! provider's real SSE): what each format receives for a PDF and a text file (the upstream request body), the
//! input kinds a model takes (`capabilities.inputs`, its `images` alias) as `GET /models` reports them, and a PDF
//! or image for a model that does not take it refused with `UNSUPPORTED_INPUT` before any upstream call.

mod common;

use axum::http::StatusCode;
use common::*;
use serde_json::{json, Value};

const PDF: &str = "JVBERi0xLjcKJcfsj6IK";

/// A model request whose user message carries a PDF and a CSV file.
fn documents_request(model: &str) -> Value {
    json!({
        "model": model,
        "messages": [ { "id": "u1", "role": "user", "blocks": [
            { "type": "text", "text": "What do these say?" },
            { "type": "document", "name": "report.pdf",
              "source": { "type": "base64", "mediaType": "application/pdf", "data": PDF } },
            { "type": "document", "name": "data.csv",
              "source": { "type": "text", "mediaType": "text/csv", "text": "a,b\n1,2" } }
        ] } ],
        "modelState": null,
        "tools": []
    })
}

fn with_inputs(id: &str, provider: &str, fake: &FakeUpstream, capabilities: Value) -> Value {
    let mut m = model(id, provider, fake);
    m["capabilities"] = capabilities;
    m
}

/// A relay whose three models (one per format) take PDFs, answering with `reply`.
async fn relay_taking_pdfs(reply: &str) -> (FakeUpstream, Relay, TestDb) {
    let fake = FakeUpstream::start(vec![Reply::sse(read_fixture(reply))]).await;
    let db = TestDb::new(Backend::Sqlite);
    set_key();
    let pdf = json!({ "inputs": ["text", "pdf"] });
    let config = base_config(
        &db,
        json!({ "models": [
            with_inputs("chat", "openai-chat", &fake, pdf.clone()),
            with_inputs("responses", "openai-responses", &fake, pdf.clone()),
            with_inputs("claude", "anthropic-messages", &fake, pdf),
        ] }),
    );
    let r = relay(config).await;
    (fake, r, db)
}

/// The user message's content as the one upstream request received it.
async fn upstream_user_content(model: &str, reply: &str, pointer: &str) -> Value {
    let (fake, r, _db) = relay_taking_pdfs(reply).await;
    let (status, text) = post_model(&r, documents_request(model)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("message-stop"), "{text}");
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    requests[0]
        .body
        .pointer(pointer)
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn openai_chat_receives_the_pdf_as_a_file_part_and_the_csv_as_a_headed_text_part() {
    let content = upstream_user_content(
        "chat",
        "openai-chat/recorded/173417d55340.sse",
        "/messages/0/content",
    )
    .await;
    assert_eq!(
        content,
        json!([
            { "type": "text", "text": "What do these say?" },
            { "type": "file", "file": { "file_data": format!("data:application/pdf;base64,{PDF}"), "filename": "report.pdf" } },
            { "type": "text", "text": "--- file data.csv (text/csv) ---\na,b\n1,2\n--- end of file data.csv ---" }
        ])
    );
}

#[tokio::test]
async fn openai_responses_receives_the_pdf_as_an_input_file_and_the_csv_as_headed_input_text() {
    let content =
        upstream_user_content("responses", "openai-responses/text.sse", "/input/0/content").await;
    assert_eq!(
        content,
        json!([
            { "type": "input_text", "text": "What do these say?" },
            { "type": "input_file", "file_data": format!("data:application/pdf;base64,{PDF}"), "filename": "report.pdf" },
            { "type": "input_text", "text": "--- file data.csv (text/csv) ---\na,b\n1,2\n--- end of file data.csv ---" }
        ])
    );
}

#[tokio::test]
async fn anthropic_receives_document_blocks_with_a_base64_and_a_text_source() {
    let content = upstream_user_content(
        "claude",
        "anthropic-messages/recorded/basic_response.sse",
        "/messages/0/content",
    )
    .await;
    // Prompt caching is on by default: the newest message's last block carries the breakpoint.
    assert_eq!(
        content,
        json!([
            { "type": "text", "text": "What do these say?" },
            { "type": "document", "title": "report.pdf",
              "source": { "type": "base64", "media_type": "application/pdf", "data": PDF } },
            { "type": "document", "title": "data.csv",
              "source": { "type": "text", "media_type": "text/plain", "data": "a,b\n1,2" },
              "cache_control": { "type": "ephemeral" } }
        ])
    );
}

#[tokio::test]
async fn a_pdf_or_an_image_for_a_model_that_does_not_take_it_is_refused_before_any_upstream_call() {
    // `inputs: ["text"]` takes neither; the default (and `images: true`) adds images but not PDFs.
    let fake = FakeUpstream::start(vec![Reply::sse(read_fixture(
        "openai-chat/recorded/173417d55340.sse",
    ))])
    .await;
    let db = TestDb::new(Backend::Sqlite);
    set_key();
    let config = base_config(
        &db,
        json!({ "models": [
            with_inputs("plain", "openai-chat", &fake, json!({ "inputs": ["text"] })),
            model("vision", "anthropic-messages", &fake),
        ] }),
    );
    let r = relay(config).await;

    let (status, text) = post_model(&r, documents_request("plain")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&text), "UNSUPPORTED_INPUT");
    assert!(text.contains("report.pdf"), "the file is named: {text}");
    let (status, text) = post_model(&r, documents_request("vision")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&text), "UNSUPPORTED_INPUT");

    let mut image = first_turn_request("plain");
    image["messages"][0]["blocks"].as_array_mut().unwrap().push(json!(
        { "type": "image", "source": { "type": "base64", "mediaType": "image/png", "data": "iVBORw0KGgo=" } }
    ));
    let (status, text) = post_model(&r, image).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&text), "UNSUPPORTED_INPUT");
    assert!(fake.requests().is_empty(), "nothing went upstream");

    // A text document needs only `text`.
    let mut text_only = documents_request("plain");
    text_only["messages"][0]["blocks"]
        .as_array_mut()
        .unwrap()
        .remove(1);
    let (status, text) = post_model(&r, text_only).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn the_models_endpoint_reports_inputs_and_the_images_alias_text_and_images_by_default() {
    let fake = FakeUpstream::start(vec![]).await;
    let db = TestDb::new(Backend::Sqlite);
    set_key();
    let config = base_config(
        &db,
        json!({ "models": [
            with_inputs("plain", "openai-chat", &fake, json!({ "images": false })),
            model("default", "openai-chat", &fake),
            with_inputs("all", "anthropic-messages", &fake, json!({ "inputs": ["pdf", "text", "image"] })),
        ] }),
    );
    let r = relay(config).await;
    let (status, body) = r.call("GET", "/api/models", "alice", None).await;
    assert_eq!(status, StatusCode::OK);
    let capabilities: Vec<Value> = body["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["capabilities"].clone())
        .collect();
    assert_eq!(
        capabilities,
        [
            json!({ "tools": true, "inputs": ["text"], "images": false, "reasoning": false }),
            json!({ "tools": true, "inputs": ["text", "image"], "images": true, "reasoning": false }),
            json!({ "tools": true, "inputs": ["text", "image", "pdf"], "images": true, "reasoning": false }),
        ]
    );
}
