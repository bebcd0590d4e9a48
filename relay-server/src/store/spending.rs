//! The spending counters (`spending_usage`, `spending_calls`): one transaction when a model call starts
//! (read the user's usage, let the caller's rule decide, then count the call and mark it running) and one when
//! it ends (add the tokens it used, end its running mark). The rules themselves are the caller's
//! ([`crate::spending`]); this file only makes each step atomic on both backends.
//!
//! Atomicity: on PostgreSQL a transaction-scoped advisory lock on the user serialises one user's admissions
//! across every replica sharing the schema, so two relays cannot both admit the last allowed call. On SQLite the
//! admission runs in the group-commit writer's `BEGIN IMMEDIATE` transaction, which holds the file's write lock.
//! Settling needs no lock: it only adds to counters (one atomic upsert each) and deletes its own mark.
//!
//! A running mark has a lease: a relay that dies mid-call cannot leave its user counted as running for longer
//! than the longest call could last.

use std::sync::Arc;

use sqlx::{PgConnection, SqliteConnection};

use super::{Store, StoreError};

/// One counter slice of one user.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SliceRow {
    /// `""`: all models; else a model id.
    pub scope: String,
    pub slice_seconds: i64,
    pub slice_start: i64,
    pub calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// A user's recorded usage: the slices from some start on, and the calls running now by model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub slices: Vec<SliceRow>,
    pub running: Vec<(String, i64)>,
}

/// The caller's rule: whether the snapshot admits one more call.
pub type Admit = Arc<dyn Fn(&Snapshot) -> bool + Send + Sync>;

/// One call's admission: what to read, how to decide, what to record.
pub struct Reserve {
    pub user: String,
    pub call_id: String,
    pub model: String,
    /// Unix seconds.
    pub now: i64,
    /// The running mark ends here even if the call is never settled.
    pub lease_until: i64,
    /// The oldest slice start the rule reads.
    pub since: i64,
    /// Whether the rule reads the running calls.
    pub read_running: bool,
    /// `(scope, slice length)`: the slices the call is counted in (the one `now` falls in, of each).
    pub slices: Vec<(String, i64)>,
    pub admit: Admit,
}

impl std::fmt::Debug for Reserve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reserve")
            .field("call_id", &self.call_id)
            .field("model", &self.model)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

/// What an admission decided: admitted (counted and marked running), or refused with the usage it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reserved {
    Admitted,
    Refused(Snapshot),
}

/// One call's end: the tokens it used, added to the slice `now` falls in.
#[derive(Debug, Clone)]
pub struct Settle {
    pub user: String,
    pub call_id: String,
    pub now: i64,
    pub slices: Vec<(String, i64)>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// This user's slices older than this are read by no window any more and are deleted.
    pub forget_before: i64,
}

const SELECT_SLICES: &str =
    "SELECT scope, slice_seconds, slice_start, calls, input_tokens, output_tokens \
     FROM spending_usage WHERE user_id = $1 AND slice_start >= $2";
const SELECT_RUNNING: &str = "SELECT model, COUNT(*) FROM spending_calls \
     WHERE user_id = $1 AND lease_until > $2 GROUP BY model ORDER BY model";
const DELETE_EXPIRED: &str = "DELETE FROM spending_calls WHERE user_id = $1 AND lease_until <= $2";
const COUNT_CALL: &str = "INSERT INTO spending_usage \
     (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens) \
     VALUES ($1, $2, $3, $4, 1, 0, 0) \
     ON CONFLICT (user_id, scope, slice_seconds, slice_start) \
     DO UPDATE SET calls = spending_usage.calls + 1";
const MARK_RUNNING: &str =
    "INSERT INTO spending_calls (call_id, user_id, model, lease_until) VALUES ($1, $2, $3, $4)";
const ADD_TOKENS: &str = "INSERT INTO spending_usage \
     (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens) \
     VALUES ($1, $2, $3, $4, 0, $5, $6) \
     ON CONFLICT (user_id, scope, slice_seconds, slice_start) \
     DO UPDATE SET input_tokens = spending_usage.input_tokens + $5, \
     output_tokens = spending_usage.output_tokens + $6";
const END_RUNNING: &str = "DELETE FROM spending_calls WHERE call_id = $1";
const FORGET: &str = "DELETE FROM spending_usage WHERE user_id = $1 AND slice_start < $2";

/// Runs the same statements on a SQLite or a PostgreSQL connection (the SQL text is shared).
macro_rules! steps {
    ($name:ident, $conn:ty) => {
        pub(super) mod $name {
            use super::*;

            pub(crate) async fn snapshot(
                conn: &mut $conn,
                user: &str,
                since: i64,
                now: i64,
                read_running: bool,
            ) -> Result<Snapshot, sqlx::Error> {
                let slices: Vec<SliceRow> = sqlx::query_as(SELECT_SLICES)
                    .bind(user)
                    .bind(since)
                    .fetch_all(&mut *conn)
                    .await?;
                let running: Vec<(String, i64)> = if read_running {
                    sqlx::query_as(SELECT_RUNNING)
                        .bind(user)
                        .bind(now)
                        .fetch_all(&mut *conn)
                        .await?
                } else {
                    Vec::new()
                };
                Ok(Snapshot { slices, running })
            }

            /// Decides and, when admitted, records; a refusal changes nothing.
            pub(crate) async fn reserve(
                conn: &mut $conn,
                r: &Reserve,
            ) -> Result<Reserved, sqlx::Error> {
                let snap = snapshot(conn, &r.user, r.since, r.now, r.read_running).await?;
                if !(r.admit)(&snap) {
                    return Ok(Reserved::Refused(snap));
                }
                for (scope, slice) in &r.slices {
                    sqlx::query(COUNT_CALL)
                        .bind(&r.user)
                        .bind(scope)
                        .bind(*slice)
                        .bind(r.now - r.now.rem_euclid(*slice))
                        .execute(&mut *conn)
                        .await?;
                }
                sqlx::query(MARK_RUNNING)
                    .bind(&r.call_id)
                    .bind(&r.user)
                    .bind(&r.model)
                    .bind(r.lease_until)
                    .execute(&mut *conn)
                    .await?;
                Ok(Reserved::Admitted)
            }

            pub(crate) async fn settle(conn: &mut $conn, s: &Settle) -> Result<(), sqlx::Error> {
                sqlx::query(END_RUNNING)
                    .bind(&s.call_id)
                    .execute(&mut *conn)
                    .await?;
                // Marks whose relay died before settling them: cleared here, off the next call's admission
                // (which ignores them by their lease already).
                sqlx::query(DELETE_EXPIRED)
                    .bind(&s.user)
                    .bind(s.now)
                    .execute(&mut *conn)
                    .await?;
                if s.input_tokens != 0 || s.output_tokens != 0 {
                    for (scope, slice) in &s.slices {
                        sqlx::query(ADD_TOKENS)
                            .bind(&s.user)
                            .bind(scope)
                            .bind(*slice)
                            .bind(s.now - s.now.rem_euclid(*slice))
                            .bind(s.input_tokens)
                            .bind(s.output_tokens)
                            .execute(&mut *conn)
                            .await?;
                    }
                }
                sqlx::query(FORGET)
                    .bind(&s.user)
                    .bind(s.forget_before)
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }
        }
    };
}

steps!(sqlite_steps, SqliteConnection);
steps!(pg_steps, PgConnection);

impl Store {
    /// Admits and records one model call atomically, or refuses it with the usage that refused it.
    pub async fn spending_reserve(&self, reserve: Reserve) -> Result<Reserved, StoreError> {
        match self {
            Store::Sqlite(sqlite) => {
                use super::sqlite_ops::{OpOutcome, WriteOp};
                match sqlite
                    .writer
                    .submit(WriteOp::SpendingReserve(Box::new(reserve)))
                    .await?
                {
                    OpOutcome::SpendingReserved(r) => Ok(r),
                    other => Err(super::mismatched(other)),
                }
            }
            Store::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query(
                    "SELECT pg_advisory_xact_lock(hashtext('patchbridge-spending'), hashtext($1))",
                )
                .bind(&reserve.user)
                .execute(&mut *tx)
                .await?;
                let reserved = pg_steps::reserve(&mut tx, &reserve).await?;
                if reserved == Reserved::Admitted {
                    tx.commit().await?;
                }
                Ok(reserved)
            }
        }
    }

    /// Records a call's end (its tokens; no longer running).
    pub async fn spending_settle(&self, settle: Settle) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(sqlite) => {
                use super::sqlite_ops::{OpOutcome, WriteOp};
                match sqlite
                    .writer
                    .submit(WriteOp::SpendingSettle(settle))
                    .await?
                {
                    OpOutcome::SpendingSettled => Ok(()),
                    other => Err(super::mismatched(other)),
                }
            }
            Store::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                pg_steps::settle(&mut tx, &settle).await?;
                tx.commit().await?;
                Ok(())
            }
        }
    }

    /// A user's usage from slice start `since` on, and the calls running at `now` (for operators; no lock).
    pub async fn spending_snapshot(
        &self,
        user: &str,
        since: i64,
        now: i64,
    ) -> Result<Snapshot, StoreError> {
        match self {
            Store::Sqlite(sqlite) => {
                let mut conn = sqlite.pool.acquire().await?;
                Ok(sqlite_steps::snapshot(&mut conn, user, since, now, true).await?)
            }
            Store::Postgres(pool) => {
                let mut conn = pool.acquire().await?;
                Ok(pg_steps::snapshot(&mut conn, user, since, now, true).await?)
            }
        }
    }
}
