//! Hooks (stable lifecycle events, failure rules, onHookError) and model / tool interceptors.

mod support;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::future::FutureExt;
use futures::stream::StreamExt;
use patchbridge_agent::core::protocol::{Block, BlockKind, ModelState, Role, StopReason, Usage};
use patchbridge_agent::core::*;
use serde_json::json;
use support::*;

fn options_with(hooks: Vec<Rc<dyn AgentHook>>) -> RuntimeOptions {
    let mut options = RuntimeOptions::new(Limits::DEFAULT);
    options.hooks = hooks;
    options
}

fn tool_turn() -> Vec<Vec<Step>> {
    vec![
        tool_calls("m1", &[("c1", "t", "{\"a\":1}")]),
        text_reply("m2", "done", StopReason::EndTurn),
    ]
}

#[test]
fn hooks_see_stable_lifecycle_events_in_order_never_deltas_or_model_state() {
    let log: HookLog = Rc::default();
    let mut first = tool_calls("m1", &[("c1", "t", "{\"a\":1}")]);
    first.pop();
    first.push(stop_with(
        StopReason::ToolUse,
        Usage::default(),
        Some(ModelState {
            format: "x/v1".into(),
            data: json!("TOP-SECRET-STATE"),
        }),
    ));
    let model = ScriptedModel::new(vec![first, text_reply("m2", "done", StopReason::EndTurn)]);
    let (tool, _) = echo_tool("ok");
    let rt = runtime_with(
        model,
        options_with(vec![hook("a", &log, None), hook("b", &log, None)]),
        ManualPlatform::new(),
    );
    let (result, _) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    assert!(result.is_ok());
    let entries = log.borrow();
    let a: Vec<&str> = entries
        .iter()
        .filter(|(n, _, _)| n == "a")
        .map(|(_, t, _)| t.as_str())
        .collect();
    assert_eq!(
        a,
        vec![
            "execution-started",
            "model-call-started",
            "model-call-completed",
            "tool-call-started",
            "tool-call-completed",
            "model-call-started",
            "model-call-completed",
            "execution-completed",
        ]
    );
    // Registration order: every event goes to a, then b.
    for pair in entries.chunks(2) {
        assert_eq!((pair[0].0.as_str(), pair[1].0.as_str()), ("a", "b"));
        assert_eq!(pair[0].1, pair[1].1);
    }
    for (_, _, value) in entries.iter() {
        let text = value.to_string();
        assert!(
            !text.contains("TOP-SECRET-STATE"),
            "ModelState leaked into a hook event: {text}"
        );
        assert!(!text.contains("block-delta"));
    }
    // Hook data is JSON with camelCase keys and the tool arguments.
    let started = entries
        .iter()
        .find(|(_, t, _)| t == "tool-call-started")
        .unwrap();
    assert_eq!(started.2["arguments"], json!({ "a": 1 }));
    assert_eq!(started.2["callId"], "c1");
}

#[test]
fn model_call_completed_carries_usage_time_to_first_token_and_output_duration() {
    let platform = ManualPlatform::new();
    let log: HookLog = Rc::default();
    let usage = Usage {
        input_tokens: 7,
        output_tokens: 3,
        ..Usage::default()
    };
    let model = ScriptedModel::new(vec![vec![
        start("m"),
        Step::Advance(platform.clone(), 120.0),
        block_start(0, BlockKind::Text),
        delta(0, "a"),
        Step::Advance(platform.clone(), 30.0),
        delta(0, "b"),
        Step::Advance(platform.clone(), 50.0),
        block_stop(0),
        stop_with(StopReason::EndTurn, usage, None),
    ]]);
    let rt = runtime_with(model, options_with(vec![hook("a", &log, None)]), platform);
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    assert!(result.is_ok());
    let entries = log.borrow();
    let completed = &entries
        .iter()
        .find(|(_, t, _)| t == "model-call-completed")
        .unwrap()
        .2;
    assert_eq!(completed["usage"]["inputTokens"], 7);
    assert_eq!(completed["usage"]["outputTokens"], 3);
    assert_eq!(completed["timeToFirstTokenMs"], 120.0);
    assert_eq!(completed["outputDurationMs"], 80.0);
    assert_eq!(completed["stopReason"], "end-turn");
    assert_eq!(completed["messageId"], "m");
}

#[test]
fn a_hook_throwing_on_a_non_terminal_event_fails_the_turn() {
    let log: HookLog = Rc::default();
    let model = ScriptedModel::new(tool_turn());
    let (tool, runs) = echo_tool("ok");
    let rt = runtime_with(
        model.clone(),
        options_with(vec![
            hook("a", &log, Some("tool-call-started")),
            hook("b", &log, None),
        ]),
        ManualPlatform::new(),
    );
    let (result, _) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    let error = result.unwrap_err();
    assert_eq!(error.code, ErrorCode::HookFailed);
    assert_eq!(
        error.details.as_ref().unwrap()["eventType"],
        "tool-call-started"
    );
    assert_eq!(runs.get(), 0, "the tool did not start");
    assert_eq!(model.calls(), 1);
    let types = hook_types(&log);
    assert_eq!(types.last().map(String::as_str), Some("execution-failed"));
    // b never saw the failing event, but both saw the terminal one.
    let entries = log.borrow();
    assert!(!entries
        .iter()
        .any(|(n, t, _)| n == "b" && t == "tool-call-started"));
    assert!(entries
        .iter()
        .any(|(n, t, _)| n == "b" && t == "execution-failed"));
}

#[test]
fn a_hook_throwing_on_the_terminal_event_goes_to_on_hook_error_and_later_hooks_still_see_it() {
    let log: HookLog = Rc::default();
    let failures = Rc::new(RefCell::new(Vec::<HookFailure>::new()));
    let sink = failures.clone();
    let mut options = options_with(vec![
        hook("a", &log, Some("execution-completed")),
        hook("b", &log, None),
    ]);
    options.on_hook_error = Some(Rc::new(move |f: &HookFailure| {
        sink.borrow_mut().push(f.clone())
    }));
    let platform = ManualPlatform::new();
    let model = ScriptedModel::new(vec![text_reply("m", "x", StopReason::EndTurn)]);
    let rt = runtime_with(model, options, platform.clone());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    assert_eq!(
        result.unwrap().outcome,
        Outcome::Completed,
        "the outcome stands"
    );
    assert_eq!(failures.borrow().len(), 1);
    assert_eq!(failures.borrow()[0].hook_index, 0);
    assert_eq!(failures.borrow()[0].event_type, "execution-completed");
    assert!(platform.console_errors.borrow().is_empty());
    let entries = log.borrow();
    assert!(entries
        .iter()
        .any(|(n, t, _)| n == "b" && t == "execution-completed"));
}

#[test]
fn without_on_hook_error_terminal_hook_failures_go_to_console_error() {
    let log: HookLog = Rc::default();
    let platform = ManualPlatform::new();
    let model = ScriptedModel::new(vec![vec![start("m"), Step::HangForever]]);
    let rt = runtime_with(
        model,
        options_with(vec![hook("a", &log, Some("execution-cancelled"))]),
        platform.clone(),
    );
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
    assert_eq!(platform.console_errors.borrow().len(), 1);
    assert_eq!(
        platform.console_errors.borrow()[0].event_type,
        "execution-cancelled"
    );
}

#[test]
fn a_hook_that_cancels_stops_the_dispatch_of_that_event() {
    struct Canceller(Rc<RefCell<Option<AgentExecution>>>);
    impl AgentHook for Canceller {
        fn on_event(&self, event: &HookEvent, _: &HookContext) -> Result<(), AgentError> {
            if event.type_name() == "model-call-started" {
                if let Some(e) = self.0.borrow().as_ref() {
                    e.cancel();
                }
            }
            Ok(())
        }
    }
    let handle: Rc<RefCell<Option<AgentExecution>>> = Rc::default();
    let log: HookLog = Rc::default();
    let model = ScriptedModel::new(vec![text_reply("m", "x", StopReason::EndTurn)]);
    let rt = runtime_with(
        model.clone(),
        options_with(vec![
            Rc::new(Canceller(handle.clone())),
            hook("b", &log, None),
        ]),
        ManualPlatform::new(),
    );
    let (_, observer) = recorder();
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
        hook_types(&log),
        vec!["execution-started", "execution-cancelled"]
    );
    assert_eq!(model.calls(), 0);
}

// ---------------------------------------------------------------- interceptors

struct CountingModelInterceptor {
    calls: Rc<Cell<usize>>,
    events: Rc<Cell<usize>>,
}

impl ModelInterceptor for CountingModelInterceptor {
    fn intercept(
        &self,
        request: Rc<CallRequest>,
        ctx: ModelCallContext,
        signal: AbortSignal,
        next: ModelNext,
    ) -> EventStream {
        self.calls.set(self.calls.get() + 1);
        assert!(ctx.model_call >= 1);
        let events = self.events.clone();
        match next.call(request, ctx, signal) {
            Ok(stream) => stream
                .inspect(move |_| events.set(events.get() + 1))
                .boxed_local(),
            Err(e) => futures::stream::once(async move { Err(e) }).boxed_local(),
        }
    }
}

/// Rewrites the request (adds a model id) before forwarding.
struct RewritingInterceptor;

impl ModelInterceptor for RewritingInterceptor {
    fn intercept(
        &self,
        request: Rc<CallRequest>,
        ctx: ModelCallContext,
        signal: AbortSignal,
        next: ModelNext,
    ) -> EventStream {
        let mut changed = (*request).clone();
        changed.model = Some("rewritten".into());
        next.call(Rc::new(changed), ctx, signal).unwrap()
    }
}

#[test]
fn model_interceptors_wrap_each_model_call_outermost_first() {
    let calls = Rc::new(Cell::new(0));
    let events = Rc::new(Cell::new(0));
    let model = ScriptedModel::new(vec![
        text_reply("m1", "a", StopReason::PauseTurn),
        text_reply("m2", "b", StopReason::EndTurn),
    ]);
    let mut options = RuntimeOptions::new(Limits::DEFAULT);
    options.model_interceptors = vec![
        Rc::new(CountingModelInterceptor {
            calls: calls.clone(),
            events: events.clone(),
        }),
        Rc::new(RewritingInterceptor),
    ];
    let rt = runtime_with(model.clone(), options, ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    assert!(result.is_ok());
    assert_eq!(calls.get(), 2, "once per model call");
    assert_eq!(
        events.get(),
        10,
        "every event passes through the interceptor"
    );
    assert!(model
        .requests
        .borrow()
        .iter()
        .all(|r| r.model.as_deref() == Some("rewritten")));
}

struct TwiceModelInterceptor;

impl ModelInterceptor for TwiceModelInterceptor {
    fn intercept(
        &self,
        request: Rc<CallRequest>,
        ctx: ModelCallContext,
        signal: AbortSignal,
        next: ModelNext,
    ) -> EventStream {
        let stream = next
            .call(request.clone(), ctx.clone(), signal.clone())
            .unwrap();
        // The second call fails; swallowing the error must not help.
        let second = next.call(request, ctx, signal);
        assert_eq!(second.err().unwrap().code, ErrorCode::NextCalledTwice);
        stream
    }
}

#[test]
fn calling_model_next_twice_fails_the_call_even_if_the_error_is_swallowed() {
    let model = ScriptedModel::new(vec![
        text_reply("m1", "a", StopReason::EndTurn),
        text_reply("m2", "b", StopReason::EndTurn),
    ]);
    let mut options = RuntimeOptions::new(Limits::DEFAULT);
    options.model_interceptors = vec![Rc::new(TwiceModelInterceptor)];
    let rt = runtime_with(model.clone(), options, ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    assert_eq!(result.unwrap_err().code, ErrorCode::NextCalledTwice);
    assert_eq!(model.calls(), 1, "the model was not called a second time");
}

struct PolicyToolInterceptor {
    seen: Rc<RefCell<Vec<String>>>,
}

impl ToolInterceptor for PolicyToolInterceptor {
    fn intercept(&self, invocation: ToolInvocation, next: ToolNext) -> ToolOutput {
        self.seen
            .borrow_mut()
            .push(format!("{}:{}", invocation.tool, invocation.call_id));
        if invocation.arguments.get("forbidden").is_some() {
            // An expected business failure converted to an isError result.
            let id = invocation.call_id.clone();
            return futures::future::ready(Ok(
                json!({ "toolCallId": id, "content": "blocked by policy", "isError": true }),
            ))
            .boxed_local();
        }
        next.call(invocation)
    }
}

#[test]
fn tool_interceptors_wrap_each_tool_call_and_can_short_circuit() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let model = ScriptedModel::new(vec![
        tool_calls(
            "m1",
            &[("c1", "t", "{}"), ("c2", "t", "{\"forbidden\":true}")],
        ),
        text_reply("m2", "ok", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("ran");
    let mut options = RuntimeOptions::new(Limits::DEFAULT);
    options.tool_interceptors = vec![Rc::new(PolicyToolInterceptor { seen: seen.clone() })];
    let rt = runtime_with(model, options, ManualPlatform::new());
    let (result, _) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    let result = result.unwrap();
    assert_eq!(*seen.borrow(), vec!["t:c1", "t:c2"]);
    assert_eq!(runs.get(), 1);
    assert_eq!(
        result.messages[2].blocks[1],
        patchbridge_agent::core::protocol::Block::ToolResult {
            call_id: "c2".into(),
            content: "blocked by policy".into(),
            is_error: true
        }
    );
}

struct TwiceToolInterceptor;

impl ToolInterceptor for TwiceToolInterceptor {
    fn intercept(&self, invocation: ToolInvocation, next: ToolNext) -> ToolOutput {
        let first = next.call(invocation.clone());
        let second = next.call(invocation);
        async move {
            let error = second.await.unwrap_err();
            assert_eq!(error.code, ErrorCode::NextCalledTwice);
            first.await
        }
        .boxed_local()
    }
}

#[test]
fn calling_tool_next_twice_fails_clearly_and_runs_the_tool_once() {
    let model = ScriptedModel::new(tool_turn());
    let (tool, runs) = echo_tool("ran");
    let mut options = RuntimeOptions::new(Limits::DEFAULT);
    options.tool_interceptors = vec![Rc::new(TwiceToolInterceptor)];
    let rt = runtime_with(model, options, ManualPlatform::new());
    let (result, log) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    assert_eq!(result.unwrap_err().code, ErrorCode::NextCalledTwice);
    assert_eq!(runs.get(), 1);
    assert!(!event_types(&log).contains(&"tool-result".to_string()));
}

struct ThrowingToolInterceptor;

impl ToolInterceptor for ThrowingToolInterceptor {
    fn intercept(&self, _: ToolInvocation, _: ToolNext) -> ToolOutput {
        futures::future::ready(Err(AgentError::new(
            ErrorCode::InterceptorFailed,
            "policy crashed",
        )))
        .boxed_local()
    }
}

#[test]
fn an_interceptor_throw_ends_the_execution() {
    let model = ScriptedModel::new(tool_turn());
    let (tool, runs) = echo_tool("ran");
    let mut options = RuntimeOptions::new(Limits::DEFAULT);
    options.tool_interceptors = vec![Rc::new(ThrowingToolInterceptor)];
    let rt = runtime_with(model.clone(), options, ManualPlatform::new());
    let (result, _) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    assert_eq!(result.unwrap_err().code, ErrorCode::InterceptorFailed);
    assert_eq!(runs.get(), 0);
    assert_eq!(model.calls(), 1);
}

/// A hook may cancel while handling the batch's last `tool-call-completed` (as the only or last hook, with no
/// later gate check in the dispatch): the loop still checks the gate before the tool message becomes stable, so
/// the cancelled result reports nothing that became stable after the terminal decision.
#[test]
fn a_hook_cancelling_on_the_last_tool_call_completed_leaves_no_state_change_after_the_gate() {
    struct Canceller(Rc<RefCell<Option<AgentExecution>>>);
    impl AgentHook for Canceller {
        fn on_event(&self, event: &HookEvent, _: &HookContext) -> Result<(), AgentError> {
            if event.type_name() == "tool-call-completed" {
                if let Some(e) = self.0.borrow().as_ref() {
                    e.cancel();
                }
            }
            Ok(())
        }
    }
    let handle: Rc<RefCell<Option<AgentExecution>>> = Rc::default();
    let model = ScriptedModel::new(tool_turn());
    let (tool, runs) = echo_tool("ok");
    let rt = runtime_with(
        model.clone(),
        options_with(vec![Rc::new(Canceller(handle.clone()))]),
        ManualPlatform::new(),
    );
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
    *handle.borrow_mut() = Some(execution.clone());
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    let result = peek(&execution).unwrap().unwrap();
    assert_eq!(result.outcome, Outcome::Cancelled);
    assert_eq!(runs.get(), 1);
    assert_eq!(model.calls(), 1, "no model call after the cancel");
    // The user message and the assistant tool-call message were stable before the cancel; the tool message
    // would only have become stable after it. The cancelled result closes the open call with the result that
    // was already published for it (the tool ran), not a not-run result; no event announces that message.
    assert_eq!(result.messages.len(), 3, "{:?}", result.messages);
    assert_eq!(result.messages[2].role, Role::Tool);
    match &result.messages[2].blocks[0] {
        Block::ToolResult {
            content, is_error, ..
        } => {
            assert_eq!(content, "ok");
            assert!(!is_error);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        execution.stable_context().messages.len(),
        2,
        "only what became stable before the gate closed"
    );
    assert_eq!(
        event_types(&log)
            .iter()
            .filter(|t| *t == "message-completed")
            .count(),
        1
    );
}
