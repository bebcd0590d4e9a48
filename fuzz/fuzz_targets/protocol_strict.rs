//! The relay's strict request parser (`extract::parse_json`) over the protocol's wire types: arbitrary bytes
//! must parse or fail cleanly, and whatever parses must serialise and parse back to the same JSON.
#![no_main]

use patchbridge_protocol::{ConversationContext, ModelRequest};
use patchbridge_relay::extract::parse_json;

fn roundtrip<T: serde::Serialize + serde::de::DeserializeOwned>(data: &[u8]) {
    if let Ok(value) = parse_json::<T>(data) {
        let text = serde_json::to_string(&value).expect("parsed values serialise");
        let again: T = parse_json(text.as_bytes()).expect("serialised values parse strictly");
        assert_eq!(serde_json::to_string(&again).unwrap(), text, "stable round trip");
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    roundtrip::<ModelRequest>(data);
    roundtrip::<ConversationContext>(data);
});
