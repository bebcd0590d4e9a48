//! The PostgreSQL admission statement (`patchbridge_admit`, migration 0005) decides as the Rust rule does
//! (`Policy::refusal` in `spending/policy.rs`): random policies (fixed and sliding windows of several lengths,
//! call and token limits, concurrency limits, a model's own scope) and random usage (slices inside, before and
//! after each window, running marks live and expired, of several models) are written to a real schema, then
//! one admission goes through the relay's PostgreSQL counter store and the same usage through the Rust rule.
//! Both must admit or refuse alike; a refusal's returned usage must give the Rust rule's very refusal (limit and
//! retry time); an admission must have counted the call in each of its slices and marked it running.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use common::*;
use patchbridge_relay::spending::counts::{SliceRow, Snapshot};
use patchbridge_relay::spending::policy::{slice_start, Policy, Scope, Window};
use patchbridge_relay::spending::port::{Reserve, Reserved};
use patchbridge_relay::store::Store;

/// splitmix64: a seeded generator, so a failure names the trial that reproduces it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

const MODELS: [&str; 3] = ["chat", "big", "other"];

fn random_limit(rng: &mut Rng, small: u64) -> Option<u64> {
    rng.chance(50).then(|| 1 + rng.below(small))
}

/// One to three distinct windows, each with at least one limit.
fn random_windows(rng: &mut Rng) -> Vec<Window> {
    let mut out: Vec<Window> = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let sliding = rng.chance(50);
        let seconds = if sliding {
            rng.pick(&[60, 120, 600, 3600])
        } else {
            rng.pick(&[1, 10, 60, 3600])
        };
        if out
            .iter()
            .any(|w| w.seconds == seconds && w.sliding == sliding)
        {
            continue;
        }
        let mut window = Window {
            seconds,
            sliding,
            calls: random_limit(rng, 8),
            input_tokens: random_limit(rng, 60),
            output_tokens: random_limit(rng, 60),
        };
        if window.limits().next().is_none() {
            window.calls = Some(1 + rng.below(8));
        }
        out.push(window);
    }
    out
}

fn random_policy(rng: &mut Rng) -> Policy {
    let global = Scope {
        model: None,
        windows: random_windows(rng),
        max_concurrent: random_limit(rng, 4),
    };
    let mut models = BTreeMap::new();
    for model in ["chat", "big"] {
        if rng.chance(40) {
            let windows = if rng.chance(70) {
                random_windows(rng)
            } else {
                Vec::new()
            };
            models.insert(
                model.to_owned(),
                Scope {
                    model: Some(model.to_owned()),
                    windows,
                    max_concurrent: random_limit(rng, 3),
                },
            );
        }
    }
    Policy::new(global, models, HashMap::new(), 100, 60)
}

/// Slices of every slice length the policy uses, for every scope, around `now` (some counted by no window:
/// too old, or after `now`), and running marks of several models (some expired).
fn random_usage(rng: &mut Rng, policy: &Policy, now: i64) -> (Vec<SliceRow>, Vec<(String, i64)>) {
    let mut lengths: Vec<i64> = policy.horizons(now).into_iter().map(|(l, _)| l).collect();
    lengths.push(7); // a slice length no window reads
    let mut rows: BTreeMap<(String, i64, i64), SliceRow> = BTreeMap::new();
    for _ in 0..rng.below(24) {
        let scope = rng.pick(&["", "", "chat", "big", "other"]).to_owned();
        let len = rng.pick(&lengths);
        // From 70 slices back (past any sliding window) to 2 slices ahead.
        let back = i64::try_from(rng.below(73)).unwrap() - 2;
        let start = slice_start(now, len) - back * len;
        let row = SliceRow {
            scope: scope.clone(),
            slice_seconds: len,
            slice_start: start,
            calls: i64::try_from(rng.below(4)).unwrap(),
            input_tokens: i64::try_from(rng.below(30)).unwrap(),
            output_tokens: i64::try_from(rng.below(30)).unwrap(),
        };
        rows.insert((scope, len, start), row);
    }
    let marks = (0..rng.below(6))
        .map(|_| {
            let model = rng.pick(&MODELS).to_owned();
            // Expired (at or before now) or still running.
            let lease_until = now + i64::try_from(rng.below(5)).unwrap() - 2;
            (model, lease_until)
        })
        .collect();
    (rows.into_values().collect(), marks)
}

async fn write_usage(pool: &sqlx::PgPool, user: &str, rows: &[SliceRow], marks: &[(String, i64)]) {
    for r in rows {
        sqlx::query(
            "INSERT INTO spending_usage (user_id, scope, slice_seconds, slice_start, calls, \
             input_tokens, output_tokens) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(user)
        .bind(&r.scope)
        .bind(r.slice_seconds)
        .bind(r.slice_start)
        .bind(r.calls)
        .bind(r.input_tokens)
        .bind(r.output_tokens)
        .execute(pool)
        .await
        .unwrap();
    }
    for (i, (model, lease_until)) in marks.iter().enumerate() {
        sqlx::query(
            "INSERT INTO spending_calls (call_id, user_id, model, lease_until, instance_id) \
             VALUES ($1, $2, $3, $4, 'elsewhere')",
        )
        .bind(format!("{user}-mark-{i}"))
        .bind(user)
        .bind(model)
        .bind(*lease_until)
        .execute(pool)
        .await
        .unwrap();
    }
}

/// The running marks the Rust rule reads: live at `now`, by model.
fn running(marks: &[(String, i64)], now: i64) -> Vec<(String, i64)> {
    let mut by_model: BTreeMap<String, i64> = BTreeMap::new();
    for (model, lease_until) in marks {
        if *lease_until > now {
            *by_model.entry(model.clone()).or_default() += 1;
        }
    }
    by_model.into_iter().collect()
}

fn reserve(policy: &Arc<Policy>, user: &str, model: &str, now: i64) -> Reserve {
    let rule = {
        let (policy, model) = (policy.clone(), model.to_owned());
        Arc::new(move |s: &Snapshot| policy.refusal(&model, s, now).is_none())
    };
    Reserve {
        user: user.to_owned(),
        call_id: format!("{user}-call"),
        instance: "this-relay".into(),
        model: model.to_owned(),
        now,
        lease_until: now + 60,
        horizons: policy.horizons(now),
        read_running: policy.limits_running(model),
        slices: policy.slices(model),
        admit: rule,
    }
}

async fn stored_calls(pool: &sqlx::PgPool, user: &str, scope: &str, len: i64, start: i64) -> i64 {
    sqlx::query_scalar(
        "SELECT coalesce(sum(calls), 0)::BIGINT FROM spending_usage \
         WHERE user_id = $1 AND scope = $2 AND slice_seconds = $3 AND slice_start = $4",
    )
    .bind(user)
    .bind(scope)
    .bind(len)
    .bind(start)
    .fetch_one(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn the_postgres_admission_statement_admits_and_refuses_exactly_as_the_rust_rule_on_random_usage(
) {
    let db = TestDb::new(Backend::Postgres);
    let store = Store::connect(&serde_json::from_value(db.config.clone()).unwrap())
        .await
        .unwrap();
    let Store::Postgres(pool) = &store else {
        unreachable!()
    };
    let (mut admitted, mut refused) = (0, 0);
    for trial in 0..600_u64 {
        let mut rng = Rng(0x5EED_0000 + trial);
        let policy = Arc::new(random_policy(&mut rng));
        let counters = store.spending_counters(&policy);
        let now = 1_800_000_000 + i64::try_from(rng.below(100_000)).unwrap();
        let model = rng.pick(&MODELS);
        let user = format!("user-{trial}");
        let (rows, marks) = random_usage(&mut rng, &policy, now);
        write_usage(pool, &user, &rows, &marks).await;
        let usage = Snapshot {
            slices: rows.clone(),
            running: running(&marks, now),
        };
        let expected = policy.refusal(model, &usage, now);
        let context = format!("trial {trial}: {model} at {now}, {policy:?}, {usage:?}");

        match counters
            .reserve(reserve(&policy, &user, model, now))
            .await
            .unwrap()
        {
            Reserved::Admitted => {
                admitted += 1;
                assert_eq!(
                    expected, None,
                    "admitted in SQL, refused in Rust: {context}"
                );
                for (scope, len) in policy.slices(model) {
                    let start = slice_start(now, len);
                    let before = rows
                        .iter()
                        .find(|r| {
                            r.scope == scope && r.slice_seconds == len && r.slice_start == start
                        })
                        .map_or(0, |r| r.calls);
                    assert_eq!(
                        stored_calls(pool, &user, &scope, len, start).await,
                        before + 1,
                        "counted once in ({scope:?}, {len}): {context}"
                    );
                }
                let mark: (String, String, i64) = sqlx::query_as(
                    "SELECT model, instance_id, lease_until FROM spending_calls WHERE call_id = $1",
                )
                .bind(format!("{user}-call"))
                .fetch_one(pool)
                .await
                .unwrap();
                assert_eq!(mark, (model.to_owned(), "this-relay".into(), now + 60));
            }
            Reserved::Refused(seen) => {
                refused += 1;
                assert!(
                    expected.is_some(),
                    "refused in SQL, admitted in Rust: {context}"
                );
                assert_eq!(
                    policy.refusal(model, &seen, now),
                    expected,
                    "the returned usage names the same limit and retry time: {context}, returned {seen:?}"
                );
                let marked: i64 =
                    sqlx::query_scalar("SELECT count(*) FROM spending_calls WHERE call_id = $1")
                        .bind(format!("{user}-call"))
                        .fetch_one(pool)
                        .await
                        .unwrap();
                assert_eq!(marked, 0, "a refusal writes nothing: {context}");
            }
        }
    }
    // The generator reaches both answers often enough for the comparison to mean something.
    assert!(
        admitted > 100 && refused > 100,
        "{admitted} admitted, {refused} refused"
    );
    store.close().await;
}

#[tokio::test]
async fn a_settlement_statement_ends_the_mark_adds_the_tokens_and_deletes_the_slices_no_window_reads(
) {
    let db = TestDb::new(Backend::Postgres);
    let store = Store::connect(&serde_json::from_value(db.config.clone()).unwrap())
        .await
        .unwrap();
    let Store::Postgres(pool) = &store else {
        unreachable!()
    };
    let policy = Arc::new(Policy::new(
        Scope {
            model: None,
            windows: vec![Window {
                seconds: 600,
                sliding: true,
                calls: Some(100),
                input_tokens: Some(1000),
                output_tokens: None,
            }],
            max_concurrent: Some(4),
        },
        BTreeMap::new(),
        HashMap::new(),
        100,
        60,
    ));
    let counters = store.spending_counters(&policy);
    let now = 1_800_000_005;
    // An old slice (read by no window at `now`), and an expired mark of a relay that died.
    let stale = SliceRow {
        scope: String::new(),
        slice_seconds: 10,
        slice_start: now - 5_000,
        calls: 3,
        input_tokens: 9,
        output_tokens: 9,
    };
    write_usage(pool, "sam", &[stale], &[("chat".into(), now - 1)]).await;
    let admitted = counters
        .reserve(reserve(&policy, "sam", "chat", now))
        .await
        .unwrap();
    assert_eq!(admitted, Reserved::Admitted);
    counters
        .settle(patchbridge_relay::spending::port::Settle {
            user: "sam".into(),
            call_id: "sam-call".into(),
            now,
            slices: policy.slices("chat"),
            input_tokens: 40,
            output_tokens: 7,
            horizons: policy.horizons(now),
        })
        .await
        .unwrap();
    let marks: i64 =
        sqlx::query_scalar("SELECT count(*) FROM spending_calls WHERE user_id = 'sam'")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(marks, 0, "its mark and the expired one are gone");
    let rows: Vec<(i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT slice_start, calls, input_tokens, output_tokens FROM spending_usage \
         WHERE user_id = 'sam' ORDER BY slice_start",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(rows, [(slice_start(now, 10), 1, 40, 7)]);
    store.close().await;
}
