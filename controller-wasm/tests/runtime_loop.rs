//! The agent loop through `DefaultAgentRuntime`: aggregation, ModelState pass-through, limits while running,
//! outcomes, isError vs throw and result validation, pause-turn, independent executions.

mod support;

use patchbridge_agent::core::protocol::{
    Block, BlockKind, ModelState, Role, StopReason, StreamEvent, Usage,
};
use patchbridge_agent::core::*;
use serde_json::json;
use support::*;

fn state(tag: &str) -> Option<ModelState> {
    Some(ModelState {
        format: "test/v1".into(),
        data: json!({ "secret": tag }),
    })
}

#[test]
fn blocks_are_aggregated_in_order_and_become_stable_only_after_message_stop() {
    let platform = ManualPlatform::new();
    let model = ScriptedModel::new(vec![vec![
        start("m1"),
        block_start(0, BlockKind::Reasoning),
        delta(0, "think"),
        delta(0, "ing"),
        block_stop(0),
        block_start(1, BlockKind::Text),
        delta(1, "Hel"),
        delta(1, "lo"),
        block_stop(1),
        stop(StopReason::EndTurn),
    ]]);
    let rt = runtime(model, platform);
    let (result, log) = run_to_end(&rt, input(vec![user("hi")], no_tools()));
    let result = result.unwrap();
    assert_eq!(result.outcome, Outcome::Completed);
    assert_eq!(result.messages.len(), 2);
    let reply = &result.messages[1];
    assert_eq!(reply.id, "m1");
    assert_eq!(reply.role, Role::Assistant);
    assert_eq!(
        reply.blocks,
        vec![
            Block::Reasoning {
                text: "thinking".into()
            },
            Block::text("Hello")
        ]
    );
    // Deltas reach the observer (the draft) but the stable message appears once, after message-stop.
    let types = event_types(&log);
    assert_eq!(types.iter().filter(|t| *t == "block-delta").count(), 4);
    assert_eq!(types.first().map(String::as_str), Some("message-started"));
    assert_eq!(types.last().map(String::as_str), Some("message-completed"));
    assert_eq!(
        types.iter().filter(|t| *t == "message-completed").count(),
        1
    );
}

#[test]
fn tool_call_arguments_become_a_parsed_json_object() {
    let platform = ManualPlatform::new();
    let model = ScriptedModel::new(vec![
        vec![
            start("m1"),
            block_start(
                0,
                BlockKind::ToolCall {
                    call_id: "c1".into(),
                    name: "lookup".into(),
                },
            ),
            delta(0, "{\"serial\":"),
            delta(0, "\"1000\", \"n\": [1,2]}"),
            block_stop(0),
            stop(StopReason::ToolUse),
        ],
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let (tool, runs) = fn_tool(|input, ctx| {
        assert_eq!(input.get("serial"), Some(&json!("1000")));
        futures::future::FutureExt::boxed_local(futures::future::ready(Ok(ok_result(
            &ctx.call_id,
            "found",
        ))))
    });
    let tools = snapshot(vec![(spec("lookup", true, false), tool)]);
    let rt = runtime(model.clone(), platform);
    let (result, _) = run_to_end(&rt, input(vec![user("q")], tools));
    let result = result.unwrap();
    assert_eq!(runs.get(), 1);
    match &result.messages[1].blocks[0] {
        Block::ToolCall {
            call_id,
            name,
            input,
        } => {
            assert_eq!(call_id, "c1");
            assert_eq!(name, "lookup");
            assert_eq!(
                serde_json::Value::Object(input.clone()),
                json!({ "serial": "1000", "n": [1, 2] })
            );
        }
        other => panic!("expected a tool call, got {other:?}"),
    }
    assert_eq!(result.messages[2].role, Role::Tool);
    assert_eq!(
        result.messages[2].blocks,
        vec![Block::ToolResult {
            call_id: "c1".into(),
            content: "found".into(),
            is_error: false
        }]
    );
    // The second request carries the whole conversation including the tool result.
    assert_eq!(model.requests.borrow()[1].messages.len(), 3);
    assert_eq!(
        result.messages.last().unwrap().blocks,
        vec![Block::text("done")]
    );
}

#[test]
fn protocol_violations_fail_with_agent_protocol_error_and_publish_no_stable_message() {
    let cases: Vec<(&str, Vec<Step>)> = vec![
        ("no message-start", vec![block_start(0, BlockKind::Text)]),
        ("two message-starts", vec![start("a"), start("b")]),
        (
            "block index gap",
            vec![start("a"), block_start(1, BlockKind::Text)],
        ),
        (
            "two open blocks",
            vec![
                start("a"),
                block_start(0, BlockKind::Text),
                block_start(1, BlockKind::Text),
            ],
        ),
        (
            "delta for closed block",
            vec![
                start("a"),
                block_start(0, BlockKind::Text),
                block_stop(0),
                delta(0, "x"),
            ],
        ),
        (
            "stop for another block",
            vec![start("a"), block_start(0, BlockKind::Text), block_stop(1)],
        ),
        (
            "message-stop with open block",
            vec![
                start("a"),
                block_start(0, BlockKind::Text),
                stop(StopReason::EndTurn),
            ],
        ),
        (
            "stream ends without message-stop",
            vec![
                start("a"),
                block_start(0, BlockKind::Text),
                delta(0, "x"),
                block_stop(0),
            ],
        ),
        ("empty stream", vec![]),
        (
            "event after message-stop",
            vec![start("a"), stop(StopReason::EndTurn), start("b")],
        ),
    ];
    for (name, steps) in cases {
        let model = ScriptedModel::new(vec![steps]);
        let rt = runtime(model, ManualPlatform::new());
        let (result, log) = run_to_end(&rt, input(vec![user("q")], no_tools()));
        assert_eq!(code_of(&result), "AGENT_PROTOCOL_ERROR", "case {name}");
        assert!(
            !event_types(&log).contains(&"message-completed".to_string()),
            "case {name}"
        );
    }
}

#[test]
fn relay_error_event_fails_with_agent_relay_error_and_its_code() {
    let model = ScriptedModel::new(vec![vec![
        start("a"),
        ev(StreamEvent::Error {
            code: "UPSTREAM_RATE_LIMITED".into(),
            message: "slow down".into(),
            retryable: Some(true),
        }),
    ]]);
    let rt = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    let error = result.unwrap_err();
    assert_eq!(error.code, ErrorCode::RelayError);
    // The same details shape as an HTTP error answer (minus `status`): `{ relayCode, retryable?, code }`.
    assert_eq!(
        error.details.unwrap(),
        json!({ "relayCode": "UPSTREAM_RATE_LIMITED", "retryable": true })
    );
    let model = ScriptedModel::new(vec![vec![
        start("a"),
        ev(StreamEvent::Error {
            code: "UPSTREAM_REJECTED".into(),
            message: "no".into(),
            retryable: None,
        }),
    ]]);
    let rt = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    let details = result.unwrap_err().details.unwrap();
    assert_eq!(
        details,
        json!({ "relayCode": "UPSTREAM_REJECTED" }),
        "no retryable when the relay did not say"
    );
}

#[test]
fn model_stream_error_rejects_result_with_that_error() {
    let model = ScriptedModel::new(vec![vec![
        start("a"),
        Step::Fail(AgentError::new(ErrorCode::ModelFailed, "boom")),
    ]]);
    let rt = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    assert_eq!(result.unwrap_err().message, "boom");
}

#[test]
fn missing_message_id_is_generated() {
    let model = ScriptedModel::new(vec![vec![
        ev(StreamEvent::MessageStart {
            id: None,
            model: None,
        }),
        stop(StopReason::EndTurn),
    ]]);
    let rt = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    let id = &result.unwrap().messages[1].id;
    assert!(id.starts_with("msg_"), "{id}");
}

#[test]
fn model_state_is_passed_through_verbatim_replaced_and_cleared() {
    let model = ScriptedModel::new(vec![
        {
            let mut s = tool_calls("m1", &[("c1", "t", "{}")]);
            s.pop();
            s.push(stop_with(
                StopReason::ToolUse,
                Usage::default(),
                state("second"),
            ));
            s
        },
        vec![
            start("m2"),
            stop_with(StopReason::EndTurn, Usage::default(), None),
        ],
    ]);
    let (tool, _) = echo_tool("ok");
    let tools = snapshot(vec![(spec("t", true, false), tool)]);
    let rt = runtime(model.clone(), ManualPlatform::new());
    let mut inp = input(vec![user("q")], tools);
    inp.model_state = state("first");
    let (result, log) = run_to_end(&rt, inp);
    let result = result.unwrap();
    let requests = model.requests.borrow();
    assert_eq!(
        requests[0].model_state,
        state("first"),
        "input state is sent verbatim"
    );
    assert_eq!(
        requests[1].model_state,
        state("second"),
        "non-null message-stop state replaces"
    );
    assert_eq!(result.model_state, None, "null message-stop state clears");
    // ModelState never appears in display messages or observer message events.
    let text = serde_json::to_string(&result.messages).unwrap();
    assert!(!text.contains("secret"));
    for (t, v) in log.borrow().iter() {
        if t == "message-completed" {
            assert!(!v.to_string().contains("secret"));
        }
    }
}

#[test]
fn model_state_survives_a_turn_whose_message_stop_repeats_it() {
    let model = ScriptedModel::new(vec![vec![
        start("m1"),
        stop_with(StopReason::EndTurn, Usage::default(), state("keep")),
    ]]);
    let rt = runtime(model, ManualPlatform::new());
    let mut inp = input(vec![user("q")], no_tools());
    inp.model_state = state("old");
    let (result, _) = run_to_end(&rt, inp);
    assert_eq!(result.unwrap().model_state, state("keep"));
}

#[test]
fn outcomes_follow_the_stop_reason() {
    for (reason, expected) in [
        (StopReason::EndTurn, "completed"),
        (StopReason::StopSequence, "completed"),
        (StopReason::Other, "completed"),
        (StopReason::Refusal, "completed"),
        (StopReason::MaxTokens, "max-tokens"),
    ] {
        let model = ScriptedModel::new(vec![text_reply("m", "partial", reason)]);
        let rt = runtime(model, ManualPlatform::new());
        let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
        assert_eq!(code_of(&result), expected, "{reason:?}");
        // max-tokens keeps the sealed message.
        assert_eq!(
            result.unwrap().messages[1].blocks,
            vec![Block::text("partial")]
        );
    }
}

#[test]
fn pause_turn_calls_the_model_again_with_the_message_appended() {
    let model = ScriptedModel::new(vec![
        text_reply("m1", "working", StopReason::PauseTurn),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let rt = runtime(model.clone(), ManualPlatform::new());
    let (result, _) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    let result = result.unwrap();
    assert_eq!(model.calls(), 2);
    assert_eq!(model.requests.borrow()[1].messages.last().unwrap().id, "m1");
    assert_eq!(result.messages.len(), 3);
}

#[test]
fn usage_is_summed_over_model_calls() {
    let usage = |i, o| Usage {
        input_tokens: i,
        output_tokens: o,
        ..Usage::default()
    };
    let mut first = tool_calls("m1", &[("c1", "t", "{}")]);
    first.pop();
    first.push(stop_with(StopReason::ToolUse, usage(10, 2), None));
    let second = vec![
        start("m2"),
        stop_with(StopReason::EndTurn, usage(20, 3), None),
    ];
    let model = ScriptedModel::new(vec![first, second]);
    let (tool, _) = echo_tool("ok");
    let rt = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    assert_eq!(result.unwrap().usage, usage(30, 5));
}

#[test]
fn is_error_results_go_back_to_the_model_and_the_loop_continues() {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "t", "{}")]),
        text_reply("m2", "sorry", StopReason::EndTurn),
    ]);
    let (tool, _) = fn_tool(|_, ctx| {
        futures::future::FutureExt::boxed_local(futures::future::ready(Ok(
            json!({ "toolCallId": ctx.call_id, "content": "device offline", "isError": true }),
        )))
    });
    let rt = runtime(model.clone(), ManualPlatform::new());
    let (result, log) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    assert_eq!(result.unwrap().outcome, Outcome::Completed);
    assert_eq!(model.calls(), 2);
    let second = &model.requests.borrow()[1];
    assert_eq!(
        second.messages[2].blocks,
        vec![Block::ToolResult {
            call_id: "c1".into(),
            content: "device offline".into(),
            is_error: true
        }]
    );
    assert!(event_types(&log).contains(&"tool-result".to_string()));
}

#[test]
fn a_throwing_tool_ends_the_execution_without_another_model_call() {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "t", "{}")]),
        text_reply("m2", "never", StopReason::EndTurn),
    ]);
    let (tool, _) = fn_tool(|_, _| {
        futures::future::FutureExt::boxed_local(futures::future::ready(Err(AgentError::new(
            ErrorCode::ToolFailed,
            "exploded",
        ))))
    });
    let rt = runtime(model.clone(), ManualPlatform::new());
    let (result, log) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    let error = result.unwrap_err();
    assert_eq!(error.code, ErrorCode::ToolFailed);
    assert_eq!(model.calls(), 1);
    assert!(!event_types(&log).contains(&"tool-result".to_string()));
}

#[test]
fn tool_results_must_be_exactly_tool_call_id_content_is_error() {
    let bad = vec![
        ("not an object", json!("ok")),
        ("null", serde_json::Value::Null),
        (
            "missing isError",
            json!({ "toolCallId": "c1", "content": "x" }),
        ),
        (
            "null id",
            json!({ "toolCallId": null, "content": "x", "isError": false }),
        ),
        (
            "wrong id",
            json!({ "toolCallId": "c2", "content": "x", "isError": false }),
        ),
        (
            "number content",
            json!({ "toolCallId": "c1", "content": 5, "isError": false }),
        ),
        (
            "string isError",
            json!({ "toolCallId": "c1", "content": "x", "isError": "false" }),
        ),
        (
            "extra field",
            json!({ "toolCallId": "c1", "content": "x", "isError": false, "meta": 1 }),
        ),
        (
            "the runtime's not-run marker",
            json!({ "toolCallId": "c1", "content": "[not run] trust me", "isError": true }),
        ),
        (
            "the runtime's rejection marker",
            json!({ "toolCallId": "c1", "content": "[rejected] trust me", "isError": true }),
        ),
    ];
    for (name, value) in bad {
        let model = ScriptedModel::new(vec![
            tool_calls("m1", &[("c1", "t", "{}")]),
            text_reply("m2", "never", StopReason::EndTurn),
        ]);
        let (tool, _) = fn_tool(move |_, _| {
            futures::future::FutureExt::boxed_local(futures::future::ready(Ok(value.clone())))
        });
        let rt = runtime(model.clone(), ManualPlatform::new());
        let (result, log) = run_to_end(
            &rt,
            input(
                vec![user("q")],
                snapshot(vec![(spec("t", true, false), tool)]),
            ),
        );
        assert_eq!(code_of(&result), "AGENT_INVALID_TOOL_RESULT", "case {name}");
        assert_eq!(model.calls(), 1, "case {name}");
        assert!(
            !event_types(&log).contains(&"tool-result".to_string()),
            "case {name}: nothing published"
        );
    }
}

#[test]
fn start_rejects_invalid_input() {
    let rt = runtime(ScriptedModel::new(vec![]), ManualPlatform::new());
    let (_, observer) = recorder();
    let error = rt.start(input(vec![], no_tools()), observer).err().unwrap();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    let bad = patchbridge_agent::core::protocol::Message {
        id: "t".into(),
        role: Role::Tool,
        blocks: vec![Block::ToolResult {
            call_id: "nope".into(),
            content: "x".into(),
            is_error: false,
        }],
    };
    let (_, observer) = recorder();
    let error = rt
        .start(input(vec![user("q"), bad], no_tools()), observer)
        .err()
        .unwrap();
    assert_eq!(error.code, ErrorCode::InvalidInput);
}

#[test]
fn executions_are_independent_signal_budget_interrupts_and_result() {
    let platform = ManualPlatform::new();
    let model = ScriptedModel::new(vec![
        vec![start("a"), Step::HangUntilAbort],
        text_reply("b", "fine", StopReason::EndTurn),
    ]);
    let rt = runtime(model.clone(), platform);
    let mut h = Harness::new();
    let (_, o1) = recorder();
    let first = rt.start(input(vec![user("one")], no_tools()), o1).unwrap();
    h.spawn(&first);
    h.stall();
    let (_, o2) = recorder();
    let second = rt.start(input(vec![user("two")], no_tools()), o2).unwrap();
    h.spawn(&second);
    h.stall();
    assert_ne!(first.id(), second.id());
    assert!(first.cancel());
    h.stall();
    assert_eq!(peek(&first).unwrap().unwrap().outcome, Outcome::Cancelled);
    assert_eq!(peek(&second).unwrap().unwrap().outcome, Outcome::Completed);
    let signals = model.signals.borrow();
    assert!(signals[0].is_aborted());
    assert!(
        !signals[1].is_aborted(),
        "cancelling one execution leaves the other's signal alone"
    );
    assert_eq!(
        second
            .respond("x", InterruptResponse::Approve)
            .unwrap_err()
            .code,
        ErrorCode::NoPendingInterrupt
    );
}

/// The bindings cache one JS `AbortController` per execution on the core signal (`host_value`): the model and
/// the tools of one execution must reach the same cached value, created once, and another execution its own.
#[test]
fn one_host_signal_value_per_execution_shared_by_model_and_tools() {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    let platform = ManualPlatform::new();
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "lookup", "{}")]),
        text_reply("m2", "done", StopReason::EndTurn),
        text_reply("m3", "other", StopReason::EndTurn),
    ]);
    let created = Rc::new(Cell::new(0u32));
    let seen_by_tool: Rc<RefCell<Option<Rc<u32>>>> = Rc::default();
    let (tool, _) = {
        let created = created.clone();
        let seen_by_tool = seen_by_tool.clone();
        fn_tool(move |_, ctx| {
            let value = ctx.signal.host_value(|_| {
                created.set(created.get() + 1);
                Rc::new(created.get())
            });
            *seen_by_tool.borrow_mut() = Some(value);
            futures::future::FutureExt::boxed_local(futures::future::ready(Ok(ok_result(
                &ctx.call_id,
                "ok",
            ))))
        })
    };
    let tools = snapshot(vec![(spec("lookup", true, false), tool)]);
    let rt = runtime(model.clone(), platform);
    let (result, _) = run_to_end(&rt, input(vec![user("q")], tools.clone()));
    assert_eq!(result.unwrap().outcome, Outcome::Completed);
    let (second, _) = run_to_end(&rt, input(vec![user("again")], tools));
    assert_eq!(second.unwrap().outcome, Outcome::Completed);

    let signals = model.signals.borrow();
    let first_model = signals[0].host_value(|_| Rc::new(99u32));
    let first_model_again = signals[1].host_value(|_| Rc::new(98u32));
    let from_tool = seen_by_tool.borrow().clone().expect("the tool ran");
    assert!(
        Rc::ptr_eq(&first_model, &from_tool),
        "model call 1 and the tool share one value"
    );
    assert!(
        Rc::ptr_eq(&first_model, &first_model_again),
        "model call 2 of the same execution too"
    );
    assert_eq!(created.get(), 1, "created once per execution");
    let other_execution = signals[2].host_value(|_| Rc::new(7u32));
    assert_eq!(
        *other_execution, 7,
        "another execution's signal has its own value"
    );
}

/// Records the requests exactly as the runtime built them (not deep copies like `ScriptedModel`).
struct RawRecorder {
    inner: std::rc::Rc<ScriptedModel>,
    raw: std::cell::RefCell<Vec<std::rc::Rc<CallRequest>>>,
}

impl Model for RawRecorder {
    fn stream(&self, request: std::rc::Rc<CallRequest>, signal: AbortSignal) -> EventStream {
        self.raw.borrow_mut().push(request.clone());
        self.inner.stream(request, signal)
    }
}

/// Regression (tool-loop cost grew with the history): each model call's request shares the stable messages
/// with the previous one instead of deep-copying the conversation, and still serialises to the exact JSON of
/// the protocol's `ModelRequest`.
#[test]
fn tool_loop_requests_share_the_history_and_serialise_as_model_request() {
    use std::rc::Rc;
    let scripted = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "lookup", "{\"q\":1}")]),
        tool_calls("m2", &[("c2", "lookup", "{\"q\":2}")]),
        text_reply("m3", "done", StopReason::EndTurn),
    ]);
    let model = Rc::new(RawRecorder {
        inner: scripted,
        raw: Default::default(),
    });
    let (tool, _) = echo_tool("ok");
    let tools = snapshot(vec![(spec("lookup", true, false), tool)]);
    let rt = runtime(model.clone(), ManualPlatform::new());
    let mut start = input(vec![user("q")], tools);
    start.model_state = state("s0");
    let (result, _) = run_to_end(&rt, start);
    let result = result.unwrap();
    let raw = model.raw.borrow();
    assert_eq!(
        raw.iter().map(|r| r.messages.len()).collect::<Vec<_>>(),
        vec![1, 3, 5]
    );
    for i in 0..3 {
        assert!(
            Rc::ptr_eq(&raw[1].messages[i], &raw[2].messages[i]),
            "message {i} is shared, not copied"
        );
    }
    assert!(
        Rc::ptr_eq(&raw[0].tools, &raw[2].tools),
        "tool definitions are computed once per execution"
    );
    // Same JSON as the protocol type, and the same messages as the result.
    let json = serde_json::to_value(&*raw[2]).unwrap();
    assert_eq!(json, serde_json::to_value(raw[2].to_request()).unwrap());
    assert_eq!(
        json["modelState"],
        serde_json::Value::Null,
        "message-stop carried null: cleared"
    );
    let first = serde_json::to_value(&*raw[0]).unwrap();
    assert_eq!(
        first["modelState"],
        json!({ "format": "test/v1", "data": { "secret": "s0" } })
    );
    assert_eq!(first, serde_json::to_value(raw[0].to_request()).unwrap());
    assert_eq!(json["tools"][0]["name"], "lookup");
    assert_eq!(raw[2].to_request().messages, result.messages[..5].to_vec());
    let back = CallRequest::from_request(raw[2].to_request());
    assert_eq!(serde_json::to_value(&back).unwrap(), json);
}

/// Ids are unique within a conversation (docs/protocol.md §1): a `message-start` that reuses the id of a message
/// already there (a user message, or the model's own earlier answer in a tool loop) is a protocol error of that
/// model call, before anything of it becomes stable. Accepted, it would leave a history with duplicate ids that
/// the next `start` refuses as invalid input and a reload calls corrupt.
#[test]
fn a_message_start_id_already_in_the_conversation_is_a_protocol_error() {
    // Reuses the user's id.
    let model = ScriptedModel::new(vec![text_reply("u-q", "hi", StopReason::EndTurn)]);
    let rt = runtime(model, ManualPlatform::new());
    let (result, log) = run_to_end(&rt, input(vec![user("q")], no_tools()));
    assert_eq!(code_of(&result), "AGENT_PROTOCOL_ERROR");
    assert!(!event_types(&log).contains(&"message-completed".to_string()));

    // Reuses its own id from the previous call of the same tool loop.
    let (tool, runs) = echo_tool("ok");
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "t", "{}")]),
        text_reply("m1", "done", StopReason::EndTurn),
    ]);
    let rt = runtime(model.clone(), ManualPlatform::new());
    let (result, log) = run_to_end(
        &rt,
        input(
            vec![user("q")],
            snapshot(vec![(spec("t", true, false), tool)]),
        ),
    );
    assert_eq!(code_of(&result), "AGENT_PROTOCOL_ERROR");
    assert_eq!(runs.get(), 1);
    assert_eq!(model.calls(), 2);
    let completed = log
        .borrow()
        .iter()
        .filter(|(t, _)| t == "message-completed")
        .count();
    assert_eq!(
        completed, 2,
        "the first assistant message and the tool message only"
    );
}
