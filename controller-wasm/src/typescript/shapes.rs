//! Mirror types of the shapes the runtime builds as JSON without one Rust type of their own, and the tests that
//! require each mirror to serialise to exactly the runtime's JSON for real values (see the parent module).

use patchbridge_protocol::{
    Block, BlockKind, ErrorBody, ErrorEnvelope, Message, Role, Source, SpendingLimit, StreamEvent,
};
use serde::Serialize;
use serde_json::Value;

use crate::core::error::relay_error_details;
use crate::core::relay::http_error;
use crate::core::{
    AgentError, ControllerState, ConversationInfo, Draft, Elicitation, ElicitationAction,
    ExecutionEvent, HttpAnswer, Interrupt, InterruptKind, LimitName, Outcome, Status,
    ToolCallResult,
};

/// What the observer passed to `start` sees, in order (block events are the draft).
#[derive(Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[ts(rename = "ExecutionEvent")]
pub(super) enum ExecutionEventShape {
    /// A model call began streaming an assistant message.
    #[serde(rename_all = "camelCase")]
    MessageStarted {
        /// The message id.
        id: String,
        /// 1-based model call index.
        model_call: u64,
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
        /// A text block's sources (absent when it has none).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        #[ts(optional = nullable)]
        sources: Vec<Source>,
    },
    /// A message became stable.
    MessageCompleted {
        message: Message,
    },
    /// One validated tool result (before its batch's tool message is complete).
    ToolResult {
        result: ToolCallResult,
    },
    /// A confirmation interrupt is pending.
    Interrupt(Interrupt),
    /// The pending interrupt was answered.
    #[serde(rename_all = "camelCase")]
    InterruptResolved {
        interrupt_id: String,
        call_id: String,
        approved: bool,
    },
    /// A running tool asks the person (an elicitation is pending).
    Elicitation(Elicitation),
    /// The pending elicitation was answered.
    #[serde(rename_all = "camelCase")]
    ElicitationResolved {
        interrupt_id: String,
        call_id: String,
        action: ElicitationAction,
    },
}

impl ExecutionEventShape {
    fn of(event: &ExecutionEvent<'_>) -> Self {
        match *event {
            ExecutionEvent::MessageStarted { id, model_call } => Self::MessageStarted {
                id: id.to_owned(),
                model_call,
            },
            ExecutionEvent::Stream(StreamEvent::BlockStart { index, block }) => Self::BlockStart {
                index: *index,
                block: block.clone(),
            },
            ExecutionEvent::Stream(StreamEvent::BlockDelta { index, delta }) => Self::BlockDelta {
                index: *index,
                delta: delta.clone(),
            },
            ExecutionEvent::Stream(StreamEvent::BlockStop { index, sources }) => Self::BlockStop {
                index: *index,
                sources: sources.clone(),
            },
            ExecutionEvent::Stream(other) => panic!("never published to the observer: {other:?}"),
            ExecutionEvent::MessageCompleted(message) => Self::MessageCompleted {
                message: message.clone(),
            },
            ExecutionEvent::ToolResult {
                call_id,
                content,
                is_error,
            } => Self::ToolResult {
                result: ToolCallResult {
                    tool_call_id: call_id.to_owned(),
                    content: content.to_owned(),
                    is_error,
                },
            },
            ExecutionEvent::Interrupt(interrupt) => Self::Interrupt(interrupt.clone()),
            ExecutionEvent::InterruptResolved {
                interrupt_id,
                call_id,
                approved,
            } => Self::InterruptResolved {
                interrupt_id: interrupt_id.to_owned(),
                call_id: call_id.to_owned(),
                approved,
            },
            ExecutionEvent::Elicitation(elicitation) => Self::Elicitation(elicitation.clone()),
            ExecutionEvent::ElicitationResolved {
                interrupt_id,
                call_id,
                action,
            } => Self::ElicitationResolved {
                interrupt_id: interrupt_id.to_owned(),
                call_id: call_id.to_owned(),
                action,
            },
        }
    }
}

/// A block of the in-flight draft (tool calls show their raw argument text until sealed).
#[derive(Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[ts(rename = "DraftBlock")]
pub(super) enum DraftBlockShape {
    Text {
        text: String,
        complete: bool,
        /// The block's sources once it is complete (absent when it has none).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        #[ts(optional = nullable)]
        sources: Vec<Source>,
    },
    Reasoning {
        text: String,
        complete: bool,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        call_id: String,
        name: String,
        /// The raw JSON argument text so far.
        arguments_text: String,
        complete: bool,
    },
}

/// The assistant message being streamed (never persisted).
#[derive(Serialize, ts_rs::TS)]
pub(super) struct DraftShape {
    id: String,
    #[ts(type = "'assistant'")]
    role: &'static str,
    blocks: Vec<DraftBlockShape>,
}

impl DraftShape {
    fn of(draft: &Draft) -> Self {
        let Draft { id, blocks } = draft;
        DraftShape {
            id: id.clone(),
            role: "assistant",
            blocks: blocks
                .iter()
                .map(|block| {
                    let (text, complete) = (block.buffer.clone(), block.stopped);
                    match &block.kind {
                        BlockKind::Text => DraftBlockShape::Text {
                            text,
                            complete,
                            sources: block.sources.clone(),
                        },
                        BlockKind::Reasoning => DraftBlockShape::Reasoning { text, complete },
                        BlockKind::ToolCall { call_id, name } => DraftBlockShape::ToolCall {
                            call_id: call_id.clone(),
                            name: name.clone(),
                            arguments_text: text,
                            complete,
                        },
                    }
                })
                .collect(),
        }
    }
}

/// A deep-frozen snapshot: a new object per change; `messages` keeps its identity while unchanged.
#[derive(Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "AgentState")]
pub(super) struct AgentStateShape {
    status: Status,
    #[ts(type = "ReadonlyArray<Readonly<Message>>")]
    messages: Vec<Message>,
    /// The assistant message being streamed, if any.
    #[ts(inline)]
    draft: Option<DraftShape>,
    /// Validated results of the running tool batch (before its tool message is stable).
    #[ts(type = "ReadonlyArray<Readonly<ToolCallResult>>")]
    tool_results: Vec<ToolCallResult>,
    #[ts(type = "Readonly<Interrupt> | null")]
    pending_confirmation: Option<Interrupt>,
    /// A running tool's question to the person (answer with `answerElicitation`).
    #[ts(type = "Readonly<Elicitation> | null")]
    pending_elicitation: Option<Elicitation>,
    last_outcome: Option<Outcome>,
    /// The last error (cleared when a new turn or load starts).
    #[ts(type = "AgentError | null")]
    error: Option<AgentError>,
    #[ts(type = "Readonly<ConversationInfo> | null")]
    conversation: Option<ConversationInfo>,
    tool_revision: u64,
}

impl AgentStateShape {
    fn of(state: &ControllerState) -> Self {
        let ControllerState {
            status,
            messages,
            draft,
            tool_results,
            pending_confirmation,
            pending_elicitation,
            last_outcome,
            error,
            conversation,
            tool_revision,
        } = state;
        AgentStateShape {
            status: *status,
            messages: messages.to_vec(),
            draft: draft.as_deref().map(DraftShape::of),
            tool_results: tool_results.to_vec(),
            pending_confirmation: pending_confirmation.clone(),
            pending_elicitation: pending_elicitation.clone(),
            last_outcome: *last_outcome,
            error: error.clone(),
            conversation: conversation.clone(),
            tool_revision: *tool_revision,
        }
    }
}

/// `details` of every relay failure (AGENT_RELAY_ERROR, and the relay's AGENT_REVISION_CONFLICT /
/// AGENT_CONVERSATION_CORRUPT / AGENT_SPENDING_LIMIT_REACHED), the same shape whether the relay answered with an
/// HTTP error or sent an `error` event inside the model stream.
#[derive(Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "RelayErrorDetails")]
pub(super) struct RelayErrorDetailsShape {
    /// The relay's stable code (docs/protocol.md §4), e.g. 'UPSTREAM_RATE_LIMITED'; '' when an HTTP error body was
    /// not a relay error.
    relay_code: String,
    /// The HTTP status; present only for HTTP error answers (an in-stream error arrives on a 200 stream).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    status: Option<u32>,
    /// Present only when the relay said whether retrying may help (in-stream error events carry it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    retryable: Option<bool>,
    /// Present only for AGENT_REVISION_CONFLICT: the stored revision.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    current_revision: Option<u64>,
    /// Present only for relayCode 'MODEL_STATE_MISMATCH': the message whose stored provider state the relay
    /// refused. `controller.newConversation({ keepMessages: true })` continues from the messages without that
    /// state.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    message_id: Option<String>,
    /// Present only for AGENT_SPENDING_LIMIT_REACHED: whole seconds until a model call may be admitted again.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    retry_after_seconds: Option<u64>,
    /// Present only for AGENT_SPENDING_LIMIT_REACHED: the relay's limit that refused the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    limit: Option<SpendingLimit>,
}

impl RelayErrorDetailsShape {
    /// The details of an HTTP error answer with `status` and this relay error.
    fn of_answer(status: u32, body: &ErrorBody) -> Self {
        let ErrorBody {
            code,
            message: _,
            current_revision,
            message_id,
            retryable,
            limit,
            retry_after_seconds,
        } = body;
        RelayErrorDetailsShape {
            relay_code: code.clone(),
            status: Some(status),
            retryable: *retryable,
            current_revision: *current_revision,
            message_id: message_id.clone(),
            retry_after_seconds: *retry_after_seconds,
            limit: limit.clone(),
        }
    }
}

mod tests {
    use super::*;

    fn sample_message() -> Message {
        Message {
            id: "m1".into(),
            role: Role::Assistant,
            blocks: vec![Block::ToolCall {
                call_id: "c1".into(),
                name: "echo".into(),
                input: serde_json::from_str(r#"{"text":"hi"}"#).unwrap(),
            }],
        }
    }

    fn sample_interrupt() -> Interrupt {
        Interrupt {
            interrupt_id: "i1".into(),
            kind: InterruptKind::ToolConfirmation,
            call_id: "c1".into(),
            tool: "echo".into(),
            arguments: serde_json::from_str(r#"{"text":"hi"}"#).unwrap(),
        }
    }

    fn sample_elicitation() -> Elicitation {
        Elicitation::new(
            "e1".into(),
            "c1",
            "mcp__docs__ask",
            crate::core::ElicitationRequest::from_json(&serde_json::json!({
                "message": "Your name?",
                "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } },
                "source": "docs"
            }))
            .unwrap(),
        )
    }

    fn as_json<T: Serialize>(value: &T) -> Value {
        serde_json::to_value(value).unwrap()
    }

    #[test]
    fn execution_events_serialise_as_their_declared_shape() {
        let message = sample_message();
        let interrupt = sample_interrupt();
        let elicitation = sample_elicitation();
        let stream = [
            StreamEvent::BlockStart {
                index: 0,
                block: BlockKind::ToolCall {
                    call_id: "c1".into(),
                    name: "echo".into(),
                },
            },
            StreamEvent::BlockDelta {
                index: 0,
                delta: "{}".into(),
            },
            StreamEvent::block_stop(0),
            StreamEvent::BlockStop {
                index: 0,
                sources: vec![Source {
                    url: Some("https://example.org".into()),
                    title: None,
                    cited_text: Some("cited".into()),
                }],
            },
        ];
        let mut events = vec![ExecutionEvent::MessageStarted {
            id: "m1",
            model_call: 2,
        }];
        events.extend(stream.iter().map(ExecutionEvent::Stream));
        events.extend([
            ExecutionEvent::MessageCompleted(&message),
            ExecutionEvent::ToolResult {
                call_id: "c1",
                content: "done",
                is_error: true,
            },
            ExecutionEvent::Interrupt(&interrupt),
            ExecutionEvent::InterruptResolved {
                interrupt_id: "i1",
                call_id: "c1",
                approved: false,
            },
            ExecutionEvent::Elicitation(&elicitation),
            ExecutionEvent::ElicitationResolved {
                interrupt_id: "e1",
                call_id: "c1",
                action: ElicitationAction::Decline,
            },
        ]);
        for event in &events {
            let runtime = event.to_json();
            assert_eq!(
                as_json(&ExecutionEventShape::of(event)),
                runtime,
                "the declared ExecutionEvent differs from what the runtime sends"
            );
            assert_eq!(runtime["type"], event.type_name());
        }
    }

    #[test]
    fn the_controller_state_serialises_as_its_declared_shape() {
        let mut draft = Draft::new("d1".into());
        for event in [
            StreamEvent::BlockStart {
                index: 0,
                block: BlockKind::Text,
            },
            StreamEvent::BlockDelta {
                index: 0,
                delta: "hello".into(),
            },
            StreamEvent::BlockStop {
                index: 0,
                sources: vec![Source {
                    url: None,
                    title: Some("Almanac.pdf".into()),
                    cited_text: None,
                }],
            },
            StreamEvent::BlockStart {
                index: 1,
                block: BlockKind::Reasoning,
            },
            StreamEvent::block_stop(1),
            StreamEvent::BlockStart {
                index: 2,
                block: BlockKind::ToolCall {
                    call_id: "c1".into(),
                    name: "echo".into(),
                },
            },
            StreamEvent::BlockDelta {
                index: 2,
                delta: "{\"te".into(),
            },
        ] {
            draft.apply(&event);
        }
        let empty = ControllerState {
            status: Status::Idle,
            messages: Default::default(),
            draft: None,
            tool_results: Default::default(),
            pending_confirmation: None,
            pending_elicitation: None,
            last_outcome: None,
            error: None,
            conversation: None,
            tool_revision: 0,
        };
        let full = ControllerState {
            status: Status::AwaitingConfirmation,
            messages: vec![sample_message()].into(),
            draft: Some(draft.into()),
            tool_results: vec![ToolCallResult {
                tool_call_id: "c0".into(),
                content: "ok".into(),
                is_error: false,
            }]
            .into(),
            pending_confirmation: Some(sample_interrupt()),
            pending_elicitation: Some(sample_elicitation()),
            last_outcome: Some(Outcome::MaxTokens),
            error: Some(
                AgentError::limit_exceeded(LimitName::MaxToolCalls, "too many")
                    .with_details(serde_json::json!({ "calls": 3 })),
            ),
            conversation: Some(ConversationInfo {
                id: "conv".into(),
                title: "Title".into(),
                revision: 4,
            }),
            tool_revision: 7,
        };
        for state in [empty, full] {
            assert_eq!(
                as_json(&AgentStateShape::of(&state)),
                state.to_json(),
                "the declared AgentState differs from what the controller publishes"
            );
        }
    }

    #[test]
    fn relay_error_details_serialise_as_their_declared_shape() {
        // Every field of the relay's error body set, so that each one the runtime copies into `details` is compared.
        let body = ErrorBody {
            code: "SPENDING_LIMIT_REACHED".into(),
            message: "over the limit".into(),
            current_revision: Some(3),
            message_id: Some("m1".into()),
            retryable: Some(true),
            limit: Some(SpendingLimit {
                kind: "calls".into(),
                max: 10,
                window_seconds: Some(60),
                sliding: Some(false),
                model: Some("fast".into()),
            }),
            retry_after_seconds: Some(12),
        };
        let answer = HttpAnswer {
            status: 429,
            body: serde_json::to_string(&ErrorEnvelope {
                error: body.clone(),
            })
            .unwrap(),
        };
        let error = http_error(&answer, "model call");
        assert_eq!(
            error.details,
            Some(as_json(&RelayErrorDetailsShape::of_answer(429, &body)))
        );

        // Not a relay error body: only the status and an empty code.
        let answer = HttpAnswer {
            status: 502,
            body: "<html>bad gateway</html>".into(),
        };
        let shape = RelayErrorDetailsShape {
            relay_code: String::new(),
            status: Some(502),
            retryable: None,
            current_revision: None,
            message_id: None,
            retry_after_seconds: None,
            limit: None,
        };
        assert_eq!(
            http_error(&answer, "model call").details,
            Some(as_json(&shape))
        );

        // An in-stream `error` event: the code and, when the relay says so, whether a retry may help.
        let shape = RelayErrorDetailsShape {
            relay_code: "UPSTREAM_TIMEOUT".into(),
            status: None,
            retryable: Some(true),
            current_revision: None,
            message_id: None,
            retry_after_seconds: None,
            limit: None,
        };
        assert_eq!(
            relay_error_details("UPSTREAM_TIMEOUT", None, Some(true), None, None),
            as_json(&shape)
        );
    }
}
