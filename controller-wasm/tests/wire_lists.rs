//! What still ties the npm package's hand-written JavaScript to the Rust core after the declarations of every wire
//! and state type (and the error-code constants) are generated from the Rust types (`src/typescript/`): the
//! numbers of the batch handoff between `npm/adapter/streams.js` and the bindings, read from that file and compared
//! natively, before any wasm is built. Also pinned: every closed set of stable strings parses back, and the texts
//! Rust code uses for hook event types and stop reasons are their serialised forms.

use std::collections::BTreeSet;
use std::path::Path;

use patchbridge_agent::core::batch::{PayloadKind, PumpState, META_FIELDS};
use patchbridge_agent::core::protocol::{StopReason, Usage};
use patchbridge_agent::core::{
    AgentError, ErrorCode, HookEvent, InspectionSource, InterruptKind, LimitName, Outcome, Status,
};

fn npm_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../npm")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// `value` of the line `export const NAME = value;` (a number).
fn number_constant(text: &str, name: &str) -> u64 {
    let prefix = format!("export const {name} = ");
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no `{prefix}…` in adapter/streams.js"));
    line.trim_end_matches(';')
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
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
fn adapter_js_names_the_batch_numbers_the_bindings_read() {
    let adapter = npm_file("adapter/streams.js");
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

/// The `type` of a serialised value.
fn tag<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value).unwrap()["type"]
        .as_str()
        .expect("a tagged value")
        .to_owned()
}

/// One value of every variant. The `match` is exhaustive, so a variant added in Rust fails to compile here until
/// it is listed.
fn every_hook_event() -> Vec<HookEvent> {
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

#[test]
fn each_hook_events_type_name_is_its_serialised_type() {
    for event in every_hook_event() {
        assert_eq!(event.type_name(), tag(&event));
    }
}

#[test]
fn each_stop_reasons_text_is_its_serialised_form() {
    use StopReason::*;
    let all = [
        EndTurn,
        ToolUse,
        MaxTokens,
        StopSequence,
        PauseTurn,
        Refusal,
        Other,
    ];
    // Exhaustive: a new stop reason fails to compile here until it is listed above.
    all.iter().for_each(|r| match r {
        EndTurn | ToolUse | MaxTokens | StopSequence | PauseTurn | Refusal | Other => {}
    });
    for reason in all {
        assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
    }
}
