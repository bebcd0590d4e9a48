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
