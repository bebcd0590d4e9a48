//! SQLite group commit: concurrent writes committed together keep every per-write guarantee. Each write is
//! checked against its own expected revision and its user's quota, a write refused or failing inside a group
//! affects no other write of the group, and every acknowledged write is on disk after the store is closed and
//! the file reopened.

mod common;

use std::sync::Arc;

use axum::http::StatusCode;
use common::{base_config, relay, Backend, TestDb};
use patchbridge_relay::config::DatabaseConfig;
use patchbridge_relay::store::{Quota, Store, StoreError, WriteOutcome};
use serde_json::{json, Value};
use tokio::sync::Barrier;

const ROOMY: Quota = Quota {
    max_conversations: 1000,
    max_bytes: 1 << 30,
};

fn sqlite_config(db: &TestDb) -> DatabaseConfig {
    DatabaseConfig {
        url: db.config["url"].as_str().unwrap().to_owned(),
        schema: None,
        max_connections: 8,
    }
}

fn context(text: &str) -> String {
    json!({ "messages": [ { "id": "m1", "role": "user", "blocks": [ { "type": "text", "text": text } ] } ], "modelState": null })
        .to_string()
}

/// N concurrent PUTs over HTTP to N conversations, one of them stale: exactly that one is refused with
/// REVISION_CONFLICT, and every other write is there after the relay's store is closed and reopened.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn grouped_writes_are_each_cas_checked_and_each_durable() {
    const N: usize = 32;
    const STALE: usize = 7;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay(base_config(&db, json!({}))).await;
    let mut paths = Vec::new();
    for i in 0..N {
        let user = format!("u{}", i % 4);
        let (status, created) = r
            .call("POST", "/api/conversations", &user, Some(json!({})))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let id = created["conversation"]["id"].as_str().unwrap().to_owned();
        paths.push((user, format!("/api/conversations/{id}")));
    }
    // Another client moves the STALE conversation to revision 2 first.
    let (user, path) = &paths[STALE];
    let body = json!({ "expectedRevision": 1, "context": serde_json::from_str::<Value>(&context("other")).unwrap() });
    let (status, _) = r.call("PUT", path, user, Some(body)).await;
    assert_eq!(status, StatusCode::OK);

    let (commits_before, writes_before) = r.state.store().group_commit_counts().unwrap();
    let barrier = Arc::new(Barrier::new(N));
    let mut tasks = Vec::new();
    for (i, (user, path)) in paths.iter().cloned().enumerate() {
        let r = r.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let body = json!({ "expectedRevision": 1, "context": serde_json::from_str::<Value>(&context(&format!("w{i}"))).unwrap() });
            barrier.wait().await;
            r.call("PUT", &path, &user, Some(body)).await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let (status, body) = t.await.unwrap();
        if i == STALE {
            assert_eq!(status, StatusCode::CONFLICT, "{body}");
            assert_eq!(body["error"]["code"], "REVISION_CONFLICT");
            assert_eq!(body["error"]["currentRevision"], 2);
        } else {
            assert_eq!(status, StatusCode::OK, "write {i}: {body}");
            assert_eq!(body["conversation"]["revision"], 2);
        }
    }
    let (commits, writes) = r.state.store().group_commit_counts().unwrap();
    let (commits, writes) = (commits - commits_before, writes - writes_before);
    eprintln!("{writes} concurrent SQLite writes in {commits} commits");
    assert_eq!(
        writes, N as u64,
        "every write, the refused one too, went through the writer"
    );
    assert!(commits < writes, "concurrent writes shared commits");

    r.state.store().close().await;
    drop(r);
    let reopened = relay(base_config(&db, json!({}))).await;
    for (i, (user, path)) in paths.iter().enumerate() {
        let (status, read) = reopened.call("GET", path, user, None).await;
        assert_eq!(status, StatusCode::OK, "{read}");
        assert_eq!(read["conversation"]["revision"], 2);
        let text = if i == STALE {
            "other".to_owned()
        } else {
            format!("w{i}")
        };
        assert_eq!(
            read["context"]["messages"][0]["blocks"][0]["text"], text,
            "write {i} survived the restart"
        );
    }
}

/// Concurrent writers that all expect the same revision of one conversation: however the writer groups them,
/// exactly one wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn same_revision_written_concurrently_has_exactly_one_winner() {
    const N: usize = 24;
    let db = TestDb::new(Backend::Sqlite);
    let store = Store::connect(&sqlite_config(&db)).await.unwrap();
    store
        .create("alice", "c1", "", &context(""), ROOMY)
        .await
        .unwrap();
    let barrier = Arc::new(Barrier::new(N));
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let store = store.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                let ctx = context(&format!("w{i}"));
                store
                    .write("alice", "c1", 1, None, &ctx, ROOMY)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut winners = 0;
    for t in tasks {
        match t.await.unwrap() {
            WriteOutcome::Written(w) => {
                assert_eq!(w.summary.revision, 2);
                winners += 1;
            }
            WriteOutcome::Conflict { current } => assert_eq!(current, 2),
            WriteOutcome::NotFound => panic!("not found"),
        }
    }
    assert_eq!(winners, 1);
    store.close().await;
}

/// Writes of one user in one group count against the user's byte quota one after another: the writes that
/// fit land, the rest are refused, and the stored usage equals what landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn grouped_writes_of_one_user_share_the_byte_quota() {
    const N: usize = 16;
    let db = TestDb::new(Backend::Sqlite);
    let store = Store::connect(&sqlite_config(&db)).await.unwrap();
    let small = context("");
    for i in 0..N {
        store
            .create("bob", &format!("c{i}"), "", &small, ROOMY)
            .await
            .unwrap();
    }
    let (_, base) = store.usage("bob").await.unwrap();
    // Room for exactly five of the sixteen 1,000-byte growths.
    let quota = Quota {
        max_conversations: 1000,
        max_bytes: base + 5 * 1000,
    };
    let big = context(&"x".repeat(1000));
    let growth = (big.len() - small.len()) as i64;
    assert_eq!(growth, 1000);
    let barrier = Arc::new(Barrier::new(N));
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let store = store.clone();
            let barrier = barrier.clone();
            let big = big.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                store
                    .write("bob", &format!("c{i}"), 1, None, &big, quota)
                    .await
            })
        })
        .collect();
    let mut landed = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(WriteOutcome::Written(_)) => landed += 1,
            Ok(other) => panic!("{other:?}"),
            Err(e) => assert!(matches!(e, StoreError::QuotaExceeded(_)), "{e:?}"),
        }
    }
    assert_eq!(landed, 5);
    let (_, used) = store.usage("bob").await.unwrap();
    assert_eq!(used, base + 5 * growth);
    store.close().await;
}

/// A write that fails in the database (here: creating an id that exists) rolls its group back; the other
/// writes of the group are run again on their own and land, and the usage counts only what landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_write_in_a_group_fails_alone() {
    const N: usize = 16;
    let db = TestDb::new(Backend::Sqlite);
    let store = Store::connect(&sqlite_config(&db)).await.unwrap();
    store
        .create("carol", "taken", "", &context(""), ROOMY)
        .await
        .unwrap();
    let barrier = Arc::new(Barrier::new(N));
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let store = store.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                let id = if i == 3 {
                    "taken".to_owned()
                } else {
                    format!("c{i}")
                };
                barrier.wait().await;
                store.create("carol", &id, "", &context(""), ROOMY).await
            })
        })
        .collect();
    for (i, t) in tasks.into_iter().enumerate() {
        let result = t.await.unwrap();
        if i == 3 {
            assert!(result.is_err(), "the duplicate id is refused");
        } else {
            assert_eq!(result.unwrap().summary.id, format!("c{i}"));
        }
    }
    let (count, _) = store.usage("carol").await.unwrap();
    assert_eq!(
        count, N as i64,
        "the first conversation and the N-1 new ones"
    );
    store.close().await;
    let reopened = Store::connect(&sqlite_config(&db)).await.unwrap();
    for i in (0..N).filter(|i| *i != 3) {
        assert!(reopened
            .get("carol", &format!("c{i}"))
            .await
            .unwrap()
            .is_some());
    }
    reopened.close().await;
}
