//! The JSON shapes and stable strings the bindings rely on: error codes, observer events, hook events,
//! controller state; plus the abort signal's contract and re-entrant responses from the observer.

mod support;

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use futures::future::FutureExt;
use patchbridge_agent::core::protocol::{BlockKind, StopReason, Usage};
use patchbridge_agent::core::*;
use serde_json::json;
use support::*;

#[test]
fn error_codes_are_unique_stable_strings_that_round_trip() {
    let strings: HashSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(strings.len(), ErrorCode::ALL.len());
    for code in ErrorCode::ALL {
        assert!(code.as_str().starts_with("AGENT_"));
        assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
    }
    assert_eq!(
        ErrorCode::ExecutionTimeout.as_str(),
        "AGENT_EXECUTION_TIMEOUT"
    );
    let error =
        AgentError::limit_exceeded(LimitName::MaxToolCalls, "over").with_details(json!({ "n": 1 }));
    assert_eq!(
        error.to_json(),
        json!({ "code": "AGENT_LIMIT_EXCEEDED", "message": "over", "limit": "maxToolCalls", "details": { "n": 1 } })
    );
    for limit in LimitName::ALL {
        assert_eq!(LimitName::parse(limit.as_str()), Some(limit));
    }
}

#[test]
fn observer_events_have_stable_json_shapes() {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "t", "{\"k\":\"v\"}")]),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let (tool, _) = echo_tool("out");
    let rt = runtime(model, ManualPlatform::new());
    let handle: Rc<RefCell<Option<AgentExecution>>> = Rc::default();
    let log: Rc<RefCell<Vec<serde_json::Value>>> = Rc::default();
    let (h2, l2) = (handle.clone(), log.clone());
    // The observer approves synchronously, re-entrantly, as soon as the interrupt is published.
    let observer: Observer = Box::new(move |event| {
        l2.borrow_mut().push(event.to_json());
        if let ExecutionEvent::Interrupt(interrupt) = event {
            h2.borrow()
                .as_ref()
                .unwrap()
                .respond(&interrupt.interrupt_id, InterruptResponse::Approve)
                .unwrap();
        }
    });
    let execution = rt
        .start(
            input(
                vec![user("q")],
                snapshot(vec![(spec("t", false, false), tool)]),
            ),
            observer,
        )
        .unwrap();
    *handle.borrow_mut() = Some(execution.clone());
    let result = futures::executor::block_on(execution.result()).unwrap();
    assert_eq!(result.outcome, Outcome::Completed);
    let log = log.borrow();
    let by_type = |t: &str| {
        log.iter()
            .find(|v| v["type"] == t)
            .cloned()
            .unwrap_or_else(|| panic!("no {t}"))
    };
    assert_eq!(
        by_type("message-started"),
        json!({ "type": "message-started", "id": "m1", "modelCall": 1 })
    );
    assert_eq!(
        by_type("block-start"),
        json!({ "type": "block-start", "index": 0, "block": { "type": "tool-call", "callId": "c1", "name": "t" } })
    );
    let interrupt = by_type("interrupt");
    assert_eq!(interrupt["kind"], "tool-confirmation");
    assert_eq!(interrupt["callId"], "c1");
    assert_eq!(interrupt["tool"], "t");
    assert_eq!(interrupt["arguments"], json!({ "k": "v" }));
    assert!(interrupt["interruptId"].is_string());
    assert_eq!(by_type("interrupt-resolved")["approved"], true);
    assert_eq!(
        by_type("tool-result"),
        json!({ "type": "tool-result", "result": { "toolCallId": "c1", "content": "out", "isError": false } })
    );
    let completed = by_type("message-completed");
    assert_eq!(completed["message"]["role"], "assistant");
    assert_eq!(
        completed["message"]["blocks"][0]["input"],
        json!({ "k": "v" })
    );
}

#[test]
fn hook_events_serialise_with_kebab_case_types_and_camel_case_fields() {
    let event = HookEvent::ModelCallCompleted {
        model_call: 2,
        message_id: "m".into(),
        stop_reason: StopReason::ToolUse,
        usage: Usage {
            input_tokens: 1,
            ..Usage::default()
        },
        time_to_first_token_ms: None,
        output_duration_ms: 0.0,
        output_characters: 5,
    };
    let value = event.to_json();
    assert_eq!(value["type"], "model-call-completed");
    assert_eq!(value["modelCall"], 2);
    assert_eq!(value["stopReason"], "tool-use");
    assert_eq!(value["timeToFirstTokenMs"], serde_json::Value::Null);
    assert_eq!(value["usage"]["inputTokens"], 1);
    let terminal = HookEvent::ExecutionFailed {
        error: AgentError::new(ErrorCode::ModelFailed, "x"),
    };
    assert!(terminal.is_terminal());
    assert_eq!(terminal.to_json()["error"]["code"], "AGENT_MODEL_FAILED");
    let completed = HookEvent::ExecutionCompleted {
        outcome: Outcome::MaxTokens,
        usage: Usage::default(),
        model_calls: 1,
        tool_calls: 0,
    };
    assert_eq!(completed.to_json()["outcome"], "max-tokens");
}

#[test]
fn the_abort_signal_runs_callbacks_once_and_late_callbacks_immediately() {
    let model = ScriptedModel::new(vec![vec![
        start("m"),
        block_start(0, BlockKind::Text),
        Step::HangForever,
    ]]);
    let rt = runtime(model, ManualPlatform::new());
    let (_, observer) = recorder();
    let execution = rt
        .start(input(vec![user("q")], no_tools()), observer)
        .unwrap();
    let signal = execution.signal();
    let calls = Rc::new(RefCell::new(0));
    let c = calls.clone();
    signal.on_abort(Box::new(move || *c.borrow_mut() += 1));
    let mut aborted = signal.aborted();
    assert!((&mut aborted).now_or_never().is_none());
    assert!(!signal.is_aborted());
    execution.cancel();
    execution.cancel();
    assert_eq!(*calls.borrow(), 1);
    assert!(aborted.now_or_never().is_some());
    let c = calls.clone();
    signal.on_abort(Box::new(move || *c.borrow_mut() += 10));
    assert_eq!(*calls.borrow(), 11, "registered after abort: runs at once");
}

#[test]
fn controller_state_json_has_the_documented_keys() {
    let rt = runtime(ScriptedModel::new(vec![]), ManualPlatform::new());
    let controller = Controller::new(rt, ControllerOptions::default());
    let value = controller.state().to_json();
    for key in [
        "status",
        "messages",
        "draft",
        "toolResults",
        "pendingConfirmation",
        "lastOutcome",
        "error",
        "conversation",
        "toolRevision",
    ] {
        assert!(value.get(key).is_some(), "missing {key}");
    }
    assert_eq!(value["status"], "idle");
    assert_eq!(value["draft"], serde_json::Value::Null);
}
