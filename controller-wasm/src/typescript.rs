//! The npm package's TypeScript declarations of every wire and state type, generated from the Rust types with
//! ts-rs (a test-only dependency: nothing here is in the wasm build). The hand-written `npm/*.d.ts` keep only the
//! API surface (classes, functions, options) and import these.
//!
//! Generated, and committed (the package ships them):
//! - `npm/generated/types.d.ts`: the protocol's wire types (`Message`, `Block`, `StreamEvent`, …) and the
//!   runtime's state types (`AgentState`, `HookEvent`, `ExecutionResult`, …), with the Rust doc comments;
//! - `npm/generated/error-codes.js` and `.d.ts`: one constant per [`ErrorCode`] and `ErrorCodes`.
//!
//! [`generated_files_match_the_rust_types`] fails when a committed file differs from what the types give now;
//! `PATCHBRIDGE_WRITE_TYPES=1 cargo test -p patchbridge-agent --lib typescript` rewrites them.
//!
//! Where a value is not a derived `Serialize` of one Rust type, the shape is declared here as a mirror type
//! deriving both `Serialize` and `TS`, and a test converts real values into it (an exhaustive `match` or
//! destructuring, so a new variant or field does not compile until it is mirrored) and requires the mirror to
//! serialise to exactly the JSON the runtime produces: `ExecutionEvent` (`ExecutionEvent::to_json`), the draft
//! and `AgentState` (`ControllerState::to_json`), and `RelayErrorDetails` (`relay_error_details`, `http_error`).
//!
//! TypeScript-only choices live in `ts(...)` attributes beside the fields: `JsonValue` / `JsonObject` for
//! pass-through JSON, `Required<Usage>` where the runtime always reports every count, the `AgentError` class where
//! the bindings turn the error into one, readonly arrays where JavaScript receives frozen values.

use std::path::{Path, PathBuf};

use patchbridge_protocol::{
    Block, BlockKind, ConversationPage, ConversationSummary, ErrorBody, ErrorEnvelope, ImageSource,
    Message, ModelRequest, ModelState, Role, SpendingLimit, StopReason, StreamEvent,
    ToolDefinition, Usage,
};
use serde::Serialize;
use serde_json::Value;
use ts_rs::{Config, TS};

use crate::core::error::relay_error_details;
use crate::core::relay::http_error;
use crate::core::{
    AgentError, ControllerState, ConversationInfo, Draft, ErrorCode, ExecutionEvent,
    ExecutionResult, HookContext, HookEvent, HookFailure, HttpAnswer, InspectionSource, Interrupt,
    InterruptKind, LimitName, Limits, ModelCallContext, Outcome, Status, ToolCallResult,
};

fn config() -> Config {
    // Every integer the runtime sends is within JavaScript's safe range (limits and counts are checked to be).
    Config::new().with_large_int("number")
}

/// A closed set of stable strings (`string_enum!`) as a TypeScript union of its texts, under its public name.
macro_rules! string_union {
    ($($ty:ty => $name:literal, $doc:literal;)*) => {$(
        impl TS for $ty {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn docs() -> Option<String> {
                Some(ts_rs::format_docs(&[concat!(" ", $doc)]))
            }
            fn name(_: &Config) -> String {
                $name.to_owned()
            }
            fn inline(_: &Config) -> String {
                <$ty>::ALL
                    .iter()
                    .map(|value| format!("\"{}\"", value.as_str()))
                    .collect::<Vec<_>>()
                    .join(" | ")
            }
            fn decl(cfg: &Config) -> String {
                format!("type {} = {};", $name, Self::inline(cfg))
            }
            fn decl_concrete(cfg: &Config) -> String {
                Self::decl(cfg)
            }
            fn output_path() -> Option<PathBuf> {
                Some(PathBuf::from(concat!($name, ".ts")))
            }
        }
    )*};
}

string_union! {
    ErrorCode => "AgentErrorCode", "Stable error codes of @patchbridge/agent (compare `error.code` against these).";
    LimitName => "LimitName", "The five limit names (`AgentError.limit` for AGENT_LIMIT_EXCEEDED / AGENT_INVALID_LIMITS).";
    Outcome => "Outcome", "How an execution ended without an error.";
    Status => "ControllerStatus", "What the controller is doing.";
    InspectionSource => "InspectionSource", "`current-execution` while a turn runs (its frozen snapshot), else `current-registry`.";
    InterruptKind => "InterruptKind", "The kinds of interrupt (only tool confirmation today).";
}

/// What the observer passed to `start` sees, in order (block events are the draft).
#[derive(Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[ts(rename = "ExecutionEvent")]
enum ExecutionEventShape {
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
            ExecutionEvent::Stream(StreamEvent::BlockStop { index }) => {
                Self::BlockStop { index: *index }
            }
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
        }
    }
}

/// A block of the in-flight draft (tool calls show their raw argument text until sealed).
#[derive(Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[ts(rename = "DraftBlock")]
enum DraftBlockShape {
    Text {
        text: String,
        complete: bool,
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
struct DraftShape {
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
                        BlockKind::Text => DraftBlockShape::Text { text, complete },
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
struct AgentStateShape {
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
struct RelayErrorDetailsShape {
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

/// One declaration of the generated file: its TypeScript name, text and the names it refers to.
struct Declaration {
    name: String,
    text: String,
    refers_to: Vec<String>,
}

fn declaration<T: TS + 'static>(cfg: &Config) -> Declaration {
    Declaration {
        name: T::ident(cfg),
        text: format!("{}export {}\n", T::docs().unwrap_or_default(), T::decl(cfg)),
        refers_to: T::dependencies(cfg)
            .into_iter()
            .map(|dependency| dependency.ts_name)
            .collect(),
    }
}

/// Every declaration of `npm/generated/types.d.ts`, in file order.
fn declarations() -> Vec<Declaration> {
    let cfg = &config();
    vec![
        // The wire protocol (docs/protocol.md), from `patchbridge-protocol`.
        declaration::<Role>(cfg),
        declaration::<ImageSource>(cfg),
        declaration::<Block>(cfg),
        declaration::<Message>(cfg),
        declaration::<ModelState>(cfg),
        declaration::<Usage>(cfg),
        declaration::<ToolDefinition>(cfg),
        declaration::<ModelRequest>(cfg),
        declaration::<StopReason>(cfg),
        declaration::<BlockKind>(cfg),
        declaration::<StreamEvent>(cfg),
        declaration::<ConversationSummary>(cfg),
        declaration::<ConversationPage>(cfg),
        declaration::<SpendingLimit>(cfg),
        declaration::<RelayErrorDetailsShape>(cfg),
        // The runtime's closed sets and state, from `controller-wasm/src/core`.
        declaration::<ErrorCode>(cfg),
        declaration::<LimitName>(cfg),
        declaration::<Limits>(cfg),
        declaration::<ToolCallResult>(cfg),
        declaration::<Outcome>(cfg),
        declaration::<HookEvent>(cfg),
        declaration::<HookContext>(cfg),
        declaration::<HookFailure>(cfg),
        declaration::<ModelCallContext>(cfg),
        declaration::<InterruptKind>(cfg),
        declaration::<Interrupt>(cfg),
        declaration::<ExecutionEventShape>(cfg),
        declaration::<ExecutionResult>(cfg),
        declaration::<Status>(cfg),
        declaration::<DraftBlockShape>(cfg),
        declaration::<ConversationInfo>(cfg),
        declaration::<AgentStateShape>(cfg),
        declaration::<InspectionSource>(cfg),
    ]
}

const REGENERATE: &str =
    "PATCHBRIDGE_WRITE_TYPES=1 cargo test -p patchbridge-agent --lib typescript";

fn header(comment: &str) -> String {
    format!(
        "{comment} Generated from the Rust types by controller-wasm/src/typescript.rs; do not edit.\n\
         {comment} After changing a type: {REGENERATE}\n"
    )
}

fn types_d_ts() -> String {
    let mut out = header("//");
    // Hand-written in the package: JSON values (pass-through data) and the error class.
    out.push_str("import type { JsonObject, JsonValue } from '../index.js';\n");
    out.push_str("import type { AgentError } from '../errors.js';\n");
    for declaration in declarations() {
        out.push('\n');
        out.push_str(&declaration.text);
    }
    out
}

/// The JSDoc comment of a stable string: its Rust doc comment.
fn jsdoc(doc: &str) -> String {
    ts_rs::format_docs(&doc.lines().collect::<Vec<_>>())
}

fn error_codes_js() -> String {
    let mut out = header("//");
    out.push_str("// Stable error codes (string constants, safe to compare and to log).\n");
    for (code, doc) in ErrorCode::ALL.iter().zip(ErrorCode::DOCS) {
        out.push_str(&format!(
            "\n{}export const {code} = '{code}';\n",
            jsdoc(doc)
        ));
    }
    out.push_str(
        "\n/** All codes, keyed by themselves: `ErrorCodes.AGENT_BUSY === 'AGENT_BUSY'`. */\n",
    );
    out.push_str("export const ErrorCodes = Object.freeze({\n");
    for code in ErrorCode::ALL {
        out.push_str(&format!("  {code},\n"));
    }
    out.push_str("});\n");
    out
}

fn error_codes_d_ts() -> String {
    let mut out = header("//");
    out.push_str("import type { AgentErrorCode } from './types.js';\n");
    for (code, doc) in ErrorCode::ALL.iter().zip(ErrorCode::DOCS) {
        out.push_str(&format!(
            "\n{}export declare const {code}: '{code}';\n",
            jsdoc(doc)
        ));
    }
    out.push_str("\n/** Every code keyed by itself. */\n");
    out.push_str("export declare const ErrorCodes: Readonly<{ [K in AgentErrorCode]: K }>;\n");
    out
}

fn generated_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../npm/generated")
}

fn generated_files() -> Vec<(&'static str, String)> {
    vec![
        ("types.d.ts", types_d_ts()),
        ("error-codes.js", error_codes_js()),
        ("error-codes.d.ts", error_codes_d_ts()),
    ]
}

#[test]
fn generated_files_match_the_rust_types() {
    let dir = generated_dir();
    let write = std::env::var_os("PATCHBRIDGE_WRITE_TYPES").is_some_and(|v| v != "0");
    let mut stale = Vec::new();
    for (name, expected) in generated_files() {
        let path = dir.join(name);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == expected {
            continue;
        }
        if write {
            std::fs::create_dir_all(&dir).expect("creating npm/generated");
            std::fs::write(&path, &expected).unwrap_or_else(|e| panic!("writing {name}: {e}"));
            continue;
        }
        let line = current
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(expected.lines().count()));
        stale.push(format!(
            "npm/generated/{name}, from line {}:\n  committed: {:?}\n  generated: {:?}",
            line + 1,
            current.lines().nth(line).unwrap_or("<end of file>"),
            expected.lines().nth(line).unwrap_or("<end of file>"),
        ));
    }
    assert!(
        stale.is_empty(),
        "the committed TypeScript declarations differ from the Rust types; regenerate them with\n  {REGENERATE}\n\
         and commit the result.\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_type_a_declaration_refers_to_is_declared_once() {
    let declarations = declarations();
    let names: Vec<&str> = declarations.iter().map(|d| d.name.as_str()).collect();
    for (i, name) in names.iter().enumerate() {
        assert!(!names[..i].contains(name), "{name} is declared twice");
    }
    for declaration in &declarations {
        for name in &declaration.refers_to {
            assert!(
                names.contains(&name.as_str()),
                "{} refers to {name}, which is not declared",
                declaration.name
            );
        }
    }
}

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

fn as_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

#[test]
fn execution_events_serialise_as_their_declared_shape() {
    let message = sample_message();
    let interrupt = sample_interrupt();
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
        StreamEvent::BlockStop { index: 0 },
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
        StreamEvent::BlockStop { index: 0 },
        StreamEvent::BlockStart {
            index: 1,
            block: BlockKind::Reasoning,
        },
        StreamEvent::BlockStop { index: 1 },
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
fn the_declared_limits_name_their_defaults() {
    let decl = Limits::decl(&config());
    for name in LimitName::ALL {
        let field = decl
            .find(&format!("{name}: number"))
            .unwrap_or_else(|| panic!("Limits declares no {name}"));
        let doc = &decl[decl[..field].rfind("/**").expect("a doc comment")..field];
        let default = format!("(default {})", Limits::DEFAULT.get(name));
        assert!(
            doc.contains(&default),
            "the doc of {name} does not say `{default}`: {doc}"
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
