//! Limits: validation at construction and explicit failure when exceeded; the whole-batch precheck, including a
//! property test that any batch with one defect executes zero tools.

mod support;

use std::rc::Rc;

use futures::future::FutureExt;
use patchbridge_agent::core::protocol::{BlockKind, StopReason};
use patchbridge_agent::core::*;
use proptest::prelude::*;
use serde_json::json;
use support::*;

fn full() -> serde_json::Value {
    json!({
        "maxModelCalls": 8, "maxToolCalls": 16, "maxDurationMs": 120000,
        "maxModelOutputCharacters": 50000, "maxToolResultCharacters": 20000,
    })
}

#[test]
fn full_limits_parse_and_every_key_is_required() {
    let limits = Limits::from_full_json(&full()).unwrap();
    assert_eq!(limits.max_model_calls, 8);
    assert_eq!(limits.max_tool_result_characters, 20000);
    for key in [
        "maxModelCalls",
        "maxToolCalls",
        "maxDurationMs",
        "maxModelOutputCharacters",
        "maxToolResultCharacters",
    ] {
        let mut value = full();
        value.as_object_mut().unwrap().remove(key);
        let error = Limits::from_full_json(&value).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidLimits);
        assert_eq!(error.limit.map(|l| l.as_str()), Some(key));
    }
}

#[test]
fn partial_limits_override_factory_defaults() {
    let limits =
        Limits::from_partial_json(&json!({ "maxModelCalls": 8, "maxDurationMs": 120000 })).unwrap();
    assert_eq!(limits.max_model_calls, 8);
    assert_eq!(limits.max_duration_ms, 120000);
    assert_eq!(limits.max_tool_calls, 32);
    assert_eq!(limits.max_model_output_characters, 100000);
    assert_eq!(
        Limits::from_partial_json(&serde_json::Value::Null).unwrap(),
        Limits::DEFAULT
    );
    assert_eq!(
        (
            Limits::DEFAULT.max_model_calls,
            Limits::DEFAULT.max_tool_calls,
            Limits::DEFAULT.max_duration_ms
        ),
        (16, 32, 300000)
    );
}

#[test]
fn invalid_limit_values_are_rejected_naming_the_key() {
    let bad = [
        json!(0),
        json!(-1),
        json!(1.5),
        json!("8"),
        json!(null),
        json!(true),
        json!(9007199254740992u64),
        json!(1e300),
    ];
    for value in bad {
        let error = Limits::from_partial_json(&json!({ "maxToolCalls": value })).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidLimits, "{value}");
        assert_eq!(error.limit, Some(LimitName::MaxToolCalls), "{value}");
    }
    // An integral float is a JavaScript integer.
    assert_eq!(
        Limits::from_partial_json(&json!({ "maxToolCalls": 4.0 }))
            .unwrap()
            .max_tool_calls,
        4
    );
    // Integral number text in any notation is the integer it denotes; a remaining fraction is not.
    for (text, expected) in [
        ("1e3", Some(1000)),
        ("1.5e1", Some(15)),
        ("40.00", Some(40)),
        ("2E+2", Some(200)),
    ]
    .into_iter()
    .chain([
        ("1e-1", None),
        ("0.0", None),
        ("-4.0", None),
        ("4.05e1", None),
        ("1e400", None),
    ]) {
        let value: serde_json::Value =
            serde_json::from_str(&format!(r#"{{"maxToolCalls":{text}}}"#)).unwrap();
        let parsed = Limits::from_partial_json(&value).map(|l| l.max_tool_calls);
        assert_eq!(parsed.ok(), expected, "{text}");
    }
    // maxDurationMs has the setTimeout cap.
    assert!(Limits::from_partial_json(&json!({ "maxDurationMs": 2147483647u64 })).is_ok());
    let error = Limits::from_partial_json(&json!({ "maxDurationMs": 2147483648u64 })).unwrap_err();
    assert_eq!(error.limit, Some(LimitName::MaxDurationMs));
}

#[test]
fn unknown_limit_keys_are_an_error() {
    let error = Limits::from_partial_json(&json!({ "maxModelCall": 3 })).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidLimits);
    assert!(error.message.contains("maxModelCall"));
    let mut value = full();
    value["extra"] = json!(1);
    assert_eq!(
        Limits::from_full_json(&value).unwrap_err().code,
        ErrorCode::InvalidLimits
    );
    assert_eq!(
        Limits::from_partial_json(&json!([1])).unwrap_err().code,
        ErrorCode::InvalidLimits
    );
}

#[test]
fn runtime_construction_validates_limits() {
    let mut limits = Limits::DEFAULT;
    limits.max_model_output_characters = 0;
    let error = DefaultAgentRuntime::new(
        ScriptedModel::new(vec![]),
        RuntimeOptions::new(limits),
        ManualPlatform::new(),
    )
    .err()
    .unwrap();
    assert_eq!(error.code, ErrorCode::InvalidLimits);
    assert_eq!(error.limit, Some(LimitName::MaxModelOutputCharacters));
}

fn runtime_limits(
    change: impl FnOnce(&mut Limits),
    model: Rc<ScriptedModel>,
) -> DefaultAgentRuntime {
    let mut limits = Limits::DEFAULT;
    change(&mut limits);
    runtime_with(model, RuntimeOptions::new(limits), ManualPlatform::new())
}

#[test]
fn max_model_calls_fails_explicitly() {
    let model = ScriptedModel::new(vec![
        text_reply("m1", "a", StopReason::PauseTurn),
        text_reply("m2", "b", StopReason::PauseTurn),
        text_reply("m3", "c", StopReason::EndTurn),
    ]);
    let rt = runtime_limits(|l| l.max_model_calls = 2, model.clone());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    let error = result.unwrap_err();
    assert_eq!(error.code, ErrorCode::LimitExceeded);
    assert_eq!(error.limit, Some(LimitName::MaxModelCalls));
    assert_eq!(model.calls(), 2);
}

#[test]
fn max_model_output_characters_counts_text_reasoning_and_tool_arguments_as_scalar_values() {
    // 3 (reasoning) + 4 ("héé😀": four scalar values, 10 bytes) + 2 ("{}") = 9 characters.
    let steps = || {
        vec![
            start("m"),
            block_start(0, BlockKind::Reasoning),
            delta(0, "abc"),
            block_stop(0),
            block_start(1, BlockKind::Text),
            delta(1, "héé😀"),
            block_stop(1),
            block_start(
                2,
                BlockKind::ToolCall {
                    call_id: "c1".into(),
                    name: "t".into(),
                },
            ),
            delta(2, "{}"),
            block_stop(2),
            stop(StopReason::ToolUse),
        ]
    };
    let (tool, _) = echo_tool("ok");
    let tools = snapshot(vec![(spec("t", true, false), tool.clone())]);
    // Exactly at the limit passes.
    let model = ScriptedModel::new(vec![steps(), text_reply("m2", "", StopReason::EndTurn)]);
    let rt = runtime_limits(|l| l.max_model_output_characters = 9, model);
    assert_eq!(
        code_of(&run_to_end(&rt, input(vec![user("q")], tools.clone())).0),
        "completed"
    );
    // One below fails, explicitly, with the limit's name and no truncated message.
    let model = ScriptedModel::new(vec![steps()]);
    let rt = runtime_limits(|l| l.max_model_output_characters = 8, model);
    let (result, log) = run_to_end(&rt, input(vec![user("q")], tools));
    let error = result.unwrap_err();
    assert_eq!(error.code, ErrorCode::LimitExceeded);
    assert_eq!(error.limit, Some(LimitName::MaxModelOutputCharacters));
    assert!(!event_types(&log).contains(&"message-completed".to_string()));
    // The budget is per model call: two calls of 9 characters each pass a limit of 9.
}

#[test]
fn max_model_output_characters_is_per_model_call() {
    let model = ScriptedModel::new(vec![
        text_reply("m1", "123456789", StopReason::PauseTurn),
        text_reply("m2", "123456789", StopReason::EndTurn),
    ]);
    let rt = runtime_limits(|l| l.max_model_output_characters = 9, model);
    assert_eq!(
        code_of(&run_to_end(&rt, input(vec![user("q")], no_tools())).0),
        "completed"
    );
}

#[test]
fn max_tool_result_characters_fails_without_publishing_or_calling_the_model_again() {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "t", "{}")]),
        text_reply("m2", "never", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("ünïcode!"); // 8 scalar values
    let rt = runtime_limits(|l| l.max_tool_result_characters = 7, model.clone());
    let (result, log) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    let error = result.unwrap_err();
    assert_eq!(error.limit, Some(LimitName::MaxToolResultCharacters));
    assert_eq!(
        runs.get(),
        1,
        "the tool ran (side effects cannot be rolled back)"
    );
    assert_eq!(model.calls(), 1, "no further model call");
    assert!(
        !event_types(&log).contains(&"tool-result".to_string()),
        "result not published"
    );
}

#[test]
fn max_tool_calls_is_cumulative_over_batches() {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "t", "{}"), ("c2", "t", "{}")]),
        tool_calls("m2", &[("c3", "t", "{}")]),
        text_reply("m3", "never", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("ok");
    let rt = runtime_limits(|l| l.max_tool_calls = 2, model.clone());
    let (result, _) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    let error = result.unwrap_err();
    assert_eq!(error.limit, Some(LimitName::MaxToolCalls));
    assert_eq!(
        runs.get(),
        2,
        "the first batch ran, the second (over budget) ran nothing"
    );
    assert_eq!(model.calls(), 2);
}

#[test]
fn a_batch_that_could_never_be_answered_is_refused_before_any_tool_runs() {
    let model = ScriptedModel::new(vec![tool_calls("m1", &[("c1", "t", "{}")])]);
    let (tool, runs) = echo_tool("ok");
    let rt = runtime_limits(|l| l.max_model_calls = 1, model);
    let (result, _) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    assert_eq!(result.unwrap_err().limit, Some(LimitName::MaxModelCalls));
    assert_eq!(runs.get(), 0);
}

// ---------------------------------------------------------------- precheck

/// One defect a batch can carry.
#[derive(Debug, Clone, Copy)]
enum Defect {
    WrongStopReason,
    DuplicateCallId,
    UnknownTool,
    BadArguments,
    NotAnObject,
    OverBudget,
}

fn batch_with(defect: Defect, size: usize, at: usize) -> (Vec<Step>, Limits) {
    let mut limits = Limits::DEFAULT;
    let mut steps = vec![start("m1")];
    for i in 0..size {
        let mut call_id = format!("c{i}");
        let mut tool = "t".to_string();
        let mut args = format!("{{\"i\":{i}}}");
        if i == at {
            match defect {
                Defect::DuplicateCallId if at > 0 => call_id = "c0".into(),
                Defect::DuplicateCallId => {}
                Defect::UnknownTool => tool = "missing".into(),
                Defect::BadArguments => args = "{\"i\":".into(),
                Defect::NotAnObject => args = "[1,2]".into(),
                _ => {}
            }
        }
        let i = i as u32;
        steps.push(block_start(
            i,
            BlockKind::ToolCall {
                call_id,
                name: tool,
            },
        ));
        steps.push(delta(i, &args));
        steps.push(block_stop(i));
    }
    let reason = match defect {
        Defect::WrongStopReason => StopReason::EndTurn,
        _ => StopReason::ToolUse,
    };
    if let Defect::OverBudget = defect {
        limits.max_tool_calls = (size as u64).saturating_sub(1).max(1);
    }
    steps.push(stop(reason));
    (steps, limits)
}

fn run_defective(
    defect: Defect,
    size: usize,
    at: usize,
) -> (Result<ExecutionResult, AgentError>, usize) {
    let (mut steps, limits) = batch_with(defect, size, at);
    if let Defect::DuplicateCallId = defect {
        if at == 0 {
            // Put the duplicate on the second call instead.
            let (s, _) = batch_with(defect, size, 1);
            steps = s;
        }
    }
    let model = ScriptedModel::new(vec![steps, text_reply("m2", "never", StopReason::EndTurn)]);
    let (tool, runs) = echo_tool("ok");
    let rt = runtime_with(model, RuntimeOptions::new(limits), ManualPlatform::new());
    let (result, _) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    (result, runs.get())
}

#[test]
fn each_precheck_defect_fails_the_batch_with_zero_tools_executed() {
    for (defect, code) in [
        (Defect::WrongStopReason, "AGENT_TOOL_PRECHECK_FAILED"),
        (Defect::DuplicateCallId, "AGENT_TOOL_PRECHECK_FAILED"),
        (Defect::UnknownTool, "AGENT_TOOL_PRECHECK_FAILED"),
        (Defect::BadArguments, "AGENT_TOOL_PRECHECK_FAILED"),
        (Defect::NotAnObject, "AGENT_TOOL_PRECHECK_FAILED"),
        (Defect::OverBudget, "AGENT_LIMIT_EXCEEDED"),
    ] {
        let (result, runs) = run_defective(defect, 3, 2);
        assert_eq!(code_of(&result), code, "{defect:?}");
        assert_eq!(runs, 0, "{defect:?}");
    }
}

#[test]
fn tool_use_without_tool_calls_is_a_precheck_failure() {
    let model = ScriptedModel::new(vec![text_reply("m1", "x", StopReason::ToolUse)]);
    let rt = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    assert_eq!(code_of(&result), "AGENT_TOOL_PRECHECK_FAILED");
}

#[test]
fn precheck_errors_name_the_check_and_the_call() {
    let (result, _) = run_defective(Defect::UnknownTool, 2, 1);
    let details = result.unwrap_err().details.unwrap();
    assert_eq!(details["check"], "known-tool");
    assert_eq!(details["callId"], "c1");
}

fn defect() -> impl Strategy<Value = Defect> {
    prop_oneof![
        Just(Defect::WrongStopReason),
        Just(Defect::DuplicateCallId),
        Just(Defect::UnknownTool),
        Just(Defect::BadArguments),
        Just(Defect::NotAnObject),
        Just(Defect::OverBudget),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Whatever the batch size and wherever the one defect sits, zero tools run and the result rejects.
    #[test]
    fn any_batch_with_one_defect_executes_zero_tools(defect in defect(), size in 2usize..8, at_seed in 0usize..100) {
        let at = at_seed % size;
        let (result, runs) = run_defective(defect, size, at);
        prop_assert!(result.is_err());
        prop_assert_eq!(runs, 0);
    }

    /// The control: the same batches without a defect run every tool.
    #[test]
    fn a_clean_batch_runs_every_tool(size in 1usize..8) {
        let mut steps = vec![start("m1")];
        for i in 0..size {
            let i = i as u32;
            steps.push(block_start(i, BlockKind::ToolCall { call_id: format!("c{i}"), name: "t".into() }));
            steps.push(delta(i, "{}"));
            steps.push(block_stop(i));
        }
        steps.push(stop(StopReason::ToolUse));
        let model = ScriptedModel::new(vec![steps, text_reply("m2", "done", StopReason::EndTurn)]);
        let (tool, runs) = fn_tool(|_, ctx| futures::future::ready(Ok(ok_result(&ctx.call_id, "ok"))).boxed_local());
        let rt = runtime(model, ManualPlatform::new());
        let (result, _) = run_to_end(&rt, input(vec![user("q")], snapshot(vec![(spec("t", true, false), tool)])));
        prop_assert!(result.is_ok());
        prop_assert_eq!(runs.get(), size);
    }
}
