use patchbridge_protocol::*;
use serde_json::json;

#[test]
fn message_round_trips_in_the_documented_shape() {
    let wire = json!({"id":"message-42","role":"assistant","blocks":[
        {"type":"reasoning","text":"summary"},
        {"type":"text","text":"checking"},
        {"type":"tool-call","callId":"call-7","name":"local.device_get","input":{"serial":"100000000001"}},
    ]});
    let message: Message = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(message.blocks.len(), 3);
    assert_eq!(serde_json::to_value(&message).unwrap(), wire);
}

#[test]
fn tool_call_input_must_be_an_object() {
    let wire = json!({"type":"tool-call","callId":"c","name":"t","input":[1,2]});
    assert!(serde_json::from_value::<Block>(wire).is_err());
}

#[test]
fn unknown_block_fields_are_rejected() {
    let wire = json!({"type":"text","text":"hi","extra":1});
    assert!(serde_json::from_value::<Block>(wire).is_err());
}

#[test]
fn message_stop_requires_the_model_state_key() {
    let missing = json!({"type":"message-stop","stopReason":"end-turn"});
    assert!(serde_json::from_value::<StreamEvent>(missing).is_err());
    let null = json!({"type":"message-stop","stopReason":"end-turn","modelState":null});
    assert!(matches!(
        serde_json::from_value::<StreamEvent>(null).unwrap(),
        StreamEvent::MessageStop {
            model_state: None,
            ..
        }
    ));
}

#[test]
fn conversation_context_requires_model_state_key_and_serialises_null() {
    assert!(serde_json::from_value::<ConversationContext>(json!({"messages":[]})).is_err());
    let ctx: ConversationContext =
        serde_json::from_value(json!({"messages":[],"modelState":null})).unwrap();
    assert_eq!(
        serde_json::to_value(&ctx).unwrap(),
        json!({"messages":[],"modelState":null})
    );
}

#[test]
fn stream_events_use_kebab_case_tags() {
    let ev = StreamEvent::BlockStart {
        index: 0,
        block: BlockKind::ToolCall {
            call_id: "c1".into(),
            name: "n".into(),
        },
    };
    assert_eq!(
        serde_json::to_value(&ev).unwrap(),
        json!({"type":"block-start","index":0,"block":{"type":"tool-call","callId":"c1","name":"n"}})
    );
}

#[test]
fn text_sources_round_trip_and_text_without_sources_keeps_its_shape() {
    let wire = json!({"type":"text","text":"It crosses Spain.","sources":[
        {"url":"https://example.org/eclipse","title":"Eclipse 2026","citedText":"It crosses Spain."},
        {"title":"Almanac.pdf"},
    ]});
    let block: Block = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(serde_json::to_value(&block).unwrap(), wire);
    assert_eq!(
        serde_json::to_value(Block::text("plain")).unwrap(),
        json!({"type":"text","text":"plain"})
    );
    let stop = json!({"type":"block-stop","index":2,"sources":[{"url":"https://example.org"}]});
    let event: StreamEvent = serde_json::from_value(stop.clone()).unwrap();
    assert_eq!(serde_json::to_value(&event).unwrap(), stop);
    assert_eq!(
        serde_json::to_value(StreamEvent::block_stop(2)).unwrap(),
        json!({"type":"block-stop","index":2})
    );
}

#[test]
fn a_stored_context_with_a_source_url_that_is_not_http_is_refused() {
    for url in ["javascript:alert(1)", "data:text/html,x", "//example.org/a"] {
        let context = json!({"messages":[{"id":"a1","role":"assistant","blocks":[
            {"type":"text","text":"a","sources":[{"url":url,"title":"T"}]}
        ]}],"modelState":null});
        let error = serde_json::from_value::<ConversationContext>(context).unwrap_err();
        assert!(error.to_string().contains("source url"), "{url}: {error}");
    }
}

#[test]
fn a_source_needs_a_url_or_a_title_and_no_empty_or_unknown_keys() {
    for bad in [
        json!({"citedText":"only"}),
        json!({"title":""}),
        json!({"url":"https://e.org","kind":"web"}),
        json!({"title":"T","citedText":"x".repeat(501)}),
    ] {
        assert!(
            serde_json::from_value::<Source>(bad.clone()).is_err(),
            "{bad}"
        );
    }
}
