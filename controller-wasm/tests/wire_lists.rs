//! The closed sets JavaScript sees are declared once in Rust (`string_enum!`) and again, by hand, in the npm
//! package's JavaScript and TypeScript. These tests read those files and fail on any drift: a code added to
//! `ErrorCode` but not to `errors.js` (or the other way round) fails here, natively, before any wasm is built.
//! The numbers of the batch handoff between `npm/adapter.js` and the bindings are checked the same way.

use std::collections::BTreeSet;
use std::path::Path;

use patchbridge_agent::core::batch::{PayloadKind, PumpState, META_FIELDS};
use patchbridge_agent::core::{
    ErrorCode, InspectionSource, InterruptKind, LimitName, Outcome, Status,
};

fn npm_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../npm")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The text from `start` (which must occur exactly once) up to the next `end`.
fn section<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    assert_eq!(
        text.matches(start).count(),
        1,
        "expected exactly one {start:?}"
    );
    let from = text.find(start).unwrap() + start.len();
    let len = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("no {end:?} after {start:?}"));
    &text[from..from + len]
}

/// The single-quoted strings of a TypeScript union `export type Name = 'a' | 'b';`.
fn ts_union(text: &str, name: &str) -> Vec<String> {
    section(text, &format!("export type {name} ="), ";")
        .split('|')
        .map(str::trim)
        .filter(|member| !member.is_empty())
        .map(|member| {
            assert!(
                member.len() >= 2 && member.starts_with('\'') && member.ends_with('\''),
                "{name}: {member:?} is not a string literal"
            );
            member[1..member.len() - 1].to_owned()
        })
        .collect()
}

/// `(name, value)` of every line `export const NAME = 'value';` / `export declare const NAME: 'value';`.
fn string_constants(text: &str, prefix: &str, separator: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| line.strip_prefix(prefix))
        .filter_map(|rest| {
            let (name, value) = rest.split_once(separator)?;
            let value = value.trim().strip_suffix(';')?.trim();
            let value = value.strip_prefix('\'')?.strip_suffix('\'')?;
            Some((name.trim().to_owned(), value.to_owned()))
        })
        .collect()
}

/// `value` of the line `export const NAME = value;` (a number).
fn number_constant(text: &str, name: &str) -> u64 {
    let prefix = format!("export const {name} = ");
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no `{prefix}…` in adapter.js"));
    line.trim_end_matches(';')
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn sorted<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> Vec<String> {
    let mut items: Vec<String> = items.into_iter().map(Into::into).collect();
    items.sort();
    items
}

fn assert_no_duplicates(what: &str, items: &[String]) {
    let unique: BTreeSet<&String> = items.iter().collect();
    assert_eq!(
        unique.len(),
        items.len(),
        "{what} lists a value twice: {items:?}"
    );
}

#[test]
fn errors_js_declares_exactly_the_rust_error_codes() {
    let rust = sorted(ErrorCode::ALL.map(ErrorCode::as_str));
    let js = npm_file("errors.js");

    let constants = string_constants(&js, "export const ", " = ");
    for (name, value) in &constants {
        assert_eq!(
            name, value,
            "errors.js: constant {name} must equal its name"
        );
    }
    let names: Vec<String> = constants.into_iter().map(|(name, _)| name).collect();
    assert_no_duplicates("errors.js constants", &names);
    assert_eq!(
        sorted(names),
        rust,
        "errors.js `export const` codes differ from ErrorCode::ALL"
    );

    let members: Vec<String> = section(&js, "export const ErrorCodes = Object.freeze({", "});")
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .collect();
    assert_no_duplicates("errors.js ErrorCodes", &members);
    assert_eq!(
        sorted(members),
        rust,
        "errors.js ErrorCodes differs from ErrorCode::ALL"
    );
}

#[test]
fn errors_d_ts_declares_exactly_the_rust_error_codes_and_limit_names() {
    let dts = npm_file("errors.d.ts");

    let union = ts_union(&dts, "AgentErrorCode");
    assert_no_duplicates("AgentErrorCode", &union);
    assert_eq!(
        sorted(union),
        sorted(ErrorCode::ALL.map(ErrorCode::as_str)),
        "AgentErrorCode"
    );

    let constants = string_constants(&dts, "export declare const ", ": ");
    for (name, value) in &constants {
        assert_eq!(
            name, value,
            "errors.d.ts: constant {name} must have its own name as type"
        );
    }
    let names: Vec<String> = constants.into_iter().map(|(name, _)| name).collect();
    assert_eq!(
        sorted(names),
        sorted(ErrorCode::ALL.map(ErrorCode::as_str)),
        "errors.d.ts `export declare const` codes"
    );

    let limits = ts_union(&dts, "LimitName");
    assert_no_duplicates("LimitName", &limits);
    assert_eq!(
        sorted(limits),
        sorted(LimitName::ALL.map(LimitName::as_str)),
        "LimitName"
    );
}

#[test]
fn index_d_ts_declares_exactly_the_rust_limits_outcomes_statuses_and_kinds() {
    let dts = npm_file("index.d.ts");

    let keys: Vec<String> = section(&dts, "export interface Limits {", "}")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("/**") && !line.starts_with('*'))
        .map(|line| {
            let (key, ty) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("Limits: {line:?}"));
            assert_eq!(ty.trim(), "number;", "Limits.{key}");
            key.trim().to_owned()
        })
        .collect();
    assert_eq!(
        sorted(keys),
        sorted(LimitName::ALL.map(LimitName::as_str)),
        "interface Limits"
    );

    assert_eq!(
        sorted(ts_union(&dts, "Outcome")),
        sorted(Outcome::ALL.map(Outcome::as_str))
    );
    assert_eq!(
        sorted(ts_union(&dts, "ControllerStatus")),
        sorted(Status::ALL.map(Status::as_str))
    );
    assert_eq!(
        sorted(ts_union(&dts, "InspectionSource")),
        sorted(InspectionSource::ALL.map(InspectionSource::as_str))
    );
    assert_eq!(
        sorted(ts_union(&dts, "InterruptKind")),
        sorted(InterruptKind::ALL.map(InterruptKind::as_str))
    );
}

#[test]
fn adapter_js_names_the_batch_numbers_the_bindings_read() {
    let adapter = npm_file("adapter.js");
    assert_eq!(number_constant(&adapter, "META_FIELDS"), META_FIELDS as u64);
    assert_eq!(
        number_constant(&adapter, "PAYLOAD_JSON"),
        PayloadKind::Json as u64
    );
    assert_eq!(
        number_constant(&adapter, "PAYLOAD_BLOCK_DELTA"),
        PayloadKind::BlockDelta as u64
    );
    assert_eq!(
        number_constant(&adapter, "PUMP_OPEN"),
        PumpState::Open as u64
    );
    assert_eq!(
        number_constant(&adapter, "PUMP_ENDED"),
        PumpState::Ended as u64
    );
    assert_eq!(
        number_constant(&adapter, "PUMP_FAILED"),
        PumpState::Failed as u64
    );
    // The names are used, not bypassed: no meta triple is pushed with a literal kind.
    for line in adapter.lines().filter(|line| line.contains("meta.push(")) {
        let args = line.split("meta.push(").nth(1).unwrap_or_default();
        assert!(
            !args.starts_with(|c: char| c.is_ascii_digit()),
            "adapter.js pushes a literal payload kind: {line:?}"
        );
    }
}

#[test]
fn every_string_enum_value_parses_back_and_no_string_is_used_twice() {
    fn check<T: Copy + PartialEq + std::fmt::Debug>(
        all: &[T],
        as_str: fn(T) -> &'static str,
        parse: fn(&str) -> Option<T>,
    ) {
        let texts: Vec<String> = all.iter().map(|v| as_str(*v).to_owned()).collect();
        assert_no_duplicates("a string enum", &texts);
        for value in all {
            assert_eq!(parse(as_str(*value)), Some(*value));
        }
        assert_eq!(parse(""), None);
    }
    check(&ErrorCode::ALL, ErrorCode::as_str, ErrorCode::parse);
    check(&LimitName::ALL, LimitName::as_str, LimitName::parse);
    check(&Outcome::ALL, Outcome::as_str, Outcome::parse);
    check(&Status::ALL, Status::as_str, Status::parse);
    check(
        &InspectionSource::ALL,
        InspectionSource::as_str,
        InspectionSource::parse,
    );
    check(
        &InterruptKind::ALL,
        InterruptKind::as_str,
        InterruptKind::parse,
    );
}

/// The `type: '…'` tags of the TypeScript union `export type {name} =` (up to the next blank line).
fn ts_tags(text: &str, name: &str) -> Vec<String> {
    let union = section(text, &format!("export type {name} ="), "\n\n");
    union
        .split("type: '")
        .skip(1)
        .map(|rest| rest[..rest.find('\'').expect("closing quote")].to_owned())
        .collect()
}

/// The `type` of a serialised value.
fn tag<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value).unwrap()["type"]
        .as_str()
        .expect("a tagged value")
        .to_owned()
}

/// One value of every variant. Each `match` is exhaustive, so a variant added in Rust fails to compile here
/// until it is listed (and then the comparison with index.d.ts decides).
mod every {
    use patchbridge_agent::core::protocol::{
        Block, BlockKind, ImageSource, Role, StopReason, StreamEvent, Usage,
    };
    use patchbridge_agent::core::{AgentError, ErrorCode, HookEvent, Outcome};

    pub fn role() -> Vec<Role> {
        let all = vec![Role::User, Role::Assistant, Role::Tool];
        all.iter().for_each(|r| match r {
            Role::User | Role::Assistant | Role::Tool => {}
        });
        all
    }

    pub fn stop_reason() -> Vec<StopReason> {
        use StopReason::*;
        let all = vec![
            EndTurn,
            ToolUse,
            MaxTokens,
            StopSequence,
            PauseTurn,
            Refusal,
            Other,
        ];
        all.iter().for_each(|r| match r {
            EndTurn | ToolUse | MaxTokens | StopSequence | PauseTurn | Refusal | Other => {}
        });
        all
    }

    pub fn block() -> Vec<Block> {
        let all = vec![
            Block::Text {
                text: String::new(),
            },
            Block::Image {
                source: ImageSource::Url { url: String::new() },
            },
            Block::Reasoning {
                text: String::new(),
            },
            Block::ToolCall {
                call_id: String::new(),
                name: String::new(),
                input: Default::default(),
            },
            Block::ToolResult {
                call_id: String::new(),
                content: String::new(),
                is_error: false,
            },
        ];
        all.iter().for_each(|b| match b {
            Block::Text { .. }
            | Block::Image { .. }
            | Block::Reasoning { .. }
            | Block::ToolCall { .. }
            | Block::ToolResult { .. } => {}
        });
        all
    }

    pub fn block_kind() -> Vec<BlockKind> {
        let all = vec![
            BlockKind::Text,
            BlockKind::Reasoning,
            BlockKind::ToolCall {
                call_id: String::new(),
                name: String::new(),
            },
        ];
        all.iter().for_each(|k| match k {
            BlockKind::Text | BlockKind::Reasoning | BlockKind::ToolCall { .. } => {}
        });
        all
    }

    pub fn stream_event() -> Vec<StreamEvent> {
        let all = vec![
            StreamEvent::MessageStart { id: None },
            StreamEvent::BlockStart {
                index: 0,
                block: BlockKind::Text,
            },
            StreamEvent::BlockDelta {
                index: 0,
                delta: String::new(),
            },
            StreamEvent::BlockStop { index: 0 },
            StreamEvent::MessageStop {
                stop_reason: StopReason::EndTurn,
                usage: Usage::default(),
                model_state: None,
            },
            StreamEvent::Error {
                code: String::new(),
                message: String::new(),
                retryable: None,
            },
        ];
        all.iter().for_each(|e| match e {
            StreamEvent::MessageStart { .. }
            | StreamEvent::BlockStart { .. }
            | StreamEvent::BlockDelta { .. }
            | StreamEvent::BlockStop { .. }
            | StreamEvent::MessageStop { .. }
            | StreamEvent::Error { .. } => {}
        });
        all
    }

    pub fn hook_event() -> Vec<HookEvent> {
        let usage = Usage::default();
        let all = vec![
            HookEvent::ExecutionStarted {
                tool_revision: 0,
                message_count: 0,
            },
            HookEvent::ModelCallStarted { model_call: 1 },
            HookEvent::ModelCallCompleted {
                model_call: 1,
                message_id: String::new(),
                stop_reason: StopReason::EndTurn,
                usage,
                time_to_first_token_ms: None,
                output_duration_ms: 0.0,
                output_characters: 0,
            },
            HookEvent::ToolCallStarted {
                call_id: String::new(),
                tool: String::new(),
                arguments: Default::default(),
            },
            HookEvent::ToolCallCompleted {
                call_id: String::new(),
                tool: String::new(),
                is_error: false,
                content_characters: 0,
                rejected: false,
                invalid_arguments: false,
            },
            HookEvent::ConfirmationRequested {
                interrupt_id: String::new(),
                call_id: String::new(),
                tool: String::new(),
                arguments: Default::default(),
            },
            HookEvent::ConfirmationResolved {
                interrupt_id: String::new(),
                call_id: String::new(),
                approved: true,
            },
            HookEvent::ExecutionCompleted {
                outcome: Outcome::Completed,
                usage,
                model_calls: 0,
                tool_calls: 0,
            },
            HookEvent::ExecutionCancelled { usage },
            HookEvent::ExecutionFailed {
                error: AgentError::new(ErrorCode::Busy, ""),
            },
        ];
        all.iter().for_each(|e| match e {
            HookEvent::ExecutionStarted { .. }
            | HookEvent::ModelCallStarted { .. }
            | HookEvent::ModelCallCompleted { .. }
            | HookEvent::ToolCallStarted { .. }
            | HookEvent::ToolCallCompleted { .. }
            | HookEvent::ConfirmationRequested { .. }
            | HookEvent::ConfirmationResolved { .. }
            | HookEvent::ExecutionCompleted { .. }
            | HookEvent::ExecutionCancelled { .. }
            | HookEvent::ExecutionFailed { .. } => {}
        });
        all
    }
}

#[test]
fn index_d_ts_declares_exactly_the_wire_tags_of_messages_events_and_hooks() {
    let dts = npm_file("index.d.ts");
    let names = |values: Vec<String>| sorted(values);
    assert_eq!(
        sorted(ts_union(&dts, "Role")),
        names(
            every::role()
                .iter()
                .map(|r| serde_json::to_value(r)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_owned())
                .collect()
        ),
        "Role"
    );
    assert_eq!(
        sorted(ts_union(&dts, "StopReason")),
        names(
            every::stop_reason()
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect()
        ),
        "StopReason"
    );
    assert_eq!(
        sorted(ts_tags(&dts, "BlockKind")),
        names(every::block_kind().iter().map(tag).collect()),
        "BlockKind"
    );
    assert_eq!(
        sorted(ts_tags(&dts, "StreamEvent")),
        names(every::stream_event().iter().map(tag).collect()),
        "StreamEvent"
    );
    assert_eq!(
        sorted(ts_tags(&dts, "HookEvent")),
        names(every::hook_event().iter().map(tag).collect()),
        "HookEvent"
    );
    assert_eq!(
        sorted(every::hook_event().iter().map(tag).collect::<Vec<_>>()),
        sorted(
            every::hook_event()
                .iter()
                .map(|e| e.type_name().to_owned())
                .collect::<Vec<_>>()
        ),
        "HookEvent::type_name agrees with its serialised type"
    );
    let blocks: Vec<String> = [
        "TextBlock",
        "ImageBlock",
        "ReasoningBlock",
        "ToolCallBlock",
        "ToolResultBlock",
    ]
    .into_iter()
    .map(|name| {
        let declared = section(&dts, &format!("export type {name} = {{ type: '"), "'");
        declared.to_owned()
    })
    .collect();
    assert_eq!(
        sorted(blocks),
        names(every::block().iter().map(tag).collect()),
        "Block"
    );
}
