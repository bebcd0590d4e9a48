//! The controller's conversation API over a fake store: listing pages, renaming (the open conversation keeps
//! a revision its next save can use), deleting (only a confirmed delete resets the open conversation), refusals
//! while a turn of that conversation runs, and a new conversation that keeps the messages without ModelState.

mod support;

use futures::future::FutureExt;
use patchbridge_agent::core::protocol::{Role, StopReason};
use patchbridge_agent::core::*;
use serde_json::json;
use support::*;

#[test]
fn listing_pages_through_the_stored_conversations_newest_first() {
    let mut s = setup(vec![]);
    s.seed("c1", "one", 1);
    s.seed("c2", "two", 1);
    s.seed("c3", "three", 4);
    let first = s
        .run(s.controller.list_conversations(Some(2), None))
        .unwrap();
    assert_eq!(
        first
            .items
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        ["c3", "c2"]
    );
    assert_eq!(first.items[0].revision, 4);
    let cursor = first.next_cursor.expect("a second page");
    let second = s
        .run(s.controller.list_conversations(Some(2), Some(&cursor)))
        .unwrap();
    assert_eq!(
        second
            .items
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        ["c1"]
    );
    assert_eq!(second.next_cursor, None);
    // A store failure keeps its typed code.
    *s.store.fail_next.borrow_mut() =
        Some(AgentError::new(ErrorCode::RelayError, "UNAUTHENTICATED"));
    assert_eq!(
        s.run(s.controller.list_conversations(None, None))
            .unwrap_err()
            .code,
        ErrorCode::RelayError
    );
    assert_eq!(
        s.controller.state().status,
        Status::Idle,
        "listing never changes the state"
    );
}

#[test]
fn renaming_the_open_conversation_moves_its_revision_so_the_next_save_does_not_conflict() {
    let mut s = setup(vec![
        with_state(
            text_reply("m1", "one", StopReason::EndTurn),
            json!({ "z": 1, "a": [2] }),
        ),
        text_reply("m2", "two", StopReason::EndTurn),
    ]);
    s.send("first question");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    let before = s.store.conversations.borrow()[0].1.clone();
    let id = s.controller.state().conversation.unwrap().id;
    s.states.borrow_mut().clear();
    let info = s
        .run(s.controller.rename_conversation(&id, "Renamed"))
        .unwrap();
    assert_eq!(
        info,
        ConversationInfo {
            id: id.clone(),
            title: "Renamed".into(),
            revision: 2
        }
    );
    assert_eq!(s.controller.state().conversation, Some(info));
    assert_eq!(
        s.store.conversations.borrow()[0].1,
        before,
        "the stored context is written back unchanged"
    );
    assert_eq!(s.store.conversations.borrow()[0].0.title, "Renamed");
    let statuses: Vec<Status> = s.states.borrow().iter().map(|st| st.status).collect();
    assert_eq!(
        statuses,
        [Status::Saving, Status::Idle],
        "busy while the rename is written"
    );
    s.send("second");
    assert_eq!(
        s.outcome().unwrap().unwrap(),
        Outcome::Completed,
        "no revision conflict"
    );
    let state = s.controller.state();
    assert_eq!(state.conversation.as_ref().unwrap().revision, 3);
    assert_eq!(state.conversation.as_ref().unwrap().title, "Renamed");
    assert_eq!(s.store.conversations.borrow()[0].1.messages.len(), 4);
}

#[test]
fn renaming_another_conversation_leaves_the_open_one_alone_even_while_its_turn_runs() {
    let mut s = setup(vec![vec![start("m1"), Step::HangForever]]);
    s.seed("other", "old title", 7);
    s.send("question");
    assert_eq!(s.controller.state().status, Status::Running);
    let info = s
        .run(s.controller.rename_conversation("other", "new title"))
        .unwrap();
    assert_eq!(info.revision, 8);
    assert_eq!(info.title, "new title");
    let state = s.controller.state();
    assert_eq!(state.status, Status::Running);
    assert!(state.conversation.is_none());
    s.controller.abort();
    s.harness.stall();
}

#[test]
fn renaming_the_open_conversation_changed_elsewhere_is_a_conflict_and_writes_nothing() {
    let mut s = setup(vec![text_reply("m1", "one", StopReason::EndTurn)]);
    s.send("q");
    let info = s.controller.state().conversation.unwrap();
    s.store.bump_elsewhere(&info.id);
    let error = s
        .run(s.controller.rename_conversation(&info.id, "x"))
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::RevisionConflict);
    assert_eq!(error.details.unwrap()["currentRevision"], json!(2));
    assert_eq!(
        s.store.conversations.borrow()[0].0.title,
        "q",
        "nothing written"
    );
    assert_eq!(s.store.conversations.borrow()[0].0.revision, 2);
    let state = s.controller.state();
    assert_eq!(
        state.conversation,
        Some(info),
        "the controller keeps the revision it holds"
    );
    assert_eq!(state.status, Status::Idle);
}

#[test]
fn renaming_or_deleting_the_open_conversation_while_its_turn_runs_is_busy() {
    let mut s = setup(vec![
        text_reply("m1", "one", StopReason::EndTurn),
        vec![start("m2"), Step::HangForever],
    ]);
    s.send("q");
    let id = s.controller.state().conversation.unwrap().id;
    s.send("again");
    assert_eq!(s.controller.state().status, Status::Running);
    let rename = s
        .controller
        .rename_conversation(&id, "x")
        .now_or_never()
        .unwrap();
    assert_eq!(rename.unwrap_err().code, ErrorCode::Busy);
    let delete = s
        .controller
        .delete_conversation(&id)
        .now_or_never()
        .unwrap();
    assert_eq!(delete.unwrap_err().code, ErrorCode::Busy);
    assert_eq!(s.store.conversations.borrow().len(), 1);
    assert_eq!(s.store.conversations.borrow()[0].0.title, "q");
    assert_eq!(
        s.controller.state().status,
        Status::Running,
        "the turn goes on"
    );
    s.controller.abort();
    s.harness.stall();
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Cancelled);
    // Idle again: both work.
    assert_eq!(
        s.run(s.controller.rename_conversation(&id, "x"))
            .unwrap()
            .revision,
        2
    );
    s.run(s.controller.delete_conversation(&id)).unwrap();
}

#[test]
fn deleting_the_open_conversation_resets_to_a_new_empty_conversation_once_confirmed() {
    let mut s = setup(vec![
        with_state(text_reply("m1", "one", StopReason::EndTurn), json!("s1")),
        text_reply("m2", "fresh", StopReason::EndTurn),
    ]);
    s.send("q");
    let id = s.controller.state().conversation.unwrap().id;
    let latch = Latch::new();
    *s.store.gate.borrow_mut() = Some(latch.clone());
    let deleted = s.spawn(s.controller.delete_conversation(&id));
    let state = s.controller.state();
    assert_eq!(state.status, Status::Saving, "busy until the store answers");
    assert_eq!(
        state.messages.len(),
        2,
        "nothing reset before the store confirmed"
    );
    assert_eq!(
        s.controller
            .send_text("now")
            .now_or_never()
            .unwrap()
            .unwrap_err()
            .code,
        ErrorCode::Busy
    );
    latch.open();
    s.harness.stall();
    assert_eq!(deleted.borrow_mut().take().unwrap(), Ok(()));
    let state = s.controller.state();
    assert_eq!(state.status, Status::Idle);
    assert!(state.messages.is_empty());
    assert!(state.conversation.is_none());
    assert!(state.last_outcome.is_none());
    assert!(s.controller.model_state().is_none());
    assert!(s.store.conversations.borrow().is_empty());
    *s.store.gate.borrow_mut() = None;
    s.send("start over");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    assert!(s.model.requests.borrow()[1].model_state.is_none());
    assert_eq!(s.model.requests.borrow()[1].messages.len(), 1);
    assert_eq!(
        s.store.creates.get(),
        2,
        "the next turn creates a new conversation"
    );
}

#[test]
fn a_failed_delete_rejects_with_its_code_and_leaves_the_state_as_it_was() {
    let mut s = setup(vec![text_reply("m1", "one", StopReason::EndTurn)]);
    s.send("q");
    let before = s.controller.state();
    let id = before.conversation.clone().unwrap().id;
    *s.store.fail_next.borrow_mut() = Some(
        AgentError::new(
            ErrorCode::RelayError,
            "deleting the conversation failed: HTTP 502",
        )
        .with_details(json!({ "relayCode": "", "status": 502 })),
    );
    let error = s.run(s.controller.delete_conversation(&id)).unwrap_err();
    assert_eq!(error.code, ErrorCode::RelayError);
    let after = s.controller.state();
    assert_eq!(after.status, Status::Idle);
    assert_eq!(after.messages, before.messages);
    assert_eq!(after.conversation, before.conversation);
    assert_eq!(s.store.conversations.borrow().len(), 1);
    // Deleting another (unknown) conversation fails the same typed way and touches nothing.
    let missing = s.run(s.controller.delete_conversation("nope")).unwrap_err();
    assert_eq!(missing.code, ErrorCode::RelayError);
    assert_eq!(s.controller.state().conversation, before.conversation);
}

#[test]
fn a_new_conversation_keeping_messages_drops_model_state_and_the_next_turn_creates_a_new_conversation(
) {
    let mut s = setup(vec![
        with_state(
            text_reply("m1", "one", StopReason::EndTurn),
            json!("refused later"),
        ),
        text_reply("m2", "two", StopReason::EndTurn),
    ]);
    s.send("q");
    let old = s.controller.state().conversation.unwrap();
    let messages = s.controller.state().messages.clone();
    s.controller.new_conversation(true).unwrap();
    let state = s.controller.state();
    assert!(state.conversation.is_none());
    assert_eq!(state.messages, messages, "the stable messages stay");
    assert!(s.controller.model_state().is_none());
    s.send("continue");
    assert_eq!(s.outcome().unwrap().unwrap(), Outcome::Completed);
    let request = s.model.requests.borrow()[1].clone();
    assert!(
        request.model_state.is_none(),
        "the refused provider state is not sent again"
    );
    assert_eq!(request.messages.len(), 3);
    assert_eq!(s.store.creates.get(), 2);
    let conversations = s.store.conversations.borrow();
    assert_eq!(conversations.len(), 2);
    assert_eq!(
        conversations[0].0.revision, old.revision,
        "the old conversation is untouched"
    );
    assert_eq!(conversations[1].1.messages.len(), 4);
    assert_eq!(conversations[1].1.messages[0].role, Role::User);
    // The plain form still empties the messages.
    drop(conversations);
    s.controller.new_conversation(false).unwrap();
    assert!(s.controller.state().messages.is_empty());
}

#[test]
fn conversation_calls_need_a_store_and_a_live_controller() {
    let model = ScriptedModel::new(vec![]);
    let controller = Controller::new(
        runtime(model, ManualPlatform::new()),
        ControllerOptions::default(),
    );
    let code = |r: Option<Result<(), AgentError>>| r.unwrap().unwrap_err().code;
    assert_eq!(
        code(controller.delete_conversation("c1").now_or_never()),
        ErrorCode::InvalidOptions
    );
    let listed = controller
        .list_conversations(None, None)
        .now_or_never()
        .unwrap();
    assert_eq!(listed.unwrap_err().code, ErrorCode::InvalidOptions);
    let s = setup(vec![]);
    s.controller.destroy();
    let renamed = s
        .controller
        .rename_conversation("c1", "x")
        .now_or_never()
        .unwrap();
    assert_eq!(renamed.unwrap_err().code, ErrorCode::Destroyed);
    assert_eq!(
        s.controller.new_conversation(true).unwrap_err().code,
        ErrorCode::Destroyed
    );
}
