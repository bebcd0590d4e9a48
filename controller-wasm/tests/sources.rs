//! Sources of text blocks (`docs/protocol.md` §1): they arrive on a text block's `block-stop`, become that block's
//! `sources` in the stable message (and in the draft once the block is done), count against
//! `maxModelOutputCharacters`, and are refused on other blocks and on a person's own text.

mod support;

use patchbridge_agent::core::aggregate::Aggregator;
use patchbridge_agent::core::messages::check_messages;
use patchbridge_agent::core::protocol::{
    Block, BlockKind, Message, Role, Source, StopReason, StreamEvent,
};
use patchbridge_agent::core::*;
use support::*;

fn source(url: &str, title: &str) -> Source {
    Source {
        url: Some(url.into()),
        title: Some(title.into()),
        cited_text: None,
    }
}

fn stop_with_sources(index: u32, sources: Vec<Source>) -> Step {
    ev(StreamEvent::BlockStop { index, sources })
}

/// An answer in two text blocks, the second citing two sources.
fn cited_answer() -> Vec<Step> {
    vec![
        start("m1"),
        block_start(0, BlockKind::Text),
        delta(0, "Here is what I found. "),
        block_stop(0),
        block_start(1, BlockKind::Text),
        delta(1, "The eclipse crosses Spain"),
        stop_with_sources(
            1,
            vec![
                source("https://example.org/eclipse", "Eclipse 2026"),
                Source {
                    url: None,
                    title: Some("Almanac.pdf".into()),
                    cited_text: Some("12 August 2026".into()),
                },
            ],
        ),
        stop(StopReason::EndTurn),
    ]
}

#[test]
fn sources_on_a_text_block_stop_become_the_stored_blocks_sources() {
    let rt = runtime(
        ScriptedModel::new(vec![cited_answer()]),
        ManualPlatform::new(),
    );
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    let reply = &result.unwrap().messages[1];
    assert_eq!(reply.blocks[0], Block::text("Here is what I found. "));
    match &reply.blocks[1] {
        Block::Text { text, sources } => {
            assert_eq!(text, "The eclipse crosses Spain");
            assert_eq!(sources.len(), 2);
            assert_eq!(
                sources[0].url.as_deref(),
                Some("https://example.org/eclipse")
            );
            assert_eq!(sources[1].title.as_deref(), Some("Almanac.pdf"));
        }
        other => panic!("expected text, got {other:?}"),
    }
    // Stored as the wire shape: `sources` only where there are some, `citedText` in camelCase.
    let json = serde_json::to_value(reply).unwrap();
    assert!(json["blocks"][0].get("sources").is_none());
    assert_eq!(
        json["blocks"][1]["sources"][1]["citedText"],
        "12 August 2026"
    );
}

#[test]
fn sources_on_a_reasoning_or_tool_call_block_stop_are_a_protocol_error() {
    let sources = vec![source("https://example.org", "E")];
    let tool = BlockKind::ToolCall {
        call_id: "c1".into(),
        name: "t".into(),
    };
    for (kind, body) in [(BlockKind::Reasoning, "why"), (tool, "{}")] {
        let steps = vec![
            start("m1"),
            block_start(0, kind.clone()),
            delta(0, body),
            stop_with_sources(0, sources.clone()),
            stop(StopReason::EndTurn),
        ];
        let rt = runtime(ScriptedModel::new(vec![steps]), ManualPlatform::new());
        let (result, log) = run_to_end(&rt, input(vec![user("q")], no_tools()));
        assert_eq!(code_of(&result), "AGENT_PROTOCOL_ERROR", "{kind:?}");
        assert!(!event_types(&log).contains(&"message-completed".to_string()));
    }
}

#[test]
fn sources_count_against_max_model_output_characters() {
    // "ab" (2) + url (19) + title (1) = 22 characters.
    let steps = || {
        vec![
            start("m1"),
            block_start(0, BlockKind::Text),
            delta(0, "ab"),
            stop_with_sources(0, vec![source("https://example.org", "E")]),
            stop(StopReason::EndTurn),
        ]
    };
    let run = |max| {
        let mut limits = Limits::DEFAULT;
        limits.max_model_output_characters = max;
        let rt = runtime_with(
            ScriptedModel::new(vec![steps()]),
            RuntimeOptions::new(limits),
            ManualPlatform::new(),
        );
        run_to_end(&rt, input(vec![user("q")], no_tools())).0
    };
    assert_eq!(code_of(&run(22)), "completed");
    let error = run(21).unwrap_err();
    assert_eq!(error.code, ErrorCode::LimitExceeded);
    assert_eq!(error.limit, Some(LimitName::MaxModelOutputCharacters));
}

#[test]
fn the_draft_shows_a_text_blocks_sources_once_the_block_is_done() {
    let mut aggregator = Aggregator::new("fallback".into(), 10_000);
    let mut draft = Draft::new("m1".into());
    for step in cited_answer() {
        let Step::Event(event) = step else { continue };
        aggregator.accept(&event).unwrap();
        draft.apply(&event);
    }
    let json = draft.to_json();
    assert!(json["blocks"][0].get("sources").is_none());
    assert_eq!(json["blocks"][1]["sources"][0]["title"], "Eclipse 2026");
    assert_eq!(json["blocks"][1]["complete"], true);
}

#[test]
fn a_persons_own_text_cannot_carry_sources() {
    let message = Message {
        id: "u1".into(),
        role: Role::User,
        blocks: vec![Block::Text {
            text: "see this".into(),
            sources: vec![source("https://example.org", "E")],
        }],
    };
    let error = check_messages(&[message]).unwrap_err();
    assert!(error.contains("cannot carry sources"), "{error}");
}
