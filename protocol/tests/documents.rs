//! The wire documents beside messages and events (`docs/protocol.md` §4–§6): error codes with their statuses,
//! the error envelope, the conversation request bodies and the models document. The code table of §4 is read
//! from `docs/protocol.md` itself, so the document and `RelayErrorCode` cannot drift apart.

use patchbridge_protocol::*;
use serde_json::json;

/// `(code, status)` of every row of the §4 table.
fn documented_codes() -> Vec<(String, u16)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md");
    let doc = std::fs::read_to_string(path).expect("docs/protocol.md");
    let section = &doc[doc.find("## 4. Errors").expect("§4")..doc.find("## 5.").expect("§5")];
    section
        .lines()
        .filter_map(|line| {
            let mut cells = line.split('|').map(str::trim).skip(1);
            let code = cells.next()?.strip_prefix('`')?.strip_suffix('`')?;
            let status = cells.next()?.parse().ok()?;
            Some((code.to_owned(), status))
        })
        .collect()
}

#[test]
fn every_documented_error_code_is_a_relay_error_code_with_its_status_and_no_other() {
    let documented = documented_codes();
    assert!(
        documented.len() >= 20,
        "the §4 table was read: {documented:?}"
    );
    let ours: Vec<(String, u16)> = RelayErrorCode::ALL
        .iter()
        .map(|c| (c.as_str().to_owned(), c.status()))
        .collect();
    assert_eq!(ours, documented);
}

#[test]
fn only_spending_limits_outages_timeouts_and_rate_limits_are_retryable() {
    let retryable: Vec<&str> = RelayErrorCode::ALL
        .into_iter()
        .filter(|c| c.retryable())
        .map(RelayErrorCode::as_str)
        .collect();
    assert_eq!(
        retryable,
        [
            "SPENDING_LIMIT_REACHED",
            "UPSTREAM_UNAVAILABLE",
            "UPSTREAM_TIMEOUT",
            "UPSTREAM_RATE_LIMITED",
            "MCP_CONCURRENCY_LIMIT"
        ]
    );
}

#[test]
fn the_error_envelope_has_code_and_message_and_only_the_extra_fields_that_are_set() {
    let plain = ErrorEnvelope::new(RelayErrorCode::NotFound, "not found");
    assert_eq!(
        serde_json::to_value(&plain).unwrap(),
        json!({ "error": { "code": "NOT_FOUND", "message": "not found" } })
    );
    let mut conflict = ErrorEnvelope::new(RelayErrorCode::RevisionConflict, "stale");
    conflict.error.current_revision = Some(4);
    assert_eq!(
        serde_json::to_string(&conflict).unwrap(),
        r#"{"error":{"code":"REVISION_CONFLICT","message":"stale","currentRevision":4}}"#
    );
}

#[test]
fn an_error_envelope_with_an_unknown_code_and_unknown_keys_still_reads() {
    let read: ErrorEnvelope = serde_json::from_value(json!({
        "error": { "code": "FUTURE_CODE", "message": "m", "messageId": "m1", "somethingNew": true }
    }))
    .unwrap();
    assert_eq!(read.error.code, "FUTURE_CODE");
    assert_eq!(read.error.known_code(), None);
    assert_eq!(read.error.message_id.as_deref(), Some("m1"));
    let known: ErrorEnvelope =
        serde_json::from_value(json!({ "error": { "code": "UPSTREAM_TIMEOUT" } })).unwrap();
    assert_eq!(
        known.error.known_code(),
        Some(RelayErrorCode::UpstreamTimeout)
    );
    assert_eq!(known.error.message, "");
}

#[test]
fn a_spending_limit_error_names_its_limit_and_when_to_retry_and_reads_back_with_an_unknown_kind() {
    let mut refused = ErrorEnvelope::new(RelayErrorCode::SpendingLimitReached, "limit");
    refused.error.retryable = Some(true);
    refused.error.retry_after_seconds = Some(42);
    refused.error.limit = Some(SpendingLimit {
        kind: SpendingLimitKind::OutputTokens.as_str().into(),
        max: 1000,
        window_seconds: Some(3600),
        sliding: Some(true),
        model: Some("big".into()),
    });
    assert_eq!(
        serde_json::to_value(&refused).unwrap(),
        json!({ "error": { "code": "SPENDING_LIMIT_REACHED", "message": "limit", "retryable": true,
            "limit": { "kind": "outputTokens", "max": 1000, "windowSeconds": 3600, "sliding": true, "model": "big" },
            "retryAfterSeconds": 42 } })
    );
    let newer: ErrorEnvelope = serde_json::from_value(json!({ "error": {
        "code": "SPENDING_LIMIT_REACHED", "limit": { "kind": "dollars", "max": 5 }, "retryAfterSeconds": 7 } }))
    .unwrap();
    let limit = newer.error.limit.expect("the limit");
    assert_eq!((limit.kind.as_str(), limit.known_kind()), ("dollars", None));
    assert_eq!(newer.error.retry_after_seconds, Some(7));
}

#[test]
fn conversation_request_bodies_have_the_documented_shape_and_are_strict() {
    let context = ConversationContext {
        messages: vec![],
        model_state: None,
    };
    let create = CreateConversation {
        title: Some("t".into()),
        context: Some(context.clone()),
    };
    assert_eq!(
        serde_json::to_string(&create).unwrap(),
        r#"{"title":"t","context":{"messages":[],"modelState":null}}"#
    );
    let empty: CreateConversation = serde_json::from_str("{}").unwrap();
    assert_eq!(
        empty,
        CreateConversation {
            title: None,
            context: None
        }
    );
    assert!(serde_json::from_str::<CreateConversation>(r#"{"titel":"x"}"#).is_err());

    let save = SaveConversation {
        expected_revision: 3,
        title: None,
        context,
    };
    assert_eq!(
        serde_json::to_string(&save).unwrap(),
        r#"{"expectedRevision":3,"context":{"messages":[],"modelState":null}}"#
    );
    assert!(serde_json::from_str::<SaveConversation>(r#"{"expectedRevision":3}"#).is_err());
    assert!(serde_json::from_str::<SaveConversation>(
        r#"{"expectedRevision":3,"context":{"messages":[],"modelState":null},"x":1}"#
    )
    .is_err());
}

#[test]
fn the_models_document_reads_the_documented_example() {
    let doc: ModelsDocument = serde_json::from_value(json!({
        "protocolVersion": 1, "previewOnly": false, "defaultModel": "gpt-4.1-mini",
        "models": [ { "id": "gpt-4.1-mini", "provider": "openai-chat", "label": "GPT", "previewOnly": false,
                      "capabilities": { "tools": true, "inputs": ["text", "image", "pdf"], "images": true,
                                        "reasoning": false } } ]
    }))
    .unwrap();
    assert_eq!(doc.protocol_version, PROTOCOL_VERSION);
    assert_eq!(
        doc.models[0].capabilities,
        Capabilities {
            tools: true,
            inputs: vec![InputKind::Text, InputKind::Image, InputKind::Pdf],
            images: true,
            reasoning: false
        }
    );
    assert_eq!(
        serde_json::to_value(&doc).unwrap()["models"][0]["previewOnly"],
        json!(false)
    );
}

/// `T` read from `text`: the error text when it is refused.
fn refusal<T: serde::de::DeserializeOwned>(text: &str) -> Option<String> {
    serde_json::from_str::<T>(text).err().map(|e| e.to_string())
}

#[test]
fn wire_objects_are_read_from_json_objects_only_never_from_serdes_array_form() {
    use patchbridge_protocol::conversation::*;
    use patchbridge_protocol::error::*;
    use patchbridge_protocol::message::*;
    use patchbridge_protocol::models::*;
    use patchbridge_protocol::request::ModelRequest;

    let message = r#"{"id":"m1","role":"user","blocks":[{"type":"text","text":"hi"}]}"#;
    // Each array holds the struct's fields in declaration order, which serde's derive alone would accept.
    let arrays: [(&str, Option<String>); 9] = [
        (
            "ModelRequest",
            refusal::<ModelRequest>(&format!("[null,[{message}],null]")),
        ),
        ("Message", refusal::<Message>(r#"["m1","user",[]]"#)),
        (
            "ToolDefinition",
            refusal::<ToolDefinition>(r#"["todos.add","Add",{}]"#),
        ),
        ("ModelState", refusal::<ModelState>(r#"["openai-chat",{}]"#)),
        ("Usage", refusal::<Usage>("[1,2,3,4,5]")),
        (
            "CreateConversation",
            refusal::<CreateConversation>(r#"["A title"]"#),
        ),
        (
            "SaveConversation",
            refusal::<SaveConversation>(r#"[0,[],null]"#),
        ),
        (
            "ErrorEnvelope",
            refusal::<ErrorEnvelope>(r#"[["RATE_LIMITED","slow down"]]"#),
        ),
        ("Capabilities", refusal::<Capabilities>("[true,true,true]")),
    ];
    for (name, refused) in arrays {
        let text = refused.unwrap_or_else(|| panic!("{name} was read from an array"));
        assert!(
            text.starts_with(&format!("invalid type: sequence, expected struct {name}")),
            "{name}: {text}"
        );
    }
    // Nested ones too: a tool given as an array inside a request.
    let nested = refusal::<ModelRequest>(&format!(
        r#"{{"messages":[{message}],"modelState":null,"tools":[["todos.add","Add",{{}}]]}}"#
    ))
    .expect("a tool given as an array is refused");
    assert!(
        nested.contains("expected struct ToolDefinition"),
        "{nested}"
    );
    // The object forms still read.
    let request: ModelRequest =
        serde_json::from_str(&format!(r#"{{"messages":[{message}],"modelState":null,"tools":[{{"name":"t","description":"d","inputSchema":{{}}}}]}}"#))
            .unwrap();
    assert_eq!((request.messages.len(), request.tools.len()), (1, 1));
}
