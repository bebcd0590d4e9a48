//! The controller: draft and state projection, persistence by revision, pendingConfirmation with approve/reject,
//! abort, registry snapshots and the inspection source.

mod support;

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::FutureExt;
use patchbridge_agent::core::protocol::{
    Block, BlockKind, ConversationContext, ConversationSummary, ImageSource, Message, ModelState,
    Role, StopReason,
};
use patchbridge_agent::core::*;
use serde_json::json;
use support::*;

#[test]
fn the_draft_holds_deltas_and_messages_hold_only_stable_content() {
    let mut s = setup(vec![vec![
        start("m1"),
        block_start(0, BlockKind::Text),
        delta(0, "Hel"),
        delta(0, "lo"),
        Step::HangForever,
    ]]);
    s.send("hi");
    let state = s.controller.state();
    assert_eq!(state.status, Status::Running);
    assert_eq!(state.messages.len(), 1, "only the user message is stable");
    assert_eq!(state.messages[0].role, Role::User);
    let draft = state.draft.as_ref().expect("draft");
    assert_eq!(draft.id, "m1");
    assert_eq!(draft.blocks[0].buffer, "Hello");
    assert!(!draft.blocks[0].stopped);
    let json = state.to_json();
    assert_eq!(json["draft"]["blocks"][0]["text"], "Hello");
    assert_eq!(json["status"], "running");
    // Abort: the half-streamed block is dropped, nothing is saved.
    assert!(s.controller.abort());
    s.harness.stall();
    let state = s.controller.state();
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Cancelled);
    assert!(state.draft.is_none());
    assert_eq!(state.last_outcome, Some(Outcome::Cancelled));
    assert_eq!(state.status, Status::Idle);
    assert_eq!(
        s.store.creates.get() + s.store.saves.get(),
        0,
        "a cancelled turn saves nothing"
    );
    assert!(state.conversation.is_none());
}

#[test]
fn completed_turns_are_saved_as_one_revision_with_model_state() {
    let mut s = setup(vec![
        with_state(text_reply("m1", "one", StopReason::EndTurn), "s1"),
        with_state(text_reply("m2", "two", StopReason::MaxTokens), "s2"),
    ]);
    s.send("first question");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    let state = s.controller.state();
    let conversation = state.conversation.clone().expect("created on first save");
    assert_eq!(conversation.revision, 1);
    assert_eq!(conversation.title, "first question");
    let stored = s.store.conversations.borrow()[0].1.clone();
    assert_eq!(stored.messages.len(), 2);
    assert_eq!(stored.model_state.as_ref().unwrap().data, json!("s1"));
    // max-tokens is saved too, by revision.
    s.send("second");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::MaxTokens);
    let state = s.controller.state();
    assert_eq!(state.conversation.as_ref().unwrap().revision, 2);
    assert_eq!(state.last_outcome, Some(Outcome::MaxTokens));
    let stored = s.store.conversations.borrow()[0].1.clone();
    assert_eq!(stored.messages.len(), 4);
    assert_eq!(stored.model_state.as_ref().unwrap().data, json!("s2"));
    // The second request carried the first turn's state.
    assert_eq!(
        s.model.requests.borrow()[1]
            .model_state
            .as_ref()
            .unwrap()
            .data,
        json!("s1")
    );
    assert_eq!(s.controller.model_state().unwrap().data, json!("s2"));
}

#[test]
fn a_revision_conflict_is_an_explicit_error_and_nothing_is_overwritten() {
    let mut s = setup(vec![
        text_reply("m1", "one", StopReason::EndTurn),
        text_reply("m2", "two", StopReason::EndTurn),
    ]);
    s.send("q1");
    let id = s.controller.state().conversation.unwrap().id;
    s.store.bump_elsewhere(&id);
    let before = s.store.conversations.borrow()[0].1.clone();
    s.send("q2");
    let error = s.outcome().unwrap().unwrap_err();
    assert_eq!(error.code, ErrorCode::RevisionConflict);
    let state = s.controller.state();
    assert_eq!(
        state.error.as_ref().unwrap().code,
        ErrorCode::RevisionConflict
    );
    assert_eq!(
        state.last_outcome,
        Some(Outcome::Completed),
        "the turn itself completed"
    );
    assert_eq!(state.messages.len(), 4, "the in-memory turn is not lost");
    assert_eq!(
        s.store.conversations.borrow()[0].1,
        before,
        "the stored context is untouched"
    );
    assert_eq!(state.status, Status::Idle);
}

#[test]
fn a_corrupt_conversation_fails_explicitly_without_falling_back_to_other_history() {
    let mut s = setup(vec![text_reply("m1", "one", StopReason::EndTurn)]);
    s.send("q1");
    assert_eq!(s.controller.state().messages.len(), 2);
    s.store.corrupt.borrow_mut().push("c9".into());
    let result = s
        .harness
        .pool
        .run_until(s.controller.load_conversation("c9"));
    assert_eq!(result.unwrap_err().code, ErrorCode::ConversationCorrupt);
    let state = s.controller.state();
    assert!(
        state.messages.is_empty(),
        "no other history is shown in its place"
    );
    assert!(state.conversation.is_none());
    assert_eq!(state.error.unwrap().code, ErrorCode::ConversationCorrupt);
}

#[test]
fn a_stored_context_that_breaks_message_rules_is_corrupt() {
    let s = setup(vec![]);
    let bad = ConversationContext {
        messages: vec![Message {
            id: "t".into(),
            role: Role::Tool,
            blocks: vec![Block::ToolResult {
                call_id: "ghost".into(),
                content: "x".into(),
                is_error: false,
            }],
        }],
        model_state: None,
    };
    s.store.conversations.borrow_mut().push((
        ConversationSummary {
            id: "c1".into(),
            title: "t".into(),
            revision: 3,
            created_at: String::new(),
            updated_at: String::new(),
        },
        bad,
    ));
    let mut pool = futures::executor::LocalPool::new();
    assert_eq!(
        pool.run_until(s.controller.load_conversation("c1"))
            .unwrap_err()
            .code,
        ErrorCode::ConversationCorrupt
    );
}

#[test]
fn loading_restores_messages_model_state_and_revision_for_the_next_save() {
    let mut s = setup(vec![text_reply("m9", "more", StopReason::EndTurn)]);
    let context = ConversationContext {
        messages: vec![
            user("old"),
            Message {
                id: "a1".into(),
                role: Role::Assistant,
                blocks: vec![Block::text("reply")],
            },
        ],
        model_state: Some(ModelState {
            format: "t/v1".into(),
            data: json!("stored"),
        }),
    };
    s.store.conversations.borrow_mut().push((
        ConversationSummary {
            id: "c1".into(),
            title: "old".into(),
            revision: 5,
            created_at: String::new(),
            updated_at: String::new(),
        },
        context,
    ));
    s.harness
        .pool
        .run_until(s.controller.load_conversation("c1"))
        .unwrap();
    assert_eq!(
        s.controller.state().conversation.as_ref().unwrap().revision,
        5
    );
    s.send("next");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    assert_eq!(s.model.requests.borrow()[0].messages.len(), 3);
    assert_eq!(
        s.model.requests.borrow()[0]
            .model_state
            .as_ref()
            .unwrap()
            .data,
        json!("stored")
    );
    assert_eq!(s.controller.state().conversation.unwrap().revision, 6);
    assert_eq!(s.store.creates.get(), 0);
    assert_eq!(s.store.saves.get(), 1);
    s.controller.new_conversation(false).unwrap();
    assert!(s.controller.state().messages.is_empty());
    assert!(s.controller.model_state().is_none());
}

#[test]
fn pending_confirmation_is_projected_and_approve_reject_respond() {
    let mut s = setup(vec![
        tool_calls(
            "m1",
            &[("c1", "write", "{\"v\":1}"), ("c2", "write", "{\"v\":2}")],
        ),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("written");
    s.controller
        .register_tool(spec("write", false, false), tool)
        .unwrap();
    assert_eq!(
        s.controller.approve_tool().unwrap_err().code,
        ErrorCode::NoPendingInterrupt
    );
    s.send("do it");
    let state = s.controller.state();
    assert_eq!(state.status, Status::AwaitingConfirmation);
    let pending = state.pending_confirmation.clone().unwrap();
    assert_eq!(pending.tool, "write");
    assert_eq!(
        serde_json::Value::Object(pending.arguments.clone()),
        json!({ "v": 1 })
    );
    assert_eq!(
        state.to_json()["pendingConfirmation"]["interruptId"],
        json!(pending.interrupt_id)
    );
    s.controller.approve_tool().unwrap();
    s.harness.stall();
    assert_eq!(runs.get(), 1);
    let state = s.controller.state();
    assert_eq!(state.pending_confirmation.as_ref().unwrap().call_id, "c2");
    assert_eq!(
        state.tool_results.len(),
        1,
        "the first result is visible before the tool message is stable"
    );
    s.controller.reject_tool(Some("no".into())).unwrap();
    s.harness.stall();
    assert_eq!(runs.get(), 1);
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    let state = s.controller.state();
    assert!(state.pending_confirmation.is_none());
    assert_eq!(state.messages[2].blocks.len(), 2);
    assert_eq!(state.status, Status::Idle);
}

#[test]
fn abort_during_confirmation_cancels_and_the_tool_never_runs() {
    let mut s = setup(vec![tool_calls("m1", &[("c1", "write", "{}")])]);
    let (tool, runs) = echo_tool("written");
    s.controller
        .register_tool(spec("write", false, false), tool)
        .unwrap();
    s.send("do it");
    assert!(s.controller.state().pending_confirmation.is_some());
    assert!(s.controller.abort());
    assert_eq!(
        s.controller.approve_tool().unwrap_err().code,
        ErrorCode::NoPendingInterrupt
    );
    s.harness.stall();
    assert_eq!(runs.get(), 0);
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Cancelled);
    assert!(s.controller.state().pending_confirmation.is_none());
}

#[test]
fn send_while_busy_fails_with_agent_busy_and_bad_input_with_invalid_input() {
    let mut s = setup(vec![vec![start("m"), Step::HangForever]]);
    s.send("one");
    let second = s.controller.send_text("two").now_or_never().unwrap();
    assert_eq!(second.unwrap_err().code, ErrorCode::Busy);
    assert_eq!(
        s.controller.new_conversation(false).unwrap_err().code,
        ErrorCode::Busy
    );
    s.controller.abort();
    s.harness.stall();
    let bad = s.controller.send(vec![]).now_or_never().unwrap();
    assert_eq!(bad.unwrap_err().code, ErrorCode::InvalidInput);
    let bad = s
        .controller
        .send(vec![Block::Reasoning { text: "x".into() }])
        .now_or_never()
        .unwrap();
    assert_eq!(bad.unwrap_err().code, ErrorCode::InvalidInput);
    let image = vec![Block::Image {
        source: ImageSource::Url {
            url: "https://x/y.png".into(),
        },
    }];
    let accepted = s.controller.send(image);
    assert_eq!(
        s.controller.state().status,
        Status::Running,
        "image blocks are accepted"
    );
    drop(accepted);
}

#[test]
fn a_failed_turn_sets_a_typed_error_and_saves_nothing() {
    let mut s = setup(vec![vec![
        start("m"),
        block_start(0, BlockKind::Text),
        stop(StopReason::EndTurn),
    ]]);
    s.send("q");
    assert_eq!(
        s.outcome().unwrap().unwrap_err().code,
        ErrorCode::ProtocolError
    );
    let state = s.controller.state();
    assert_eq!(state.error.unwrap().code, ErrorCode::ProtocolError);
    assert_eq!(state.status, Status::Idle);
    assert_eq!(s.store.creates.get(), 0);
}

#[test]
fn registry_snapshots_freeze_tools_per_turn_and_inspection_follows_the_run() {
    let release = Latch::new();
    let mut s = setup(vec![
        vec![
            start("m1"),
            Step::WaitFor(release.clone()),
            block_start(
                0,
                BlockKind::ToolCall {
                    call_id: "c1".into(),
                    name: "late".into(),
                },
            ),
            delta(0, "{}"),
            block_stop(0),
            stop(StopReason::ToolUse),
        ],
        text_reply("m2", "ok", StopReason::EndTurn),
    ]);
    let (a, _) = echo_tool("a");
    let rev1 = s
        .controller
        .register_tool(spec("early", true, false), a)
        .unwrap();
    assert_eq!(
        s.controller.tool_inspection_source().source,
        InspectionSource::CurrentRegistry
    );
    s.send("go");
    let inspection = s.controller.tool_inspection_source();
    assert_eq!(inspection.source, InspectionSource::CurrentExecution);
    assert_eq!(inspection.snapshot.revision, rev1);
    // Registered mid-turn: the registry moves on, the running turn does not see it.
    let (late, late_runs) = echo_tool("late");
    let rev2 = s
        .controller
        .register_tool(spec("late", true, false), late)
        .unwrap();
    assert!(rev2 > rev1);
    let inspection = s.controller.tool_inspection_source();
    assert_eq!(inspection.snapshot.revision, rev1);
    assert!(inspection.snapshot.get("late").is_none());
    assert_eq!(s.model.requests.borrow()[0].tools.len(), 1);
    release.open();
    s.harness.stall();
    let error = s.outcome().unwrap().unwrap_err();
    assert_eq!(
        error.code,
        ErrorCode::ToolPrecheckFailed,
        "the model called a tool outside this turn's snapshot"
    );
    assert_eq!(late_runs.get(), 0);
    let inspection = s.controller.tool_inspection_source();
    assert_eq!(inspection.source, InspectionSource::CurrentRegistry);
    assert_eq!(inspection.snapshot.revision, rev2);
    assert!(s.controller.unregister_tool("late").unwrap());
    assert!(!s.controller.unregister_tool("late").unwrap());
    assert!(s.controller.state().tool_revision > rev2);
}

#[test]
fn the_registry_rejects_duplicates_and_invalid_specs() {
    let mut registry = registry();
    let (a, _) = echo_tool("a");
    assert_eq!(
        registry
            .register(spec("x", true, false), a.clone())
            .unwrap(),
        1
    );
    assert_eq!(
        registry
            .register(spec("x", true, false), a.clone())
            .unwrap_err()
            .code,
        ErrorCode::InvalidTool
    );
    let mut bad = spec("y", true, false);
    bad.input_schema = json!("string");
    assert_eq!(
        registry.register(bad, a.clone()).unwrap_err().code,
        ErrorCode::InvalidTool
    );
    assert_eq!(
        registry
            .register(spec("", true, false), a)
            .unwrap_err()
            .code,
        ErrorCode::InvalidTool
    );
    assert_eq!(
        registry.revision(),
        1,
        "failed registrations change nothing"
    );
    let snap = registry.snapshot();
    assert!(
        Rc::ptr_eq(&snap, &registry.snapshot()),
        "unchanged revision shares the snapshot"
    );
}

#[test]
fn destroy_cancels_and_further_calls_fail_with_agent_destroyed() {
    let mut s = setup(vec![vec![start("m"), Step::HangForever]]);
    s.send("q");
    s.controller.destroy();
    s.harness.stall();
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Cancelled);
    assert_eq!(s.controller.state().status, Status::Destroyed);
    assert_eq!(
        s.controller
            .send_text("again")
            .now_or_never()
            .unwrap()
            .unwrap_err()
            .code,
        ErrorCode::Destroyed
    );
    let (a, _) = echo_tool("a");
    assert_eq!(
        s.controller
            .register_tool(spec("x", true, false), a)
            .unwrap_err()
            .code,
        ErrorCode::Destroyed
    );
    let count = s.states.borrow().len();
    s.controller.destroy();
    assert_eq!(s.states.borrow().len(), count, "listeners are gone");
}

#[test]
fn listeners_are_notified_and_can_unsubscribe() {
    let mut s = setup(vec![
        text_reply("m1", "x", StopReason::EndTurn),
        text_reply("m2", "y", StopReason::EndTurn),
    ]);
    let count = Rc::new(RefCell::new(0));
    let c2 = count.clone();
    let id = s
        .controller
        .subscribe(Box::new(move |_| *c2.borrow_mut() += 1));
    s.send("a");
    let after_first = *count.borrow();
    assert!(
        after_first >= 4,
        "running, draft events, completion, saving/idle: {after_first}"
    );
    assert!(s.controller.unsubscribe(id));
    s.send("b");
    assert_eq!(*count.borrow(), after_first);
    // Statuses went through running and saving back to idle.
    let statuses: Vec<Status> = s.states.borrow().iter().map(|st| st.status).collect();
    assert!(statuses.contains(&Status::Running) && statuses.contains(&Status::Saving));
    assert_eq!(statuses.last(), Some(&Status::Idle));
}

#[test]
fn tool_calls_left_unanswered_by_an_abort_are_closed_so_the_next_turn_is_valid() {
    let mut s = setup(vec![
        tool_calls("m1", &[("c1", "write", "{}"), ("c2", "write", "{}")]),
        text_reply("m2", "ok, stopped", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("written");
    s.controller
        .register_tool(spec("write", false, false), tool)
        .unwrap();
    s.send("do both");
    s.controller.approve_tool().unwrap();
    s.harness.stall();
    assert_eq!(runs.get(), 1);
    s.controller.abort();
    s.harness.stall();
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Cancelled);
    let state = s.controller.state();
    let last = state.messages.last().unwrap();
    assert_eq!(last.role, Role::Tool);
    assert_eq!(
        last.blocks[0],
        Block::ToolResult {
            call_id: "c1".into(),
            content: "written".into(),
            is_error: false
        },
        "the published result is kept"
    );
    match &last.blocks[1] {
        Block::ToolResult {
            call_id,
            is_error,
            content,
        } => {
            assert_eq!(call_id, "c2");
            assert!(*is_error);
            assert!(content.contains("did not complete"), "{content}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.store.creates.get(),
        0,
        "still nothing saved for the cancelled turn"
    );
    s.send("never mind");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    let request = s.model.requests.borrow()[1].clone();
    assert_eq!(request.messages.len(), 4, "user, assistant, tool, user");
    assert_eq!(s.store.conversations.borrow()[0].1.messages.len(), 5);
}

#[test]
fn retry_runs_the_failed_turn_again_without_repeating_the_user_message() {
    // First call breaks the protocol (a block that never stops); the retry gets a proper answer.
    let mut s = setup(vec![
        vec![
            start("m1"),
            block_start(0, BlockKind::Text),
            stop(StopReason::EndTurn),
        ],
        text_reply("m2", "hello", StopReason::EndTurn),
    ]);
    s.send("q");
    assert_eq!(
        s.outcome().unwrap().unwrap_err().code,
        ErrorCode::ProtocolError
    );
    let fut = s.controller.retry();
    let slot = s.outcome.clone();
    s.harness
        .spawn_fut(async move { *slot.borrow_mut() = Some(fut.await) });
    s.harness.stall();
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    let roles: Vec<Role> = s
        .controller
        .state()
        .messages
        .iter()
        .map(|m| m.role)
        .collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant],
        "one user message, not two"
    );
    let second = &s.model.requests.borrow()[1];
    assert_eq!(
        second
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count(),
        1
    );
    assert_eq!(
        s.store.creates.get(),
        1,
        "the retried turn is saved like any completed turn"
    );
}

#[test]
fn retry_is_refused_when_the_model_has_already_answered() {
    let mut s = setup(vec![text_reply("m1", "hi", StopReason::EndTurn)]);
    let empty = s.controller.retry().now_or_never().unwrap();
    assert_eq!(
        empty.unwrap_err().code,
        ErrorCode::InvalidInput,
        "nothing to retry in an empty conversation"
    );
    s.send("q");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    let again = s.controller.retry().now_or_never().unwrap();
    assert_eq!(again.unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(s.model.calls(), 1);
}

#[test]
fn new_runtime_options_apply_from_the_next_turn_and_invalid_ones_change_nothing() {
    let mut s = setup(vec![
        text_reply("m1", "first", StopReason::EndTurn),
        text_reply("m2", "longer than three", StopReason::EndTurn),
    ]);
    s.send("one");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);

    let mut bad = Limits::DEFAULT;
    bad.max_model_calls = 0;
    assert_eq!(
        s.controller
            .set_runtime_options(RuntimeOptions::new(bad))
            .unwrap_err()
            .code,
        ErrorCode::InvalidLimits
    );

    let mut tight = Limits::DEFAULT;
    tight.max_model_output_characters = 3;
    s.controller
        .set_runtime_options(RuntimeOptions::new(tight))
        .unwrap();
    s.send("two");
    let error = s.outcome().unwrap().unwrap_err();
    assert_eq!(error.code, ErrorCode::LimitExceeded);
    assert_eq!(error.limit, Some(LimitName::MaxModelOutputCharacters));
}
