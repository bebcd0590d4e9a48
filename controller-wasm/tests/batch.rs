//! Event batches (`core::batch`): the string + numbers format in which the JS pump hands many stream events to
//! the bindings at once, decoded event by event.

use patchbridge_agent::core::batch::{parse_event, Batch, PayloadKind, PumpState, META_FIELDS};
use patchbridge_agent::core::protocol::{StopReason, StreamEvent};
use patchbridge_agent::core::ErrorCode;

const JSON: u32 = PayloadKind::Json as u32;
const DELTA: u32 = PayloadKind::BlockDelta as u32;

/// A batch as the pump builds it: payloads back to back, lengths in UTF-16 units.
fn batch(events: &[(u32, u32, &str)]) -> Batch {
    let mut text = String::new();
    let mut meta = Vec::new();
    for (kind, index, payload) in events {
        text.push_str(payload);
        meta.extend([*kind, *index, payload.encode_utf16().count() as u32]);
    }
    assert_eq!(meta.len(), events.len() * META_FIELDS);
    Batch::new(text, meta)
}

fn drain(mut batch: Batch) -> Vec<Result<StreamEvent, ErrorCode>> {
    std::iter::from_fn(|| batch.next_event())
        .map(|r| r.map_err(|e| e.code))
        .collect()
}

#[test]
fn a_batch_yields_raw_deltas_and_json_events_in_order_split_by_utf16_lengths() {
    let events = drain(batch(&[
        (JSON, 0, r#"{"type":"message-start","id":"m1"}"#),
        (DELTA, 0, "😀 emoji is two units"),
        (DELTA, 0, "中文"),
        (JSON, 0, r#"{"type":"block-delta","index":0,"delta":"é"}"#),
        (
            JSON,
            0,
            r#"{"type":"message-stop","stopReason":"end-turn","modelState":null}"#,
        ),
    ]));
    assert_eq!(events.len(), 5);
    assert_eq!(
        events[0],
        Ok(StreamEvent::MessageStart {
            id: Some("m1".into()),
            model: None
        })
    );
    assert_eq!(
        events[1],
        Ok(StreamEvent::BlockDelta {
            index: 0,
            delta: "😀 emoji is two units".into()
        })
    );
    assert_eq!(
        events[2],
        Ok(StreamEvent::BlockDelta {
            index: 0,
            delta: "中文".into()
        })
    );
    assert_eq!(
        events[3],
        Ok(StreamEvent::BlockDelta {
            index: 0,
            delta: "é".into()
        })
    );
    assert!(matches!(
        events[4],
        Ok(StreamEvent::MessageStop {
            stop_reason: StopReason::EndTurn,
            ..
        })
    ));
}

#[test]
fn lengths_past_the_batch_text_are_a_protocol_error() {
    let mut overrun = Batch::new("abc".into(), vec![DELTA, 0, 4]);
    assert_eq!(
        overrun.next_event().map(|r| r.map_err(|e| e.code)),
        Some(Err(ErrorCode::ProtocolError))
    );
}

#[test]
fn an_unknown_payload_kind_is_a_protocol_error_not_json() {
    let events = drain(batch(&[(7, 0, r#"{"type":"message-start"}"#)]));
    assert_eq!(events, [Err(ErrorCode::ProtocolError)]);
}

#[test]
fn canonical_delta_lines_and_escaped_ones_read_like_serde() {
    for line in [
        r#"{"type":"block-delta","index":3,"delta":"plain"}"#,
        r#"{"type":"block-delta","index":0,"delta":"quote \" and \\n"}"#,
        r#"{"type":"block-delta","index":12,"delta":""}"#,
        r#"{"type":"block-delta","index":0,"delta":"x","extra":1}"#,
    ] {
        let serde = serde_json::from_str::<StreamEvent>(line).map_err(|_| ());
        let read = parse_event(line).map_err(|_| ());
        assert_eq!(read, serde, "{line}");
    }
    assert_eq!(
        parse_event(r#"{"type":"block-delta","index":01,"delta":"x"}"#).map_err(|e| e.code),
        Err(ErrorCode::ProtocolError),
        "a leading zero is not JSON"
    );
}

#[test]
fn pump_states_read_from_their_numbers_and_unknown_numbers_count_as_failed() {
    for state in [PumpState::Open, PumpState::Ended, PumpState::Failed] {
        assert_eq!(PumpState::from_u32(state as u32), state);
    }
    assert_eq!(PumpState::from_u32(9), PumpState::Failed);
}

#[test]
fn utf8_capacity_holds_any_text_of_the_batch_lengths_and_utf8_bytes_decode_like_text() {
    let payloads = ["😀😀", "\u{FFFD}", "中文 and ascii", "é", ""];
    let mut text = String::new();
    let mut meta = Vec::new();
    for payload in payloads {
        text.push_str(payload);
        meta.extend([DELTA, 0, payload.encode_utf16().count() as u32]);
    }
    assert!(Batch::utf8_capacity(&meta) >= text.len());
    assert_eq!(Batch::utf8_capacity(&meta), 3 * text.encode_utf16().count());
    let decoded = drain(Batch::from_utf8(text.clone().into_bytes(), meta.clone()));
    assert_eq!(decoded, drain(Batch::new(text, meta)));
    assert_eq!(decoded.len(), payloads.len());
}

#[test]
fn bytes_that_are_not_utf8_make_the_batch_inconsistent() {
    let events = drain(Batch::from_utf8(vec![b'a', 0xff, b'b'], vec![DELTA, 0, 3]));
    assert_eq!(events, vec![Err(ErrorCode::ProtocolError)]);
}
