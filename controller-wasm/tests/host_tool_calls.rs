//! A host's tool call in a running execution (`AgentExecution::call_tool`, the MCP App's call during a turn):
//! taken between model calls and before the loop finishes, validated, confirmed through the execution's interrupt
//! slot, counted against maxToolCalls, cancelled with the execution, and never part of the messages.

mod support;

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::{FutureExt, LocalBoxFuture};
use patchbridge_agent::core::protocol::{Block, Message, StopReason};
use patchbridge_agent::core::*;
use serde_json::{json, Value};
use support::*;

/// A read-only tool that waits for `latch` before answering.
fn slow_tool(latch: &Latch) -> (Rc<FnTool>, Rc<std::cell::Cell<usize>>) {
    let latch = latch.clone();
    fn_tool(move |_, ctx| {
        let wait = latch.wait();
        async move {
            wait.await;
            Ok(ok_result(&ctx.call_id, "slow done"))
        }
        .boxed_local()
    })
}

fn app_call(call_id: &str, name: &str, arguments: Value) -> HostToolCall {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    HostToolCall {
        call_id: call_id.into(),
        name: name.into(),
        arguments,
        tool: None,
    }
}

type Answer = Rc<RefCell<Option<Result<ToolCallResult, AgentError>>>>;

fn spawn_call(
    h: &mut Harness,
    call: LocalBoxFuture<'static, Result<ToolCallResult, AgentError>>,
) -> Answer {
    let slot: Answer = Rc::default();
    let sink = slot.clone();
    h.spawn_fut(async move {
        *sink.borrow_mut() = Some(call.await);
    });
    h.stall();
    slot
}

/// Whether any message (or request) mentions `call_id` in a tool call or result.
fn mentions(messages: &[Message], call_id: &str) -> bool {
    messages.iter().any(|m| {
        m.blocks.iter().any(|b| match b {
            Block::ToolCall { call_id: id, .. } | Block::ToolResult { call_id: id, .. } => {
                id == call_id
            }
            _ => false,
        })
    })
}

struct Turn {
    execution: AgentExecution,
    h: Harness,
    log: EventLog,
    model: Rc<ScriptedModel>,
    latch: Latch,
    slow_runs: Rc<std::cell::Cell<usize>>,
}

/// A turn whose model asks for the slow tool `slow` (call `c1`), then answers; `extra` tools join the snapshot.
fn turn_with(
    limits: Limits,
    extra: Vec<(ToolSpec, Rc<dyn ToolHandler>)>,
    hooks: Option<&HookLog>,
) -> Turn {
    let latch = Latch::new();
    let (slow, slow_runs) = slow_tool(&latch);
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "slow", "{}")]),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let mut tools: Vec<(ToolSpec, Rc<dyn ToolHandler>)> = vec![(spec("slow", true, false), slow)];
    tools.extend(extra);
    let mut options = RuntimeOptions::new(limits);
    if let Some(log) = hooks {
        options.hooks = vec![hook("h", log, None)];
    }
    let rt = runtime_with(model.clone(), options, ManualPlatform::new());
    let (log, observer) = recorder();
    let execution = rt
        .start(input(vec![user("q")], snapshot(tools)), observer)
        .unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    Turn {
        execution,
        h,
        log,
        model,
        latch,
        slow_runs,
    }
}

/// A tool, its run count, and how many model calls had been made at each of its runs.
type Probe = (
    Rc<FnTool>,
    Rc<std::cell::Cell<usize>>,
    Rc<RefCell<Vec<usize>>>,
);

/// A tool that records how many model calls had been made when it ran.
fn probe(model: &Rc<ScriptedModel>) -> Probe {
    let seen: Rc<RefCell<Vec<usize>>> = Rc::default();
    let (sink, model) = (seen.clone(), model.clone());
    let (tool, runs) = fn_tool(move |input, ctx| {
        sink.borrow_mut().push(model.calls());
        let text = format!("probe {}", Value::Object((*input).clone()));
        futures::future::ready(Ok(ok_result(&ctx.call_id, &text))).boxed_local()
    });
    (tool, runs, seen)
}

#[test]
fn a_call_queued_during_a_tool_batch_runs_before_the_next_model_call_and_enters_no_message() {
    let latch = Latch::new();
    let (slow, slow_runs) = slow_tool(&latch);
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "slow", "{}")]),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let (probe_tool, probe_runs, seen) = probe(&model);
    let hooks: HookLog = Rc::default();
    let mut options = RuntimeOptions::new(limits());
    options.hooks = vec![hook("h", &hooks, None)];
    let rt = runtime_with(model.clone(), options, ManualPlatform::new());
    let (log, observer) = recorder();
    let tools = snapshot(vec![
        (spec("slow", true, false), slow),
        (spec("probe", true, false), probe_tool),
    ]);
    let execution = rt.start(input(vec![user("q")], tools), observer).unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    assert_eq!(slow_runs.get(), 1, "the model's tool is running");
    let answer = spawn_call(
        &mut h,
        execution.call_tool(app_call("app_1", "probe", json!({ "x": 1 }))),
    );
    assert!(answer.borrow().is_none(), "it waits for the batch to end");
    assert_eq!(probe_runs.get(), 0);
    latch.open();
    h.stall();

    let result = answer.borrow_mut().take().expect("answered").expect("ran");
    assert_eq!(result.tool_call_id, "app_1");
    assert_eq!(result.content, r#"probe {"x":1}"#);
    assert!(!result.is_error);
    assert_eq!(
        *seen.borrow(),
        vec![1],
        "it ran after the first model call, before the second"
    );
    assert_eq!(model.calls(), 2);
    let requests = model.requests.borrow();
    assert!(
        !mentions(&requests[1].messages, "app_1"),
        "the model never sees it"
    );
    let outcome = peek(&execution).unwrap().unwrap();
    assert_eq!(outcome.outcome, Outcome::Completed);
    assert!(
        !mentions(&outcome.messages, "app_1"),
        "nothing enters the conversation"
    );
    assert!(
        !log.borrow()
            .iter()
            .any(|(_, e)| e.to_string().contains("app_1")),
        "no observer event carries a read-only app call"
    );
    // The hooks see it like any call, and it counts as a tool call of the execution.
    let hooks = hooks.borrow();
    assert!(hooks
        .iter()
        .any(|(_, t, e)| t == "tool-call-started" && e["callId"] == "app_1"));
    let completed = hooks
        .iter()
        .find(|(_, t, _)| t == "execution-completed")
        .unwrap();
    assert_eq!(completed.2["toolCalls"], 2);
}

#[test]
fn a_call_that_needs_confirmation_asks_through_the_interrupt_slot_and_runs_once_approved() {
    let (act, act_runs) = echo_tool("acted");
    let mut t = turn_with(limits(), vec![(spec("act", false, false), act)], None);
    let answer = spawn_call(
        &mut t.h,
        t.execution
            .call_tool(app_call("app_2", "act", json!({ "n": 2 }))),
    );
    t.latch.open();
    t.h.stall();
    let pending = t
        .execution
        .pending_interrupt()
        .expect("the app's call asks");
    assert_eq!(pending.call_id, "app_2");
    assert_eq!(pending.tool, "act");
    assert_eq!(pending.kind, InterruptKind::ToolConfirmation);
    assert_eq!(Value::Object(pending.arguments.clone()), json!({ "n": 2 }));
    assert!(event_types(&t.log).contains(&"interrupt".to_string()));
    assert_eq!(
        t.model.calls(),
        1,
        "the next model call waits for the answer"
    );
    assert_eq!(act_runs.get(), 0);
    t.execution
        .respond(&pending.interrupt_id, InterruptResponse::Approve)
        .unwrap();
    t.h.stall();
    let result = answer.borrow_mut().take().unwrap().unwrap();
    assert_eq!(result.content, "acted");
    assert_eq!(act_runs.get(), 1);
    assert_eq!(t.model.calls(), 2);
    assert_eq!(
        peek(&t.execution).unwrap().unwrap().outcome,
        Outcome::Completed
    );
}

#[test]
fn a_rejected_call_does_not_run_and_the_turn_goes_on() {
    let (act, act_runs) = echo_tool("acted");
    let mut t = turn_with(limits(), vec![(spec("act", false, false), act)], None);
    let answer = spawn_call(
        &mut t.h,
        t.execution.call_tool(app_call("app_3", "act", json!({}))),
    );
    t.latch.open();
    t.h.stall();
    let pending = t.execution.pending_interrupt().unwrap();
    t.execution
        .respond(
            &pending.interrupt_id,
            InterruptResponse::Reject {
                reason: Some("no".into()),
            },
        )
        .unwrap();
    t.h.stall();
    let result = answer.borrow_mut().take().unwrap().unwrap();
    assert!(result.is_error);
    assert!(
        result.content.starts_with("[rejected] "),
        "{}",
        result.content
    );
    assert_eq!(act_runs.get(), 0);
    let outcome = peek(&t.execution).unwrap().unwrap();
    assert_eq!(outcome.outcome, Outcome::Completed);
    assert!(!mentions(&outcome.messages, "app_3"));
}

#[test]
fn a_call_over_max_tool_calls_is_refused_with_the_limit_error_and_the_turn_completes() {
    let (probe_tool, probe_runs) = echo_tool("probed");
    let limits = Limits {
        max_tool_calls: 1,
        ..limits()
    };
    let mut t = turn_with(limits, vec![(spec("probe", true, false), probe_tool)], None);
    let answer = spawn_call(
        &mut t.h,
        t.execution.call_tool(app_call("app_4", "probe", json!({}))),
    );
    t.latch.open();
    t.h.stall();
    let error = answer.borrow_mut().take().unwrap().unwrap_err();
    assert_eq!(error.code, ErrorCode::LimitExceeded);
    assert_eq!(error.limit, Some(LimitName::MaxToolCalls));
    let details = error.details.clone().unwrap();
    assert_eq!(details["check"], "budget");
    assert_eq!(details["used"], 1);
    assert_eq!(probe_runs.get(), 0);
    assert_eq!(t.slow_runs.get(), 1);
    assert_eq!(
        peek(&t.execution).unwrap().unwrap().outcome,
        Outcome::Completed
    );
}

#[test]
fn a_cancelled_turn_answers_its_queued_and_its_waiting_calls_as_not_run() {
    let (act, act_runs) = echo_tool("acted");
    let (probe_tool, probe_runs) = echo_tool("probed");
    let mut t = turn_with(
        limits(),
        vec![
            (spec("act", false, false), act),
            (spec("probe", true, false), probe_tool),
        ],
        None,
    );
    let waiting = spawn_call(
        &mut t.h,
        t.execution.call_tool(app_call("app_5", "act", json!({}))),
    );
    let queued = spawn_call(
        &mut t.h,
        t.execution.call_tool(app_call("app_6", "probe", json!({}))),
    );
    t.latch.open();
    t.h.stall();
    assert_eq!(t.execution.pending_interrupt().unwrap().call_id, "app_5");
    assert!(t.execution.cancel());
    t.h.stall();
    for (answer, name) in [(waiting, "act"), (queued, "probe")] {
        let result = answer.borrow_mut().take().unwrap().unwrap();
        assert!(result.is_error);
        assert_eq!(
            result.content,
            format!("[not run] The call to {name} did not complete: the turn ended (cancelled).")
        );
    }
    assert_eq!((act_runs.get(), probe_runs.get()), (0, 0));
    let outcome = peek(&t.execution).unwrap().unwrap();
    assert_eq!(outcome.outcome, Outcome::Cancelled);
    assert!(!mentions(&outcome.messages, "app_5") && !mentions(&outcome.messages, "app_6"));
    // A settled execution takes no call.
    let late = t
        .execution
        .call_tool(app_call("app_7", "probe", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(late.code, ErrorCode::Busy);
}

#[test]
fn a_call_queued_during_the_last_model_call_runs_before_the_turn_finishes() {
    let latch = Latch::new();
    let mut steps = text_reply("m1", "answer", StopReason::EndTurn);
    steps.insert(2, Step::WaitFor(latch.clone()));
    let model = ScriptedModel::new(vec![steps]);
    let (probe_tool, probe_runs, seen) = probe(&model);
    let rt = runtime(model.clone(), ManualPlatform::new());
    let tools = snapshot(vec![(spec("probe", true, false), probe_tool)]);
    let execution = rt
        .start(input(vec![user("q")], tools), Box::new(|_| {}))
        .unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    let answer = spawn_call(
        &mut h,
        execution.call_tool(app_call("app_8", "probe", json!({}))),
    );
    assert_eq!(probe_runs.get(), 0, "the model's stream is not interrupted");
    latch.open();
    h.stall();
    assert!(answer.borrow_mut().take().unwrap().is_ok());
    assert_eq!(*seen.borrow(), vec![1]);
    assert_eq!(model.calls(), 1, "no model call is added for it");
    let outcome = peek(&execution).unwrap().unwrap();
    assert_eq!(outcome.outcome, Outcome::Completed);
    assert_eq!(outcome.messages.len(), 2);
}

#[test]
fn a_tool_outside_the_snapshot_runs_only_with_its_own_definition_and_its_schema() {
    let (app_only, runs) = echo_tool("app only");
    let mut registry = registry();
    let mut schema_spec = spec("panel", true, false);
    schema_spec.input_schema = json!({
        "type": "object",
        "properties": { "n": { "type": "integer" } },
        "required": ["n"],
        "additionalProperties": false
    });
    registry.register(schema_spec, app_only).unwrap();
    let definition = registry.snapshot().get("panel").cloned();
    let mut t = turn_with(limits(), vec![], None);
    // Neither in the snapshot nor given: refused at once, as the precheck refuses an unknown tool.
    let unknown = t
        .execution
        .call_tool(app_call("app_9", "panel", json!({ "n": 1 })))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::ToolPrecheckFailed);
    assert_eq!(unknown.details.unwrap()["check"], "known-tool");
    let mut bad = app_call("app_10", "panel", json!({ "n": "one" }));
    bad.tool = definition.clone();
    let mut good = app_call("app_11", "panel", json!({ "n": 1 }));
    good.tool = definition;
    // An id the conversation already uses is refused.
    let reused = t
        .execution
        .call_tool(app_call("c1", "slow", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(reused.code, ErrorCode::InvalidInput);
    let bad = spawn_call(&mut t.h, t.execution.call_tool(bad));
    let good = spawn_call(&mut t.h, t.execution.call_tool(good));
    t.latch.open();
    t.h.stall();
    let refused = bad.borrow_mut().take().unwrap().unwrap();
    assert!(refused.is_error);
    assert!(
        refused.content.starts_with("[invalid arguments] "),
        "{}",
        refused.content
    );
    assert_eq!(
        good.borrow_mut().take().unwrap().unwrap().content,
        "app only"
    );
    assert_eq!(runs.get(), 1, "only the valid call ran");
}

#[test]
fn a_tool_that_fails_fails_the_app_call_not_the_turn() {
    let (broken, _) = fn_tool(|_, _| {
        futures::future::ready(Err(AgentError::new(ErrorCode::ToolFailed, "boom"))).boxed_local()
    });
    let mut t = turn_with(limits(), vec![(spec("broken", true, false), broken)], None);
    let answer = spawn_call(
        &mut t.h,
        t.execution
            .call_tool(app_call("app_12", "broken", json!({}))),
    );
    t.latch.open();
    t.h.stall();
    assert_eq!(
        answer.borrow_mut().take().unwrap().unwrap_err().code,
        ErrorCode::ToolFailed
    );
    assert_eq!(
        peek(&t.execution).unwrap().unwrap().outcome,
        Outcome::Completed
    );
}

#[test]
fn the_controller_adds_the_call_to_its_turn_shows_its_confirmation_and_keeps_it_out_of_the_conversation(
) {
    let latch = Latch::new();
    let (slow, _) = slow_tool(&latch);
    let (act, act_runs) = echo_tool("acted");
    let mut s = setup(vec![
        tool_calls("m1", &[("c1", "slow", "{}")]),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    s.controller
        .register_tool(spec("slow", true, false), slow)
        .unwrap();
    s.controller
        .register_tool(spec("act", false, false), act)
        .unwrap();
    let idle = s
        .controller
        .call_tool_in_turn(app_call("app_13", "act", json!({})))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(idle.code, ErrorCode::InvalidInput, "no turn runs");
    s.send("go");
    let answer = s.spawn(s.controller.call_tool_in_turn(app_call(
        "app_13",
        "act",
        json!({ "k": "v" }),
    )));
    latch.open();
    s.harness.stall();
    let state = s.controller.state();
    assert_eq!(state.status, Status::AwaitingConfirmation);
    let pending = state.pending_confirmation.clone().unwrap();
    assert_eq!(pending.call_id, "app_13");
    s.controller
        .respond_json(&pending.interrupt_id, &json!({ "approved": true }))
        .unwrap();
    s.harness.stall();
    assert_eq!(
        answer.borrow_mut().take().unwrap().unwrap().content,
        "acted"
    );
    assert_eq!(act_runs.get(), 1);
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    let state = s.controller.state();
    assert!(!mentions(&state.messages, "app_13"));
    assert!(s
        .states
        .borrow()
        .iter()
        .all(|st| st.tool_results.iter().all(|r| r.tool_call_id != "app_13")));
    let stored = &s.store.conversations.borrow()[0].1;
    assert!(
        !mentions(&stored.messages, "app_13"),
        "nothing of it is saved"
    );
}
