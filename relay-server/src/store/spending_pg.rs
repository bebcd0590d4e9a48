//! Spending's counters on PostgreSQL as the relay runs them: an admission is one statement and so is a
//! settlement (the functions `patchbridge_admit` and `patchbridge_settle`, migration 0005), one round trip each
//! instead of the transaction's several (docs/adr/013).
//!
//! - [`SharedCounters`]: the [`CounterStore`] the relay hands its spending component on PostgreSQL
//!   ([`Store::spending_counters`]); loading, flushing, renewing and the usage report are the store's own.
//! - [`AdmitLimits`]: the limits one admission checks, as the function's parameters, derived from the relay's
//!   [`Policy`] at each call.
//!
//! Where the rule lives: the decision is `Policy::refusal(...).is_none()` (`spending/policy.rs`). Everything
//! that rule computes from the configuration (which scopes and windows apply to the model, each window's slice
//! length and oldest slice at `now`, each limit) is computed here by the same [`Policy`] and
//! [`crate::spending::policy::Window`] methods and passed in; the function only sums the rows each window names
//! and compares (`used >= max` refuses, as in policy.rs), and counts running marks the same way. That remainder
//! is written twice (SQL and Rust); `tests/spending_pg_rule.rs` feeds both the same random usage and limits and
//! requires the same decision, and at run time a refusal the Rust rule does not confirm on the returned rows is
//! an error, never a silent pass (`Spending::admit`). A refusal's limit and retry time are always Rust's.
//!
//! The [`Reserve`]'s closure is not run here: it closes over the same [`Policy`] this store was built with
//! (`AppState::new` passes one value to both), and a PostgreSQL function cannot call it. [`Store`] itself, used
//! as a counter store, still runs the closure inside a transaction (the general path of the port).

use std::sync::Arc;

use sqlx::PgPool;

use super::error::StoreError;
use super::Store;
use crate::spending::counters::Delta;
use crate::spending::counts::{SliceRow, Snapshot};
use crate::spending::policy::{slice_start, Policy};
use crate::spending::port::{CounterFuture, CounterStore, Horizons, Reserve, Reserved, Settle};

const ADMIT: &str = "SELECT admitted, u_scope, u_len, u_start, u_calls, u_input, u_output, \
     m_model, m_running FROM patchbridge_admit(\
     $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)";
const SETTLE: &str = "SELECT patchbridge_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

impl Store {
    /// The counter store the spending component uses with `policy`: on PostgreSQL, [`SharedCounters`] (one
    /// statement per admission and per settlement); on SQLite, the store itself (counters in memory, written
    /// behind).
    pub fn spending_counters(&self, policy: &Policy) -> Arc<dyn CounterStore> {
        match self {
            Store::Postgres(pool) => Arc::new(SharedCounters {
                store: self.clone(),
                pool: pool.clone(),
                policy: Arc::new(policy.clone()),
            }),
            Store::Sqlite(_) => Arc::new(self.clone()),
        }
    }
}

/// PostgreSQL counters shared by replicas, admitting and settling in one statement each.
pub struct SharedCounters {
    store: Store,
    pool: PgPool,
    policy: Arc<Policy>,
}

/// The limits one admission of a model checks at `now`: the function's parameters, column by column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdmitLimits {
    /// Per window of the model's scopes: scope (`""`: all models), slice length, oldest slice counted.
    pub window_scope: Vec<String>,
    pub window_len: Vec<i64>,
    pub window_since: Vec<i64>,
    /// Per window, each limit (`None`: not limited).
    pub window_calls: Vec<Option<i64>>,
    pub window_input: Vec<Option<i64>>,
    pub window_output: Vec<Option<i64>>,
    /// Per concurrency limit: scope and maximum.
    pub running_scope: Vec<String>,
    pub running_max: Vec<i64>,
}

fn count(max: Option<u64>) -> Option<i64> {
    max.map(|m| i64::try_from(m).unwrap_or(i64::MAX))
}

impl AdmitLimits {
    /// What `policy` checks for one more call of `model` at `now` (the scopes and windows `Policy::refusal`
    /// walks, in its order).
    pub fn new(policy: &Policy, model: &str, now: i64) -> Self {
        let mut out = AdmitLimits::default();
        for scope in policy.scopes(model) {
            if let Some(max) = scope.max_concurrent {
                out.running_scope.push(scope.key().to_owned());
                out.running_max.push(count(Some(max)).unwrap_or(i64::MAX));
            }
            for window in &scope.windows {
                out.window_scope.push(scope.key().to_owned());
                out.window_len.push(window.slice_seconds());
                out.window_since.push(window.oldest_slice(now));
                out.window_calls.push(count(window.calls));
                out.window_input.push(count(window.input_tokens));
                out.window_output.push(count(window.output_tokens));
            }
        }
        out
    }
}

/// The admission function's result row.
type AdmitRow = (
    bool,
    Option<Vec<String>>,
    Option<Vec<i64>>,
    Option<Vec<i64>>,
    Option<Vec<i64>>,
    Option<Vec<i64>>,
    Option<Vec<i64>>,
    Option<Vec<String>>,
    Option<Vec<i64>>,
);

/// A refusal's usage from the function's arrays (one element per slice, then per running model).
fn refused_snapshot(row: AdmitRow) -> Snapshot {
    let (_, scope, len, start, calls, input, output, model, running) = row;
    let (scope, len, start) = (
        scope.unwrap_or_default(),
        len.unwrap_or_default(),
        start.unwrap_or_default(),
    );
    let (calls, input, output) = (
        calls.unwrap_or_default(),
        input.unwrap_or_default(),
        output.unwrap_or_default(),
    );
    let slices = scope
        .into_iter()
        .zip(len)
        .zip(start)
        .zip(calls)
        .zip(input)
        .zip(output)
        .map(
            |(((((scope, slice_seconds), slice_start), calls), input_tokens), output_tokens)| {
                SliceRow {
                    scope,
                    slice_seconds,
                    slice_start,
                    calls,
                    input_tokens,
                    output_tokens,
                }
            },
        )
        .collect();
    let running = model
        .unwrap_or_default()
        .into_iter()
        .zip(running.unwrap_or_default())
        .collect();
    Snapshot { slices, running }
}

fn columns<A: Clone, B: Clone>(pairs: &[(A, B)]) -> (Vec<A>, Vec<B>) {
    pairs.iter().cloned().unzip()
}

impl SharedCounters {
    /// One admission: the function decides under the user's advisory lock and, admitted, records.
    async fn admit(&self, r: &Reserve) -> Result<Reserved, StoreError> {
        let limits = AdmitLimits::new(&self.policy, &r.model, r.now);
        let (record_scope, record_len) = columns(&r.slices);
        let record_start: Vec<i64> = record_len.iter().map(|l| slice_start(r.now, *l)).collect();
        let (horizon_len, horizon_since) = columns(&r.horizons);
        let row: AdmitRow = sqlx::query_as(ADMIT)
            .bind(&r.user)
            .bind(&r.call_id)
            .bind(&r.instance)
            .bind(&r.model)
            .bind(r.now)
            .bind(r.lease_until)
            .bind(&limits.window_scope)
            .bind(&limits.window_len)
            .bind(&limits.window_since)
            .bind(&limits.window_calls)
            .bind(&limits.window_input)
            .bind(&limits.window_output)
            .bind(&limits.running_scope)
            .bind(&limits.running_max)
            .bind(&record_scope)
            .bind(&record_len)
            .bind(&record_start)
            .bind(&horizon_len)
            .bind(&horizon_since)
            .bind(r.read_running)
            .fetch_one(&self.pool)
            .await?;
        Ok(if row.0 {
            Reserved::Admitted
        } else {
            Reserved::Refused(refused_snapshot(row))
        })
    }

    /// One settlement: the mark ends, the tokens are added, the user's unread slices are deleted.
    async fn settle(&self, s: &Settle) -> Result<(), StoreError> {
        let (scope, len) = columns(&s.slices);
        let start: Vec<i64> = len.iter().map(|l| slice_start(s.now, *l)).collect();
        let (horizon_len, horizon_before) = columns(&s.horizons);
        sqlx::query(SETTLE)
            .bind(&s.user)
            .bind(&s.call_id)
            .bind(s.now)
            .bind(&scope)
            .bind(&len)
            .bind(&start)
            .bind(s.input_tokens)
            .bind(s.output_tokens)
            .bind(&horizon_len)
            .bind(&horizon_before)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

impl CounterStore for SharedCounters {
    fn shared(&self) -> bool {
        true
    }

    fn load(&self, horizons: Horizons) -> CounterFuture<'_, Vec<(String, SliceRow)>> {
        self.store.load(horizons)
    }

    fn flush(&self, deltas: Vec<Delta>, horizons: Horizons) -> CounterFuture<'_, ()> {
        self.store.flush(deltas, horizons)
    }

    fn reserve(&self, reserve: Reserve) -> CounterFuture<'_, Reserved> {
        Box::pin(async move { Ok(self.admit(&reserve).await?) })
    }

    fn settle(&self, settle: Settle) -> CounterFuture<'_, ()> {
        Box::pin(async move { Ok(SharedCounters::settle(self, &settle).await?) })
    }

    fn renew<'a>(&'a self, instance: &'a str, lease_until: i64) -> CounterFuture<'a, ()> {
        self.store.renew(instance, lease_until)
    }

    fn snapshot<'a>(
        &'a self,
        user: &'a str,
        horizons: Horizons,
        now: i64,
    ) -> CounterFuture<'a, Snapshot> {
        self.store.snapshot(user, horizons, now)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;
    use crate::spending::policy::{Scope, Window};

    #[test]
    fn an_admissions_limits_are_every_window_and_concurrency_limit_of_the_models_scopes_at_now() {
        let window = |seconds, sliding, calls, output| Window {
            seconds,
            sliding,
            calls,
            input_tokens: None,
            output_tokens: output,
        };
        let big = Scope {
            model: Some("big".into()),
            windows: vec![window(3600, false, None, Some(50))],
            max_concurrent: Some(1),
        };
        let policy = Policy::new(
            Scope {
                model: None,
                windows: vec![window(600, true, Some(3), None)],
                max_concurrent: Some(4),
            },
            BTreeMap::from([("big".to_owned(), big)]),
            HashMap::new(),
            100,
            60,
        );
        let now = 7 * 3600 + 1005;
        let limits = AdmitLimits::new(&policy, "big", now);
        assert_eq!(limits.window_scope, ["", "big"]);
        assert_eq!(limits.window_len, [10, 3600]);
        // The sliding window counts from 590 s before the slice `now` falls in; the fixed hour from its start.
        assert_eq!(limits.window_since, [now - 5 - 590, 7 * 3600]);
        assert_eq!(limits.window_calls, [Some(3), None]);
        assert_eq!(limits.window_input, [None, None]);
        assert_eq!(limits.window_output, [None, Some(50)]);
        assert_eq!(limits.running_scope, ["", "big"]);
        assert_eq!(limits.running_max, [4, 1]);
        // Another model is checked against the limits of all models only.
        let small = AdmitLimits::new(&policy, "small", now);
        assert_eq!(small.window_scope, [""]);
        assert_eq!(small.running_scope, [""]);
    }
}
