//! The relay client of the core (`core::relay`) over a recording transport: the requests it makes (methods,
//! paths, bodies of `docs/protocol.md` §2 and §6) and how relay answers become typed errors (§4).

mod support;

use std::cell::RefCell;
use std::rc::Rc;

use futures::executor::block_on;
use futures::future::{self, LocalBoxFuture};
use futures::stream::{self, StreamExt};
use futures::FutureExt;
use patchbridge_agent::core::protocol::{
    ConversationContext, ModelRequest, StopReason, StreamEvent, Usage,
};
use patchbridge_agent::core::relay::encode_uri_component;
use patchbridge_agent::core::*;
use serde_json::{json, Value};

/// What the client sent: method, path, body.
type Sent = (String, String, Option<Value>);

/// Answers every request with the next scripted `(status, body)` and records it.
#[derive(Default)]
struct Recorder {
    sent: RefCell<Vec<Sent>>,
    answers: RefCell<Vec<(u32, String)>>,
    events: RefCell<Option<Vec<StreamEvent>>>,
}

impl Recorder {
    fn answering(answers: &[(u32, &str)]) -> Rc<Self> {
        let recorder = Recorder::default();
        *recorder.answers.borrow_mut() = answers
            .iter()
            .rev()
            .map(|(s, b)| (*s, (*b).to_owned()))
            .collect();
        Rc::new(recorder)
    }

    fn record(&self, method: &str, path: &str, body: Option<String>) -> HttpAnswer {
        let body = body.map(|b| serde_json::from_str(&b).expect("bodies are JSON"));
        self.sent
            .borrow_mut()
            .push((method.into(), path.into(), body));
        let (status, body) = self
            .answers
            .borrow_mut()
            .pop()
            .expect("an answer is scripted");
        HttpAnswer { status, body }
    }
}

impl RelayTransport for Recorder {
    fn request(
        &self,
        method: &'static str,
        path: &str,
        body: Option<String>,
        _what: &'static str,
    ) -> LocalBoxFuture<'static, Result<HttpAnswer, AgentError>> {
        future::ready(Ok(self.record(method, path, body))).boxed_local()
    }

    fn stream(
        &self,
        path: &str,
        body: String,
        _signal: &AbortSignal,
        _what: &'static str,
    ) -> LocalBoxFuture<'static, Result<StreamAnswer, AgentError>> {
        let answer = self.record("POST", path, Some(body));
        let result = match self.events.borrow_mut().take() {
            Some(events) if (200..300).contains(&answer.status) => {
                StreamAnswer::Events(stream::iter(events.into_iter().map(Ok)).boxed_local())
            }
            _ => StreamAnswer::Refused(answer),
        };
        future::ready(Ok(result)).boxed_local()
    }
}

fn context() -> ConversationContext {
    ConversationContext {
        messages: vec![],
        model_state: None,
    }
}

const SNAPSHOT: &str = r#"{"conversation":{"id":"c1","title":"t","revision":2,"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"},"context":{"messages":[],"modelState":null}}"#;

fn error_of<T: std::fmt::Debug>(result: Result<T, AgentError>) -> (ErrorCode, String, Value) {
    let error = result.expect_err("an error");
    (
        error.code,
        error.message,
        error.details.unwrap_or(Value::Null),
    )
}

#[test]
fn store_requests_have_the_documented_methods_paths_and_bodies() {
    let transport = Recorder::answering(&[
        (201, SNAPSHOT),
        (200, SNAPSHOT),
        (200, SNAPSHOT),
        (200, SNAPSHOT),
        (204, ""),
        (200, r#"{"items":[],"nextCursor":null}"#),
        (200, r#"{"items":[],"nextCursor":null}"#),
    ]);
    let store = RelayStore::new(transport.clone());
    block_on(store.create("Trip", &context())).unwrap();
    block_on(store.save("a/b c", 1, Some("New"), &context())).unwrap();
    block_on(store.save("c1", 2, None, &context())).unwrap();
    block_on(store.load("é?")).unwrap();
    block_on(store.delete("c1")).unwrap();
    block_on(store.list(Some(5), Some("x&y=z"))).unwrap();
    block_on(store.list(None, None)).unwrap();
    let ctx = json!({ "messages": [], "modelState": null });
    assert_eq!(
        *transport.sent.borrow(),
        vec![
            (
                "POST".into(),
                "/conversations".into(),
                Some(json!({ "title": "Trip", "context": ctx }))
            ),
            (
                "PUT".into(),
                "/conversations/a%2Fb%20c".into(),
                Some(json!({ "expectedRevision": 1, "title": "New", "context": ctx }))
            ),
            (
                "PUT".into(),
                "/conversations/c1".into(),
                Some(json!({ "expectedRevision": 2, "context": ctx }))
            ),
            ("GET".into(), "/conversations/%C3%A9%3F".into(), None),
            ("DELETE".into(), "/conversations/c1".into(), None),
            (
                "GET".into(),
                "/conversations?limit=5&cursor=x%26y%3Dz".into(),
                None
            ),
            ("GET".into(), "/conversations".into(), None),
        ]
    );
}

#[test]
fn relay_error_answers_become_typed_errors_with_one_details_shape() {
    let transport = Recorder::answering(&[
        (
            409,
            r#"{"error":{"code":"REVISION_CONFLICT","message":"stale","currentRevision":7}}"#,
        ),
        (
            500,
            r#"{"error":{"code":"CONVERSATION_CORRUPT","message":"corrupt"}}"#,
        ),
        (
            404,
            r#"{"error":{"code":"NOT_FOUND","message":"not found","extra":1}}"#,
        ),
        (502, "<html>bad gateway</html>"),
        (
            418,
            r#"{"error":{"code":"FUTURE_CODE","message":"new","retryable":true}}"#,
        ),
    ]);
    let store = RelayStore::new(transport);
    assert_eq!(
        error_of(block_on(store.save("c1", 6, None, &context()))),
        (
            ErrorCode::RevisionConflict,
            "saving the conversation failed: stale".into(),
            json!({ "relayCode": "REVISION_CONFLICT", "status": 409, "currentRevision": 7 })
        )
    );
    assert_eq!(
        error_of(block_on(store.load("c1"))),
        (
            ErrorCode::ConversationCorrupt,
            "loading the conversation failed: corrupt".into(),
            json!({ "relayCode": "CONVERSATION_CORRUPT", "status": 500 })
        )
    );
    assert_eq!(
        error_of(block_on(store.delete("c1"))),
        (
            ErrorCode::RelayError,
            "deleting the conversation failed: not found".into(),
            json!({ "relayCode": "NOT_FOUND", "status": 404 })
        )
    );
    assert_eq!(
        error_of(block_on(store.list(None, None))),
        (
            ErrorCode::RelayError,
            "listing the conversations failed: HTTP 502".into(),
            json!({ "relayCode": "", "status": 502 })
        )
    );
    assert_eq!(
        error_of(block_on(store.load("c1"))).2,
        json!({ "relayCode": "FUTURE_CODE", "status": 418, "retryable": true })
    );
}

#[test]
fn only_the_status_the_protocol_names_confirms_a_list_or_a_delete() {
    let transport = Recorder::answering(&[(200, ""), (204, r#"{"items":[],"nextCursor":null}"#)]);
    let store = RelayStore::new(transport);
    assert_eq!(
        error_of(block_on(store.delete("c1"))),
        (
            ErrorCode::RelayError,
            "deleting the conversation failed: unexpected HTTP 200 from the relay".into(),
            json!({ "relayCode": "", "status": 200 })
        )
    );
    assert_eq!(
        error_of(block_on(store.list(None, None))).0,
        ErrorCode::RelayError
    );
}

#[test]
fn an_unreadable_snapshot_is_a_corrupt_conversation_and_an_unreadable_page_a_relay_error() {
    let transport = Recorder::answering(&[(200, r#"{"conversation":{}}"#), (200, "[]")]);
    let store = RelayStore::new(transport);
    let (code, message, _) = error_of(block_on(store.load("c1")));
    assert_eq!(code, ErrorCode::ConversationCorrupt);
    assert!(message
        .starts_with("loading the conversation failed: the stored conversation does not parse"));
    let (code, message, _) = error_of(block_on(store.list(None, None)));
    assert_eq!(code, ErrorCode::RelayError);
    assert!(
        message.starts_with("listing the conversations failed: the relay's answer does not parse")
    );
}

#[test]
fn the_model_posts_the_call_request_and_streams_its_events_or_maps_a_refusal() {
    let transport = Recorder::answering(&[
        (200, ""),
        (
            400,
            r#"{"error":{"code":"MODEL_STATE_MISMATCH","message":"stale state","messageId":"m7"}}"#,
        ),
    ]);
    *transport.events.borrow_mut() = Some(vec![
        StreamEvent::MessageStart {
            id: Some("a1".into()),
            model: None,
        },
        StreamEvent::MessageStop {
            stop_reason: StopReason::EndTurn,
            usage: Usage::default(),
            model_state: None,
        },
    ]);
    let runtime = support::runtime(
        Rc::new(RelayModel::new(transport.clone())),
        support::ManualPlatform::new(),
    );
    let (result, _) = support::run_to_end(
        &runtime,
        support::input(vec![support::user("hi")], support::no_tools()),
    );
    assert_eq!(result.unwrap().outcome, Outcome::Completed);
    let (method, path, body) = transport.sent.borrow()[0].clone();
    assert_eq!((method.as_str(), path.as_str()), ("POST", "/model"));
    let body: ModelRequest = serde_json::from_value(body.unwrap()).expect("a model request");
    assert_eq!(body.messages, vec![support::user("hi")]);

    let (refused, _) = support::run_to_end(
        &runtime,
        support::input(vec![support::user("again")], support::no_tools()),
    );
    let error = refused.unwrap_err();
    assert_eq!(error.code, ErrorCode::RelayError);
    assert_eq!(error.message, "relay model call failed: stale state");
    assert_eq!(
        error.details,
        Some(json!({ "relayCode": "MODEL_STATE_MISMATCH", "status": 400, "messageId": "m7" }))
    );
}

#[test]
fn a_spending_refusal_becomes_its_own_code_with_the_limit_and_when_to_retry() {
    let transport = Recorder::answering(&[(
        429,
        r#"{"error":{"code":"SPENDING_LIMIT_REACHED","message":"spending limit reached","retryable":true,
            "limit":{"kind":"calls","max":30,"windowSeconds":60,"sliding":true},"retryAfterSeconds":12}}"#,
    )]);
    let runtime = support::runtime(
        Rc::new(RelayModel::new(transport.clone())),
        support::ManualPlatform::new(),
    );
    let (refused, _) = support::run_to_end(
        &runtime,
        support::input(vec![support::user("hi")], support::no_tools()),
    );
    let error = refused.unwrap_err();
    assert_eq!(error.code, ErrorCode::SpendingLimitReached);
    assert_eq!(error.code.as_str(), "AGENT_SPENDING_LIMIT_REACHED");
    assert_eq!(
        error.details,
        Some(
            json!({ "relayCode": "SPENDING_LIMIT_REACHED", "status": 429, "retryable": true,
            "retryAfterSeconds": 12, "limit": { "kind": "calls", "max": 30, "windowSeconds": 60, "sliding": true } })
        )
    );
    // One call only: nothing is retried on the person's behalf.
    assert_eq!(transport.sent.borrow().len(), 1);
}

#[test]
fn ids_and_cursors_are_encoded_like_encode_uri_component() {
    for (text, encoded) in [
        ("plain-Id_1.x", "plain-Id_1.x"),
        ("-_.!~*'()", "-_.!~*'()"),
        ("a b/c?d=e&f#g", "a%20b%2Fc%3Fd%3De%26f%23g"),
        ("é", "%C3%A9"),
        ("😀", "%F0%9F%98%80"),
        ("%2F", "%252F"),
        ("", ""),
    ] {
        assert_eq!(encode_uri_component(text), encoded, "{text:?}");
    }
}
