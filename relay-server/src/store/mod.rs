//! Conversation storage through one async SQL layer (sqlx): an embedded SQLite file by default (WAL,
//! `synchronous=FULL`, so an acknowledged write survives kill -9) or PostgreSQL, so that several relay
//! replicas share one database. The same SQL text runs on both (`$n` placeholders work on both).
//!
//! The revision check is one `UPDATE ... WHERE revision = $expected RETURNING ...` statement: the database
//! makes it atomic, across connections and across relay processes.
//!
//! Per-user quotas (conversation count, total context bytes) live in `user_usage`, changed in the same
//! transaction as the conversation row. In PostgreSQL the `user_usage` row lock serialises one user's
//! concurrent creates and writes. SQLite writes all go through one writer task that commits concurrent
//! writes together (group commit, one fsync per group); its transactions start with `BEGIN IMMEDIATE` (the
//! write lock is taken up front, so a read-then-write transaction never fails to upgrade). Reads use a pool.
//!
//! - this file: [`Store`] and its operations (PostgreSQL create and delete inline).
//! - [`rows`]: what a stored conversation is, the [`Quota`], and the SQL text both backends share.
//! - [`pg_ops`]: the PostgreSQL compare-and-set write, one statement.
//! - [`connect`]: opening pools, pragmas, PostgreSQL schemas, embedded migrations.
//! - [`group_commit`]: the SQLite writer task; [`sqlite_ops`]: the SQLite write statements it runs.
//! - [`spending`]: the spending counters' port ([`crate::spending::port::CounterStore`]) on this database;
//!   [`spending_sql`]: their statements, shared by both backends and the SQLite writer; [`spending_pg`]: the
//!   PostgreSQL counters the relay runs (one statement per admission and per settlement).
//! - [`error`]: [`StoreError`] and [`ConnectError`].

mod connect;
mod error;
mod group_commit;
mod pg_ops;
mod rows;
pub mod spending;
pub mod spending_pg;
mod spending_sql;
mod sqlite_ops;

use sqlx::{PgPool, SqlitePool};

use group_commit::GroupWriter;
use rows::{bytes_quota_error, conversations_quota_error, insert_conversation, Row};
use rows::{
    row, summary_row, SummaryRow, DELETE_CONVERSATION, RELEASE_USAGE, SELECT_USAGE,
    SELECT_USED_BYTES,
};
use sqlite_ops::{OpOutcome, WriteOp};

pub use error::{ConnectError, StoreError};
pub use rows::{Cursor, Quota, StoredConversation, StoredSummary, WriteOutcome};

/// The database: SQLite or PostgreSQL.
#[derive(Clone, Debug)]
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(PgPool),
}

/// The SQLite file: a pool for reads, one group-committing writer for every write.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pool: SqlitePool,
    writer: GroupWriter,
}

impl SqliteStore {
    /// The read pool (tests reach the file through it to corrupt rows on purpose).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

/// A writer answer of the wrong kind: cannot happen (each operation has one kind of outcome).
fn mismatched(outcome: OpOutcome) -> StoreError {
    StoreError::Writer(format!("unexpected writer outcome {outcome:?}"))
}

/// Runs the same expression against whichever pool is configured.
macro_rules! on_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match $store {
            Store::Sqlite(sqlite) => {
                let $pool = &sqlite.pool;
                $body
            }
            Store::Postgres($pool) => $body,
        }
    };
}

/// Now in unix microseconds.
pub fn now_micros() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.as_micros()).unwrap_or(i64::MAX)
}

impl Store {
    /// A cheap round trip for readiness.
    pub async fn ping(&self) -> Result<(), StoreError> {
        on_pool!(self, |pool| sqlx::query("SELECT 1")
            .execute(pool)
            .await
            .map(|_| ())
            .map_err(StoreError::from))
    }

    /// One page, newest `updated_at` first; fetches `limit + 1` to know whether another page exists.
    pub async fn list(
        &self,
        user: &str,
        limit: u32,
        after: Option<&Cursor>,
    ) -> Result<(Vec<StoredSummary>, Option<Cursor>), StoreError> {
        let fetch = i64::from(limit) + 1;
        let rows: Vec<SummaryRow> = match after {
            None => on_pool!(self, |pool| sqlx::query_as(
                "SELECT id, title, revision, created_at, updated_at FROM conversations \
                 WHERE user_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2"
            )
            .bind(user)
            .bind(fetch)
            .fetch_all(pool)
            .await?),
            Some(c) => on_pool!(self, |pool| sqlx::query_as(
                "SELECT id, title, revision, created_at, updated_at FROM conversations \
                 WHERE user_id = $1 AND (updated_at < $2 OR (updated_at = $2 AND id < $3)) \
                 ORDER BY updated_at DESC, id DESC LIMIT $4"
            )
            .bind(user)
            .bind(c.updated_at)
            .bind(&c.id)
            .bind(fetch)
            .fetch_all(pool)
            .await?),
        };
        let mut items: Vec<StoredSummary> = rows.into_iter().map(summary_row).collect();
        let next = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|last| Cursor {
                updated_at: last.updated_at,
                id: last.id.clone(),
            })
        } else {
            None
        };
        Ok((items, next))
    }

    /// Creates a conversation if the user's quota allows one more of this size.
    pub async fn create(
        &self,
        user: &str,
        id: &str,
        title: &str,
        context: &str,
        quota: Quota,
    ) -> Result<StoredConversation, StoreError> {
        let now = now_micros();
        let bytes = i64::try_from(context.len()).unwrap_or(i64::MAX);
        let pool = match self {
            Store::Sqlite(sqlite) => {
                let op = WriteOp::Create {
                    user: user.to_owned(),
                    id: id.to_owned(),
                    title: title.to_owned(),
                    context: context.to_owned(),
                    quota,
                    now,
                };
                return match sqlite.writer.submit(op).await? {
                    OpOutcome::Created(created) => Ok(created),
                    other => Err(mismatched(other)),
                };
            }
            Store::Postgres(pool) => pool,
        };
        {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "INSERT INTO user_usage (user_id, conversations, bytes) VALUES ($1, 0, 0) \
                 ON CONFLICT (user_id) DO NOTHING",
            )
            .bind(user)
            .execute(&mut *tx)
            .await?;
            let admitted: Option<(i64,)> = sqlx::query_as(
                "UPDATE user_usage SET conversations = conversations + 1, bytes = bytes + $2 \
                 WHERE user_id = $1 AND conversations + 1 <= $3 AND bytes + $2 <= $4 \
                 RETURNING conversations",
            )
            .bind(user)
            .bind(bytes)
            .bind(quota.max_conversations)
            .bind(quota.max_bytes)
            .fetch_optional(&mut *tx)
            .await?;
            if admitted.is_none() {
                let (count, used): (i64, i64) = sqlx::query_as(SELECT_USAGE)
                    .bind(user)
                    .fetch_one(&mut *tx)
                    .await?;
                return Err(if count >= quota.max_conversations {
                    conversations_quota_error(quota)
                } else {
                    bytes_quota_error(used, bytes, quota)
                });
            }
            let r: Row = insert_conversation(user, id, title, context, now, bytes)
                .fetch_one(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(row(r))
        }
    }

    /// The user's stored conversation count and context bytes (what the quotas are checked against).
    pub async fn usage(&self, user: &str) -> Result<(i64, i64), StoreError> {
        let r: Option<(i64, i64)> = on_pool!(self, |pool| sqlx::query_as(SELECT_USAGE)
            .bind(user)
            .fetch_optional(pool)
            .await?);
        Ok(r.unwrap_or((0, 0)))
    }

    pub async fn get(
        &self,
        user: &str,
        id: &str,
    ) -> Result<Option<StoredConversation>, StoreError> {
        let r: Option<Row> = on_pool!(self, |pool| sqlx::query_as(
            "SELECT id, title, revision, context, created_at, updated_at FROM conversations \
             WHERE user_id = $1 AND id = $2"
        )
        .bind(user)
        .bind(id)
        .fetch_optional(pool)
        .await?);
        Ok(r.map(row))
    }

    /// Compare-and-set: writes only when the stored revision equals `expected` and the user's byte quota
    /// allows the new size.
    pub async fn write(
        &self,
        user: &str,
        id: &str,
        expected: i64,
        title: Option<&str>,
        context: &str,
        quota: Quota,
    ) -> Result<WriteOutcome, StoreError> {
        let now = now_micros();
        let bytes = i64::try_from(context.len()).unwrap_or(i64::MAX);
        let pool = match self {
            Store::Sqlite(sqlite) => {
                let op = WriteOp::Write {
                    user: user.to_owned(),
                    id: id.to_owned(),
                    expected,
                    title: title.map(str::to_owned),
                    context: context.to_owned(),
                    quota,
                    now,
                };
                return match sqlite.writer.submit(op).await? {
                    OpOutcome::Written(outcome) => Ok(outcome),
                    other => Err(mismatched(other)),
                };
            }
            Store::Postgres(pool) => pool,
        };
        let (old_bytes, written) =
            pg_ops::compare_and_set(pool, user, id, expected, title, context, bytes, quota, now)
                .await?;
        if let Some(r) = written {
            return Ok(WriteOutcome::Written(row(r)));
        }
        if let Some(old) = old_bytes {
            // The revision matched (and the row stayed locked), so only the byte quota refused the write.
            // This second read is only for the message; nothing was written.
            let (used,): (i64,) = sqlx::query_as(SELECT_USED_BYTES)
                .bind(user)
                .fetch_optional(pool)
                .await?
                .unwrap_or((0,));
            return Err(bytes_quota_error(used - old, bytes, quota));
        }
        // A fresh statement (a fresh snapshot): sees the revision that beat this write, or its deletion.
        let current: Option<(i64,)> =
            sqlx::query_as("SELECT revision FROM conversations WHERE user_id = $1 AND id = $2")
                .bind(user)
                .bind(id)
                .fetch_optional(pool)
                .await?;
        Ok(match current {
            Some((current,)) => WriteOutcome::Conflict { current },
            None => WriteOutcome::NotFound,
        })
    }

    /// Deletes; `false` when there was no such conversation for this user.
    pub async fn delete(&self, user: &str, id: &str) -> Result<bool, StoreError> {
        let pool = match self {
            Store::Sqlite(sqlite) => {
                let op = WriteOp::Delete {
                    user: user.to_owned(),
                    id: id.to_owned(),
                };
                return match sqlite.writer.submit(op).await? {
                    OpOutcome::Deleted(deleted) => Ok(deleted),
                    other => Err(mismatched(other)),
                };
            }
            Store::Postgres(pool) => pool,
        };
        {
            let mut tx = pool.begin().await?;
            let deleted: Option<(i64,)> = sqlx::query_as(DELETE_CONVERSATION)
                .bind(user)
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            let Some((bytes,)) = deleted else {
                return Ok(false);
            };
            sqlx::query(RELEASE_USAGE)
                .bind(user)
                .bind(bytes)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(true)
        }
    }

    /// SQLite only: `(commits, writes committed)` by the group-commit writer since the start.
    pub fn group_commit_counts(&self) -> Option<(u64, u64)> {
        match self {
            Store::Sqlite(sqlite) => Some(sqlite.writer.counts()),
            Store::Postgres(_) => None,
        }
    }

    /// Closes the pool (waits for connections to finish); SQLite's writer first commits what is queued.
    pub async fn close(&self) {
        match self {
            Store::Sqlite(sqlite) => {
                sqlite.writer.close().await;
                sqlite.pool.close().await;
            }
            Store::Postgres(pool) => pool.close().await,
        }
    }
}
