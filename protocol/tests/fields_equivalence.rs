//! The wire structs (`Message`, `ModelState`, `ToolDefinition`, the conversation bodies, `ModelRequest`, the
//! error envelope, `Usage`) deserialise through the reader `wire!` generates over `src/fields.rs`'s key loop
//! instead of through serde's derive. This test pins that nothing observable changed: on generated inputs (each
//! field of each struct replaced by values of every JSON kind, dropped, repeated, moved last, an unknown key
//! added, nested structs mutated the same way, and non-objects), the generated readers accept exactly what the
//! derive accepts (same values) and fail with exactly the same error text, serde_json's line and column
//! included, read from text and from a `Value`, as serde's derive over the same declaration (`derived_reader`,
//! objects only, as the protocol reads every struct). A field added to a declaration is compared without an edit
//! here; the base objects below name today's fields.

use patchbridge_protocol as p;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// The reference each reader is compared with: serde's derived `Deserialize` for the same declaration (objects
/// only), which `wire!` generates beside the reader as `derived_reader`. Nested types are read by their own
/// readers, each compared on its own below.
mod reference {
    use super::*;

    pub struct Derived<T>(T);

    impl<T: std::fmt::Debug> std::fmt::Debug for Derived<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.0.fmt(f)
        }
    }

    macro_rules! derived {
        ($($ty:ident),+ $(,)?) => {$(
            pub type $ty = Derived<p::$ty>;

            impl<'de> Deserialize<'de> for Derived<p::$ty> {
                fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    p::$ty::derived_reader(d).map(Derived)
                }
            }
        )+};
    }

    derived!(
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
        SpendingLimit,
        CreateConversation,
        SaveConversation,
        ModelsDocument,
        ModelInfo,
        Capabilities,
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
    for text in &limits {
        same::<p::SpendingLimit, reference::SpendingLimit>(text);
    }
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
    for text in &bodies {
        same::<p::ErrorBody, reference::ErrorBody>(text);
    }
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

#[test]
fn conversation_request_bodies_read_exactly_as_the_derive_reads_them() {
    let context = contexts()[0].clone();
    let creates = mutations(
        &[("title", r#""t""#), ("context", &context)],
        &[("context", contexts())],
    );
    let accepted = creates
        .iter()
        .filter(|t| same::<p::CreateConversation, reference::CreateConversation>(t))
        .count();
    assert!(accepted > 5, "{accepted}");
    let saves = mutations(
        &[
            ("expectedRevision", "3"),
            ("title", r#""t""#),
            ("context", &context),
        ],
        &[("context", contexts())],
    );
    let accepted = saves
        .iter()
        .filter(|t| same::<p::SaveConversation, reference::SaveConversation>(t))
        .count();
    assert!(accepted > 5, "{accepted}");
}

#[test]
fn models_documents_read_exactly_as_the_derive_reads_them() {
    let capabilities = mutations(
        &[
            ("tools", "true"),
            ("inputs", r#"["text","pdf"]"#),
            ("images", "false"),
            ("reasoning", "true"),
        ],
        &[],
    );
    let models = mutations(
        &[
            ("id", r#""m""#),
            ("provider", r#""openai-chat""#),
            ("label", r#""M""#),
            ("previewOnly", "false"),
            ("capabilities", &capabilities[0]),
        ],
        &[("capabilities", capabilities.clone())],
    );
    for text in &capabilities {
        same::<p::Capabilities, reference::Capabilities>(text);
    }
    for text in &models {
        same::<p::ModelInfo, reference::ModelInfo>(text);
    }
    let documents = mutations(
        &[
            ("protocolVersion", "1"),
            ("previewOnly", "false"),
            ("defaultModel", r#""m""#),
            ("models", &format!("[{}]", models[0])),
        ],
        &[("models", in_lists(models))],
    );
    let accepted = documents
        .iter()
        .filter(|t| same::<p::ModelsDocument, reference::ModelsDocument>(t))
        .count();
    assert!(accepted > 5, "{accepted}");
}
