//! The fast path of the Responses decoder: the delta events that make up nearly every event of a streamed answer
//! (`response.output_text.delta` above all, also refusal, reasoning summary, reasoning text and function-call
//! argument deltas), read into borrowed typed fields instead of a `serde_json::Value` tree.
//!
//! The shape is narrow on purpose, so that reading it can only agree with the general path in `decode.rs`,
//! which reads `type`, `output_index`, the part index its event type names (`content_index` or
//! `summary_index`) and `delta`, and ignores everything else. Accepted: `type` one of those five event types;
//! `delta` a string; `output_index` and the event's part index a `u64` or null (the general path reads both as
//! 0 when absent, null or not a `u64`, so only `u64` and null are taken here); the other part index absent;
//! `sequence_number` a `u64` or null; `item_id`, `obfuscation` and `logprobs` anything, read past as strictly
//! as a `Value` parse reads them. Anything else (an event that does not begin with `{"type":"…delta"`, another
//! field, another type, a duplicate key, a missing `delta`) is not this shape, and the decoder reads the event
//! the general way. `tests` below compare both paths on every fixture stream and on generated event sequences.

use std::borrow::Cow;

use serde::Deserialize;

use super::decode::live_event;
use crate::wire::typed::{Skip, Str};

/// A delta event: what the decoder needs of it.
pub(super) enum DeltaEvent<'a> {
    /// Streamed text or reasoning: `kind` is an event type `decode::live_event` names.
    Live {
        kind: Cow<'a, str>,
        output_index: u64,
        part: u64,
        delta: Cow<'a, str>,
    },
    /// A piece of a function call's arguments.
    Arguments {
        output_index: u64,
        delta: Cow<'a, str>,
    },
}

/// `Some` when `data` is exactly the delta-event shape.
pub(super) fn parse(data: &str) -> Option<DeltaEvent<'_>> {
    // Most other events are refused here, before serde would build an error (a formatted message) to refuse
    // them. Providers send `type` first; an event that does not begin with it goes the general way.
    let type_name = data.strip_prefix(r#"{"type":""#)?.split('"').next()?;
    if !type_name.ends_with(".delta") {
        return None;
    }
    let event: Event<'_> = serde_json::from_str(data).ok()?;
    let output_index = event.output_index.unwrap_or(0);
    let delta = event.delta.0;
    let kind = event.kind.0;
    if kind == "response.function_call_arguments.delta" {
        if event.content_index.is_some() || event.summary_index.is_some() {
            return None;
        }
        return Some(DeltaEvent::Arguments {
            output_index,
            delta,
        });
    }
    // The event types and the part index each reads are the general path's own table.
    let (part_field, _, _) = live_event(&kind)?;
    let (part, other) = match part_field {
        "summary_index" => (event.summary_index, event.content_index),
        _ => (event.content_index, event.summary_index),
    };
    if other.is_some() {
        return None;
    }
    Some(DeltaEvent::Live {
        kind,
        output_index,
        part: part.flatten().unwrap_or(0),
        delta,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields read only to be recognised.
struct Event<'a> {
    /// Read as a string and compared, not as a serde enum: serde_json would also take an enum written as a
    /// one-key object, which the general path reads as no type at all.
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    delta: Str<'a>,
    output_index: Option<u64>,
    /// Outer `Option`: present; inner: null or a `u64`.
    #[serde(default, deserialize_with = "present")]
    content_index: Option<Option<u64>>,
    #[serde(default, deserialize_with = "present")]
    summary_index: Option<Option<u64>>,
    sequence_number: Option<u64>,
    item_id: Option<Skip>,
    obfuscation: Option<Skip>,
    logprobs: Option<Skip>,
}

/// A field that is present, even as null.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_paths_agree_on_fixtures, json_value, object, run, split_by_path, unnamed,
    };
    use crate::ProviderKind;
    use proptest::prelude::*;

    const KIND: ProviderKind = ProviderKind::OpenAiResponses;

    #[test]
    fn reads_the_common_text_delta() {
        let data = r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":2,"delta":"Hi \"there\"","logprobs":[],"obfuscation":"a1B2"}"#;
        let Some(DeltaEvent::Live {
            kind,
            output_index,
            part,
            delta,
        }) = parse(data)
        else {
            panic!("not read");
        };
        assert_eq!(
            (kind.as_ref(), output_index, part, delta.as_ref()),
            ("response.output_text.delta", 1, 2, "Hi \"there\"")
        );
    }

    #[test]
    fn reads_summary_and_argument_deltas() {
        let summary = r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","output_index":0,"summary_index":1,"delta":"x"}"#;
        assert!(matches!(
            parse(summary),
            Some(DeltaEvent::Live { part: 1, .. })
        ));
        let arguments = r#"{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":2,"delta":"{\"a\""}"#;
        assert!(matches!(
            parse(arguments),
            Some(DeltaEvent::Arguments {
                output_index: 2,
                ..
            })
        ));
    }

    #[test]
    fn anything_else_goes_the_general_way() {
        for data in [
            r#"{"type":"response.output_text.done","output_index":0,"content_index":0,"text":"a"}"#,
            r#"{"output_index":0,"content_index":0,"delta":"a"}"#,
            r#"{"type":{"response.output_text.delta":null},"delta":"a"}"#,
            r#"{"type":"response.output_text.delta","output_index":0,"content_index":0}"#,
            r#"{"type":"response.output_text.delta","output_index":0,"delta":null}"#,
            r#"{"type":"response.output_text.delta","output_index":"1","delta":"a"}"#,
            r#"{"type":"response.output_text.delta","output_index":-0,"delta":"a"}"#,
            r#"{"type":"response.output_text.delta","content_index":1.0,"delta":"a"}"#,
            r#"{"type":"response.output_text.delta","summary_index":0,"delta":"a"}"#,
            r#"{"type":"response.reasoning_summary_text.delta","content_index":0,"delta":"a"}"#,
            r#"{"type":"response.function_call_arguments.delta","content_index":0,"delta":"a"}"#,
            r#"{"type":"response.output_text.delta","delta":"a","delta":"b"}"#,
            r#"{"type":"response.output_text.delta","delta":"a","annotations":[]}"#,
            r#"{"type":"response.output_text.delta","delta":"a","item_id":"\ud800"}"#,
            r#"{"type":"response.output_text.delta","delta":"a"} trailing"#,
        ] {
            assert!(parse(data).is_none(), "{data}");
        }
    }

    #[test]
    fn both_paths_agree_on_every_responses_fixture_stream() {
        let fast_hits =
            assert_paths_agree_on_fixtures(KIND, "openai-responses", |data| parse(data).is_some());
        assert!(
            fast_hits > 25,
            "the fixture streams exercise the fast path ({fast_hits} events)"
        );
    }

    /// Delta events close to the accepted shape, each part varied (weighted so that both paths get a good share).
    fn near_delta_event() -> impl Strategy<Value = String> {
        let pick = |options: &'static [&'static str]| proptest::sample::select(options);
        (
            pick(&[
                "\"response.output_text.delta\"",
                "\"response.output_text.delta\"",
                "\"response.refusal.delta\"",
                "\"response.reasoning_summary_text.delta\"",
                "\"response.reasoning_text.delta\"",
                "\"response.function_call_arguments.delta\"",
                "\"response.output_text.done\"",
                "{\"response.output_text.delta\":null}",
                "null",
            ]),
            pick(&["0", "0", "1", "null", "\"1\"", "-0", "1.0"]),
            pick(&[
                "",
                ",\"content_index\":0",
                ",\"content_index\":1",
                ",\"summary_index\":0",
                ",\"summary_index\":1",
                ",\"content_index\":null",
                ",\"content_index\":0,\"summary_index\":1",
                ",\"summary_index\":-1",
            ]),
            pick(&["\"t\"", "\"t\"", "\"\"", "null", "1", "\"a\\\"b\"", "\"\\ud800\""]),
            pick(&[
                "",
                "",
                ",\"sequence_number\":3,\"item_id\":\"msg_1\"",
                ",\"obfuscation\":\"xyz\",\"logprobs\":[]",
                ",\"logprobs\":[{\"token\":\"a\",\"logprob\":-0.1}]",
                ",\"delta\":\"dup\"",
                ",\"x\":1",
                ",\"item_id\":\"\\ud800\"",
                ",\"sequence_number\":1e999",
                ",\"sequence_number\":-1",
            ]),
        )
            .prop_map(|(kind, output_index, part, delta, extra)| {
                format!(
                    r#"{{"type":{kind},"output_index":{output_index}{part},"delta":{delta}{extra}}}"#
                )
            })
    }

    /// The events around the deltas: start, items, completion, errors.
    fn structural_event() -> impl Strategy<Value = String> {
        proptest::sample::select(&[
            r#"{"type":"response.created","response":{"id":"resp_1"}}"#,
            r#"{"type":"response.in_progress","response":{"id":"resp_1"}}"#,
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","phase":"final_answer"}}"#,
            r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","content":[{"type":"output_text","text":"whole"}]}}"#,
            r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f"}}"#,
            r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"reasoning","summary":[]}}"#,
            r#"{"type":"response.completed","response":{"usage":{"input_tokens":1,"output_tokens":2}}}"#,
            r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}"#,
            r#"{"type":"error","code":"server_error","message":"x"}"#,
        ][..])
        .prop_map(str::to_owned)
    }

    fn any_event() -> impl Strategy<Value = String> {
        let kind = proptest::sample::select(
            &[
                "\"response.output_text.delta\"",
                "\"response.function_call_arguments.delta\"",
                "\"response.reasoning_summary_text.delta\"",
                "\"response.created\"",
                "\"0\"",
            ][..],
        )
        .prop_map(str::to_owned);
        object(
            &[
                "type",
                "output_index",
                "content_index",
                "summary_index",
                "delta",
                "item_id",
                "sequence_number",
            ],
            prop_oneof![kind, json_value()].boxed(),
        )
    }

    #[test]
    fn the_generated_events_reach_both_paths() {
        let (fast, general) = split_by_path(near_delta_event(), 500, |d| parse(d).is_some());
        assert!(fast > 20 && general > 50, "{fast} fast, {general} general");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn both_paths_agree_on_generated_event_sequences(
            events in proptest::collection::vec(
                prop_oneof![4 => near_delta_event(), 2 => structural_event(), 1 => any_event()],
                1..8,
            ),
            started in proptest::bool::weighted(0.8),
        ) {
            let mut messages = Vec::new();
            if started {
                messages.push(unnamed(r#"{"type":"response.created","response":{"id":"resp_1"}}"#.to_owned()));
            }
            messages.extend(events.into_iter().map(unnamed));
            prop_assert_eq!(run(KIND, &messages, true), run(KIND, &messages, false));
        }
    }
}
