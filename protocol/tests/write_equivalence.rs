//! The wire types are written for the browser runtime by the [`ToValue`] that `wire!` generates (`src/declare.rs`,
//! through `src/write.rs`'s `Object`), while the relay writes them through serde's derived `Serialize`, whose
//! attributes `wire!` generates from the same declaration. This test pins that the two agree byte for byte: for
//! generated values of every type with a hand writer (each optional field present and absent, each variant, empty
//! and non-empty lists, strings that need escapes, pass-through JSON with exact numbers and key order), the hand
//! writer's `Value` equals `serde_json::to_value` of the derive, and its text equals `serde_json::to_string`.

use std::fmt::Debug;

use patchbridge_protocol::{self as p, ToValue};
use serde::Serialize;
use serde_json::{Map, Value};

/// Compares the two writers on every value, returning how many were compared.
fn same<T: ToValue + Serialize + Debug>(values: &[T]) -> usize {
    for value in values {
        let hand = value.to_value();
        let derived = serde_json::to_value(value).unwrap();
        assert_eq!(hand, derived, "value of {value:?}");
        assert_eq!(
            serde_json::to_string(&hand).unwrap(),
            serde_json::to_string(value).unwrap(),
            "text of {value:?}"
        );
        // `Map`'s equality ignores key order; the texts above compare it, and so does this.
        assert_eq!(
            serde_json::to_string(&hand).unwrap(),
            serde_json::to_string(&derived).unwrap()
        );
    }
    values.len()
}

fn texts() -> Vec<String> {
    vec![
        String::new(),
        "a".into(),
        "é ✓ 😀".into(),
        "quote \" backslash \\ newline \n nul \u{0} del \u{7f}".into(),
        "x".repeat(300),
    ]
}

fn options() -> Vec<Option<String>> {
    std::iter::once(None)
        .chain(texts().into_iter().map(Some))
        .collect()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// Pass-through JSON: every kind, exact number text (beyond a double's precision and range), key order that is
/// not sorted, nesting.
fn values() -> Vec<Value> {
    [
        "null",
        "true",
        "0",
        "-1.50e-7",
        "123456789012345678901234567890.000000000000000000001",
        "\"s\\u0000\"",
        "[]",
        "{}",
        r#"{"z":1,"a":{"y":[1,{"b":null,"a":false}],"x":"é"}}"#,
        r#"[1e400,-0,{"k":"v"}]"#,
    ]
    .iter()
    .map(|text| json(text))
    .collect()
}

fn objects() -> Vec<Map<String, Value>> {
    values()
        .into_iter()
        .filter_map(|value| match value {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .collect()
}

fn sources() -> Vec<p::Source> {
    let mut all = Vec::new();
    for url in [None, Some("https://e.org/a?b=\"c\"")] {
        for title in [None, Some("T é")] {
            for cited in [None, Some("snippet\n…")] {
                all.push(p::Source {
                    url: url.map(str::to_owned),
                    title: title.map(str::to_owned),
                    cited_text: cited.map(str::to_owned),
                });
            }
        }
    }
    all
}

fn source_lists() -> Vec<Vec<p::Source>> {
    vec![Vec::new(), sources()[..1].to_vec(), sources()]
}

fn image_sources() -> Vec<p::ImageSource> {
    let mut all = Vec::new();
    for text in texts() {
        all.push(p::ImageSource::Url { url: text.clone() });
        all.push(p::ImageSource::Base64 {
            media_type: "image/png".into(),
            data: text,
        });
    }
    all
}

fn blocks() -> Vec<p::Block> {
    let mut all = Vec::new();
    for text in texts() {
        for sources in source_lists() {
            all.push(p::Block::Text {
                text: text.clone(),
                sources,
            });
        }
        all.push(p::Block::Reasoning { text: text.clone() });
        for input in objects() {
            all.push(p::Block::ToolCall {
                call_id: text.clone(),
                name: "tool".into(),
                input,
            });
        }
        for is_error in [false, true] {
            all.push(p::Block::ToolResult {
                call_id: "c1".into(),
                content: text.clone(),
                is_error,
            });
        }
    }
    for source in image_sources() {
        all.push(p::Block::Image { source });
    }
    for text in texts() {
        all.push(p::Block::Document {
            name: text.clone(),
            source: p::DocumentSource::Base64 {
                media_type: "application/pdf".into(),
                data: text.clone(),
            },
        });
        all.push(p::Block::Document {
            name: "notes.md".into(),
            source: p::DocumentSource::Text {
                media_type: "text/markdown".into(),
                text,
            },
        });
    }
    all
}

fn messages() -> Vec<p::Message> {
    let blocks = blocks();
    let mut all = Vec::new();
    for (i, role) in [p::Role::User, p::Role::Assistant, p::Role::Tool]
        .into_iter()
        .enumerate()
    {
        all.push(p::Message {
            id: format!("m{i}"),
            role,
            blocks: Vec::new(),
        });
        for chunk in blocks.chunks(7) {
            all.push(p::Message {
                id: "m\"".into(),
                role,
                blocks: chunk.to_vec(),
            });
        }
    }
    all
}

fn model_states() -> Vec<Option<p::ModelState>> {
    std::iter::once(None)
        .chain(values().into_iter().map(|data| {
            Some(p::ModelState {
                format: "openai-responses/v1".into(),
                data,
            })
        }))
        .collect()
}

fn usages() -> Vec<p::Usage> {
    vec![
        p::Usage::default(),
        p::Usage {
            input_tokens: 1,
            output_tokens: 2,
            reasoning_tokens: 3,
            cache_read_tokens: 4,
            cache_write_tokens: u64::MAX,
        },
    ]
}

const STOP_REASONS: [p::StopReason; 7] = [
    p::StopReason::EndTurn,
    p::StopReason::ToolUse,
    p::StopReason::MaxTokens,
    p::StopReason::StopSequence,
    p::StopReason::PauseTurn,
    p::StopReason::Refusal,
    p::StopReason::Other,
];

fn tools() -> Vec<p::ToolDefinition> {
    values()
        .into_iter()
        .zip(texts().into_iter().cycle())
        .map(|(input_schema, text)| p::ToolDefinition {
            name: "lookup".into(),
            description: text,
            input_schema,
        })
        .collect()
}

fn events() -> Vec<p::StreamEvent> {
    let mut all = Vec::new();
    for id in options() {
        for model in [None, Some("fallback".to_owned())] {
            all.push(p::StreamEvent::MessageStart {
                id: id.clone(),
                model,
            });
        }
    }
    for index in [0, 1, u32::MAX] {
        for block in [
            p::BlockKind::Text,
            p::BlockKind::Reasoning,
            p::BlockKind::ToolCall {
                call_id: "c\n1".into(),
                name: "n".into(),
            },
        ] {
            all.push(p::StreamEvent::BlockStart { index, block });
        }
        for delta in texts() {
            all.push(p::StreamEvent::BlockDelta { index, delta });
        }
        for sources in source_lists() {
            all.push(p::StreamEvent::BlockStop { index, sources });
        }
    }
    for stop_reason in STOP_REASONS {
        for usage in usages() {
            for model_state in model_states() {
                all.push(p::StreamEvent::MessageStop {
                    stop_reason,
                    usage,
                    model_state,
                });
            }
        }
    }
    for message in texts() {
        for retryable in [None, Some(false), Some(true)] {
            all.push(p::StreamEvent::Error {
                code: "UPSTREAM_RATE_LIMITED".into(),
                message: message.clone(),
                retryable,
            });
        }
    }
    all
}

fn contexts() -> Vec<p::ConversationContext> {
    let messages = messages();
    model_states()
        .into_iter()
        .enumerate()
        .map(|(i, model_state)| p::ConversationContext {
            messages: messages[..i % 4 * 3].to_vec(),
            model_state,
        })
        .collect()
}

fn summaries() -> Vec<p::ConversationSummary> {
    texts()
        .into_iter()
        .zip([0, 1, 7, u64::MAX, 42])
        .map(|(title, revision)| p::ConversationSummary {
            id: "c-1".into(),
            title,
            revision,
            created_at: "2026-12-01T00:00:00Z".into(),
            updated_at: "2026-12-01T00:00:01.5Z".into(),
        })
        .collect()
}

#[test]
fn roles_stop_reasons_sources_and_usage_are_written_as_the_derive_writes_them() {
    same(&[p::Role::User, p::Role::Assistant, p::Role::Tool]);
    same(&STOP_REASONS);
    same(&sources());
    same(&usages());
    same(&model_states());
    same(&tools());
}

#[test]
fn blocks_and_messages_are_written_as_the_derive_writes_them() {
    same(&image_sources());
    assert!(same(&blocks()) >= 50);
    assert!(same(&messages()) > 10);
}

#[test]
fn stream_events_are_written_as_the_derive_writes_them() {
    same(&[
        p::BlockKind::Text,
        p::BlockKind::Reasoning,
        p::BlockKind::ToolCall {
            call_id: String::new(),
            name: "é".into(),
        },
    ]);
    assert!(same(&events()) > 200);
}

#[test]
fn model_requests_are_written_as_the_derive_writes_them() {
    let messages = messages();
    let mut all = Vec::new();
    for model in options().into_iter().take(3) {
        for (i, model_state) in model_states().into_iter().enumerate().take(4) {
            for conversation_id in [None, Some("conv \"1\"".to_owned())] {
                all.push(p::ModelRequest {
                    model: model.clone(),
                    messages: messages[..i * 2].to_vec(),
                    model_state: model_state.clone(),
                    tools: tools()[..i].to_vec(),
                    conversation_id,
                });
            }
        }
    }
    assert_eq!(same(&all), 24);
}

#[test]
fn conversation_bodies_and_pages_are_written_as_the_derive_writes_them() {
    same(&contexts());
    same(&summaries());
    same(&[
        p::ConversationPage {
            items: Vec::new(),
            next_cursor: None,
        },
        p::ConversationPage {
            items: summaries(),
            next_cursor: Some("cursor/\"x\"".into()),
        },
    ]);
    let mut creates = Vec::new();
    let mut saves = Vec::new();
    for title in options() {
        for context in std::iter::once(None).chain(contexts().into_iter().take(3).map(Some)) {
            creates.push(p::CreateConversation {
                title: title.clone(),
                context: context.clone(),
            });
            if let Some(context) = context {
                saves.push(p::SaveConversation {
                    expected_revision: title.as_ref().map_or(0, |t| t.len() as u64),
                    title: title.clone(),
                    context,
                });
            }
        }
    }
    assert!(same(&creates) > 20);
    assert!(same(&saves) > 15);
}

#[test]
fn spending_limits_are_written_as_the_derive_writes_them() {
    let mut all = Vec::new();
    for window_seconds in [None, Some(0), Some(86_400)] {
        for sliding in [None, Some(false), Some(true)] {
            for model in [None, Some("gpt \"x\"".to_owned())] {
                all.push(p::SpendingLimit {
                    kind: "inputTokens".into(),
                    max: u64::MAX,
                    window_seconds,
                    sliding,
                    model,
                });
            }
        }
    }
    assert_eq!(same(&all), 18);
}
