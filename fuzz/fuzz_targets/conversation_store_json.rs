//! What the conversation store reads back: a stored context text (parsed as the read path does) and a list
//! cursor. Both must parse or fail cleanly; a context that parses must re-encode to text that parses again.
#![no_main]

use patchbridge_protocol::ConversationContext;
use patchbridge_relay::store::Cursor;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(context) = serde_json::from_str::<ConversationContext>(text) {
        let encoded = serde_json::to_string(&context).expect("contexts serialise");
        let again: ConversationContext = serde_json::from_str(&encoded).expect("encoded contexts parse");
        assert_eq!(serde_json::to_string(&again).unwrap(), encoded);
    }
    if let Some(cursor) = Cursor::decode(text) {
        assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor));
    }
});
