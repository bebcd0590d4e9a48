//! The relay's database as spending's counter store ([`CounterStore`]): one transaction when a model call
//! starts and one when it ends (the statements: [`super::spending_sql`]). The rules themselves are the
//! caller's ([`crate::spending`]); this file only makes each step atomic on both backends.
//!
//! Atomicity: on PostgreSQL a transaction-scoped advisory lock on the user serialises one user's admissions
//! across every replica sharing the schema, so two relays cannot both admit the last allowed call. On SQLite the
//! admission runs in the group-commit writer's `BEGIN IMMEDIATE` transaction, which holds the file's write lock.
//! Settling needs no lock: it only adds to counters (one atomic upsert each) and deletes its own mark.
//!
//! A running mark has a lease: a relay that dies mid-call cannot leave its user counted as running for longer
//! than the longest call could last.

use super::error::StoreError;
use super::spending_sql::{pg_steps, sqlite_steps};
use super::sqlite_ops::{OpOutcome, WriteOp};
use super::Store;
use crate::spending::counts::Snapshot;
use crate::spending::port::{CounterFuture, CounterStore, Reserve, Reserved, Settle};

impl CounterStore for Store {
    fn reserve(&self, reserve: Reserve) -> CounterFuture<'_, Reserved> {
        Box::pin(async move { Ok(self.spending_reserve(reserve).await?) })
    }

    fn settle(&self, settle: Settle) -> CounterFuture<'_, ()> {
        Box::pin(async move { Ok(self.spending_settle(settle).await?) })
    }

    fn snapshot<'a>(&'a self, user: &'a str, since: i64, now: i64) -> CounterFuture<'a, Snapshot> {
        Box::pin(async move { Ok(self.spending_snapshot(user, since, now).await?) })
    }
}

impl Store {
    /// Admits and records one model call atomically, or refuses it with the usage that refused it.
    pub async fn spending_reserve(&self, reserve: Reserve) -> Result<Reserved, StoreError> {
        match self {
            Store::Sqlite(sqlite) => {
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
