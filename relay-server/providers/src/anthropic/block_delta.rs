//! The fast path of the Anthropic decoder: `content_block_delta` events carrying one piece of text, thinking,
//! tool input JSON or signature (nearly every event of a streamed answer), read into borrowed typed fields
//! instead of a `serde_json::Value` tree.
//!
//! The shape is narrow on purpose, so that reading it can only agree with the general path in `decode.rs`,
//! which reads `type`, `index` and `delta` (its `type` and the one field that type names) and ignores everything
//! else. Accepted: `type` `"content_block_delta"`, `index` a `u64`, and a `delta` whose `type` is `text_delta`,
//! `thinking_delta`, `input_json_delta` or `signature_delta` with exactly the string field of that type (`text`,
//! `thinking`, `partial_json`, `signature`). Anything else (an event that does not begin with
//! `{"type":"content_block_delta"`, another field, another type, a duplicate key, a missing or negative index,
//! `citations_delta`) is not this shape, and the decoder reads the event the general way, which also reports
//! the errors. The checks against the open block are the general path's own: both
//! paths call the same code with what they read. `tests` below compare both paths on every fixture stream and
//! on generated event sequences.

use std::borrow::Cow;

use serde::Deserialize;

use crate::wire::typed::{Object, Str};

/// A block delta: what the decoder needs of it.
pub(super) struct BlockDelta<'a> {
    pub index: u64,
    /// The delta's `type`, as the general path matches it.
    pub delta_type: &'static str,
    /// The delta's text, JSON or signature piece.
    pub piece: Cow<'a, str>,
}

/// `Some` when `data` is exactly the block-delta shape.
pub(super) fn parse(data: &str) -> Option<BlockDelta<'_>> {
    // Other events are refused here, before serde would build an error (a formatted message) to refuse them.
    // Anthropic sends `type` first; an event that does not begin with it goes the general way.
    if !data.starts_with(r#"{"type":"content_block_delta""#) {
        return None;
    }
    let Object(event): Object<Event<'_>> = serde_json::from_str(data).ok()?;
    if event.kind.0 != "content_block_delta" {
        return None;
    }
    let Delta {
        kind,
        text,
        thinking,
        partial_json,
        signature,
    } = event.delta.0;
    let (delta_type, piece) = match (kind.0.as_ref(), text, thinking, partial_json, signature) {
        ("text_delta", Some(piece), None, None, None) => ("text_delta", piece),
        ("thinking_delta", None, Some(piece), None, None) => ("thinking_delta", piece),
        ("input_json_delta", None, None, Some(piece), None) => ("input_json_delta", piece),
        ("signature_delta", None, None, None, Some(piece)) => ("signature_delta", piece),
        _ => return None,
    };
    Some(BlockDelta {
        index: event.index,
        delta_type,
        piece: piece.0,
    })
}

/// The field of a delta `type` that holds its piece, as the general path reads it (`None`: a type without one).
pub(super) fn piece_field(delta_type: &str) -> Option<&'static str> {
    Some(match delta_type {
        "text_delta" => "text",
        "thinking_delta" => "thinking",
        "input_json_delta" => "partial_json",
        "signature_delta" => "signature",
        _ => return None,
    })
}

/// `type` fields are read as strings and compared, not as serde enums: serde_json would also take an enum
/// written as a one-key object (`{"text_delta": null}`), which the general path reads as no type at all.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    index: u64,
    #[serde(borrow)]
    delta: Object<Delta<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    text: Option<Str<'a>>,
    #[serde(borrow)]
    thinking: Option<Str<'a>>,
    #[serde(borrow)]
    partial_json: Option<Str<'a>>,
    #[serde(borrow)]
    signature: Option<Str<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_paths_agree_on_fixtures, json_value, object, run, split_by_path, unnamed,
    };
    use crate::ProviderKind;
    use proptest::prelude::*;

    const KIND: ProviderKind = ProviderKind::AnthropicMessages;

    #[test]
    fn reads_the_common_text_delta() {
        let delta = parse(r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Hi \"there\""}}  "#).unwrap();
        assert_eq!(
            (delta.index, delta.delta_type, delta.piece.as_ref()),
            (2, "text_delta", "Hi \"there\"")
        );
    }

    #[test]
    fn reads_thinking_json_and_signature_deltas() {
        for (delta, field) in [
            ("thinking_delta", "thinking"),
            ("input_json_delta", "partial_json"),
            ("signature_delta", "signature"),
        ] {
            let data = format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"{delta}","{field}":"p"}}}}"#
            );
            let read = parse(&data).unwrap();
            assert_eq!((read.delta_type, read.piece.as_ref()), (delta, "p"));
            assert_eq!(piece_field(delta), Some(field));
        }
    }

    #[test]
    fn anything_else_goes_the_general_way() {
        for data in [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"index":0,"delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":-0,"delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":1.0,"delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":"0","delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","thinking":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","text":"b"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":{"text_delta":null},"text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud800"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"},"x":1}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}} x"#,
            // serde's array form of a struct: the general path reads no fields from an array.
            r#"{"type":"content_block_delta","index":0,"delta":["text_delta","a"]}"#,
        ] {
            assert!(parse(data).is_none(), "{data}");
        }
    }

    #[test]
    fn both_paths_agree_on_every_anthropic_fixture_stream() {
        let fast_hits = assert_paths_agree_on_fixtures(KIND, "anthropic-messages", |data| {
            parse(data).is_some()
        });
        assert!(
            fast_hits > 40,
            "the fixture streams exercise the fast path ({fast_hits} events)"
        );
    }

    /// Block deltas close to the accepted shape, each part varied (weighted so that both paths get a good share).
    fn near_block_delta() -> impl Strategy<Value = String> {
        let pick = |options: &'static [&'static str]| proptest::sample::select(options);
        (
            pick(&["0", "0", "0", "1", "null", "\"0\"", "-0", "1.0"]),
            proptest::sample::select(
                &[
                    (r#""text_delta""#, "text"),
                    (r#""text_delta""#, "text"),
                    (r#""text_delta""#, "text"),
                    (r#""thinking_delta""#, "thinking"),
                    (r#""input_json_delta""#, "partial_json"),
                    (r#""signature_delta""#, "signature"),
                    (r#""citations_delta""#, "citation"),
                    (r#""text_delta""#, "thinking"),
                    (r#""thinking_delta""#, "text"),
                    (r#"{"text_delta":null}"#, "text"),
                ][..],
            ),
            pick(&["\"t\"", "\"t\"", "\"\"", "null", "1", "\"{\\\"a\\\"\"", "\"\\ud800\"", r#"{"type":"web_search_result_location","url":"https://e.org/a","title":"A","cited_text":"c"}"#]),
            pick(&["", "", "", ",\"text\":\"dup\"", ",\"thinking\":null", ",\"x\":1"]),
            pick(&["", "", "", ",\"index\":0", ",\"x\":1"]),
        )
            .prop_map(|(index, (delta_type, field), piece, delta_extra, top_extra)| {
                format!(
                    r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":{delta_type},"{field}":{piece}{delta_extra}}}{top_extra}}}"#
                )
            })
    }

    /// The events around the deltas: blocks of every kind opening and closing, the message ending.
    fn structural_event() -> impl Strategy<Value = String> {
        proptest::sample::select(&[
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"s1","name":"web_search"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"s1","content":[{"type":"web_search_result","url":"https://e.org/r","title":"R"}]}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}"#,
            r#"{"type":"message_stop"}"#,
        ][..])
        .prop_map(str::to_owned)
    }

    fn any_event() -> impl Strategy<Value = String> {
        let delta = object(
            &["type", "text", "thinking", "partial_json"],
            json_value().boxed(),
        );
        object(
            &["type", "index", "delta"],
            prop_oneof![Just("\"content_block_delta\"".to_owned()), delta,].boxed(),
        )
    }

    #[test]
    fn the_generated_events_reach_both_paths() {
        let (fast, general) = split_by_path(near_block_delta(), 500, |d| parse(d).is_some());
        assert!(fast > 20 && general > 50, "{fast} fast, {general} general");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn both_paths_agree_on_generated_event_sequences(
            events in proptest::collection::vec(
                prop_oneof![4 => near_block_delta(), 3 => structural_event(), 1 => any_event()],
                1..8,
            ),
            started in proptest::bool::weighted(0.8),
        ) {
            let mut messages = Vec::new();
            if started {
                messages.push(unnamed(r#"{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1}}}"#.to_owned()));
            }
            messages.extend(events.into_iter().map(unnamed));
            prop_assert_eq!(run(KIND, &messages, true), run(KIND, &messages, false));
        }
    }
}
