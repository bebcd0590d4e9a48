//! Concurrent compare-and-set writes on PostgreSQL through two relays sharing one schema (as replicas do):
//! one user's writes under a byte quota (exactly the writes that fit land, and the stored total equals the
//! sum of the stored contexts), and many writers of one conversation (exactly one winner per revision, the
//! losers told the winner's revision, writes racing a delete get 404 and leave nothing behind).

mod common;

use std::sync::Arc;

use axum::http::StatusCode;
use common::*;
use patchbridge_relay::store::Store;
use serde_json::{json, Value};
use tokio::sync::Barrier;

fn context(text: &str) -> Value {
    json!({
        "messages": [ { "id": "m1", "role": "user", "blocks": [ { "type": "text", "text": text } ] } ],
        "modelState": null
    })
}

async fn create(r: &Relay, user: &str) -> String {
    let (status, created) = r
        .call(
            "POST",
            "/api/conversations",
            user,
            Some(json!({ "context": context("") })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    format!(
        "/api/conversations/{}",
        created["conversation"]["id"].as_str().unwrap()
    )
}

async fn put(r: &Relay, path: &str, user: &str, expected: u64, text: &str) -> (StatusCode, Value) {
    r.call(
        "PUT",
        path,
        user,
        Some(json!({ "expectedRevision": expected, "context": context(text) })),
    )
    .await
}

/// `(usage row bytes, usage row count, sum of the user's stored context bytes, number of rows)`.
async fn stored_totals(r: &Relay, user: &str) -> (i64, i64, i64, i64) {
    let Store::Postgres(pool) = r.state.store() else {
        panic!("a PostgreSQL store");
    };
    let (count, bytes) = r.state.store().usage(user).await.unwrap();
    let (sum, rows): (Option<i64>, i64) = sqlx::query_as(
        "SELECT SUM(context_bytes)::BIGINT, COUNT(*) FROM conversations WHERE user_id = $1",
    )
    .bind(user)
    .fetch_one(pool)
    .await
    .unwrap();
    (bytes, count, sum.unwrap_or(0), rows)
}

/// Two relays on one schema with the given limits (the second stands for another replica).
async fn replicas(db: &TestDb, limits: Value) -> (Relay, Relay) {
    let config = base_config(
        db,
        json!({ "limits": limits, "database": { "maxConnections": 8 } }),
    );
    (relay(config.clone()).await, relay(config).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_growing_writes_of_one_user_land_only_while_they_fit_the_byte_quota_on_postgres()
{
    const CONVERSATIONS: usize = 16;
    const FIT: i64 = 5;
    let big = "x".repeat(1000);
    let db = TestDb::new(Backend::Postgres);

    // Measure the stored sizes of the small and the big context (another user, no quota pressure).
    let (probe, _) = replicas(&db, json!({})).await;
    let path = create(&probe, "probe").await;
    let small_bytes = stored_totals(&probe, "probe").await.0;
    assert_eq!(put(&probe, &path, "probe", 1, &big).await.0, StatusCode::OK);
    let growth = stored_totals(&probe, "probe").await.0 - small_bytes;
    assert!(growth > 900, "{growth}");

    // Room for the small contexts and exactly FIT growths (plus half of one more).
    let quota = small_bytes * CONVERSATIONS as i64 + FIT * growth + growth / 2;
    let (a, b) = replicas(
        &db,
        json!({ "maxConversationsPerUser": 100, "maxStoredBytesPerUser": quota, "maxConversationBytes": 4096 }),
    )
    .await;
    let mut paths = Vec::new();
    for i in 0..CONVERSATIONS {
        paths.push(create(if i % 2 == 0 { &a } else { &b }, "alice").await);
    }

    let start = Arc::new(Barrier::new(CONVERSATIONS));
    let tasks: Vec<_> = paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let r = if i % 2 == 0 { a.clone() } else { b.clone() };
            let (path, big, start) = (path.clone(), big.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                let (status, body) = put(&r, &path, "alice", 1, &big).await;
                (path, status, body)
            })
        })
        .collect();
    let mut landed = 0;
    for task in tasks {
        let (path, status, body) = task.await.unwrap();
        let (_, read) = a.call("GET", &path, "alice", None).await;
        match status {
            StatusCode::OK => {
                landed += 1;
                assert_eq!(body["conversation"]["revision"], 2);
                assert_eq!(read["conversation"]["revision"], 2);
                assert_eq!(read["context"], context(&big));
            }
            StatusCode::FORBIDDEN => {
                assert_eq!(body["error"]["code"], "QUOTA_EXCEEDED", "{body}");
                // Nothing written: same revision, same context.
                assert_eq!(read["conversation"]["revision"], 1);
                assert_eq!(read["context"], context(""));
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(landed, FIT, "exactly the writes that fit land");
    let (bytes, count, sum, rows) = stored_totals(&a, "alice").await;
    assert_eq!((count, rows), (CONVERSATIONS as i64, CONVERSATIONS as i64));
    assert_eq!(bytes, sum, "the usage row equals the stored contexts");
    assert_eq!(bytes, small_bytes * CONVERSATIONS as i64 + FIT * growth);

    // Shrinking always fits, and gives the room back.
    for path in &paths {
        let (_, read) = b.call("GET", path, "alice", None).await;
        let rev = read["conversation"]["revision"].as_u64().unwrap();
        assert_eq!(put(&b, path, "alice", rev, "").await.0, StatusCode::OK);
    }
    let (bytes, _, sum, _) = stored_totals(&a, "alice").await;
    assert_eq!((bytes, sum), (small_bytes * CONVERSATIONS as i64, bytes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_writers_of_one_conversation_have_one_winner_per_revision_on_postgres() {
    const WRITERS: usize = 12;
    const ROUNDS: u64 = 8;
    let db = TestDb::new(Backend::Postgres);
    let (a, b) = replicas(&db, json!({})).await;
    let path = create(&a, "alice").await;
    let other = create(&a, "alice").await;

    // Each round every writer expects the same revision at once, each with a context of its own size.
    for round in 1..=ROUNDS {
        let start = Arc::new(Barrier::new(WRITERS));
        let tasks: Vec<_> = (0..WRITERS)
            .map(|w| {
                let r = if w % 2 == 0 { a.clone() } else { b.clone() };
                let (path, start) = (path.clone(), start.clone());
                tokio::spawn(async move {
                    let text = format!("{round}-{w}-{}", "y".repeat(w * 37 + round as usize));
                    start.wait().await;
                    let (status, body) = put(&r, &path, "alice", round, &text).await;
                    (status, body, text)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for task in tasks {
            let (status, body, text) = task.await.unwrap();
            match status {
                StatusCode::OK => {
                    assert_eq!(body["conversation"]["revision"], round + 1);
                    winners.push(text);
                }
                StatusCode::CONFLICT => {
                    assert_eq!(body["error"]["code"], "REVISION_CONFLICT", "{body}");
                    assert_eq!(body["error"]["currentRevision"], round + 1, "{body}");
                }
                other => panic!("unexpected {other}: {body}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: exactly one winner");
        let (_, read) = b.call("GET", &path, "alice", None).await;
        assert_eq!(read["conversation"]["revision"], round + 1);
        assert_eq!(read["context"], context(&winners[0]));
        let (bytes, _, sum, _) = stored_totals(&a, "alice").await;
        assert_eq!(bytes, sum, "round {round}: usage follows the winner's size");
    }

    // Writers racing a delete: each either lands before it (200) or finds nothing (404); nothing is left.
    let start = Arc::new(Barrier::new(WRITERS + 1));
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let r = if w % 2 == 0 { a.clone() } else { b.clone() };
            let (path, start) = (path.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                let mut expected = ROUNDS + 1;
                loop {
                    let (status, body) = put(&r, &path, "alice", expected, &"z".repeat(w)).await;
                    match status {
                        StatusCode::OK => expected += 1,
                        StatusCode::CONFLICT => {
                            expected = body["error"]["currentRevision"].as_u64().unwrap()
                        }
                        StatusCode::NOT_FOUND => return,
                        other => panic!("unexpected {other}: {body}"),
                    }
                }
            })
        })
        .collect();
    start.wait().await;
    let (status, _) = b.call("DELETE", &path, "alice", None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    for task in tasks {
        task.await.unwrap();
    }
    let (_, read) = a.call("GET", &other, "alice", None).await;
    assert_eq!(read["conversation"]["revision"], 1);
    let (bytes, count, sum, rows) = stored_totals(&a, "alice").await;
    assert_eq!((count, rows), (1, 1));
    assert_eq!(bytes, sum);
}
