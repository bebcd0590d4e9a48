//! Conversation API (`docs/protocol.md` §6) on BOTH backends: SQLite file and PostgreSQL (a unique schema per
//! test). CRUD, paging, compare-and-set races, user isolation, corrupt rows, size bounds.

mod common;

use std::collections::HashSet;

use axum::http::StatusCode;
use common::{base_config, relay, Backend, Relay, TestDb};
use serde_json::{json, Value};

macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod sqlite { $( #[tokio::test(flavor = "multi_thread", worker_threads = 4)] async fn $name() { super::$name(super::Backend::Sqlite).await } )* }
        mod postgres { $( #[tokio::test(flavor = "multi_thread", worker_threads = 4)] async fn $name() { super::$name(super::Backend::Postgres).await } )* }
    };
}

on_both!(
    create_read_write_delete_round_trip,
    stale_revision_gets_409_and_nothing_is_overwritten,
    concurrent_writers_exactly_one_wins_each_revision,
    list_pages_newest_first_with_cursor,
    other_users_conversation_is_not_found,
    corrupt_stored_context_is_an_explicit_error,
    context_over_size_bound_is_413_and_not_stored,
    strict_bodies_and_missing_model_state_are_rejected,
    nul_in_conversation_id_or_cursor_is_not_a_server_error,
    malformed_query_or_path_gets_the_json_error_shape,
);

/// Creates a conversation for `user` with `body`; returns the created snapshot and the conversation's path.
async fn create(r: &Relay, user: &str, body: Value) -> (Value, String) {
    let (status, created) = r.call("POST", "/api/conversations", user, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let path = format!(
        "/api/conversations/{}",
        created["conversation"]["id"].as_str().unwrap()
    );
    (created, path)
}

/// A compare-and-set write of `context` expecting revision `expected`.
async fn put(
    r: &Relay,
    path: &str,
    user: &str,
    expected: u64,
    context: Value,
) -> (StatusCode, Value) {
    r.call(
        "PUT",
        path,
        user,
        Some(json!({ "expectedRevision": expected, "context": context })),
    )
    .await
}

fn context(text: &str) -> Value {
    json!({
        "messages": [ { "id": "m1", "role": "user", "blocks": [ { "type": "text", "text": text } ] } ],
        "modelState": { "format": "openai-chat/v1", "data": { "k": text } }
    })
}

async fn create_read_write_delete_round_trip(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(&db, json!({}))).await;

    let (created, path) = create(&r, "alice", json!({ "title": "Devices" })).await;
    assert!(created["conversation"]["id"]
        .as_str()
        .unwrap()
        .starts_with("c_"));
    assert_eq!(created["conversation"]["revision"], 1);
    assert_eq!(created["conversation"]["title"], "Devices");
    assert_eq!(
        created["context"],
        json!({ "messages": [], "modelState": null }),
        "modelState present, null"
    );

    let (status, written) = put(&r, &path, "alice", 1, context("hi")).await;
    assert_eq!(status, StatusCode::OK, "{written}");
    assert_eq!(written["conversation"]["revision"], 2);
    assert_eq!(
        written["conversation"]["title"], "Devices",
        "title kept when absent"
    );

    let (status, read) = r.call("GET", &path, "alice", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["context"], context("hi"));
    assert_eq!(read["conversation"]["revision"], 2);
    assert!(read["conversation"]["updatedAt"]
        .as_str()
        .unwrap()
        .ends_with('Z'));

    let (status, _) = r.call("DELETE", &path, "alice", None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = r.call("GET", &path, "alice", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], "NOT_FOUND");
    // A late write cannot revive a deleted conversation.
    let (status, _) = put(&r, &path, "alice", 2, context("late")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

async fn stale_revision_gets_409_and_nothing_is_overwritten(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(&db, json!({}))).await;
    let (_, path) = create(&r, "alice", json!({ "context": context("v1") })).await;
    let (status, _) = put(&r, &path, "alice", 1, context("v2")).await;
    assert_eq!(status, StatusCode::OK);

    let (status, body) = r
        .call(
            "PUT",
            &path,
            "alice",
            Some(json!({ "expectedRevision": 1, "title": "x", "context": context("stale") })),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"]["code"], "REVISION_CONFLICT");
    assert_eq!(body["error"]["currentRevision"], 2);

    let (_, read) = r.call("GET", &path, "alice", None).await;
    assert_eq!(read["context"], context("v2"));
    assert_eq!(read["conversation"]["title"], "");
    assert_eq!(read["conversation"]["revision"], 2);
}

async fn concurrent_writers_exactly_one_wins_each_revision(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(
        &db,
        json!({ "database": { "maxConnections": 8 } }),
    ))
    .await;
    let (_, path) = create(&r, "alice", json!({})).await;

    // 16 writers, each retrying (read revision, write expecting it) until it has landed 5 writes.
    const WRITERS: usize = 16;
    const WRITES_EACH: usize = 5;
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let relay = r.clone();
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let mut won = Vec::new();
            let mut conflicts = 0;
            while won.len() < WRITES_EACH {
                let (_, read) = relay.call("GET", &path, "alice", None).await;
                let rev = read["conversation"]["revision"].as_u64().unwrap();
                let mut ctx = read["context"].clone();
                let tag = format!("w{w}-{}", won.len());
                ctx["messages"].as_array_mut().unwrap().push(json!({ "id": tag, "role": "user", "blocks": [ { "type": "text", "text": tag } ] }));
                let (status, body) = put(&relay, &path, "alice", rev, ctx).await;
                match status {
                    StatusCode::OK => {
                        assert_eq!(body["conversation"]["revision"].as_u64().unwrap(), rev + 1);
                        won.push((rev + 1, tag));
                    }
                    StatusCode::CONFLICT => {
                        assert!(body["error"]["currentRevision"].as_u64().unwrap() > rev);
                        conflicts += 1;
                    }
                    other => panic!("unexpected {other}: {body}"),
                }
            }
            (won, conflicts)
        }));
    }
    let mut revisions = HashSet::new();
    let mut tags = Vec::new();
    let mut conflicts = 0;
    for t in tasks {
        let (won, c) = t.await.unwrap();
        conflicts += c;
        for (rev, tag) in won {
            assert!(revisions.insert(rev), "revision {rev} was won twice");
            tags.push(tag);
        }
    }
    let total = WRITERS * WRITES_EACH;
    assert_eq!(revisions.len(), total);
    assert_eq!(
        revisions,
        (2..=(total as u64 + 1)).collect::<HashSet<_>>(),
        "every revision won exactly once"
    );
    // Nothing lost: the final context holds every acknowledged write, in revision order.
    let (_, read) = r.call("GET", &path, "alice", None).await;
    assert_eq!(
        read["conversation"]["revision"].as_u64().unwrap(),
        total as u64 + 1
    );
    let stored: HashSet<String> = read["context"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(stored.len(), total);
    for tag in tags {
        assert!(stored.contains(&tag), "acknowledged write {tag} lost");
    }
    eprintln!("{backend:?}: {total} writes, {conflicts} conflicts refused");
}

async fn list_pages_newest_first_with_cursor(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(&db, json!({}))).await;
    let mut ids = Vec::new();
    for i in 0..7 {
        let (c, _) = create(&r, "alice", json!({ "title": format!("t{i}") })).await;
        ids.push(c["conversation"]["id"].as_str().unwrap().to_owned());
    }
    create(&r, "bob", json!({ "title": "bob's" })).await;
    // Touch the first one: it becomes the newest.
    let first = format!("/api/conversations/{}", ids[0]);
    let (status, _) = put(&r, &first, "alice", 1, context("x")).await;
    assert_eq!(status, StatusCode::OK);

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/conversations?limit=3&cursor={c}"),
            None => "/api/conversations?limit=3".to_owned(),
        };
        let (status, page) = r.call("GET", &path, "alice", None).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 3);
        pages += 1;
        for item in items {
            seen.push((
                item["id"].as_str().unwrap().to_owned(),
                item["updatedAt"].as_str().unwrap().to_owned(),
            ));
        }
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen.len(), 7, "bob's conversation is not listed for alice");
    assert_eq!(seen[0].0, ids[0], "the most recently written comes first");
    let expected_rest: Vec<String> = ids[1..].iter().rev().cloned().collect();
    let got_rest: Vec<String> = seen[1..].iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(got_rest, expected_rest, "newest first");

    for bad in ["limit=0", "limit=101", "limit=abc", "cursor=garbage"] {
        let (status, body) = r
            .call("GET", &format!("/api/conversations?{bad}"), "alice", None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert_eq!(body["error"]["code"], "INVALID_REQUEST");
    }
    let (status, page) = r
        .call("GET", "/api/conversations?limit=100", "alice", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["items"].as_array().unwrap().len(), 7);
}

async fn other_users_conversation_is_not_found(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(&db, json!({}))).await;
    let (_, path) = create(&r, "alice", json!({ "context": context("secret") })).await;
    let (status, body) = r.call("GET", &path, "mallory", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(!body.to_string().contains("secret"));
    let (status, _) = put(&r, &path, "mallory", 1, context("pwned")).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "no revision leak (not 409) for another user's id"
    );
    let (status, _) = r.call("DELETE", &path, "mallory", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, read) = r.call("GET", &path, "alice", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["context"], context("secret"));
}

async fn corrupt_stored_context_is_an_explicit_error(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(&db, json!({}))).await;
    let (c, path) = create(&r, "alice", json!({ "context": context("good") })).await;
    let id = c["conversation"]["id"].as_str().unwrap().to_owned();
    // Two kinds of corruption: not JSON at all, and JSON that lost its required `modelState`.
    for broken in ["{\"messages\": [", "{\"messages\": []}"] {
        // The same statement on whichever pool the relay uses (the pools have different types).
        macro_rules! corrupt {
            ($pool:expr) => {
                sqlx::query("UPDATE conversations SET context = $1 WHERE id = $2")
                    .bind(broken)
                    .bind(&id)
                    .execute($pool)
                    .await
                    .map(|_| ())
                    .unwrap()
            };
        }
        match r.state.store() {
            patchbridge_relay::store::Store::Sqlite(sqlite) => corrupt!(sqlite.pool()),
            patchbridge_relay::store::Store::Postgres(pool) => corrupt!(pool),
        };
        let (status, body) = r.call("GET", &path, "alice", None).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{broken}");
        assert_eq!(body["error"]["code"], "CONVERSATION_CORRUPT");
        assert!(body.get("context").is_none(), "no fallback data");
    }
    // The list still works (it never parses contexts) and shows the revision, with which a PUT replaces it.
    let (status, page) = r.call("GET", "/api/conversations", "alice", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    let rev = page["items"][0]["revision"].as_u64().unwrap();
    let (status, _) = put(&r, &path, "alice", rev, context("repaired")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, read) = r.call("GET", &path, "alice", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["context"], context("repaired"));
}

async fn context_over_size_bound_is_413_and_not_stored(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(
        &db,
        json!({ "limits": { "maxConversationBytes": 2000 } }),
    ))
    .await;
    let (_, path) = create(&r, "alice", json!({ "context": context("small") })).await;
    let big = "x".repeat(3000);
    let (status, body) = put(&r, &path, "alice", 1, context(&big)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE");
    let (_, read) = r.call("GET", &path, "alice", None).await;
    assert_eq!(read["conversation"]["revision"], 1);
    assert_eq!(read["context"], context("small"));
    let (status, _) = r
        .call(
            "POST",
            "/api/conversations",
            "alice",
            Some(json!({ "context": context(&big) })),
        )
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    // The request body bound applies before parsing.
    let db2 = TestDb::new(backend);
    let r2 = relay(base_config(
        &db2,
        json!({ "limits": { "maxRequestBytes": 1000 } }),
    ))
    .await;
    let (status, body) = r2
        .call(
            "POST",
            "/api/conversations",
            "alice",
            Some(json!({ "context": context(&big) })),
        )
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE");
}

async fn strict_bodies_and_missing_model_state_are_rejected(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(&db, json!({}))).await;
    let (_, path) = create(&r, "alice", json!({})).await;
    let cases = [
        json!({ "expectedRevision": 1, "context": { "messages": [] } }),
        json!({ "expectedRevision": 1, "context": context("a"), "extra": 1 }),
        json!({ "context": context("a") }),
        json!({ "expectedRevision": -1, "context": context("a") }),
        // The fields in order, as an array: serde's array form of a struct, refused like any malformed body.
        json!([1, context("a")]),
        json!({ "expectedRevision": 1, "context": [[], null] }),
    ];
    for body in cases {
        let (status, resp) = r.call("PUT", &path, "alice", Some(body.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(resp["error"]["code"], "INVALID_REQUEST");
    }
    let (status, resp) = r
        .call(
            "POST",
            "/api/conversations",
            "alice",
            Some(json!({ "titel": "typo" })),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(resp["error"]["message"].as_str().unwrap().contains("titel"));
    let (_, read) = r.call("GET", &path, "alice", None).await;
    assert_eq!(read["conversation"]["revision"], 1, "nothing accepted");
}

/// PostgreSQL's TEXT cannot hold a NUL byte, so one in the path id or the cursor never reaches the database:
/// such an id cannot exist (404) and such a cursor is invalid (400), on both backends alike.
async fn nul_in_conversation_id_or_cursor_is_not_a_server_error(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(&db, json!({}))).await;
    let path = "/api/conversations/c_%00x";
    let (status, body) = r.call("GET", path, "alice", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = put(&r, path, "alice", 1, context("hi")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = r.call("DELETE", path, "alice", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = r
        .call("GET", "/api/conversations?cursor=1.c_%00x", "alice", None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "INVALID_REQUEST");
}

/// axum's own `Query` / `Path` rejections (a repeated query parameter, a path id that is not UTF-8 after
/// percent-decoding) answer in the documented `{ error: { code } }` shape, not axum's plain text.
async fn malformed_query_or_path_gets_the_json_error_shape(backend: Backend) {
    let db = TestDb::new(backend);
    let r = relay(base_config(&db, json!({}))).await;
    for (path, status, code) in [
        (
            "/api/conversations?limit=1&limit=2",
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
        ),
        (
            "/api/conversations?cursor=a&cursor=b",
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
        ),
        (
            "/api/conversations/c_%FF%FE",
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
        ),
    ] {
        let (got, body) = r.call("GET", path, "alice", None).await;
        assert_eq!(got, status, "{path}: {body}");
        assert_eq!(body["error"]["code"], code, "{path}: {body}");
    }
    let (got, body) = put(&r, "/api/conversations/c_%FF", "alice", 1, context("x")).await;
    assert_eq!(got, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"]["code"], "NOT_FOUND", "{body}");
    let (got, body) = r
        .call("DELETE", "/api/conversations/c_%FF", "alice", None)
        .await;
    assert_eq!(got, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"]["code"], "NOT_FOUND", "{body}");
}
