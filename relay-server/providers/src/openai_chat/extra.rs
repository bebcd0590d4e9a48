//! `extra_content`: the object some OpenAI-compatible servers put beside the standard fields of a delta or of
//! a tool call to carry provider state the Chat format has no field for. Gemini (through Google's
//! OpenAI-compatible endpoint) sends `extra_content.google.thought_signature` on tool calls, and on a delta
//! when the message has no call; the next request must carry it back on the same call (or message), or Google
//! refuses it. It is opaque here: kept verbatim, never interpreted.
//!
//! A server may split it over several chunks (a call's fragments, or successive deltas): objects merge key by
//! key, recursively; any other value (a string, a number) replaces what came before, because a signature is
//! sent whole, never in pieces.

use serde_json::Value;

/// Merges `piece` (one chunk's `extra_content`) into `into`. A null piece changes nothing.
pub(crate) fn merge(into: &mut Option<Value>, piece: &Value) {
    if piece.is_null() {
        return;
    }
    match into {
        Some(existing) => merge_value(existing, piece),
        None => *into = Some(piece.clone()),
    }
}

fn merge_value(existing: &mut Value, piece: &Value) {
    match (existing, piece) {
        (Value::Object(existing), Value::Object(piece)) => {
            for (key, value) in piece {
                match existing.get_mut(key) {
                    Some(slot) => merge_value(slot, value),
                    None if value.is_null() => {}
                    None => {
                        existing.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (_, Value::Null) => {}
        (existing, piece) => *existing = piece.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_merge_recursively_and_a_later_scalar_replaces() {
        let mut extra = None;
        merge(
            &mut extra,
            &json!({ "google": { "thought_signature": "A" } }),
        );
        merge(&mut extra, &Value::Null);
        merge(
            &mut extra,
            &json!({ "google": { "other": 1, "thought_signature": null } }),
        );
        merge(&mut extra, &json!({ "vendor": "x" }));
        assert_eq!(
            extra,
            Some(json!({ "google": { "thought_signature": "A", "other": 1 }, "vendor": "x" }))
        );
        merge(
            &mut extra,
            &json!({ "google": { "thought_signature": "B" } }),
        );
        assert_eq!(extra.unwrap()["google"]["thought_signature"], "B");
    }
}
