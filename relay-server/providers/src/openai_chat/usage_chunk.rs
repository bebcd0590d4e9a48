//! The fast path of the Chat Completions decoder for the usage chunk: the last chunk before `[DONE]` when the
//! request sets `stream_options.include_usage`, with no choices and the call's token counts. Read into typed
//! fields instead of a `serde_json::Value` tree, it costs a small part of what the tree did.
//!
//! The general path in `decode.rs` keeps nothing of `usage` but the five counts of the neutral [`Usage`] (read
//! with `Value::as_u64`, 0 when absent or not a `u64`), so the key order and number text of the object play no
//! part in the neutral events; what must agree is which counts come out, and that the chunk is accepted at all.
//!
//! The shape is narrow on purpose, so that reading it can only agree with the general path:
//! the known top-level fields (`id` a string; `created` a `u64` or null; `object`, `model`, `system_fingerprint`,
//! `service_tier`, `obfuscation`, `provider` of any type, which the general path ignores, read past as strictly as
//! a `Value` parse reads them), `choices` an empty array, and `usage` an object. In `usage`, `prompt_tokens` and
//! `completion_tokens` are numbers (a `u64`, or any other number, which counts as 0 as `as_u64` has it),
//! `prompt_tokens_details` and `completion_tokens_details` are any value (only an object's `cached_tokens` or
//! `reasoning_tokens`, a number, counts), every other field is any value; a repeated field counts its last value,
//! as a `Value` map keeps the last. Anything else (another top-level field, a duplicate top-level key, a choice,
//! an error, a count that is not a number, a number serde_json refuses to read as a primitive such as `1e999`, or
//! a key serde_json reserves for its own number and raw-value tokens) is not this shape, and the decoder reads the
//! chunk the general way. `tests` below compare both paths on every recorded stream and on generated chunks.

use std::borrow::Cow;
use std::fmt;

use patchbridge_protocol::Usage;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::wire::typed::{Skip, Str};

/// A usage chunk: what the decoder needs of it.
pub(super) struct UsageChunk<'a> {
    pub id: Option<Cow<'a, str>>,
    pub usage: Usage,
}

/// Whether `data` may be a usage chunk, by its end: the usage object closes it (`}}`), where a text chunk ends
/// with its choices (`]}`), a string or `null`. It costs two byte comparisons, not a scan of the text chunks
/// that make up the stream; a usage chunk then is not read as a text chunk first (and refused at some cost).
/// Only a guess: [`parse`] decides.
pub(super) fn is_candidate(data: &str) -> bool {
    data.as_bytes().ends_with(b"}}")
}

/// `Some` when `data` is exactly the usage-chunk shape.
pub(super) fn parse(data: &str) -> Option<UsageChunk<'_>> {
    let chunk: Chunk<'_> = serde_json::from_str(data).ok()?;
    Some(UsageChunk {
        id: chunk.id.map(|id| id.0),
        usage: chunk.usage.0,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields read only to be recognised.
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Option<Str<'a>>,
    object: Option<Skip>,
    created: Option<u64>,
    model: Option<Skip>,
    system_fingerprint: Option<Skip>,
    service_tier: Option<Skip>,
    obfuscation: Option<Skip>,
    /// OpenRouter names the provider that served the call.
    provider: Option<Skip>,
    choices: NoChoices,
    usage: UsageObject,
}

/// An empty array, and nothing else.
struct NoChoices;

impl<'de> Deserialize<'de> for NoChoices {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(NoChoices)
    }
}

impl<'de> Visitor<'de> for NoChoices {
    type Value = NoChoices;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an empty array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoChoices, A::Error> {
        // The element is only looked at, to refuse it: the chunk then goes the general way. Read with `Skip`, not
        // `IgnoredAny`: serde_json's separate skipping code made the compiler stop inlining its string scan into
        // the string reads of the text chunks (about 4% more instructions per text chunk).
        match seq.next_element::<Skip>()? {
            None => Ok(NoChoices),
            Some(_) => Err(de::Error::custom("a choice")),
        }
    }
}

/// The `usage` object, read into the counts `decode.rs`'s `neutral_usage` takes from it.
struct UsageObject(Usage);

impl<'de> Deserialize<'de> for UsageObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(UsageVisitor)
    }
}

struct UsageVisitor;

impl<'de> Visitor<'de> for UsageVisitor {
    type Value = UsageObject;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a usage object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UsageObject, A::Error> {
        let mut usage = Usage::default();
        // Each assignment overwrites: a repeated key counts its last value, as in a `Value` map.
        while let Some(key) = map.next_key::<Key<'_>>()? {
            match key.0.as_ref() {
                "prompt_tokens" => usage.input_tokens = map.next_value::<Count>()?.0,
                "completion_tokens" => usage.output_tokens = map.next_value::<Count>()?.0,
                "prompt_tokens_details" => {
                    usage.cache_read_tokens = map.next_value_seed(Details("cached_tokens"))?
                }
                "completion_tokens_details" => {
                    usage.reasoning_tokens = map.next_value_seed(Details("reasoning_tokens"))?
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(UsageObject(usage))
    }
}

/// An object key. serde_json reads an object whose first key is one of its private tokens
/// (`$serde_json::private::Number`, `…::RawValue`) as that kind of value, not as an object: such a key is refused
/// anywhere, so that the general path reads the chunk.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let key = Str::deserialize(deserializer)?.0;
        if key.starts_with("$serde_json::private::") {
            return Err(de::Error::custom("a serde_json private token"));
        }
        Ok(Key(key))
    }
}

/// A token count: what `Value::as_u64` makes of a number (the number when it is an integer that fits a `u64`,
/// otherwise nothing), 0 for nothing. Read as a primitive number, without the text serde_json's
/// `arbitrary_precision` would keep (a heap string per number); any other type is refused.
struct Count(u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_u64(CountVisitor)
    }
}

struct CountVisitor;

impl<'de> Visitor<'de> for CountVisitor {
    type Value = Count;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_u64<E>(self, count: u64) -> Result<Count, E> {
        Ok(Count(count))
    }

    /// A negative integer (or `-0`).
    fn visit_i64<E>(self, _: i64) -> Result<Count, E> {
        Ok(Count(0))
    }

    /// A fraction, an exponent, or an integer beyond `u64`.
    fn visit_f64<E>(self, _: f64) -> Result<Count, E> {
        Ok(Count(0))
    }
}

/// `prompt_tokens_details` or `completion_tokens_details`: the count under the key this reads (`cached_tokens`
/// or `reasoning_tokens`) when the value is an object (what the general path's JSON pointer finds), 0 for any
/// other value.
struct Details(&'static str);

impl<'de> DeserializeSeed<'de> for Details {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u64, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Details {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let mut count = 0;
        while let Some(key) = map.next_key::<Key<'_>>()? {
            if key.0 == self.0 {
                count = map.next_value::<Count>()?.0;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(count)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(0)
    }

    fn visit_bool<E>(self, _: bool) -> Result<u64, E> {
        Ok(0)
    }

    fn visit_i64<E>(self, _: i64) -> Result<u64, E> {
        Ok(0)
    }

    fn visit_u64<E>(self, _: u64) -> Result<u64, E> {
        Ok(0)
    }

    fn visit_f64<E>(self, _: f64) -> Result<u64, E> {
        Ok(0)
    }

    fn visit_str<E>(self, _: &str) -> Result<u64, E> {
        Ok(0)
    }

    fn visit_unit<E>(self) -> Result<u64, E> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_paths_agree_on_fixtures, json_value, run, split_by_path, unnamed,
    };
    use crate::ProviderKind;
    use proptest::prelude::*;

    const KIND: ProviderKind = ProviderKind::OpenAiChat;

    fn usage(data: &str) -> Option<Usage> {
        parse(data).map(|chunk| chunk.usage)
    }

    #[test]
    fn reads_the_recorded_usage_chunk() {
        let data = r#"{"id":"chatcmpl-A","object":"chat.completion.chunk","created":1727346180,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":177,"total_tokens":196,"completion_tokens_details":{"reasoning_tokens":7},"prompt_tokens_details":{"cached_tokens":3,"audio_tokens":0}}}"#;
        assert!(is_candidate(data));
        let chunk = parse(data).unwrap();
        assert_eq!(chunk.id.as_deref(), Some("chatcmpl-A"));
        assert_eq!(
            chunk.usage,
            Usage {
                input_tokens: 19,
                output_tokens: 177,
                reasoning_tokens: 7,
                cache_read_tokens: 3,
                cache_write_tokens: 0,
            }
        );
    }

    #[test]
    fn counts_are_what_as_u64_makes_of_them() {
        for (value, count) in [
            ("0", 0),
            ("18446744073709551615", u64::MAX),
            ("18446744073709551616", 0),
            ("-1", 0),
            ("-0", 0),
            ("1.0", 0),
            ("1e2", 0),
            ("2.5", 0),
        ] {
            let data = format!(r#"{{"id":"c","choices":[],"usage":{{"prompt_tokens":{value}}}}}"#);
            assert_eq!(usage(&data).unwrap().input_tokens, count, "{value}");
        }
        let data = r#"{"id":"c","choices":[],"usage":{"prompt_tokens":1,"prompt_tokens":2,"prompt_tokens_details":{"cached_tokens":5},"prompt_tokens_details":[],"completion_tokens_details":{"cached_tokens":4,"reasoning_tokens":3,"reasoning_tokens":-1}}}"#;
        let read = usage(data).unwrap();
        assert_eq!(
            (
                read.input_tokens,
                read.cache_read_tokens,
                read.reasoning_tokens
            ),
            (2, 0, 0)
        );
    }

    #[test]
    fn anything_else_goes_the_general_way() {
        for data in [
            r#"{"id":"c","choices":[{"index":0,"delta":{}}],"usage":{"prompt_tokens":1}}"#,
            r#"{"id":"c","choices":[1],"usage":{"prompt_tokens":1}}"#,
            r#"{"id":"c","usage":{"prompt_tokens":1}}"#,
            r#"{"id":"c","choices":null,"usage":{"prompt_tokens":1}}"#,
            r#"{"id":"c","choices":[]}"#,
            r#"{"id":"c","choices":[],"usage":null}"#,
            r#"{"id":"c","choices":[],"usage":[]}"#,
            r#"{"id":"c","choices":[],"usage":{"prompt_tokens":null}}"#,
            r#"{"id":"c","choices":[],"usage":{"prompt_tokens":"1"}}"#,
            r#"{"id":"c","choices":[],"usage":{"prompt_tokens":1e999}}"#,
            r#"{"id":"c","choices":[],"usage":{"$serde_json::private::Number":"5"}}"#,
            r#"{"id":"c","choices":[],"usage":{"prompt_tokens_details":{"$serde_json::private::Number":"5"}}}"#,
            r#"{"id":"c","choices":[],"usage":{},"error":{"message":"x"}}"#,
            r#"{"id":"c","choices":[],"usage":{},"x":1}"#,
            r#"{"id":"c","id":"d","choices":[],"usage":{}}"#,
            r#"{"id":7,"choices":[],"usage":{}}"#,
            r#"{"id":"c","choices":[],"usage":{"x":"\ud800"}}"#,
            r#"{"id":"c","choices":[],"usage":{}} trailing"#,
        ] {
            assert!(parse(data).is_none(), "{data}");
        }
    }

    #[test]
    fn both_paths_agree_on_every_recorded_chat_stream() {
        let fast_hits = assert_paths_agree_on_fixtures(KIND, "openai-chat", |data| {
            is_candidate(data) && parse(data).is_some()
        });
        assert!(
            fast_hits >= 10,
            "the recorded streams exercise the fast path ({fast_hits} chunks)"
        );
    }

    /// A count, as providers send it and as they should not.
    fn count() -> impl Strategy<Value = String> {
        prop_oneof![
            24 => (0u64..100_000).prop_map(|n| n.to_string()),
            3 => proptest::sample::select(&[
                "18446744073709551615", "18446744073709551616", "99999999999999999999999", "-1", "-0",
                "1.0", "1.5", "1e2", "1E-2", "0.0", "1e999", "null", "\"3\"", "true", "[3]", "{}",
            ][..]).prop_map(str::to_owned),
            1 => json_value(),
        ]
    }

    /// An object of up to `max` fields named from `keys` (repeats and every order included), valued by `value`.
    fn fields(
        keys: &'static [&'static str],
        value: BoxedStrategy<String>,
        max: usize,
    ) -> impl Strategy<Value = String> {
        let field =
            (proptest::sample::select(keys), value).prop_map(|(k, v)| format!("\"{k}\":{v}"));
        proptest::collection::vec(field, 0..max).prop_map(|f| format!("{{{}}}", f.join(",")))
    }

    /// `prompt_tokens_details` / `completion_tokens_details`: mostly objects of counts, sometimes anything.
    fn details() -> impl Strategy<Value = String> {
        let keys = &[
            "cached_tokens",
            "reasoning_tokens",
            "audio_tokens",
            "accepted_prediction_tokens",
            "cached\\u005ftokens",
            "$serde_json::private::Number",
        ][..];
        prop_oneof![
            6 => fields(keys, count().boxed(), 4),
            1 => json_value(),
        ]
    }

    /// Usage objects: the known counts, `total_tokens`, details, unknown keys, an escaped key and serde_json's
    /// private token, in any order, repeated or not, each key mostly with the type it should have; sometimes
    /// not an object.
    fn usage_object() -> impl Strategy<Value = String> {
        let key = |keys: &'static [&'static str]| proptest::sample::select(keys);
        let counts = key(&[
            "prompt_tokens",
            "completion_tokens",
            "total_tokens",
            "prompt\\u005ftokens",
        ]);
        let details_keys = key(&["prompt_tokens_details", "completion_tokens_details"]);
        let others = key(&["cost", "$serde_json::private::Number"]);
        let field = prop_oneof![
            8 => (counts, count().boxed()),
            6 => (details_keys.clone(), details().boxed()),
            1 => (others, prop_oneof![count(), json_value()].boxed()),
            1 => (details_keys, count().boxed()),
        ]
        .prop_map(|(k, v)| format!("\"{k}\":{v}"));
        prop_oneof![
            12 => proptest::collection::vec(field, 0..7)
                .prop_map(|f| format!("{{{}}}", f.join(","))),
            1 => json_value(),
        ]
    }

    /// Chunks close to the usage-chunk shape, each part varied (weighted so that both paths get a good share).
    fn near_usage_chunk() -> impl Strategy<Value = String> {
        let pick = |options: &'static [&'static str]| proptest::sample::select(options);
        (
            pick(&["\"c\"", "\"c\"", "\" \"", "\"\"", "null", "1", "\"c\\u00e9\""]),
            pick(&["[]", "[]", "[]", "[]", "[]", "[]", "[ ]", "[{}]", "null", "[{\"index\":0,\"delta\":{}}]"]),
            usage_object(),
            pick(&["", "", "", "", "", "", "", "", ",\"provider\":\"P\"", ",\"system_fingerprint\":null", ",\"created\":1.5", ",\"error\":null", ",\"id\":\"dup\"", ",\"x\":1", ",\"model\":\"\\ud800\""]),
        )
            .prop_map(|(id, choices, usage, extra)| {
                format!(
                    r#"{{"id":{id},"object":"chat.completion.chunk","created":1,"model":"m","choices":{choices},"usage":{usage}{extra}}}"#
                )
            })
    }

    #[test]
    fn the_generated_chunks_reach_both_paths() {
        let (fast, general) = split_by_path(near_usage_chunk(), 500, |d| parse(d).is_some());
        assert!(
            fast > 100 && general > 100,
            "{fast} fast, {general} general"
        );
    }

    fn text_chunk(content: &'static str, finish: &'static str) -> String {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":{content}}},"finish_reason":{finish}}}]}}"#
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Streams of text, a finish and usage chunks in any order, always finished so that `message-stop`
        /// carries the counts: a count read differently fails the comparison.
        #[test]
        fn both_paths_agree_on_generated_usage_chunks(
            chunks in proptest::collection::vec(
                prop_oneof![
                    6 => near_usage_chunk(),
                    1 => Just(text_chunk("\"a\"", "null")),
                    1 => Just(text_chunk("null", "\"stop\"")),
                ],
                1..5,
            ),
            done in any::<bool>(),
        ) {
            let mut messages: Vec<_> = chunks.into_iter().map(unnamed).collect();
            messages.push(unnamed(text_chunk("null", "\"stop\"")));
            if done {
                messages.push(unnamed("[DONE]".to_owned()));
            }
            prop_assert_eq!(run(KIND, &messages, true), run(KIND, &messages, false));
        }
    }
}
