//! Elicitation, the second interrupt kind: a running tool asks the person through its context's asker. The
//! question sits in the execution's one interrupt slot, is answered through `respond_json` (an accept with
//! content, a decline, a cancel), and is consumed by cancellation and the deadline exactly as a confirmation
//! is: the tool's wait ends with an error and no late answer reaches it.

mod support;

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::FutureExt;
use patchbridge_agent::core::protocol::StopReason;
use patchbridge_agent::core::*;
use serde_json::{json, Value};
use support::*;

type Seen = Rc<RefCell<Vec<Result<Value, String>>>>;

/// A read-only tool that asks one question and answers with what it heard.
fn asking_tool(seen: &Seen) -> Rc<dyn ToolHandler> {
    let seen = seen.clone();
    fn_tool(move |_, ctx| {
        let seen = seen.clone();
        async move {
            let request = ElicitationRequest::from_json(&json!({
                "message": "Your name?", "source": "people",
                "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } }
            }))
            .unwrap();
            let answer = ctx.asker.ask(request).await;
            let text = match &answer {
                Ok(ElicitationResponse::Accept { content }) => format!("hello {}", content["name"]),
                Ok(other) => format!("{:?}", other.action()),
                Err(e) => e.code.as_str().to_owned(),
            };
            seen.borrow_mut().push(answer.map(|a| patchbridge_agent::core::protocol::ToValue::to_value(&a)).map_err(|e| e.message));
            Ok(ok_result(&ctx.call_id, &text))
        }
        .boxed_local()
    })
    .0
}

fn asking_run(
    seen: &Seen,
    platform: Rc<ManualPlatform>,
    limits: Limits,
) -> (AgentExecution, EventLog, Harness) {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "ask", "{}")]),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let rt = runtime_with(model, RuntimeOptions::new(limits), platform);
    let tools = snapshot(vec![(spec("ask", true, false), asking_tool(seen))]);
    let (log, observer) = recorder();
    let execution = rt.start(input(vec![user("q")], tools), observer).unwrap();
    let mut h = Harness::new();
    h.spawn(&execution);
    h.stall();
    (execution, log, h)
}

#[test]
fn a_question_is_pending_until_answered_and_the_tool_gets_the_content() {
    let seen: Seen = Rc::default();
    let (execution, log, mut h) = asking_run(&seen, ManualPlatform::new(), limits());
    let pending = execution.pending_elicitation().expect("the tool asks");
    assert_eq!(
        (
            pending.kind,
            pending.call_id.as_str(),
            pending.tool.as_str()
        ),
        (InterruptKind::Elicitation, "c1", "ask")
    );
    assert_eq!(pending.source.as_deref(), Some("people"));
    assert!(
        execution.pending_interrupt().is_none(),
        "a question is no confirmation"
    );
    assert!(event_types(&log).contains(&"elicitation".to_string()));
    // A confirmation's value is refused and the question stays.
    let wrong = execution
        .respond_json(&pending.interrupt_id, &json!(true))
        .unwrap_err();
    assert_eq!(wrong.code, ErrorCode::InvalidInput);
    assert!(execution.pending_elicitation().is_some());
    execution
        .respond_json(
            &pending.interrupt_id,
            &json!({ "action": "accept", "content": { "name": "Ada" } }),
        )
        .unwrap();
    h.stall();
    let result = peek(&execution).unwrap().unwrap();
    assert_eq!(result.outcome, Outcome::Completed);
    assert_eq!(
        seen.borrow().as_slice(),
        &[Ok(
            json!({ "action": "accept", "content": { "name": "Ada" } })
        )]
    );
    let resolved = log
        .borrow()
        .iter()
        .find(|(t, _)| t == "elicitation-resolved")
        .map(|(_, v)| v.clone())
        .unwrap();
    assert_eq!(resolved["action"], "accept");
    let again = execution
        .respond_json(&pending.interrupt_id, &json!("decline"))
        .unwrap_err();
    assert_eq!(again.code, ErrorCode::InterruptAlreadyResolved);
}

#[test]
fn decline_and_cancel_reach_the_tool() {
    for (value, heard) in [
        (json!({ "action": "decline" }), "decline"),
        (json!("cancel"), "cancel"),
    ] {
        let seen: Seen = Rc::default();
        let (execution, _, mut h) = asking_run(&seen, ManualPlatform::new(), limits());
        let id = execution.pending_elicitation().unwrap().interrupt_id;
        execution.respond_json(&id, &value).unwrap();
        h.stall();
        assert_eq!(
            peek(&execution).unwrap().unwrap().outcome,
            Outcome::Completed
        );
        assert_eq!(seen.borrow()[0].as_ref().unwrap()["action"], heard);
    }
}

#[test]
fn cancel_consumes_the_question_and_a_late_answer_is_refused() {
    let seen: Seen = Rc::default();
    let (execution, log, mut h) = asking_run(&seen, ManualPlatform::new(), limits());
    let id = execution.pending_elicitation().unwrap().interrupt_id;
    assert!(execution.cancel());
    h.stall();
    assert_eq!(
        peek(&execution).unwrap().unwrap().outcome,
        Outcome::Cancelled
    );
    assert!(execution.pending_elicitation().is_none());
    let late = execution
        .respond_json(&id, &json!({ "action": "accept", "content": {} }))
        .unwrap_err();
    assert_eq!(late.code, ErrorCode::NoPendingInterrupt);
    assert!(
        seen.borrow().iter().all(Result::is_err),
        "the tool's wait ended without an answer"
    );
    assert!(!event_types(&log).contains(&"elicitation-resolved".to_string()));
}

#[test]
fn the_deadline_bounds_the_question_as_it_bounds_a_confirmation() {
    let seen: Seen = Rc::default();
    let platform = ManualPlatform::new();
    let (execution, _, mut h) = asking_run(
        &seen,
        platform.clone(),
        Limits {
            max_duration_ms: 1000,
            ..Limits::DEFAULT
        },
    );
    assert!(execution.pending_elicitation().is_some());
    platform.advance(1001.0);
    h.stall();
    let error = peek(&execution).unwrap().unwrap_err();
    assert_eq!(error.code, ErrorCode::ExecutionTimeout);
    assert!(execution.pending_elicitation().is_none());
}

#[test]
fn requests_and_answers_are_read_strictly() {
    assert!(
        ElicitationRequest::from_json(&json!({ "message": "Name?" })).is_err(),
        "form mode needs a schema"
    );
    assert!(ElicitationRequest::from_json(
        &json!({ "mode": "url", "message": "Sign", "url": "javascript:alert(1)" })
    )
    .is_err());
    assert!(ElicitationRequest::from_json(
        &json!({ "message": "x", "requestedSchema": {}, "extra": 1 })
    )
    .is_err());
    assert!(
        ElicitationResponse::from_json(&json!({ "action": "decline", "content": {} })).is_err()
    );
    assert!(ElicitationResponse::from_json(
        &json!({ "action": "accept", "content": { "x": { "deep": 1 } } })
    )
    .is_err());
    assert_eq!(
        ElicitationResponse::from_json(&json!("decline")).unwrap(),
        ElicitationResponse::Decline
    );
}
