//! The runtime builds every JSON value it hands to a host or sends to the relay by hand (`ToValue`, no derived
//! `Serialize` compiled into the wasm). This test pins that nothing a host sees changed, byte for byte:
//! - for the runtime's own data types, declared with `wire!` (which generates both their `ToValue` and a derived
//!   `Serialize` with the same keys and skip rules), the `ToValue`'s `Value` equals `serde_json::to_value` of the
//!   derive and its text equals `serde_json::to_string` (key order included), on generated values of every
//!   variant and every optional field present and absent;
//! - for the objects that were written with `json!` (execution events, the draft, the controller's state), the
//!   text equals the `json!` object the runtime wrote before, which this test keeps as the reference.
//!
//! The wire types themselves are compared with their derive in `protocol/tests/write_equivalence.rs`.

use std::fmt::Debug;
use std::rc::Rc;

use patchbridge_agent::core::protocol::{
    Block, BlockKind, Message, ModelState, Role, Source, StopReason, StreamEvent, ToValue, Usage,
};
use patchbridge_agent::core::{
    AgentError, CallRequest, ControllerState, ConversationInfo, Draft, ErrorCode, ExecutionEvent,
    ExecutionResult, HookContext, HookEvent, HookFailure, Interrupt, InterruptKind, LimitName,
    Limits, ModelCallContext, Outcome, Status, ToolCallResult, ToolSpec,
};
use serde::Serialize;
use serde_json::{json, Map, Value};

fn text(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

/// Compares the hand writer with the derive on every value, returning how many were compared.
fn same<T: ToValue + Serialize + Debug>(values: &[T]) -> usize {
    for value in values {
        let hand = value.to_value();
        assert_eq!(hand, serde_json::to_value(value).unwrap(), "{value:?}");
        assert_eq!(
            text(&hand),
            serde_json::to_string(value).unwrap(),
            "{value:?}"
        );
    }
    values.len()
}

fn strings() -> Vec<String> {
    vec![String::new(), "a \"b\" \\ \n é 😀".into()]
}

fn objects() -> Vec<Map<String, Value>> {
    [
        "{}",
        r#"{"z":1e400,"a":{"y":[1.50,null],"x":"é"},"n":123456789012345678901234567890}"#,
    ]
    .iter()
    .map(|t| serde_json::from_str(t).unwrap())
    .collect()
}

fn numbers() -> Vec<f64> {
    vec![0.0, -0.0, 1.5, 1e300, 5e-324, f64::NAN, f64::INFINITY]
}

fn errors() -> Vec<AgentError> {
    let mut all = Vec::new();
    for code in ErrorCode::ALL {
        all.push(AgentError::new(code, "message"));
    }
    for limit in std::iter::once(None).chain(LimitName::ALL.map(Some)) {
        for details in [
            None,
            Some(Value::Null),
            Some(Value::Object(objects()[1].clone())),
        ] {
            all.push(AgentError {
                code: ErrorCode::LimitExceeded,
                message: strings()[1].clone(),
                limit,
                details,
            });
        }
    }
    all
}

fn usages() -> Vec<Usage> {
    vec![
        Usage::default(),
        Usage {
            input_tokens: 1,
            output_tokens: 2,
            reasoning_tokens: 3,
            cache_read_tokens: 4,
            cache_write_tokens: u64::MAX,
        },
    ]
}

fn messages() -> Vec<Message> {
    vec![
        Message {
            id: "m1".into(),
            role: Role::User,
            blocks: vec![Block::text("hi")],
        },
        Message {
            id: "m2".into(),
            role: Role::Assistant,
            blocks: vec![
                Block::Text {
                    text: "t".into(),
                    sources: vec![Source {
                        url: Some("https://e.org".into()),
                        title: None,
                        cited_text: Some("s".into()),
                    }],
                },
                Block::ToolCall {
                    call_id: "c1".into(),
                    name: "n".into(),
                    input: objects()[1].clone(),
                },
            ],
        },
    ]
}

fn model_states() -> Vec<Option<ModelState>> {
    vec![
        None,
        Some(ModelState {
            format: "f".into(),
            data: Value::Object(objects()[1].clone()),
        }),
    ]
}

fn interrupts() -> Vec<Interrupt> {
    objects()
        .into_iter()
        .map(|arguments| Interrupt {
            interrupt_id: "i1".into(),
            kind: InterruptKind::ToolConfirmation,
            call_id: "c\"1".into(),
            tool: "tool".into(),
            arguments,
        })
        .collect()
}

fn hook_events() -> Vec<HookEvent> {
    let mut all = vec![
        HookEvent::ExecutionStarted {
            tool_revision: u64::MAX,
            message_count: 3,
        },
        HookEvent::ModelCallStarted { model_call: 1 },
    ];
    for time_to_first_token_ms in std::iter::once(None).chain(numbers().into_iter().map(Some)) {
        for output_duration_ms in numbers() {
            all.push(HookEvent::ModelCallCompleted {
                model_call: 2,
                message_id: "m\n".into(),
                stop_reason: StopReason::ToolUse,
                usage: usages()[1],
                time_to_first_token_ms,
                output_duration_ms,
                output_characters: 9,
            });
        }
    }
    for arguments in objects() {
        all.push(HookEvent::ToolCallStarted {
            call_id: "c1".into(),
            tool: "t".into(),
            arguments: arguments.clone(),
        });
        all.push(HookEvent::ConfirmationRequested {
            interrupt_id: "i1".into(),
            call_id: "c1".into(),
            tool: "t".into(),
            arguments,
        });
    }
    for flag in [false, true] {
        all.push(HookEvent::ToolCallCompleted {
            call_id: "c1".into(),
            tool: "t".into(),
            is_error: flag,
            content_characters: 0,
            rejected: !flag,
            invalid_arguments: flag,
        });
        all.push(HookEvent::ConfirmationResolved {
            interrupt_id: "i1".into(),
            call_id: "c1".into(),
            approved: flag,
        });
    }
    for outcome in Outcome::ALL {
        for usage in usages() {
            all.push(HookEvent::ExecutionCompleted {
                outcome,
                usage,
                model_calls: 1,
                tool_calls: 2,
            });
        }
    }
    all.push(HookEvent::ExecutionCancelled { usage: usages()[1] });
    for error in errors() {
        all.push(HookEvent::ExecutionFailed { error });
    }
    all
}

#[test]
fn errors_interrupts_limits_and_results_are_written_as_the_derive_writes_them() {
    assert!(same(&errors()) > ErrorCode::ALL.len());
    same(&interrupts());
    same(&[Limits::DEFAULT]);
    let mut results = Vec::new();
    for outcome in Outcome::ALL {
        for model_state in model_states() {
            results.push(ExecutionResult {
                outcome,
                messages: messages(),
                model_state,
                usage: usages()[1],
            });
        }
    }
    same(&results);
    same(&[ToolCallResult {
        tool_call_id: "c1".into(),
        content: strings()[1].clone(),
        is_error: true,
    }]);
    same(&[ConversationInfo {
        id: "c".into(),
        title: strings()[1].clone(),
        revision: u64::MAX,
    }]);
    same(&[ModelCallContext {
        execution_id: "e".into(),
        trace_id: "t\"".into(),
        model_call: 3,
    }]);
    let mut specs = Vec::new();
    for (i, schema) in objects().into_iter().enumerate() {
        for flag in [false, true] {
            specs.push(ToolSpec {
                name: "n".into(),
                description: strings()[i].clone(),
                input_schema: Value::Object(schema.clone()),
                read_only: flag,
                require_confirmation: !flag,
                validate_input: flag,
            });
        }
    }
    same(&specs);
}

#[test]
fn hook_events_and_their_context_are_written_as_the_derive_writes_them() {
    assert!(same(&hook_events()) > 60);
    let contexts: Vec<HookContext> = numbers()
        .into_iter()
        .map(|timestamp_ms| HookContext {
            execution_id: "e".into(),
            trace_id: "t".into(),
            sequence: 4,
            timestamp_ms,
        })
        .collect();
    same(&contexts);
    let failures: Vec<HookFailure> = errors()
        .into_iter()
        .map(|error| HookFailure {
            hook_index: 1,
            event_type: "execution-failed".into(),
            execution_id: "e".into(),
            error,
        })
        .collect();
    same(&failures);
}

#[test]
fn call_requests_are_written_as_the_derive_and_as_their_model_request() {
    let mut requests = Vec::new();
    for model in [None, Some("gpt".to_owned())] {
        for model_state in model_states() {
            for conversation_id in [None, Some("c".to_owned())] {
                requests.push(CallRequest {
                    model: model.clone(),
                    messages: messages().into_iter().map(Rc::new).collect(),
                    model_state: model_state.clone().map(Rc::new),
                    tools: Vec::new().into(),
                    conversation_id,
                });
            }
        }
    }
    same(&requests);
    for request in &requests {
        assert_eq!(
            text(&request.to_value()),
            serde_json::to_string(&request.to_request()).unwrap()
        );
    }
}

#[test]
fn execution_events_are_written_as_their_json_objects_were() {
    let message = &messages()[1];
    let interrupt = &interrupts()[1];
    let stop = StreamEvent::MessageStop {
        stop_reason: StopReason::EndTurn,
        usage: usages()[1],
        model_state: model_states()[1].clone(),
    };
    let cases = [
        (
            ExecutionEvent::MessageStarted {
                id: "m\"1",
                model_call: 2,
            },
            json!({ "type": "message-started", "id": "m\"1", "modelCall": 2 }),
        ),
        (
            ExecutionEvent::Stream(&stop),
            serde_json::to_value(&stop).unwrap(),
        ),
        (
            ExecutionEvent::MessageCompleted(message),
            json!({ "type": "message-completed", "message": message }),
        ),
        (
            ExecutionEvent::ToolResult {
                call_id: "c1",
                content: "é",
                is_error: true,
            },
            json!({
                "type": "tool-result",
                "result": { "toolCallId": "c1", "content": "é", "isError": true },
            }),
        ),
        (ExecutionEvent::Interrupt(interrupt), {
            let mut value = serde_json::to_value(interrupt).unwrap();
            value
                .as_object_mut()
                .unwrap()
                .insert("type".into(), json!("interrupt"));
            value
        }),
        (
            ExecutionEvent::InterruptResolved {
                interrupt_id: "i1",
                call_id: "c1",
                approved: false,
            },
            json!({
                "type": "interrupt-resolved", "interruptId": "i1", "callId": "c1", "approved": false,
            }),
        ),
    ];
    for (event, expected) in cases {
        assert_eq!(text(&event.to_json()), text(&expected), "{event:?}");
    }
}

#[test]
fn the_draft_and_the_controller_state_are_written_as_their_json_objects_were() {
    let mut draft = Draft::new("m1".into());
    let tool = BlockKind::ToolCall {
        call_id: "c1".into(),
        name: "search".into(),
    };
    let sources = vec![Source {
        url: None,
        title: Some("T".into()),
        cited_text: None,
    }];
    for event in [
        StreamEvent::BlockStart {
            index: 0,
            block: BlockKind::Reasoning,
        },
        StreamEvent::BlockDelta {
            index: 0,
            delta: "think".into(),
        },
        StreamEvent::block_stop(0),
        StreamEvent::BlockStart {
            index: 1,
            block: BlockKind::Text,
        },
        StreamEvent::BlockDelta {
            index: 1,
            delta: "Hel\"lo".into(),
        },
        StreamEvent::BlockStop {
            index: 1,
            sources: sources.clone(),
        },
        StreamEvent::BlockStart {
            index: 2,
            block: BlockKind::Text,
        },
        StreamEvent::BlockStart {
            index: 3,
            block: tool,
        },
        StreamEvent::BlockDelta {
            index: 3,
            delta: "{\"q\":".into(),
        },
    ] {
        draft.apply(&event);
    }
    let expected = json!({ "id": "m1", "role": "assistant", "blocks": [
        { "type": "reasoning", "text": "think", "complete": true },
        { "type": "text", "text": "Hel\"lo", "complete": true, "sources": sources },
        { "type": "text", "text": "", "complete": false },
        { "type": "tool-call", "callId": "c1", "name": "search", "argumentsText": "{\"q\":", "complete": false },
    ]});
    assert_eq!(text(&draft.to_json()), text(&expected));

    let draft = Rc::new(draft);
    for full in [false, true] {
        let state = ControllerState {
            status: Status::ALL[usize::from(full)],
            messages: Rc::new(if full { messages() } else { Vec::new() }),
            draft: full.then(|| draft.clone()),
            tool_results: Rc::new(if full {
                vec![ToolCallResult {
                    tool_call_id: "c1".into(),
                    content: "x".into(),
                    is_error: false,
                }]
            } else {
                Vec::new()
            }),
            pending_confirmation: full.then(|| interrupts()[1].clone()),
            pending_elicitation: full.then(|| {
                patchbridge_agent::core::Elicitation::new(
                    "x:elicit:1".into(),
                    "c1",
                    "ask",
                    patchbridge_agent::core::ElicitationRequest::from_json(&json!({
                        "mode": "url", "message": "Sign in", "url": "https://example.com/a", "elicitationId": "e"
                    }))
                    .unwrap(),
                )
            }),
            last_outcome: full.then_some(Outcome::Completed),
            error: full.then(|| errors()[0].clone()),
            conversation: full.then(|| ConversationInfo {
                id: "c".into(),
                title: "t".into(),
                revision: 2,
            }),
            tool_revision: 7,
        };
        let expected = json!({
            "status": state.status,
            "messages": &*state.messages,
            "draft": state.draft.as_ref().map(|draft| draft.to_json()),
            "toolResults": &*state.tool_results,
            "pendingConfirmation": state.pending_confirmation,
            "pendingElicitation": state.pending_elicitation,
            "lastOutcome": state.last_outcome,
            "error": state.error,
            "conversation": state.conversation,
            "toolRevision": state.tool_revision,
        });
        assert_eq!(text(&state.to_json()), text(&expected));
    }
}
