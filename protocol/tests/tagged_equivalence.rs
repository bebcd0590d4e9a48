//! The tagged enums (`Block`, `ImageSource`, `StreamEvent`, `BlockKind`) deserialise through the reader `wire!`
//! generates over `src/tagged.rs` and `src/value.rs` instead of through serde's derive, whose internally tagged enums buffer every object in serde's `Content`
//! tree (a large share of the browser runtime's wasm). This test pins that nothing observable changed: for a
//! corpus of valid and invalid inputs, the hand-written impls accept exactly what serde's derive accepts (same
//! values) and fail with exactly the same error text — including serde_json's line/column — as reference types
//! declared here with the original derives.

use patchbridge_protocol as p;
use serde::Deserialize;
use serde_json::{Map, Value};

mod reference {
    use super::*;

    /// A key that must be present, null allowed (the protocol's former `required_nullable`).
    fn required_nullable<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: serde::Deserializer<'de>,
        T: Deserialize<'de>,
    {
        Option::<T>::deserialize(d)
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    #[serde(deny_unknown_fields)]
    pub struct Message {
        pub id: String,
        pub role: p::Role,
        pub blocks: Vec<Block>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    #[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
    pub enum Block {
        Text {
            text: String,
            #[serde(default)]
            sources: Vec<p::Source>,
        },
        Image {
            source: ImageSource,
        },
        Reasoning {
            text: String,
        },
        #[serde(rename_all = "camelCase")]
        ToolCall {
            call_id: String,
            name: String,
            input: Map<String, Value>,
        },
        #[serde(rename_all = "camelCase")]
        ToolResult {
            call_id: String,
            content: String,
            is_error: bool,
        },
        Document {
            name: String,
            source: DocumentSource,
        },
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    #[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
    pub enum DocumentSource {
        #[serde(rename_all = "camelCase")]
        Base64 { media_type: String, data: String },
        #[serde(rename_all = "camelCase")]
        Text { media_type: String, text: String },
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    #[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
    pub enum ImageSource {
        Url {
            url: String,
        },
        #[serde(rename_all = "camelCase")]
        Base64 {
            media_type: String,
            data: String,
        },
    }

    /// Events (and their block kinds and usage) ignore unknown keys: forward compatibility with a newer relay.
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    #[serde(tag = "type", rename_all = "kebab-case")]
    pub enum StreamEvent {
        MessageStart {
            #[serde(default)]
            id: Option<String>,
            #[serde(default)]
            model: Option<String>,
        },
        BlockStart {
            index: u32,
            block: BlockKind,
        },
        BlockDelta {
            index: u32,
            delta: String,
        },
        BlockStop {
            index: u32,
            #[serde(default)]
            sources: Vec<p::Source>,
        },
        #[serde(rename_all = "camelCase")]
        MessageStop {
            stop_reason: p::StopReason,
            #[serde(default)]
            usage: p::Usage,
            #[serde(deserialize_with = "required_nullable")]
            model_state: Option<p::ModelState>,
        },
        Error {
            code: String,
            message: String,
            #[serde(default)]
            retryable: Option<bool>,
        },
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    #[serde(tag = "type", rename_all = "kebab-case")]
    pub enum BlockKind {
        Text,
        Reasoning,
        #[serde(rename_all = "camelCase")]
        ToolCall {
            call_id: String,
            name: String,
        },
    }
}

/// Error texts name a wrongly typed number as "number": with exact number text (serde_json's
/// `arbitrary_precision`) a `Value` no longer knows whether `5` is an integer or a float without parsing it, while
/// serde's buffered derive says "integer `5`" / "floating point `1.5`". Only that wording is normalised.
fn normalise(text: String) -> String {
    let mut out = text;
    for kind in ["integer `", "floating point `"] {
        while let Some(start) = out.find(&format!("invalid type: {kind}")) {
            let open = start + "invalid type: ".len() + kind.len();
            let Some(close) = out[open..].find('`') else {
                break;
            };
            out.replace_range(start..open + close + 1, "invalid type: number");
        }
    }
    // The derive buffers a number that is not a u64 (1.5) as serde_json's private number map.
    out.replace(
        "invalid type: map, expected u32",
        "invalid type: number, expected u32",
    )
}

/// Compares both impls on one input: the same acceptance, the same Debug rendering of the value, the same
/// error text from a string (with serde_json's position) and from a `Value`.
fn same<New, Old>(text: &str)
where
    New: for<'de> Deserialize<'de> + std::fmt::Debug,
    Old: for<'de> Deserialize<'de> + std::fmt::Debug,
{
    let new = serde_json::from_str::<New>(text)
        .map(|v| format!("{v:?}"))
        .map_err(|e| normalise(e.to_string()));
    let old = serde_json::from_str::<Old>(text)
        .map(|v| format!("{v:?}"))
        .map_err(|e| normalise(e.to_string()));
    match (&new, &old) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "value differs for {text}"),
        (Err(a), Err(b)) => assert_eq!(a, b, "error text differs for {text}"),
        _ => panic!("acceptance differs for {text}: new {new:?}, old {old:?}"),
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let new = serde_json::from_value::<New>(value.clone())
            .map(|_| ())
            .map_err(|e| normalise(e.to_string()));
        let old = serde_json::from_value::<Old>(value)
            .map(|_| ())
            .map_err(|e| normalise(e.to_string()));
        assert_eq!(new, old, "from_value differs for {text}");
    }
}

const BLOCKS: &[&str] = &[
    r#"{"type":"text","text":"hi"}"#,
    r#"{"text":"hi","type":"text"}"#,
    r#"{"type":"reasoning","text":"why"}"#,
    r#"{"type":"text","text":"a","sources":[{"url":"https://e.org/a","title":"E","citedText":"c"}]}"#,
    r#"{"type":"text","sources":[{"title":"T"}],"text":"a"}"#,
    r#"{"type":"text","text":"a","sources":[]}"#,
    r#"{"type":"text","text":"a","sources":null}"#,
    r#"{"type":"text","text":"a","sources":[{"url":"javascript:alert(1)","title":"x"}]}"#,
    r#"{"type":"text","text":"a","sources":[{"citedText":"only a snippet"}]}"#,
    r#"{"type":"text","text":"a","sources":[{"title":"t","kind":"web"}]}"#,
    r#"{"type":"text","text":"a","sources":[{"title":""}]}"#,
    r#"{"type":"text","text":"a","sources":[],"sources":[]}"#,
    r#"{"type":"reasoning","text":"a","sources":[]}"#,
    r#"{"type":"text"}"#,
    r#"{"type":"text","text":5}"#,
    r#"{"type":"text","text":null}"#,
    r#"{"type":"text","text":"a","extra":1}"#,
    r#"{"type":"text","extra":1,"text":"a"}"#,
    r#"{"type":"text","text":"a","text":"b"}"#,
    r#"{"type":"text","type":"text","text":"a"}"#,
    r#"{"text":"a"}"#,
    r#"{}"#,
    r#"{"type":"nope","text":"a"}"#,
    r#"{"type":5,"text":"a"}"#,
    r#"{"type":null}"#,
    r#"{"type":"tool-call","callId":"c1","name":"t","input":{"a":[1,2.5,{"b":null}]}}"#,
    r#"{"type":"tool-call","callId":"c1","name":"t","input":[1,2]}"#,
    r#"{"type":"tool-call","callId":"c1","name":"t"}"#,
    r#"{"type":"tool-call","name":"t","input":{}}"#,
    r#"{"type":"tool-call","call_id":"c1","name":"t","input":{}}"#,
    r#"{"type":"tool-result","callId":"c1","content":"ok","isError":false}"#,
    r#"{"type":"tool-result","callId":"c1","content":"ok","isError":"no"}"#,
    r#"{"type":"tool-result","callId":"c1","content":"ok"}"#,
    r#"{"type":"image","source":{"type":"url","url":"https://x/y.png"}}"#,
    r#"{"type":"image","source":{"type":"base64","mediaType":"image/png","data":"AAAA"}}"#,
    r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}"#,
    r#"{"type":"image","source":{"type":"file","url":"x"}}"#,
    r#"{"type":"image","source":{"url":"x"}}"#,
    r#"{"type":"image","source":"https://x"}"#,
    r#"{"type":"image","source":7}"#,
    r#"{"type":"image","source":{"type":["url"],"url":"x"}}"#,
    r#"{"type":"image","source":{"type":"base64","mediaType":"image/png"}}"#,
    r#"{"type":"image","source":{"type":"url","url":"x","alt":"y"}}"#,
    r#"{"type":"image"}"#,
    r#"{"type":"document","name":"a.pdf","source":{"type":"base64","mediaType":"application/pdf","data":"JVBERi0x"}}"#,
    r#"{"type":"document","name":"a.md","source":{"type":"text","mediaType":"text/markdown","text":"A"}}"#,
    r#"{"type":"document","name":"a.md","source":{"type":"text","mediaType":"text/markdown","data":"A"}}"#,
    r#"{"type":"document","name":"a.pdf","source":{"type":"base64","mediaType":"application/pdf","text":"x"}}"#,
    r#"{"type":"document","name":"a.md","source":{"type":"text","text":"A"}}"#,
    r#"{"type":"document","name":"a.md","source":{"type":"text","mediaType":"text/markdown"}}"#,
    r#"{"type":"document","name":"a.md","source":{"type":"file","fileId":"f"}}"#,
    r#"{"type":"document","name":"a.md","source":{"type":"text","mediaType":"text/markdown","text":"x","title":"t"}}"#,
    r#"{"type":"document","source":{"type":"text","mediaType":"text/plain","text":"x"}}"#,
    r#"{"type":"document","name":"a.txt"}"#,
    r#"{"type":"document","name":7,"source":{"type":"text","mediaType":"text/plain","text":"x"}}"#,
    r#"{"type":"document","name":"a","name":"b","source":{"type":"text","mediaType":"text/plain","text":"x"}}"#,
    r#"{"type":"document","name":"a.txt","source":"x"}"#,
    r#"{"type":"document","name":"a.txt","source":{"type":"text","mediaType":"text/plain","text":"x"},"size":1}"#,
    r#""text""#,
    r#"5"#,
    r#"null"#,
    r#"{"type":"text","text":"a"  ,  "#,
];

#[test]
fn blocks_deserialise_exactly_as_the_derive_did() {
    for text in BLOCKS {
        same::<p::Block, reference::Block>(text);
    }
}

#[test]
fn messages_with_blocks_deserialise_exactly_as_the_derive_did() {
    for block in BLOCKS {
        let text = format!(
            r#"{{"id":"m1","role":"assistant","blocks":[{{"type":"text","text":"first"}},
            {block}]}}"#
        );
        same::<p::Message, reference::Message>(&text);
    }
}

const EVENTS: &[&str] = &[
    r#"{"type":"message-start"}"#,
    r#"{"type":"message-start","id":"m1"}"#,
    r#"{"type":"message-start","id":null}"#,
    r#"{"type":"message-start","id":5}"#,
    r#"{"type":"message-start","extra":true}"#,
    r#"{"type":"message-start","id":"m1","model":"fallback"}"#,
    r#"{"type":"message-start","model":null}"#,
    r#"{"type":"message-start","model":7}"#,
    r#"{"type":"block-start","index":0,"block":{"type":"text"}}"#,
    r#"{"type":"block-start","index":1,"block":{"type":"reasoning"}}"#,
    r#"{"type":"block-start","index":2,"block":{"type":"tool-call","callId":"c","name":"n"}}"#,
    r#"{"type":"block-start","index":2,"block":{"type":"tool-call","callId":"c"}}"#,
    r#"{"type":"block-start","index":2,"block":{"type":"tool-call","callId":"c","name":"n","x":1}}"#,
    r#"{"type":"block-start","index":0,"block":{"type":"text","extra":1}}"#,
    r#"{"type":"block-start","index":0,"block":{"type":"image"}}"#,
    r#"{"type":"block-start","index":0,"block":"text"}"#,
    r#"{"type":"block-start","index":0,"block":5}"#,
    r#"{"type":"block-start","index":0,"block":-5}"#,
    r#"{"type":"block-start","index":0,"block":null}"#,
    r#"{"type":"block-start","index":0,"block":true}"#,
    r#"{"type":"block-start","index":0,"block":{"type":null}}"#,
    r#"{"type":"block-start","index":0,"block":{"type":"tool-call","callId":5,"name":"n"}}"#,
    r#"{"type":"block-start","index":0,"block":{}}"#,
    r#"{"type":"block-start","index":-1,"block":{"type":"text"}}"#,
    r#"{"type":"block-start","index":1.5,"block":{"type":"text"}}"#,
    r#"{"type":"block-start","index":5000000000,"block":{"type":"text"}}"#,
    r#"{"type":"block-start","block":{"type":"text"}}"#,
    r#"{"type":"block-delta","index":0,"delta":"tok"}"#,
    r#"{"type":"block-delta","index":0,"delta":"tok","extra":null}"#,
    r#"{"type":"block-delta","index":0}"#,
    r#"{"type":"block-delta","index":0,"delta":["a"]}"#,
    r#"{"type":"block-stop","index":0}"#,
    r#"{"type":"block-stop","index":"0"}"#,
    r#"{"type":"block-stop","index":0,"sources":[{"url":"https://e.org","title":"E"}]}"#,
    r#"{"type":"block-stop","index":0,"sources":[{"url":"javascript:alert(1)"}]}"#,
    r#"{"type":"block-stop","index":0,"sources":{}}"#,
    r#"{"type":"block-stop","index":0,"sources":[{"title":"t","extra":1}]}"#,
    r#"{"type":"message-stop","stopReason":"end-turn","modelState":null}"#,
    r#"{"type":"message-stop","stopReason":"tool-use","usage":{"inputTokens":3,"outputTokens":4},"modelState":{"format":"f/v1","data":{"k":[1]}}}"#,
    r#"{"type":"message-stop","stopReason":"end-turn"}"#,
    r#"{"type":"message-stop","modelState":null}"#,
    r#"{"type":"message-stop","stopReason":"finished","modelState":null}"#,
    r#"{"type":"message-stop","stopReason":"end-turn","usage":{"tokens":1},"modelState":null}"#,
    r#"{"type":"message-stop","stopReason":"end-turn","usage":null,"modelState":null}"#,
    r#"{"type":"message-stop","stopReason":"end-turn","modelState":{"format":"f"}}"#,
    r#"{"type":"message-stop","stopReason":"end-turn","modelState":{"format":"f","data":1,"x":2}}"#,
    r#"{"type":"message-stop","stop_reason":"end-turn","modelState":null}"#,
    r#"{"type":"error","code":"UPSTREAM_TIMEOUT","message":"slow"}"#,
    r#"{"type":"error","code":"UPSTREAM_TIMEOUT","message":"slow","retryable":true}"#,
    r#"{"type":"error","code":"UPSTREAM_TIMEOUT","message":"slow","retryable":null}"#,
    r#"{"type":"error","code":"UPSTREAM_TIMEOUT","message":"slow","retryable":"yes"}"#,
    r#"{"type":"error","code":"UPSTREAM_TIMEOUT"}"#,
    r#"{"type":"ping"}"#,
    r#"{"index":0}"#,
    r#"true"#,
];

#[test]
fn stream_events_deserialise_exactly_as_the_derive_did() {
    for text in EVENTS {
        same::<p::StreamEvent, reference::StreamEvent>(text);
    }
}

#[test]
fn block_kinds_deserialise_exactly_as_the_derive_did() {
    for text in [
        r#"{"type":"text"}"#,
        r#"{"type":"text","x":1}"#,
        r#"{"type":"reasoning","type":"text"}"#,
        r#"{"type":"tool-call","callId":"c","name":"n"}"#,
        r#"{"type":"tool-call","name":"n","callId":"c","callId":"d"}"#,
        r#"{"type":"image"}"#,
        r#"{}"#,
    ] {
        same::<p::BlockKind, reference::BlockKind>(text);
    }
}

/// The one deliberate difference: serde's derive also accepted an undocumented sequence form (`["text", "hi"]`
/// for a text block, `[]` failing as a missing tag). The protocol only has objects; a sequence is now a type
/// error.
#[test]
fn the_undocumented_sequence_form_is_rejected() {
    assert!(serde_json::from_str::<reference::Block>(r#"["text","hi"]"#).is_ok());
    for text in [r#"["text","hi"]"#, "[]"] {
        let error = serde_json::from_str::<p::Block>(text)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("invalid type: sequence, expected internally tagged enum Block"),
            "{error}"
        );
        let error = serde_json::from_str::<p::StreamEvent>(text)
            .unwrap_err()
            .to_string();
        assert!(
            error
                .starts_with("invalid type: sequence, expected internally tagged enum StreamEvent"),
            "{error}"
        );
    }
}

/// A non-integer number where a nested tagged object (`block`, `source`) or a string is expected: serde's derive
/// buffers it as serde_json's private number map and says "missing field `type`" or "invalid type: map"; the
/// hand-written impls name it as a number. Pinned here (not in the corpora above, which compare with the derive)
/// so that reading nested objects without serde_json's `Value` deserializer keeps these texts.
#[test]
fn non_integer_numbers_in_nested_objects_are_named_as_numbers() {
    let cases: [(&str, &str); 3] = [
        (
            r#"{"type":"block-start","index":0,"block":1.5}"#,
            "invalid type: floating point `1.5`, expected internally tagged enum BlockKind",
        ),
        (
            r#"{"type":"block-start","index":0,"block":{"type":"tool-call","callId":2.5,"name":"n"}}"#,
            "invalid type: number, expected a string",
        ),
        (
            r#"{"type":"message-stop","stopReason":"end-turn","modelState":null,"usage":{"inputTokens":1.5}}"#,
            "invalid type: floating point `1.5`, expected u64",
        ),
    ];
    for (text, expected) in cases {
        let from_value =
            serde_json::from_value::<p::StreamEvent>(serde_json::from_str(text).unwrap());
        assert_eq!(from_value.unwrap_err().to_string(), expected, "{text}");
        let from_str = serde_json::from_str::<p::StreamEvent>(text)
            .unwrap_err()
            .to_string();
        assert!(from_str.starts_with(expected), "{text}: {from_str}");
    }
    let image = r#"{"type":"image","source":{"type":"url","url":2.5}}"#;
    let error = serde_json::from_str::<p::Block>(image)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("invalid type: number, expected a string"),
        "{error}"
    );
}

/// Values of every JSON kind put in place of a field: the variant names, objects and arrays a field of another
/// type would hold, the externally tagged forms of a `stopReason` (`{"end-turn":null}` reads as `end-turn`, as
/// serde's derived enum reads it), and numbers on each side of `u32`.
const FIELD_VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "7",
    "-3",
    "4294967295",
    "4294967296",
    "1.5",
    "-0.0",
    "1e400",
    r#""""#,
    r#""x""#,
    r#""end-turn""#,
    r#""tool-use""#,
    r#""other""#,
    r#""text""#,
    "[]",
    r#"["a"]"#,
    r#"[{"title":"t"}]"#,
    r#"[{"url":"javascript:x","title":"t"}]"#,
    "{}",
    r#"{"end-turn":null}"#,
    r#"{"refusal":null}"#,
    r#"{"end-turn":1}"#,
    r#"{"end-turn":{}}"#,
    r#"{"finished":null}"#,
    r#"{"end-turn":null,"other":null}"#,
    r#"{"type":"text"}"#,
    r#"{"type":"tool-call","callId":"c","name":"n"}"#,
    r#"{"type":"tool-call","callId":"c","name":"n","callId":"d"}"#,
    r#"{"format":"f","data":[1]}"#,
    r#"{"format":5,"data":null}"#,
    r#"{"inputTokens":1,"outputTokens":2,"cacheReadTokens":3}"#,
    r#"{"inputTokens":"1"}"#,
];

/// One valid line per event type, as `(type, [(key, value)])`.
const EVENT_SHAPES: &[(&str, &[(&str, &str)])] = &[
    (
        "message-start",
        &[("id", r#""m1""#), ("model", r#""fallback""#)],
    ),
    (
        "block-start",
        &[
            ("index", "0"),
            ("block", r#"{"type":"tool-call","callId":"c","name":"n"}"#),
        ],
    ),
    ("block-delta", &[("index", "3"), ("delta", r#""tok""#)]),
    (
        "block-stop",
        &[
            ("index", "1"),
            ("sources", r#"[{"url":"https://e.org","title":"E"}]"#),
        ],
    ),
    (
        "message-stop",
        &[
            ("stopReason", r#""tool-use""#),
            ("usage", r#"{"inputTokens":3}"#),
            ("modelState", r#"{"format":"f/v1","data":{"k":[1]}}"#),
        ],
    ),
    (
        "error",
        &[
            ("code", r#""UPSTREAM_TIMEOUT""#),
            ("message", r#""slow""#),
            ("retryable", "true"),
        ],
    ),
];

/// Lines where the hand reader's refusal is worded otherwise than the derive's, by design: a non-integer number
/// (the derive names serde_json's private number map, the hand reader "number", as
/// `non_integer_numbers_in_nested_objects_are_named_as_numbers` pins) and an array where a nested tagged object
/// belongs (the derive read the undocumented sequence form, `the_undocumented_sequence_form_is_rejected`).
fn texts_differ_by_design(text: &str) -> bool {
    [":1.5", ":-0.0", ":1e400", ":[]", ":[\"a\"]", ":[{"]
        .iter()
        .any(|n| text.contains(n))
        || ["1.5", "-0.0", "1e400", "[]", "[\"a\"]"].contains(&text)
        || text.starts_with("[{")
}

fn line(kind: &str, fields: &[(&str, &str)]) -> String {
    let mut text = format!(r#"{{"type":"{kind}""#);
    for (key, value) in fields {
        text.push_str(&format!(r#","{key}":{value}"#));
    }
    text.push('}');
    text
}

/// Every line of the generated corpus: each event's valid line, then each field in turn replaced by every value of
/// [`FIELD_VALUES`], dropped, repeated (same and other value), moved first, and the line with an unknown key, a
/// second tag, and the tag last.
fn event_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for (kind, fields) in EVENT_SHAPES {
        lines.push(line(kind, fields));
        lines.push(line(
            kind,
            &[fields, &[("future", r#"{"a":[1,{"b":2}]}"#)][..]].concat(),
        ));
        lines.push(line(
            kind,
            &[fields, &[("future", "1"), ("future", "2")][..]].concat(),
        ));
        lines.push(line(
            kind,
            &[fields, &[("type", r#""error""#)][..]].concat(),
        ));
        let mut tag_last: String = fields
            .iter()
            .map(|(key, value)| format!(r#""{key}":{value},"#))
            .collect();
        tag_last = format!(r#"{{{tag_last}"type":"{kind}"}}"#);
        lines.push(tag_last);
        for (i, &(key, _)) in fields.iter().enumerate() {
            for value in FIELD_VALUES {
                let mut changed = fields.to_vec();
                changed[i] = (key, value);
                lines.push(line(kind, &changed));
            }
            let mut dropped = fields.to_vec();
            dropped.remove(i);
            lines.push(line(kind, &dropped));
            lines.push(line(kind, &[fields, &[fields[i]][..]].concat()));
            lines.push(line(kind, &[fields, &[(key, "null")][..]].concat()));
            let mut first = fields.to_vec();
            let moved = first.remove(i);
            first.insert(0, moved);
            lines.push(line(kind, &first));
        }
    }
    lines
}

/// The stream events' fields are converted from JSON values by plain matches (`src/value.rs`), not through
/// serde_json's `Value` deserializer. Over the generated corpus the reader accepts exactly what serde's derive
/// accepts, with the same event, and refuses with the same text, except where [`texts_differ_by_design`].
#[test]
fn generated_stream_event_lines_read_exactly_as_the_derive_reads_them() {
    let lines = event_lines();
    assert!(lines.len() > 500, "{}", lines.len());
    for text in &lines {
        // Two differences the hand reader has had since it was written, not ones this corpus is about: a nested
        // object is read as a `Value`, which keeps the last of two equal keys where the derive refused them
        // (`block`, `usage`, `modelState`, a source); and a `stopReason` in its one-key object form must hold
        // `null` (serde_json's `Value` enum access), where the derive's buffered form also took `{}`.
        if text.contains(r#""callId":"d""#) || text.contains(r#"{"end-turn":{}}"#) {
            continue;
        }
        if !texts_differ_by_design(text) {
            same::<p::StreamEvent, reference::StreamEvent>(text);
            continue;
        }
        // Where the derive read serde_json's private number map or the sequence form, it accepted a few lines the
        // hand reader refuses (`"usage":1.5` as an empty usage); the hand reader never accepts more.
        if let Ok(event) = serde_json::from_str::<p::StreamEvent>(text) {
            let derived = serde_json::from_str::<reference::StreamEvent>(text);
            assert_eq!(
                Ok(format!("{event:?}")),
                derived.map(|v| format!("{v:?}")).map_err(|e| e.to_string()),
                "{text}"
            );
        }
    }
}

/// The blocks' string and boolean fields, read by the same plain matches: every value of [`FIELD_VALUES`] in each
/// field of each block type gives what the derive gives.
#[test]
fn generated_block_lines_read_exactly_as_the_derive_reads_them() {
    let shapes: &[(&str, &[(&str, &str)])] = &[
        ("text", &[("text", r#""hi""#)]),
        ("reasoning", &[("text", r#""why""#)]),
        (
            "tool-call",
            &[("callId", r#""c""#), ("name", r#""n""#), ("input", "{}")],
        ),
        (
            "tool-result",
            &[
                ("callId", r#""c""#),
                ("content", r#""ok""#),
                ("isError", "false"),
            ],
        ),
        (
            "image",
            &[("source", r#"{"type":"url","url":"https://e.org/i.png"}"#)],
        ),
        (
            "document",
            &[
                ("name", r#""a.txt""#),
                (
                    "source",
                    r#"{"type":"text","mediaType":"text/plain","text":"x"}"#,
                ),
            ],
        ),
    ];
    for (kind, fields) in shapes {
        for (i, &(key, _)) in fields.iter().enumerate() {
            for value in FIELD_VALUES {
                if texts_differ_by_design(value) {
                    continue;
                }
                // Tool-call input refuses a repeated key at any depth (`src/unique.rs`), a strictness the derive
                // lacks on purpose.
                if key == "input" && value.contains(r#""callId":"d""#) {
                    continue;
                }
                let mut changed = fields.to_vec();
                changed[i] = (key, value);
                same::<p::Block, reference::Block>(&line(kind, &changed));
            }
        }
    }
}
