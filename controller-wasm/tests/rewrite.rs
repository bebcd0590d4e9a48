//! Rewriting the conversation's tail through the controller: regenerate (answer the last user message again)
//! and edit-last-message (replace it and what follows). Both run a turn from the rewritten messages and save
//! the whole conversation as the next revision; both are refused while a turn runs and without a user message.

mod support;

use futures::future::FutureExt;
use patchbridge_agent::core::protocol::{Block, BlockKind, Message, Role, StopReason};
use patchbridge_agent::core::*;
use serde_json::json;
use support::*;

fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            m.blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<String>()
        })
        .collect()
}

fn stored_texts(s: &Setup) -> Vec<String> {
    texts(&s.store.conversations.borrow()[0].1.messages)
}

#[test]
fn regenerate_answers_the_last_user_message_again_and_saves_the_rewritten_tail_as_the_next_revision(
) {
    let mut s = setup(vec![
        with_state(text_reply("m1", "first", StopReason::EndTurn), "s1"),
        with_state(text_reply("m2", "second", StopReason::EndTurn), "s2"),
        with_state(text_reply("m3", "second, again", StopReason::EndTurn), "s3"),
    ]);
    s.send("q1");
    s.send("q2");
    assert_eq!(s.controller.state().conversation.unwrap().revision, 2);
    let q2_id = s.controller.state().messages[2].id.clone();

    let outcome = s.spawn(s.controller.regenerate());
    assert_eq!(
        outcome.borrow().clone().unwrap().unwrap(),
        Outcome::Completed
    );
    let state = s.controller.state();
    assert_eq!(
        texts(&state.messages),
        ["q1", "first", "q2", "second, again"]
    );
    assert_eq!(state.messages[2].id, q2_id, "the user message is kept");
    // The model saw the conversation up to the last user message, with the stored provider state.
    let request = s.model.requests.borrow()[2].clone();
    assert_eq!(request.messages.len(), 3);
    assert_eq!(request.messages[2].role, Role::User);
    assert_eq!(request.model_state.as_ref().unwrap().data, json!("s2"));
    // Saved whole, as the next revision: the replaced answer is gone from the stored conversation.
    assert_eq!(state.conversation.unwrap().revision, 3);
    assert_eq!(stored_texts(&s), ["q1", "first", "q2", "second, again"]);
    assert_eq!(s.store.creates.get(), 1);
}

#[test]
fn edit_last_message_replaces_it_and_everything_after_it_with_a_new_message() {
    let mut s = setup(vec![
        text_reply("m1", "first", StopReason::EndTurn),
        text_reply("m2", "second", StopReason::EndTurn),
        text_reply("m3", "about q2 edited", StopReason::EndTurn),
    ]);
    s.send("q1");
    s.send("q2");
    let old_id = s.controller.state().messages[2].id.clone();
    let outcome = s.spawn(
        s.controller
            .edit_last_message(vec![Block::text("q2 edited")]),
    );
    assert_eq!(
        outcome.borrow().clone().unwrap().unwrap(),
        Outcome::Completed
    );
    let state = s.controller.state();
    assert_eq!(
        texts(&state.messages),
        ["q1", "first", "q2 edited", "about q2 edited"]
    );
    assert_ne!(
        state.messages[2].id, old_id,
        "a new message, not an edit in place"
    );
    assert_eq!(s.model.requests.borrow()[2].messages.len(), 3);
    assert_eq!(state.conversation.unwrap().revision, 3);
    assert_eq!(
        stored_texts(&s),
        ["q1", "first", "q2 edited", "about q2 edited"]
    );
}

#[test]
fn rewriting_the_tail_is_refused_while_a_turn_runs_and_without_a_user_message() {
    let mut s = setup(vec![
        vec![
            start("m1"),
            block_start(0, BlockKind::Text),
            Step::HangUntilAbort,
        ],
        text_reply("m2", "fine", StopReason::EndTurn),
    ]);
    let empty = s.controller.regenerate().now_or_never().unwrap();
    assert_eq!(empty.unwrap_err().code, ErrorCode::InvalidInput);
    let empty = s
        .controller
        .edit_last_message(vec![Block::text("x")])
        .now_or_never()
        .unwrap();
    assert_eq!(empty.unwrap_err().code, ErrorCode::InvalidInput);

    s.send("q1");
    assert_eq!(s.controller.state().status, Status::Running);
    let busy = s.controller.regenerate().now_or_never().unwrap();
    assert_eq!(busy.unwrap_err().code, ErrorCode::Busy);
    let busy = s
        .controller
        .edit_last_message(vec![Block::text("x")])
        .now_or_never()
        .unwrap();
    assert_eq!(busy.unwrap_err().code, ErrorCode::Busy);
    assert_eq!(s.model.calls(), 1, "nothing started");
    assert!(s.controller.abort());
    s.harness.stall();
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Cancelled);
    // Idle again: regenerating the cancelled turn's question works.
    let outcome = s.spawn(s.controller.regenerate());
    assert_eq!(
        outcome.borrow().clone().unwrap().unwrap(),
        Outcome::Completed
    );
    assert_eq!(texts(&s.controller.state().messages), ["q1", "fine"]);
}

#[test]
fn an_invalid_edit_changes_nothing() {
    let mut s = setup(vec![text_reply("m1", "first", StopReason::EndTurn)]);
    s.send("q1");
    let before = s.controller.state().messages.clone();
    let error = s
        .controller
        .edit_last_message(vec![])
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(s.controller.state().messages, before);
    assert_eq!(s.controller.state().conversation.unwrap().revision, 1);
}
