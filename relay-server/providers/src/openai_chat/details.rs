//! OpenRouter-style `reasoning_details`: structured reasoning (text with signatures, summaries, encrypted
//! blobs) that gateways stream in fragments and want back unchanged on the assistant message. Fragments of one
//! detail share an `index`; their string payloads (`text`, `summary`, `data`, `signature`) are concatenated,
//! other fields take the latest non-null value.
//!
//! Fragments are found by `index` through a map, not a search of the merged list: an upstream streaming
//! thousands of distinct indices must cost linear work, not one scan of every earlier detail per fragment.

use std::collections::HashMap;

use serde_json::{Map, Value};

const CONCATENATED: [&str; 4] = ["text", "summary", "data", "signature"];

#[derive(Debug, Default)]
pub(crate) struct Details {
    /// Merged details in first-seen order, with the `index` they were streamed under.
    items: Vec<(Option<u64>, Map<String, Value>)>,
    /// `index` -> position in `items`.
    by_index: HashMap<u64, usize>,
    /// Merged details looked at while placing fragments (at most one per fragment).
    probes: usize,
}

impl Details {
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Merges one chunk's `reasoning_details` array.
    pub(crate) fn merge(&mut self, fragments: &[Value]) {
        for fragment in fragments {
            let Some(fragment) = fragment.as_object() else {
                continue;
            };
            let index = fragment.get("index").and_then(Value::as_u64);
            // Without an index, a fragment continues the last detail of the same type.
            self.probes += 1;
            let position = match index {
                Some(i) => self.by_index.get(&i).copied(),
                None => self
                    .items
                    .last()
                    .filter(|(i, d)| i.is_none() && d.get("type") == fragment.get("type"))
                    .map(|_| self.items.len() - 1),
            };
            let Some(position) = position else {
                if let Some(i) = index {
                    self.by_index.insert(i, self.items.len());
                }
                self.items.push((index, fragment.clone()));
                continue;
            };
            let merged = &mut self.items[position].1;
            for (key, value) in fragment {
                match (value, merged.get_mut(key)) {
                    (Value::Null, _) => {}
                    (Value::String(piece), Some(Value::String(existing)))
                        if CONCATENATED.contains(&key.as_str()) =>
                    {
                        existing.push_str(piece)
                    }
                    (value, _) => {
                        merged.insert(key.clone(), value.clone());
                    }
                }
            }
        }
    }

    pub(crate) fn into_value(self) -> Value {
        Value::Array(
            self.items
                .into_iter()
                .map(|(_, d)| Value::Object(d))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fragments_with_one_index_concatenate_and_later_fields_fill_in() {
        let mut d = Details::default();
        d.merge(&[
            json!({ "type": "reasoning.text", "text": "Think", "signature": null, "index": 0 }),
        ]);
        d.merge(&[json!({ "type": "reasoning.text", "text": "ing.", "index": 0 })]);
        d.merge(&[
            json!({ "type": "reasoning.text", "text": "", "signature": "sig==", "index": 0 }),
        ]);
        d.merge(&[json!({ "type": "reasoning.encrypted", "data": "blob", "index": 1 })]);
        assert_eq!(
            d.into_value(),
            json!([
                { "type": "reasoning.text", "text": "Thinking.", "signature": "sig==", "index": 0 },
                { "type": "reasoning.encrypted", "data": "blob", "index": 1 },
            ])
        );
    }

    /// 3 MiB of fragments with distinct indices, then one more fragment for each: every fragment is placed
    /// with one lookup, and each detail ends up with its two pieces.
    #[test]
    fn many_distinct_indices_merge_with_one_lookup_per_fragment() {
        let count = 60_000u64;
        let mut d = Details::default();
        let first: Vec<Value> = (0..count)
            .map(|i| json!({ "type": "reasoning.text", "text": "abcdefghijklmnopqrstuvwxyz0123456789", "index": i }))
            .collect();
        assert!(serde_json::to_vec(&first).unwrap().len() >= 3 * 1024 * 1024);
        d.merge(&first);
        let second: Vec<Value> = (0..count)
            .rev()
            .map(|i| json!({ "text": "!", "index": i }))
            .collect();
        d.merge(&second);
        assert_eq!(d.probes, 2 * count as usize);
        let merged = d.into_value();
        let merged = merged.as_array().unwrap();
        assert_eq!(merged.len(), count as usize);
        assert_eq!(merged[7]["text"], "abcdefghijklmnopqrstuvwxyz0123456789!");
        assert_eq!(merged[7]["index"], 7);
    }

    #[test]
    fn fragments_without_index_continue_the_same_type() {
        let mut d = Details::default();
        d.merge(&[json!({ "type": "reasoning.summary", "summary": "A" })]);
        d.merge(&[json!({ "type": "reasoning.summary", "summary": "B" })]);
        d.merge(&[json!({ "type": "reasoning.encrypted", "data": "x" })]);
        assert_eq!(
            d.into_value(),
            json!([{ "type": "reasoning.summary", "summary": "AB" }, { "type": "reasoning.encrypted", "data": "x" }])
        );
    }
}
