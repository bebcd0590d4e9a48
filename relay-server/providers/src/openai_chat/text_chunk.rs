//! The fast path of the Chat Completions decoder: the one chunk shape that makes up nearly every chunk of a
//! streamed answer (a text delta of the only choice, and the chunk that finishes it), read into borrowed typed
//! fields instead of a
//! `serde_json::Value` tree. The tree cost about thirty allocations and most of the decoder's time per chunk.
//!
//! The shape is narrow on purpose, so that reading it can only agree with the general path in `decode.rs`:
//! the known top-level fields (`id` a string; `created` a `u64` or null; `object`, `model`, `system_fingerprint`,
//! `service_tier`, `obfuscation` of any type, which the general path ignores, read past as strictly as a
//! `Value` parse reads them; `usage` null), exactly one choice with `index` 0 or none, a `delta` with `content` a
//! string or null, `role` of any type, `refusal` null, `finish_reason` a string or null, and `logprobs` null.
//! Anything else (another field anywhere, another type, a duplicate key, a second choice, a tool call,
//! reasoning, `annotations` (citations), usage, an error) is not this shape, and the decoder reads the chunk the
//! general way. `tests` below compare both paths on every recorded stream and on generated chunks.

use std::borrow::Cow;

use serde::Deserialize;

use crate::wire::typed::{Null, Object, Skip, Str};

/// A text-delta chunk: what the decoder needs of it.
pub(super) struct TextChunk<'a> {
    pub id: Option<Cow<'a, str>>,
    pub content: Option<Cow<'a, str>>,
    pub finish_reason: Option<Cow<'a, str>>,
}

/// `Some` when `data` is exactly the text-delta shape.
pub(super) fn parse(data: &str) -> Option<TextChunk<'_>> {
    // A tool-call chunk would be refused only once most of it was read and serde had built an error (a
    // formatted message): refused here first, it costs one scan. Text never holds the key unescaped.
    // The usage chunk that ends a stream ends with its `usage` object, a text chunk with its choices or a
    // scalar field: refused by its last bytes, it costs no refused read either.
    if data.contains(r#""tool_calls""#) || data.ends_with("}}") {
        return None;
    }
    let Object(chunk): Object<Chunk<'_>> = serde_json::from_str(data).ok()?;
    let [Object(choice)] = chunk.choices;
    if choice.index.is_some_and(|index| index != 0) {
        return None;
    }
    Some(TextChunk {
        id: chunk.id.map(|id| id.0),
        content: choice.delta.0.content.map(|content| content.0),
        finish_reason: choice.finish_reason.map(|reason| reason.0),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields read only to be recognised (and, for the null-only ones, refused when set).
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Option<Str<'a>>,
    object: Option<Skip>,
    created: Option<u64>,
    model: Option<Skip>,
    system_fingerprint: Option<Skip>,
    service_tier: Option<Skip>,
    obfuscation: Option<Skip>,
    #[serde(default)]
    usage: Option<Null>,
    #[serde(borrow)]
    choices: [Object<Choice<'a>>; 1],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Choice<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow)]
    delta: Object<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Str<'a>>,
    #[serde(default)]
    logprobs: Option<Null>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Str<'a>>,
    #[serde(default)]
    role: Option<Skip>,
    #[serde(default)]
    refusal: Option<Null>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_paths_agree_on_fixtures, json_value, object, run, split_by_path, unnamed,
    };
    use crate::ProviderKind;
    use proptest::prelude::*;

    const KIND: ProviderKind = ProviderKind::OpenAiChat;

    #[test]
    fn reads_the_common_text_chunk() {
        let chunk = parse(r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"Hi \"there\""},"logprobs":null,"finish_reason":null}],"usage":null}"#).unwrap();
        assert_eq!(chunk.id.as_deref(), Some("c1"));
        assert_eq!(chunk.content.as_deref(), Some("Hi \"there\""));
    }

    #[test]
    fn reads_the_finishing_chunk() {
        let chunk = parse(r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}"#).unwrap();
        assert_eq!(chunk.content, None);
        assert_eq!(chunk.finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn anything_else_goes_the_general_way() {
        for data in [
            r#"{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":7}]}"#,
            r#"{"id":"c","choices":[{"index":1,"delta":{"content":"a"}}]}"#,
            r#"{"id":"c","choices":[]}"#,
            r#"{"id":"c","choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}"#,
            r#"{"id":"c","choices":[{"delta":{"content":["a"]}}]}"#,
            r#"{"id":"c","choices":[{"delta":{"content":"a","tool_calls":[]}}]}"#,
            r#"{"id":"c","choices":[{"delta":{"content":"a","reasoning":"r"}}]}"#,
            r#"{"id":"c","choices":[{"delta":{"content":"a","annotations":[{"type":"url_citation","url_citation":{"url":"https://e.org","title":"E"}}]}}]}"#,
            r#"{"id":"c","choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1}}"#,
            r#"{"id":"c","id":"d","choices":[{"delta":{"content":"a"}}]}"#,
            r#"{"id":7,"choices":[{"delta":{"content":"a"}}]}"#,
            r#"{"error":{"message":"x"},"choices":[{"delta":{}}]}"#,
            r#"{"id":"c","choices":[{"delta":{"content":"a"}}]} trailing"#,
            // serde's array form of a struct: the general path reads no fields from an array.
            r#"{"id":"c","choices":[{"delta":["a"]}]}"#,
            r#"{"id":"c","choices":[[0,{"content":"a"}]]}"#,
            r#"[null,null,null,null,null,null,null,null,[{"delta":{"content":"a"}}]]"#,
        ] {
            assert!(parse(data).is_none(), "{data}");
        }
    }

    #[test]
    fn an_ignored_field_the_value_parse_refuses_is_refused_too() {
        let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
        for model in ["\"\\ud800\"", deep.as_str()] {
            let data = format!(
                r#"{{"id":"c","model":{model},"choices":[{{"delta":{{"content":"a"}}}}]}}"#
            );
            assert!(parse(&data).is_none(), "{data}");
            assert!(serde_json::from_str::<serde_json::Value>(&data).is_err());
        }
    }

    #[test]
    fn both_paths_agree_on_every_recorded_chat_stream() {
        let fast_hits =
            assert_paths_agree_on_fixtures(KIND, "openai-chat", |data| parse(data).is_some());
        assert!(
            fast_hits > 100,
            "the recorded streams exercise the fast path ({fast_hits} chunks)"
        );
    }

    fn chunk() -> impl Strategy<Value = String> {
        let delta = object(
            &["content", "role", "refusal", "reasoning", "tool_calls"],
            json_value().boxed(),
        );
        let choice = object(
            &["index", "delta", "finish_reason", "logprobs", "extra"],
            delta.boxed(),
        );
        let choices =
            proptest::collection::vec(choice, 0..3).prop_map(|c| format!("[{}]", c.join(",")));
        object(
            &[
                "id",
                "object",
                "created",
                "model",
                "usage",
                "choices",
                "error",
                "obfuscation",
            ],
            choices.boxed(),
        )
    }

    /// Chunks close to the text-delta shape, each part varied (weighted so that both paths get a good share).
    fn near_text_chunk() -> impl Strategy<Value = String> {
        let pick = |options: &'static [&'static str]| proptest::sample::select(options);
        (
            pick(&["\"c\"", "\" \"", "\"\"", "null", "1", "\"c\\u00e9\\n\""]),
            pick(&["0", "0", "0", "1", "null", "\"0\"", "-0"]),
            pick(&["\"t\"", "\"\"", "null", "[]", "1", "\"a\\\"b\""]),
            pick(&["null", "null", "null", "null", "\"stop\"", "\"length\"", "1"]),
            pick(&["", "", "", ",\"role\":\"assistant\"", ",\"refusal\":null", ",\"refusal\":\"no\"", ",\"reasoning\":\"r\"", ",\"content\":\"dup\"", ",\"annotations\":[{\"type\":\"url_citation\",\"url_citation\":{\"url\":\"https://e.org\",\"title\":\"E\"}}]"]),
            pick(&["", "", "", ",\"usage\":null", ",\"usage\":{\"prompt_tokens\":1}", ",\"id\":\"dup\"", ",\"created\":[1]", ",\"x\":1", ",\"model\":\"\\ud800\""]),
        )
            .prop_map(|(id, index, content, finish, delta_extra, top_extra)| {
                format!(
                    r#"{{"id":{id},"object":"chat.completion.chunk","choices":[{{"index":{index},"delta":{{"content":{content}{delta_extra}}},"finish_reason":{finish}}}]{top_extra}}}"#
                )
            })
    }

    #[test]
    fn the_generated_chunks_reach_both_paths() {
        let (fast, general) = split_by_path(near_text_chunk(), 500, |d| parse(d).is_some());
        assert!(fast > 20 && general > 50, "{fast} fast, {general} general");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn both_paths_agree_on_generated_chunks(chunks in proptest::collection::vec(prop_oneof![near_text_chunk(), chunk()], 1..6)) {
            let mut messages: Vec<_> = chunks.into_iter().map(unnamed).collect();
            messages.push(unnamed("[DONE]".to_owned()));
            prop_assert_eq!(run(KIND, &messages, true), run(KIND, &messages, false));
        }
    }
}
