//! The relay's database as spending's counter store ([`CounterStore`]; the statements:
//! [`super::spending_sql`]). The rules themselves are the caller's ([`crate::spending`]); this file only makes
//! each step atomic on both backends.
//!
//! SQLite is one relay's file: its counters live in that relay's memory and are written behind here
//! ([`CounterStore::flush`], through the group-commit writer, without an fsync of their own). PostgreSQL is
//! shared by replicas: here each admission and settlement is a transaction that runs the caller's rule (the
//! port's general path, several round trips). The relay itself admits and settles on PostgreSQL in one
//! statement each instead ([`super::spending_pg`], which needs the policy's limits); the rest of its counter
//! operations are these.
//!
//! Atomicity: on PostgreSQL a transaction-scoped advisory lock on the user serialises one user's admissions
//! across every replica sharing the schema, so two relays cannot both admit the last allowed call. On SQLite the
//! admission runs in the group-commit writer's `BEGIN IMMEDIATE` transaction, which holds the file's write lock.
//! Settling needs no lock: it only adds to counters (one atomic upsert each) and deletes its own mark.
//!
//! A running mark names its relay instance and has a short lease that the instance renews (one statement for
//! all its calls) while they stream: a relay that dies mid-call leaves its user counted as running for at most
//! the lease.

use super::error::StoreError;
use super::spending_sql::{pg_steps, sqlite_steps};
use super::sqlite_ops::{OpOutcome, WriteOp};
use super::Store;
use crate::spending::counters::Delta;
use crate::spending::counts::{SliceRow, Snapshot};
use crate::spending::port::{CounterFuture, CounterStore, Horizons, Reserve, Reserved, Settle};

impl CounterStore for Store {
    fn shared(&self) -> bool {
        matches!(self, Store::Postgres(_))
    }

    fn load(&self, horizons: Horizons) -> CounterFuture<'_, Vec<(String, SliceRow)>> {
        Box::pin(async move {
            Ok(match self {
                Store::Sqlite(sqlite) => {
                    let mut conn = sqlite.pool.acquire().await?;
                    sqlite_steps::load(&mut conn, &horizons).await?
                }
                Store::Postgres(pool) => {
                    let mut conn = pool.acquire().await?;
                    pg_steps::load(&mut conn, &horizons).await?
                }
            })
        })
    }

    fn flush(&self, deltas: Vec<Delta>, horizons: Horizons) -> CounterFuture<'_, ()> {
        Box::pin(async move {
            match self {
                Store::Sqlite(_) => {
                    self.spending_op(WriteOp::SpendingFlush(deltas, horizons))
                        .await?;
                }
                Store::Postgres(pool) => {
                    let mut tx = pool.begin().await?;
                    pg_steps::flush(&mut tx, &deltas, &horizons).await?;
                    tx.commit().await?;
                }
            }
            Ok(())
        })
    }

    fn reserve(&self, reserve: Reserve) -> CounterFuture<'_, Reserved> {
        Box::pin(async move { Ok(self.spending_reserve(reserve).await?) })
    }

    fn settle(&self, settle: Settle) -> CounterFuture<'_, ()> {
        Box::pin(async move {
            match self {
                Store::Sqlite(_) => {
                    self.spending_op(WriteOp::SpendingSettle(settle)).await?;
                }
                Store::Postgres(pool) => {
                    let mut tx = pool.begin().await?;
                    pg_steps::settle(&mut tx, &settle).await?;
                    tx.commit().await?;
                }
            }
            Ok(())
        })
    }

    fn renew<'a>(&'a self, instance: &'a str, lease_until: i64) -> CounterFuture<'a, ()> {
        Box::pin(async move {
            match self {
                Store::Sqlite(_) => {
                    let op = WriteOp::SpendingRenew(instance.to_owned(), lease_until);
                    self.spending_op(op).await?;
                }
                Store::Postgres(pool) => {
                    let mut conn = pool.acquire().await?;
                    pg_steps::renew(&mut conn, instance, lease_until).await?;
                }
            }
            Ok(())
        })
    }

    fn snapshot<'a>(
        &'a self,
        user: &'a str,
        horizons: Horizons,
        now: i64,
    ) -> CounterFuture<'a, Snapshot> {
        Box::pin(async move {
            Ok(match self {
                Store::Sqlite(sqlite) => {
                    let mut conn = sqlite.pool.acquire().await?;
                    sqlite_steps::snapshot(&mut conn, user, &horizons, now, true).await?
                }
                Store::Postgres(pool) => {
                    let mut conn = pool.acquire().await?;
                    pg_steps::snapshot(&mut conn, user, &horizons, now, true).await?
                }
            })
        })
    }
}

impl Store {
    /// A counter write through the SQLite writer (which answers `SpendingDone`).
    async fn spending_op(&self, op: WriteOp) -> Result<(), StoreError> {
        let Store::Sqlite(sqlite) = self else {
            return Err(StoreError::Writer("no SQLite writer".into()));
        };
        match sqlite.writer.submit(op).await? {
            OpOutcome::SpendingDone => Ok(()),
            other => Err(super::mismatched(other)),
        }
    }

    /// Admits and records one model call atomically, or refuses it with the usage that refused it.
    async fn spending_reserve(&self, reserve: Reserve) -> Result<Reserved, StoreError> {
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
}
