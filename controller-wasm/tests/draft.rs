//! The streaming draft is built in one place (`core::draft`): the loop's aggregator and the controller's state
//! apply the same validated block events and end with the same blocks.

use patchbridge_agent::core::aggregate::Aggregator;
use patchbridge_agent::core::protocol::{BlockKind, StreamEvent};
use patchbridge_agent::core::Draft;

fn events() -> Vec<StreamEvent> {
    let tool = BlockKind::ToolCall {
        call_id: "c1".into(),
        name: "search".into(),
    };
    vec![
        StreamEvent::MessageStart {
            id: Some("m1".into()),
            model: None,
        },
        StreamEvent::BlockStart {
            index: 0,
            block: BlockKind::Reasoning,
        },
        StreamEvent::BlockDelta {
            index: 0,
            delta: "think".into(),
        },
        StreamEvent::block_stop(0),
        StreamEvent::BlockStart {
            index: 1,
            block: BlockKind::Text,
        },
        StreamEvent::BlockDelta {
            index: 1,
            delta: "Hel".into(),
        },
        StreamEvent::BlockDelta {
            index: 1,
            delta: "lo 😀".into(),
        },
        StreamEvent::block_stop(1),
        StreamEvent::BlockStart {
            index: 2,
            block: tool,
        },
        StreamEvent::BlockDelta {
            index: 2,
            delta: "{\"q\":".into(),
        },
    ]
}

#[test]
fn the_controller_draft_and_the_aggregated_draft_are_the_same_blocks() {
    let mut aggregator = Aggregator::new("fallback".into(), 1_000);
    let mut draft = Draft::new("m1".into());
    for event in events() {
        aggregator.accept(&event).expect("valid event");
        draft.apply(&event);
        assert_eq!(
            aggregator.blocks(),
            draft.blocks.as_slice(),
            "after {event:?}"
        );
    }
    assert_eq!(aggregator.id(), Some("m1"));
    let json = draft.to_json();
    assert_eq!(json["blocks"][1]["text"], "Hello 😀");
    assert_eq!(json["blocks"][1]["complete"], true);
    assert_eq!(json["blocks"][2]["argumentsText"], "{\"q\":");
    assert_eq!(json["blocks"][2]["complete"], false);
}

#[test]
fn the_aggregator_names_the_message_only_after_message_start_and_falls_back_without_an_id() {
    let mut aggregator = Aggregator::new("fallback".into(), 1_000);
    assert_eq!(aggregator.id(), None);
    aggregator
        .accept(&StreamEvent::MessageStart {
            id: None,
            model: None,
        })
        .unwrap();
    assert_eq!(aggregator.id(), Some("fallback"));
}
