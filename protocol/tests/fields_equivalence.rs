//! The wire structs (`Message`, `ModelState`, `ToolDefinition`, the conversation bodies, `ModelRequest`, the
//! error envelope, `Usage`) deserialise through the reader `wire!` generates over `src/fields.rs`'s key loop
//! instead of through serde's derive. This test pins that nothing observable changed: on generated inputs (each
//! field of each struct replaced by values of every JSON kind, dropped, repeated, moved last, an unknown key
//! added, nested structs mutated the same way, and non-objects), the generated readers accept exactly what the
//! derive accepts (same values) and fail with exactly the same error text, serde_json's line and column
//! included, read from text and from a `Value`, as reference types declared here with the derives (objects only,
//! as the protocol reads every struct).

use patchbridge_protocol as p;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

mod reference {
    use super::*;

    /// Objects only, as the protocol reads every struct (serde's derive would also read the array form).
    macro_rules! objects_only {
        ($($ty:ident),+) => {$(
            impl<'de> serde::Deserialize<'de> for $ty {
                fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    struct Fields;
                    impl<'de> serde::de::Visitor<'de> for Fields {
                        type Value = $ty;
                        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                            f.write_str(concat!("struct ", stringify!($ty)))
                        }
                        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<$ty, A::Error> {
                            $ty::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                        }
                    }
                    d.deserialize_map(Fields)
                }
            }
        )+};
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", deny_unknown_fields)]
    pub struct Message {
        pub id: String,
        pub role: p::Role,
        pub blocks: Vec<p::Block>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", deny_unknown_fields)]
    pub struct ModelState {
        pub format: String,
        pub data: Value,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
    pub struct ToolDefinition {
        pub name: String,
        pub description: String,
        pub input_schema: Value,
    }

    fn required_nullable<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: serde::Deserializer<'de>,
        T: Deserialize<'de>,
    {
        Option::<T>::deserialize(d)
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
    pub struct ConversationContext {
        pub messages: Vec<Message>,
        #[serde(deserialize_with = "required_nullable")]
        pub model_state: Option<ModelState>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase")]
    pub struct ConversationSummary {
        pub id: String,
        pub title: String,
        pub revision: u64,
        pub created_at: String,
        pub updated_at: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase")]
    pub struct ConversationSnapshot {
        pub conversation: ConversationSummary,
        pub context: ConversationContext,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase")]
    pub struct ConversationPage {
        pub items: Vec<ConversationSummary>,
        #[serde(default)]
        pub next_cursor: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
    pub struct ModelRequest {
        #[serde(default)]
        pub model: Option<String>,
        pub messages: Vec<Message>,
        #[serde(deserialize_with = "required_nullable")]
        pub model_state: Option<ModelState>,
        #[serde(default)]
        pub tools: Vec<ToolDefinition>,
        #[serde(default)]
        pub conversation_id: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self")]
    pub struct ErrorEnvelope {
        pub error: ErrorBody,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase")]
    pub struct ErrorBody {
        pub code: String,
        #[serde(default)]
        pub message: String,
        #[serde(default)]
        pub current_revision: Option<u64>,
        #[serde(default)]
        pub message_id: Option<String>,
        #[serde(default)]
        pub retryable: Option<bool>,
        #[serde(default)]
        pub limit: Option<SpendingLimit>,
        #[serde(default)]
        pub retry_after_seconds: Option<u64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase")]
    pub struct SpendingLimit {
        pub kind: String,
        pub max: u64,
        #[serde(default)]
        pub window_seconds: Option<u64>,
        #[serde(default)]
        pub sliding: Option<bool>,
        #[serde(default)]
        pub model: Option<String>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(remote = "Self", rename_all = "camelCase", default)]
    pub struct Usage {
        pub input_tokens: u64,
        pub output_tokens: u64,
        pub reasoning_tokens: u64,
        pub cache_read_tokens: u64,
        pub cache_write_tokens: u64,
    }

    objects_only!(
        Usage,
        Message,
        ModelState,
        ToolDefinition,
        ConversationContext,
        ConversationSummary,
        ConversationSnapshot,
        ConversationPage,
        ModelRequest,
        ErrorEnvelope,
        ErrorBody,
        SpendingLimit
    );
}

/// The Debug rendering of a result, with the reference module's path taken out of nested type names (there are
/// none: both sides name their types alike), or the error's text.
fn outcome<T: std::fmt::Debug>(result: Result<T, serde_json::Error>) -> String {
    match result {
        Ok(value) => format!("ok {value:?}"),
        Err(error) => format!("error {error}"),
    }
}

/// Both impls on one text, read from the text and from its `Value` (when the text is JSON with unique keys);
/// returns whether the hand impl accepted it.
fn same<New, Old>(text: &str) -> bool
where
    New: DeserializeOwned + std::fmt::Debug,
    Old: DeserializeOwned + std::fmt::Debug,
{
    let new = outcome(serde_json::from_str::<New>(text));
    let old = outcome(serde_json::from_str::<Old>(text));
    assert_eq!(new, old, "from text: {text}");
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let new = outcome(serde_json::from_value::<New>(value.clone()));
        let old = outcome(serde_json::from_value::<Old>(value));
        assert_eq!(new, old, "from value: {text}");
    }
    new.starts_with("ok ")
}

/// Values of every JSON kind a field is replaced by.
const VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "7",
    "-1",
    "1.5",
    "1e400",
    "18446744073709551616",
    r#""""#,
    r#""text""#,
    r#""user""#,
    "[]",
    "[1]",
    r#"["a"]"#,
    "{}",
    r#"{"a":1}"#,
    r#"{"user":null}"#,
];

fn object(fields: &[(String, String)]) -> String {
    let members: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", members.join(","))
}

/// The object and its mutations: each field dropped, replaced by each of [`VALUES`] and by each of `nested`'s
/// texts for that key, repeated, and moved last; an unknown key first and last; every value of [`VALUES`] as the
/// whole text; the array form; trailing characters; a cut text.
fn mutations(base: &[(&str, &str)], nested: &[(&str, Vec<String>)]) -> Vec<String> {
    let base: Vec<(String, String)> = base
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut out = vec![object(&base)];
    for i in 0..base.len() {
        let mut dropped = base.clone();
        let field = dropped.remove(i);
        out.push(object(&dropped));
        let mut moved = dropped.clone();
        moved.push(field.clone());
        out.push(object(&moved));
        let mut repeated = base.clone();
        repeated.push(field.clone());
        out.push(object(&repeated));
        let replacements = VALUES.iter().map(|v| v.to_string()).chain(
            nested
                .iter()
                .filter(|(key, _)| *key == field.0)
                .flat_map(|(_, texts)| texts.iter().cloned()),
        );
        for value in replacements {
            let mut replaced = base.clone();
            replaced[i].1 = value;
            out.push(object(&replaced));
        }
    }
    let extra = ("extra".to_string(), "1".to_string());
    let mut first = vec![extra.clone()];
    first.extend(base.iter().cloned());
    out.push(object(&first));
    let mut last = base.clone();
    last.push(extra);
    out.push(object(&last));
    // `{}` shows the order in which missing fields are reported.
    out.extend(VALUES.iter().map(|v| v.to_string()));
    out.push(format!(
        "[{}]",
        base.iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(",")
    ));
    out.push(format!("{} ", object(&base)));
    out.push(format!("{}x", object(&base)));
    out.push(object(&base)[..object(&base).len() - 1].to_string());
    out
}

const BLOCKS: &str =
    r#"[{"type":"text","text":"hi"},{"type":"tool-call","callId":"c","name":"n","input":{"a":1}}]"#;

fn messages() -> Vec<String> {
    mutations(
        &[
            ("id", r#""m1""#),
            ("role", r#""assistant""#),
            ("blocks", BLOCKS),
        ],
        &[(
            "blocks",
            vec![
                r#"[{"type":"text"}]"#.into(),
                r#"[{"type":"nope"}]"#.into(),
                r#"[{"type":"text","text":"a","x":1}]"#.into(),
                r#"[{"type":"tool-call","callId":"c","name":"n","input":{"a":1,"a":2}}]"#.into(),
            ],
        )],
    )
}

fn model_states() -> Vec<String> {
    mutations(
        &[("format", r#""f""#), ("data", r#"{"b":1,"a":[1.50]}"#)],
        &[],
    )
}

fn tools() -> Vec<String> {
    mutations(
        &[
            ("name", r#""t""#),
            ("description", r#""d""#),
            ("inputSchema", r#"{"type":"object"}"#),
        ],
        &[],
    )
}

fn in_lists(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = items.iter().map(|item| format!("[{item}]")).collect();
    out.truncate(40);
    out.push(format!("[{},{}]", items[0], items[1]));
    out
}

fn contexts() -> Vec<String> {
    let base_message = messages()[0].clone();
    mutations(
        &[
            ("messages", &format!("[{base_message}]")),
            ("modelState", "null"),
        ],
        &[
            ("messages", in_lists(messages())),
            ("modelState", model_states()),
        ],
    )
}

fn summaries() -> Vec<String> {
    mutations(
        &[
            ("id", r#""c1""#),
            ("title", r#""t""#),
            ("revision", "3"),
            ("createdAt", r#""2026-01-01T00:00:00Z""#),
            ("updatedAt", r#""2026-01-02T00:00:00Z""#),
        ],
        &[],
    )
}

#[test]
fn messages_read_exactly_as_the_derive_reads_them() {
    let inputs = messages();
    let accepted = inputs
        .iter()
        .filter(|t| same::<p::Message, reference::Message>(t))
        .count();
    assert!(
        accepted > 3 && accepted < inputs.len(),
        "{accepted} of {}",
        inputs.len()
    );
    for list in in_lists(inputs) {
        same::<Vec<p::Message>, Vec<reference::Message>>(&list);
    }
}

#[test]
fn model_states_and_tool_definitions_read_exactly_as_the_derive_reads_them() {
    for text in model_states() {
        same::<p::ModelState, reference::ModelState>(&text);
        same::<Option<p::ModelState>, Option<reference::ModelState>>(&text);
    }
    for text in tools() {
        same::<p::ToolDefinition, reference::ToolDefinition>(&text);
    }
}

#[test]
fn conversations_read_exactly_as_the_derive_reads_them() {
    let contexts = contexts();
    let accepted = contexts
        .iter()
        .filter(|t| same::<p::ConversationContext, reference::ConversationContext>(t))
        .count();
    assert!(accepted > 3, "{accepted}");
    let summaries = summaries();
    for text in &summaries {
        same::<p::ConversationSummary, reference::ConversationSummary>(text);
    }
    let (summary, context) = (summaries[0].clone(), contexts[0].clone());
    let snapshots = mutations(
        &[("conversation", &summary), ("context", &context)],
        &[("conversation", summaries.clone()), ("context", contexts)],
    );
    for text in snapshots {
        same::<p::ConversationSnapshot, reference::ConversationSnapshot>(&text);
    }
    let pages = mutations(
        &[("items", &format!("[{summary}]")), ("nextCursor", r#""n""#)],
        &[("items", in_lists(summaries))],
    );
    for text in pages {
        same::<p::ConversationPage, reference::ConversationPage>(&text);
    }
}

#[test]
fn model_requests_read_exactly_as_the_derive_reads_them() {
    let base_message = messages()[0].clone();
    let requests = mutations(
        &[
            ("model", r#""m""#),
            ("messages", &format!("[{base_message}]")),
            ("modelState", r#"{"format":"f","data":1}"#),
            ("tools", &format!("[{}]", tools()[0])),
            ("conversationId", r#""c""#),
        ],
        &[
            ("messages", in_lists(messages())),
            ("modelState", model_states()),
            ("tools", in_lists(tools())),
        ],
    );
    let accepted = requests
        .iter()
        .filter(|t| same::<p::ModelRequest, reference::ModelRequest>(t))
        .count();
    assert!(
        accepted > 10 && accepted < requests.len(),
        "{accepted} of {}",
        requests.len()
    );
}

#[test]
fn error_envelopes_read_exactly_as_the_derive_reads_them() {
    let limits = mutations(
        &[
            ("kind", r#""calls""#),
            ("max", "5"),
            ("windowSeconds", "60"),
            ("sliding", "true"),
            ("model", r#""m""#),
        ],
        &[],
    );
    let first_limit = limits[0].clone();
    let bodies = mutations(
        &[
            ("code", r#""SPENDING_LIMIT_REACHED""#),
            ("message", r#""no""#),
            ("currentRevision", "2"),
            ("messageId", r#""m""#),
            ("retryable", "false"),
            ("limit", &first_limit),
            ("retryAfterSeconds", "9"),
        ],
        &[("limit", limits)],
    );
    let first_body = bodies[0].clone();
    let envelopes = mutations(&[("error", &first_body)], &[("error", bodies)]);
    let accepted = envelopes
        .iter()
        .filter(|t| same::<p::ErrorEnvelope, reference::ErrorEnvelope>(t))
        .count();
    assert!(accepted > 10, "{accepted}");
}

#[test]
fn usage_reads_exactly_as_the_derive_reads_it() {
    let usages = mutations(
        &[
            ("inputTokens", "1"),
            ("outputTokens", "2"),
            ("reasoningTokens", "3"),
            ("cacheReadTokens", "4"),
            ("cacheWriteTokens", "18446744073709551615"),
        ],
        &[],
    );
    let accepted = usages
        .iter()
        .filter(|t| same::<p::Usage, reference::Usage>(t))
        .count();
    assert!(
        accepted > 5 && accepted < usages.len(),
        "{accepted} of {}",
        usages.len()
    );
}
