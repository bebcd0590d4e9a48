//! Pass-through JSON keeps its bytes: ModelState data, tool-call arguments and tool input schemas come out of a
//! parse/serialise round trip with their key order and number text unchanged; tool-call arguments with a
//! repeated key are refused; events and usage ignore keys this version does not know (forward compatibility)
//! while requests and stored messages stay strict.

use patchbridge_protocol::{
    unique, Block, ConversationContext, Message, ModelRequest, StreamEvent, ToolDefinition,
};

const DATA: &str =
    r#"{"z":1,"a":{"y":2,"b":3},"big":12345678901234567890123,"f":1.50,"e":1e+5,"neg":-0.0}"#;

/// The one normalisation serde_json makes to number text: the exponent is written `e` with an explicit sign.
#[test]
fn an_exponent_without_sign_is_the_only_number_text_that_changes() {
    let value = unique::from_str(r#"{"e":1e5,"E":2E-3}"#).unwrap();
    assert_eq!(value.to_string(), r#"{"e":1e+5,"E":2e-3}"#);
}

#[test]
fn model_state_keeps_key_order_and_number_text_through_an_event_and_a_stored_context() {
    let event = format!(
        r#"{{"type":"message-stop","stopReason":"end-turn","modelState":{{"format":"f/v1","data":{DATA}}}}}"#
    );
    let parsed: StreamEvent = serde_json::from_str(&event).unwrap();
    let StreamEvent::MessageStop { model_state, .. } = &parsed else {
        panic!()
    };
    let state = model_state.clone().unwrap();
    assert_eq!(serde_json::to_string(&state.data).unwrap(), DATA);
    let context = ConversationContext {
        messages: vec![],
        model_state: Some(state),
    };
    let stored = serde_json::to_string(&context).unwrap();
    assert!(stored.contains(DATA), "{stored}");
    let reread: ConversationContext = serde_json::from_str(&stored).unwrap();
    assert_eq!(serde_json::to_string(&reread).unwrap(), stored);
}

#[test]
fn tool_call_arguments_and_input_schemas_keep_key_order_and_number_text() {
    let message = format!(
        r#"{{"id":"a1","role":"assistant","blocks":[{{"type":"tool-call","callId":"c1","name":"t","input":{DATA}}}]}}"#
    );
    let parsed: Message = serde_json::from_str(&message).unwrap();
    assert_eq!(serde_json::to_string(&parsed).unwrap(), message);
    let schema = r#"{"type":"object","properties":{"zeta":{"type":"integer","maximum":18446744073709551616},"alpha":{"type":"string"}},"required":["zeta"]}"#;
    let tool = format!(r#"{{"name":"t","description":"d","inputSchema":{schema}}}"#);
    let parsed: ToolDefinition = serde_json::from_str(&tool).unwrap();
    assert_eq!(serde_json::to_string(&parsed).unwrap(), tool);
    let request = format!(r#"{{"messages":[{message}],"modelState":null,"tools":[{tool}]}}"#);
    let parsed: ModelRequest = serde_json::from_str(&request).unwrap();
    assert_eq!(serde_json::to_string(&parsed).unwrap(), request);
}

#[test]
fn tool_call_arguments_with_a_repeated_key_are_refused_at_any_depth() {
    for input in [
        r#"{"path":"a","path":"b"}"#,
        r#"{"outer":{"k":1,"k":2}}"#,
        r#"{"list":[{"x":1,"x":1}]}"#,
    ] {
        let block = format!(r#"{{"type":"tool-call","callId":"c1","name":"t","input":{input}}}"#);
        let error = serde_json::from_str::<Block>(&block)
            .unwrap_err()
            .to_string();
        assert!(error.contains("duplicate key"), "{input}: {error}");
        assert!(unique::from_str(input)
            .unwrap_err()
            .to_string()
            .contains("duplicate key"));
    }
    // Equal keys in different objects are fine, and numbers keep their text.
    let fine = r#"{"a":{"k":1},"b":{"k":2.50},"n":123456789012345678901234567890}"#;
    assert_eq!(unique::from_str(fine).unwrap().to_string(), fine);
}

#[test]
fn a_repeated_key_is_reported_by_type_with_the_key_and_other_failures_are_not() {
    let read =
        |text: &str| unique::from_deserializer(&mut serde_json::Deserializer::from_str(text));
    match read(r#"{"outer":[{"k":1,"k\u0021":2,"k!":3}]}"#) {
        Err(unique::ReadError::DuplicateKey { key, error }) => {
            assert_eq!(key, "k!");
            assert_eq!((error.line(), error.column()), (1, 33), "{error}");
        }
        other => panic!("{other:?}"),
    }
    for text in [r#"{"a":1,}"#, r#"{"a":"\ud800"}"#, "[1"] {
        assert!(
            matches!(read(text), Err(unique::ReadError::Other(_))),
            "{text}"
        );
    }
    // The same value as `from_str`, numbers with their text.
    let fine = r#"{"a":{"k":1},"b":[1e+5,2.50,{"k":-0}]}"#;
    assert_eq!(read(fine).unwrap(), unique::from_str(fine).unwrap());
    assert_eq!(read(fine).unwrap().to_string(), fine);
}

#[test]
fn events_and_usage_ignore_unknown_keys_but_requests_and_messages_stay_strict() {
    let events = [
        r#"{"type":"message-start","id":"m1","createdAt":"2030-01-01"}"#,
        r#"{"type":"block-start","index":0,"block":{"type":"tool-call","callId":"c","name":"n","kind":"function"},"x":1}"#,
        r#"{"type":"block-delta","index":0,"delta":"t","offset":3}"#,
        r#"{"type":"block-stop","index":0,"final":true}"#,
        r#"{"type":"message-stop","stopReason":"end-turn","usage":{"inputTokens":3,"audioTokens":9},"modelState":null,"latencyMs":12}"#,
        r#"{"type":"error","code":"UPSTREAM_TIMEOUT","message":"slow","messageId":"m1"}"#,
    ];
    for event in events {
        serde_json::from_str::<StreamEvent>(event).unwrap_or_else(|e| panic!("{event}: {e}"));
    }
    let usage: patchbridge_protocol::Usage =
        serde_json::from_str(r#"{"inputTokens":3,"audioTokens":9}"#).unwrap();
    assert_eq!(usage.input_tokens, 3);
    // Still refused: a repeated key, a wrong type, a missing required key.
    assert!(
        serde_json::from_str::<StreamEvent>(r#"{"type":"block-stop","index":0,"index":1}"#)
            .is_err()
    );
    assert!(serde_json::from_str::<StreamEvent>(r#"{"type":"block-stop","index":"0"}"#).is_err());
    assert!(serde_json::from_str::<StreamEvent>(
        r#"{"type":"message-stop","stopReason":"end-turn"}"#
    )
    .is_err());
    // The modelState itself is exactly { format, data }: it is stored and sent back verbatim.
    assert!(serde_json::from_str::<StreamEvent>(
        r#"{"type":"message-stop","stopReason":"end-turn","modelState":{"format":"f","data":1,"x":2}}"#
    )
    .is_err());
    // Requests and messages (what the runtime writes and the relay stores) refuse unknown keys.
    assert!(
        serde_json::from_str::<Message>(r#"{"id":"m","role":"user","blocks":[],"x":1}"#).is_err()
    );
    assert!(serde_json::from_str::<Block>(r#"{"type":"text","text":"a","x":1}"#).is_err());
    assert!(
        serde_json::from_str::<ModelRequest>(r#"{"messages":[],"modelState":null,"x":1}"#).is_err()
    );
    assert!(serde_json::from_str::<ConversationContext>(
        r#"{"messages":[],"modelState":null,"x":1}"#
    )
    .is_err());
}
