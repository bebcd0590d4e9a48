//! The terminal gate (cancel and deadline close the gate first, then abort; hosts that ignore abort cannot stop
//! settling; late completions are isolated) and confirmation interrupts. Ends with a property test over
//! arbitrary interleavings of cancel / clock / releases / responses.

mod support;

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::FutureExt;
use patchbridge_agent::core::protocol::{Block, BlockKind, StopReason};
use patchbridge_agent::core::*;
use proptest::prelude::*;
use serde_json::json;
use support::*;

fn short_limits() -> Limits {
    Limits {
        max_duration_ms: 1000,
        ..Limits::DEFAULT
    }
}

fn with_hooks(log: &HookLog) -> RuntimeOptions {
    let mut options = RuntimeOptions::new(short_limits());
    options.hooks = vec![hook("h", log, None)];
    options
}

#[test]
fn cancel_settles_even_when_the_model_ignores_abort_and_aborts_after_the_gate_closed() {
    let platform = ManualPlatform::new();
    let model = ScriptedModel::new(vec![vec![
        start("m"),
        block_start(0, BlockKind::Text),
        delta(0, "a"),
        Step::HangForever,
    ]]);
    let rt = runtime(model.clone(), platform);
    let (log, observer) = recorder();
    let execution = rt
        .start(input(vec![user("q")], no_tools()), observer)
        .unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    assert!(peek(&execution).is_none());
    // When the abort callback runs, the gate must already be closed.
    let seen_settled = Rc::new(RefCell::new(None));
    let (probe, exec2) = (seen_settled.clone(), execution.clone());
    execution.signal().on_abort(Box::new(move || {
        *probe.borrow_mut() = Some(exec2.is_settled())
    }));
    assert!(execution.cancel());
    assert_eq!(
        *seen_settled.borrow(),
        Some(true),
        "gate closed before the signal aborted"
    );
    assert!(model.signals.borrow()[0].is_aborted());
    h.stall();
    let result = peek(&execution).unwrap().unwrap();
    assert_eq!(result.outcome, Outcome::Cancelled);
    assert_eq!(
        result.messages.len(),
        1,
        "the half-streamed block never becomes stable"
    );
    assert!(!event_types(&log).contains(&"message-completed".to_string()));
    assert!(!execution.cancel(), "a second cancel decides nothing");
}

#[test]
fn cancel_wins_over_the_error_a_well_behaved_model_raises_on_abort() {
    let model = ScriptedModel::new(vec![vec![start("m"), Step::HangUntilAbort]]);
    let rt = runtime(model, ManualPlatform::new());
    let (_, observer) = recorder();
    let execution = rt
        .start(input(vec![user("q")], no_tools()), observer)
        .unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    execution.cancel();
    h.stall();
    assert_eq!(
        peek(&execution).unwrap().unwrap().outcome,
        Outcome::Cancelled
    );
}

#[test]
fn cancel_before_the_first_poll_never_calls_the_model() {
    let model = ScriptedModel::new(vec![text_reply("m", "x", StopReason::EndTurn)]);
    let rt = runtime(model.clone(), ManualPlatform::new());
    let (_, observer) = recorder();
    let execution = rt
        .start(input(vec![user("q")], no_tools()), observer)
        .unwrap();
    execution.cancel();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    assert_eq!(
        peek(&execution).unwrap().unwrap().outcome,
        Outcome::Cancelled
    );
    assert_eq!(model.calls(), 0);
}

#[test]
fn cancel_after_completion_changes_nothing() {
    let model = ScriptedModel::new(vec![text_reply("m", "x", StopReason::EndTurn)]);
    let rt = runtime(model.clone(), ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    assert!(result.is_ok());
    let (_, observer) = recorder();
    let model = ScriptedModel::new(vec![text_reply("m", "x", StopReason::EndTurn)]);
    let rt = runtime(model, ManualPlatform::new());
    let execution = rt
        .start(input(vec![user("q")], no_tools()), observer)
        .unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    assert!(!execution.cancel());
    assert_eq!(
        peek(&execution).unwrap().unwrap().outcome,
        Outcome::Completed
    );
    assert!(
        !execution.signal().is_aborted(),
        "a completed execution's signal is not aborted"
    );
}

#[test]
fn deadline_rejects_with_agent_execution_timeout_while_the_model_hangs() {
    let platform = ManualPlatform::new();
    let log: HookLog = Rc::default();
    let model = ScriptedModel::new(vec![vec![start("m"), Step::HangForever]]);
    let rt = runtime_with(model.clone(), with_hooks(&log), platform.clone());
    let (_, observer) = recorder();
    let execution = rt
        .start(input(vec![user("q")], no_tools()), observer)
        .unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    platform.advance(999.0);
    h.stall();
    assert!(peek(&execution).is_none(), "not yet");
    platform.advance(1.0);
    h.stall();
    let error = peek(&execution).unwrap().unwrap_err();
    assert_eq!(error.code, ErrorCode::ExecutionTimeout);
    assert_eq!(error.code.as_str(), "AGENT_EXECUTION_TIMEOUT");
    assert_eq!(error.limit, Some(LimitName::MaxDurationMs));
    assert!(model.signals.borrow()[0].is_aborted());
    assert_eq!(
        hook_types(&log).last().map(String::as_str),
        Some("execution-failed")
    );
}

#[test]
fn deadline_while_a_tool_runs_isolates_its_late_completion() {
    let platform = ManualPlatform::new();
    let hooks: HookLog = Rc::default();
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "t", "{}")]),
        text_reply("m2", "never", StopReason::EndTurn),
    ]);
    let release = Latch::new();
    let gate = release.clone();
    let (tool, runs) = fn_tool(move |_, ctx| {
        let gate = gate.clone();
        async move {
            gate.wait().await; // ignores the abort signal
            Ok(ok_result(&ctx.call_id, "late"))
        }
        .boxed_local()
    });
    let rt = runtime_with(model.clone(), with_hooks(&hooks), platform.clone());
    let (log, observer) = recorder();
    let execution = rt
        .start(
            input(
                vec![user("q")],
                snapshot(vec![(spec("t", true, false), tool)]),
            ),
            observer,
        )
        .unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    assert_eq!(runs.get(), 1);
    platform.advance(1000.0);
    h.stall();
    assert_eq!(
        peek(&execution).unwrap().unwrap_err().code,
        ErrorCode::ExecutionTimeout
    );
    let (events_before, hooks_before) = (log.borrow().len(), hooks.borrow().len());
    release.open();
    h.stall();
    assert_eq!(
        log.borrow().len(),
        events_before,
        "late completion reaches no observer"
    );
    assert_eq!(
        hooks.borrow().len(),
        hooks_before,
        "late completion reaches no hook"
    );
    assert!(!event_types(&log).contains(&"tool-result".to_string()));
    assert_eq!(model.calls(), 1, "no further model call");
    assert_eq!(
        peek(&execution).unwrap().unwrap_err().code,
        ErrorCode::ExecutionTimeout,
        "the result is final"
    );
}

#[test]
fn a_late_tool_exception_after_cancel_is_isolated() {
    let model = ScriptedModel::new(vec![tool_calls("m1", &[("c1", "t", "{}")])]);
    let release = Latch::new();
    let gate = release.clone();
    let (tool, _) = fn_tool(move |_, _| {
        let gate = gate.clone();
        async move {
            gate.wait().await;
            Err(AgentError::new(ErrorCode::ToolFailed, "late boom"))
        }
        .boxed_local()
    });
    let hooks: HookLog = Rc::default();
    let rt = runtime_with(model, with_hooks(&hooks), ManualPlatform::new());
    let (_, observer) = recorder();
    let execution = rt
        .start(
            input(
                vec![user("q")],
                snapshot(vec![(spec("t", true, false), tool)]),
            ),
            observer,
        )
        .unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    execution.cancel();
    release.open();
    h.stall();
    assert_eq!(
        peek(&execution).unwrap().unwrap().outcome,
        Outcome::Cancelled
    );
    assert_eq!(
        hook_types(&hooks)
            .iter()
            .filter(|t| t.starts_with("execution-"))
            .count(),
        2
    ); // started + cancelled
    assert_eq!(
        hook_types(&hooks).last().map(String::as_str),
        Some("execution-cancelled")
    );
}

#[test]
fn events_after_a_reentrant_cancel_from_the_observer_are_not_published() {
    let model = ScriptedModel::new(vec![vec![
        start("m"),
        block_start(0, BlockKind::Text),
        delta(0, "one"),
        delta(0, "two"),
        delta(0, "three"),
        block_stop(0),
        stop(StopReason::EndTurn),
    ]]);
    let rt = runtime(model, ManualPlatform::new());
    let handle: Rc<RefCell<Option<AgentExecution>>> = Rc::default();
    let seen = Rc::new(RefCell::new(Vec::<String>::new()));
    let (h2, s2) = (handle.clone(), seen.clone());
    let observer: Observer = Box::new(move |event| {
        s2.borrow_mut().push(event.type_name().to_string());
        if event.type_name() == "block-delta" {
            if let Some(execution) = h2.borrow().as_ref() {
                execution.cancel();
            }
        }
    });
    let execution = rt
        .start(input(vec![user("q")], no_tools()), observer)
        .unwrap();
    *handle.borrow_mut() = Some(execution.clone());
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    assert_eq!(
        peek(&execution).unwrap().unwrap().outcome,
        Outcome::Cancelled
    );
    assert_eq!(
        *seen.borrow(),
        vec!["message-started", "block-start", "block-delta"]
    );
}

// ---------------------------------------------------------------- confirmation

struct Confirm {
    execution: AgentExecution,
    harness: Harness,
    log: EventLog,
    runs: Rc<std::cell::Cell<usize>>,
    model: Rc<ScriptedModel>,
    platform: Rc<ManualPlatform>,
}

fn confirm_setup(tool_spec: ToolSpec, calls: &[(&str, &str, &str)]) -> Confirm {
    let platform = ManualPlatform::new();
    let model = ScriptedModel::new(vec![
        tool_calls("m1", calls),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("ran");
    let rt = runtime_with(
        model.clone(),
        RuntimeOptions::new(short_limits()),
        platform.clone(),
    );
    let (log, observer) = recorder();
    let execution = rt
        .start(
            input(vec![user("q")], snapshot(vec![(tool_spec, tool)])),
            observer,
        )
        .unwrap();
    let mut harness = Harness::new();
    harness.spawn(&execution);
    harness.stall();
    Confirm {
        execution,
        harness,
        log,
        runs,
        model,
        platform,
    }
}

#[test]
fn tools_not_explicitly_read_only_raise_a_tool_confirmation_interrupt() {
    let mut c = confirm_setup(spec("t", false, false), &[("c1", "t", "{\"x\":1}")]);
    let pending = c.execution.pending_interrupt().expect("pending");
    assert_eq!(pending.kind, InterruptKind::ToolConfirmation);
    assert_eq!(pending.call_id, "c1");
    assert_eq!(pending.tool, "t");
    assert_eq!(
        serde_json::Value::Object(pending.arguments.clone()),
        json!({ "x": 1 })
    );
    assert_eq!(c.runs.get(), 0, "nothing runs before approval");
    let interrupt_event = c
        .log
        .borrow()
        .iter()
        .find(|(t, _)| t == "interrupt")
        .cloned()
        .unwrap()
        .1;
    assert_eq!(
        interrupt_event["interruptId"],
        json!(pending.interrupt_id),
        "the id is stable"
    );
    assert_eq!(interrupt_event["kind"], "tool-confirmation");
    c.execution
        .respond(&pending.interrupt_id, InterruptResponse::Approve)
        .unwrap();
    c.harness.stall();
    assert_eq!(c.runs.get(), 1);
    assert_eq!(
        peek(&c.execution).unwrap().unwrap().outcome,
        Outcome::Completed
    );
    assert!(event_types(&c.log).contains(&"interrupt-resolved".to_string()));
}

#[test]
fn read_only_tools_run_without_confirmation_unless_require_confirmation() {
    let mut c = confirm_setup(spec("t", true, false), &[("c1", "t", "{}")]);
    c.harness.stall();
    assert!(c.execution.pending_interrupt().is_none());
    assert_eq!(c.runs.get(), 1);
    let c = confirm_setup(spec("t", true, true), &[("c1", "t", "{}")]);
    assert!(c.execution.pending_interrupt().is_some());
    assert_eq!(c.runs.get(), 0);
}

#[test]
fn respond_with_a_wrong_id_a_second_time_or_without_pending_fails_clearly() {
    let mut c = confirm_setup(
        spec("t", false, false),
        &[("c1", "t", "{}"), ("c2", "t", "{}")],
    );
    let first = c.execution.pending_interrupt().unwrap();
    let error = c
        .execution
        .respond("not-it", InterruptResponse::Approve)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InterruptMismatch);
    assert_eq!(c.runs.get(), 0);
    assert_eq!(
        c.execution.pending_interrupt().unwrap(),
        first,
        "a wrong id leaves the interrupt pending"
    );
    c.execution
        .respond(&first.interrupt_id, InterruptResponse::Approve)
        .unwrap();
    let error = c
        .execution
        .respond(&first.interrupt_id, InterruptResponse::Approve)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InterruptAlreadyResolved);
    c.harness.stall();
    let second = c.execution.pending_interrupt().unwrap();
    assert_ne!(second.interrupt_id, first.interrupt_id);
    assert_eq!(second.call_id, "c2");
    assert_eq!(
        c.execution
            .respond(&first.interrupt_id, InterruptResponse::Approve)
            .unwrap_err()
            .code,
        ErrorCode::InterruptAlreadyResolved
    );
    c.execution
        .respond(&second.interrupt_id, InterruptResponse::Approve)
        .unwrap();
    c.harness.stall();
    assert_eq!(c.runs.get(), 2);
    assert_eq!(
        c.execution
            .respond("any", InterruptResponse::Approve)
            .unwrap_err()
            .code,
        ErrorCode::NoPendingInterrupt
    );
}

#[test]
fn rejection_becomes_an_error_tool_result_the_model_sees() {
    let mut c = confirm_setup(spec("danger", false, false), &[("c1", "danger", "{}")]);
    let pending = c.execution.pending_interrupt().unwrap();
    c.execution
        .respond(
            &pending.interrupt_id,
            InterruptResponse::Reject {
                reason: Some("not now".into()),
            },
        )
        .unwrap();
    c.harness.stall();
    assert_eq!(c.runs.get(), 0, "a rejected tool never runs");
    let result = peek(&c.execution).unwrap().unwrap();
    assert_eq!(result.outcome, Outcome::Completed);
    let sent = &c.model.requests.borrow()[1];
    match &sent.messages[2].blocks[0] {
        Block::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            assert_eq!(call_id, "c1");
            assert!(*is_error);
            assert_eq!(
                content,
                "[rejected] The user rejected the call to danger. Reason: not now"
            );
        }
        other => panic!("{other:?}"),
    }
    // The stored messages carry the same marked result, so the decision is readable after a reload.
    let stored = result.messages.iter().flat_map(|m| m.blocks.iter());
    assert!(stored.into_iter().any(|b| matches!(
        b,
        Block::ToolResult { content, is_error: true, .. } if content.starts_with(tool_result::REJECTED_PREFIX)
    )));
}

/// A person can always reject: `respond` accepts any rejection, and the error tool result the model sees (the
/// fixed text plus the reason) is cut to maxToolResultCharacters, so a long reason never sends an unbounded tool
/// result to the model.
#[test]
fn a_rejection_is_always_accepted_and_its_text_is_cut_to_max_tool_result_characters() {
    let mut c = confirm_setup(spec("t", false, false), &[("c1", "t", "{}")]);
    let pending = c.execution.pending_interrupt().unwrap();
    let max = Limits::DEFAULT.max_tool_result_characters;
    let long = "r".repeat(max as usize);
    c.execution
        .respond(
            &pending.interrupt_id,
            InterruptResponse::Reject { reason: Some(long) },
        )
        .unwrap();
    c.harness.stall();
    assert_eq!(
        peek(&c.execution).unwrap().unwrap().outcome,
        Outcome::Completed
    );
    assert_eq!(c.runs.get(), 0);
    let request = c.model.requests.borrow()[1].clone();
    let content = request
        .messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .find_map(|b| match b {
            Block::ToolResult {
                content,
                is_error: true,
                ..
            } => Some(content.clone()),
            _ => None,
        });
    let content = content.expect("the rejection result");
    assert!(
        content.starts_with("[rejected] The user rejected the call to t. Reason: rrr"),
        "{content}"
    );
    assert_eq!(content.chars().count() as u64, max, "cut to the limit");
}

#[test]
fn cancel_consumes_the_wait_and_a_late_approval_never_starts_the_tool() {
    let mut c = confirm_setup(spec("t", false, false), &[("c1", "t", "{}")]);
    let pending = c.execution.pending_interrupt().unwrap();
    c.execution.cancel();
    assert!(
        c.execution.pending_interrupt().is_none(),
        "the wait is consumed"
    );
    let error = c
        .execution
        .respond(&pending.interrupt_id, InterruptResponse::Approve)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::NoPendingInterrupt);
    c.harness.stall();
    assert_eq!(c.runs.get(), 0);
    assert_eq!(
        peek(&c.execution).unwrap().unwrap().outcome,
        Outcome::Cancelled
    );
}

#[test]
fn the_deadline_covers_the_confirmation_wait() {
    let mut c = confirm_setup(spec("t", false, false), &[("c1", "t", "{}")]);
    c.platform.advance(1000.0);
    c.harness.stall();
    assert_eq!(
        peek(&c.execution).unwrap().unwrap_err().code,
        ErrorCode::ExecutionTimeout
    );
    assert_eq!(c.runs.get(), 0);
    assert_eq!(c.model.calls(), 1);
}

#[test]
fn interrupt_response_json_forms() {
    assert_eq!(
        InterruptResponse::from_json(&json!(true)).unwrap(),
        InterruptResponse::Approve
    );
    assert_eq!(
        InterruptResponse::from_json(&json!("reject")).unwrap(),
        InterruptResponse::Reject { reason: None }
    );
    assert_eq!(
        InterruptResponse::from_json(&json!({ "approved": false, "reason": "no" })).unwrap(),
        InterruptResponse::Reject {
            reason: Some("no".into())
        }
    );
    for bad in [
        json!(1),
        json!({ "approved": "yes" }),
        json!({ "approved": true, "x": 1 }),
        json!(null),
    ] {
        assert_eq!(
            InterruptResponse::from_json(&bad).unwrap_err().code,
            ErrorCode::InvalidInput,
            "{bad}"
        );
    }
}

// ---------------------------------------------------------------- property: the terminal gate

#[derive(Debug, Clone)]
enum Action {
    Cancel,
    Advance(u16),
    Open(usize),
    Approve,
    Reject,
    WrongRespond,
    Stall,
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        1 => Just(Action::Cancel),
        3 => (0u16..400).prop_map(Action::Advance),
        4 => (0usize..4).prop_map(Action::Open),
        2 => Just(Action::Approve),
        1 => Just(Action::Reject),
        1 => Just(Action::WrongRespond),
        3 => Just(Action::Stall),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Whatever interleaving of cancel, clock, releases of a slow model/tool and responses happens: exactly one
    /// terminal hook event, always last; nothing reaches the observer or hooks after it; the settled result
    /// matches it and never changes.
    #[test]
    fn the_gate_yields_exactly_one_terminal_and_nothing_after_it(
        actions in proptest::collection::vec(action(), 0..14),
        confirm in any::<bool>(),
    ) {
        let platform = ManualPlatform::new();
        let latches: Vec<Latch> = (0..4).map(|_| Latch::new()).collect();
        let model = ScriptedModel::new(vec![
            vec![
                start("m1"),
                Step::WaitFor(latches[0].clone()),
                block_start(0, BlockKind::ToolCall { call_id: "c1".into(), name: "t".into() }),
                delta(0, "{}"),
                block_stop(0),
                stop(StopReason::ToolUse),
            ],
            vec![start("m2"), block_start(0, BlockKind::Text), Step::WaitFor(latches[2].clone()), delta(0, "x"), block_stop(0), stop(StopReason::EndTurn)],
        ]);
        let tool_latch = latches[1].clone();
        let (tool, _) = fn_tool(move |_, ctx| {
            let latch = tool_latch.clone();
            async move { latch.wait().await; Ok(ok_result(&ctx.call_id, "ok")) }.boxed_local()
        });
        let journal: Rc<RefCell<Vec<String>>> = Rc::default();
        struct JournalHook(Rc<RefCell<Vec<String>>>);
        impl AgentHook for JournalHook {
            fn on_event(&self, event: &HookEvent, _: &HookContext) -> Result<(), AgentError> {
                self.0.borrow_mut().push(format!("hook:{}", event.type_name()));
                Ok(())
            }
        }
        let mut options = RuntimeOptions::new(Limits { max_duration_ms: 1000, ..Limits::DEFAULT });
        options.hooks = vec![Rc::new(JournalHook(journal.clone())), Rc::new(JournalHook(journal.clone()))];
        let rt = runtime_with(model, options, platform.clone());
        let sink = journal.clone();
        let observer: Observer = Box::new(move |event| sink.borrow_mut().push(format!("obs:{}", event.type_name())));
        let execution = rt.start(input(vec![user("q")], snapshot(vec![(spec("t", !confirm, false), tool)])), observer).unwrap();
        let mut h = Harness::new();
        h.spawn(&execution);
        h.stall();
        for action in actions {
            match action {
                Action::Cancel => { execution.cancel(); }
                Action::Advance(ms) => platform.advance(ms as f64),
                Action::Open(i) => latches[i].open(),
                Action::Approve => if let Some(p) = execution.pending_interrupt() { let _ = execution.respond(&p.interrupt_id, InterruptResponse::Approve); },
                Action::Reject => if let Some(p) = execution.pending_interrupt() { let _ = execution.respond(&p.interrupt_id, InterruptResponse::Reject { reason: None }); },
                Action::WrongRespond => { let _ = execution.respond("wrong", InterruptResponse::Approve); }
                Action::Stall => h.stall(),
            }
        }
        h.stall();
        let early = peek(&execution);
        // Let everything finish and the deadline pass: the execution must be settled now.
        for latch in &latches { latch.open(); }
        if let Some(p) = execution.pending_interrupt() { let _ = execution.respond(&p.interrupt_id, InterruptResponse::Approve); }
        h.stall();
        platform.advance(1000.0);
        h.stall();
        let result = peek(&execution).expect("settled after the deadline");
        if let Some(early) = early {
            prop_assert_eq!(code_of(&early), code_of(&result), "a settled result never changes");
        }
        let journal = journal.borrow();
        let terminal: Vec<usize> = journal.iter().enumerate()
            .filter(|(_, e)| matches!(e.as_str(), "hook:execution-completed" | "hook:execution-cancelled" | "hook:execution-failed"))
            .map(|(i, _)| i).collect();
        prop_assert_eq!(terminal.len(), 2, "one terminal event, seen by each of the two hooks: {:?}", journal);
        prop_assert_eq!(terminal[1], journal.len() - 1, "nothing after the terminal event: {:?}", journal);
        prop_assert_eq!(terminal[0] + 1, terminal[1]);
        let expected = match &result {
            Ok(r) if r.outcome == Outcome::Cancelled => "hook:execution-cancelled",
            Ok(_) => "hook:execution-completed",
            Err(_) => "hook:execution-failed",
        };
        prop_assert_eq!(journal[terminal[0]].as_str(), expected);
        if let Err(e) = &result {
            prop_assert_eq!(e.code, ErrorCode::ExecutionTimeout, "only the deadline can fail this scenario");
        }
    }
}
