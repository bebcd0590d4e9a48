//! The SQLite writes (create, compare-and-set write, delete, and the spending counters' two steps) as statements on one connection inside a
//! transaction the caller owns: the group-commit writer ([`super::group_commit`]) runs many of them in one
//! `BEGIN IMMEDIATE` ... `COMMIT`.
//!
//! Every check (revision, quotas) is made before the operation changes anything, so an operation refused for
//! a domain reason (conflict, not found, quota) leaves the shared transaction exactly as it found it and the
//! other operations of the group go on. The transaction holds SQLite's write lock throughout, so a check and
//! the change after it cannot be separated by another writer (of this or any other process).
//!
//! The outer `Result` is a database failure (the group is rolled back); the inner one the operation's own
//! answer.

use sqlx::SqliteConnection;

use super::error::StoreError;
use super::rows::{
    bytes_quota_error, conversations_quota_error, insert_conversation, row, Quota, Row,
    StoredConversation, WriteOutcome, DELETE_CONVERSATION, RELEASE_USAGE, SELECT_USAGE,
    SELECT_USED_BYTES,
};
use super::spending_sql::sqlite_steps;
use crate::spending::counters::Delta;
use crate::spending::port::{Horizons, Reserve, Reserved, Settle};

/// One write, owning its inputs (it crosses to the writer task).
#[derive(Debug)]
pub(super) enum WriteOp {
    Create {
        user: String,
        id: String,
        title: String,
        context: String,
        quota: Quota,
        now: i64,
    },
    Write {
        user: String,
        id: String,
        expected: i64,
        title: Option<String>,
        context: String,
        quota: Quota,
        now: i64,
    },
    Delete {
        user: String,
        id: String,
    },
    /// A model call's admission ([`super::spending_sql`]).
    SpendingReserve(Box<Reserve>),
    /// A model call's end ([`super::spending_sql`]).
    SpendingSettle(Settle),
    /// The written-behind counters: deltas to add, and per slice length the oldest slice kept.
    SpendingFlush(Vec<Delta>, Horizons),
    /// Renews the running marks of one relay instance until the given time.
    SpendingRenew(String, i64),
}

impl WriteOp {
    /// Whether the commit holding this operation must be fsynced before it is acknowledged: every conversation
    /// write; not the spending counters, which a power loss may set back by their last moments.
    pub(super) fn needs_fsync(&self) -> bool {
        !matches!(
            self,
            WriteOp::SpendingReserve(_)
                | WriteOp::SpendingSettle(_)
                | WriteOp::SpendingFlush(..)
                | WriteOp::SpendingRenew(..)
        )
    }
}

/// What each kind of operation answers.
#[derive(Debug)]
pub(super) enum OpOutcome {
    Created(StoredConversation),
    Written(WriteOutcome),
    Deleted(bool),
    SpendingReserved(Reserved),
    /// A counter write other than an admission.
    SpendingDone,
}

pub(super) type OpResult = Result<Result<OpOutcome, StoreError>, sqlx::Error>;

fn size(context: &str) -> i64 {
    i64::try_from(context.len()).unwrap_or(i64::MAX)
}

/// Runs `op` on `conn`, which is inside a write transaction.
pub(super) async fn apply(conn: &mut SqliteConnection, op: &WriteOp) -> OpResult {
    match op {
        WriteOp::Create {
            user,
            id,
            title,
            context,
            quota,
            now,
        } => create(conn, user, id, title, context, *quota, *now).await,
        WriteOp::Write {
            user,
            id,
            expected,
            title,
            context,
            quota,
            now,
        } => {
            let w = write(
                conn,
                user,
                id,
                *expected,
                title.as_deref(),
                context,
                *quota,
                *now,
            );
            w.await
        }
        WriteOp::Delete { user, id } => delete(conn, user, id).await,
        // A refused admission changes nothing, like the other refusals.
        WriteOp::SpendingReserve(r) => sqlite_steps::reserve(conn, r)
            .await
            .map(|r| Ok(OpOutcome::SpendingReserved(r))),
        WriteOp::SpendingSettle(s) => sqlite_steps::settle(conn, s)
            .await
            .map(|()| Ok(OpOutcome::SpendingDone)),
        WriteOp::SpendingFlush(deltas, horizons) => sqlite_steps::flush(conn, deltas, horizons)
            .await
            .map(|()| Ok(OpOutcome::SpendingDone)),
        WriteOp::SpendingRenew(instance, until) => sqlite_steps::renew(conn, instance, *until)
            .await
            .map(|()| Ok(OpOutcome::SpendingDone)),
    }
}

async fn create(
    conn: &mut SqliteConnection,
    user: &str,
    id: &str,
    title: &str,
    context: &str,
    quota: Quota,
    now: i64,
) -> OpResult {
    let bytes = size(context);
    let (count, used): (i64, i64) = sqlx::query_as(SELECT_USAGE)
        .bind(user)
        .fetch_optional(&mut *conn)
        .await?
        .unwrap_or((0, 0));
    if count.saturating_add(1) > quota.max_conversations {
        return Ok(Err(conversations_quota_error(quota)));
    }
    if used.saturating_add(bytes) > quota.max_bytes {
        return Ok(Err(bytes_quota_error(used, bytes, quota)));
    }
    sqlx::query(
        "INSERT INTO user_usage (user_id, conversations, bytes) VALUES ($1, 1, $2) \
         ON CONFLICT (user_id) DO UPDATE SET conversations = conversations + 1, bytes = bytes + $2",
    )
    .bind(user)
    .bind(bytes)
    .execute(&mut *conn)
    .await?;
    let r: Row = insert_conversation(user, id, title, context, now, bytes)
        .fetch_one(&mut *conn)
        .await?;
    Ok(Ok(OpOutcome::Created(row(r))))
}

#[allow(clippy::too_many_arguments)]
async fn write(
    conn: &mut SqliteConnection,
    user: &str,
    id: &str,
    expected: i64,
    title: Option<&str>,
    context: &str,
    quota: Quota,
    now: i64,
) -> OpResult {
    let bytes = size(context);
    let current: Option<(i64, i64)> = sqlx::query_as(
        "SELECT revision, context_bytes FROM conversations WHERE user_id = $1 AND id = $2",
    )
    .bind(user)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let old = match current {
        None => return Ok(Ok(OpOutcome::Written(WriteOutcome::NotFound))),
        Some((revision, _)) if revision != expected => {
            return Ok(Ok(OpOutcome::Written(WriteOutcome::Conflict {
                current: revision,
            })))
        }
        Some((_, old)) => old,
    };
    let delta = bytes - old;
    if delta > 0 {
        let used: Option<(i64,)> = sqlx::query_as(SELECT_USED_BYTES)
            .bind(user)
            .fetch_optional(&mut *conn)
            .await?;
        // A user without a usage row has no room (as the PostgreSQL path: its conditional UPDATE matches
        // nothing).
        match used {
            Some((used,)) if used.saturating_add(delta) <= quota.max_bytes => {}
            used => {
                let used = used.map_or(0, |(u,)| u);
                return Ok(Err(bytes_quota_error(used - old, bytes, quota)));
            }
        }
    }
    // updated_at never goes backwards for a row, so list order follows write order even if clocks step.
    let r: Row = sqlx::query_as(
        "UPDATE conversations SET title = COALESCE($1, title), context = $2, \
         revision = revision + 1, context_bytes = $7, \
         updated_at = CASE WHEN updated_at >= $3 THEN updated_at + 1 ELSE $3 END \
         WHERE user_id = $4 AND id = $5 AND revision = $6 \
         RETURNING id, title, revision, context, created_at, updated_at",
    )
    .bind(title)
    .bind(context)
    .bind(now)
    .bind(user)
    .bind(id)
    .bind(expected)
    .bind(bytes)
    .fetch_one(&mut *conn)
    .await?;
    if delta != 0 {
        sqlx::query("UPDATE user_usage SET bytes = bytes + $2 WHERE user_id = $1")
            .bind(user)
            .bind(delta)
            .execute(&mut *conn)
            .await?;
    }
    Ok(Ok(OpOutcome::Written(WriteOutcome::Written(row(r)))))
}

async fn delete(conn: &mut SqliteConnection, user: &str, id: &str) -> OpResult {
    let deleted: Option<(i64,)> = sqlx::query_as(DELETE_CONVERSATION)
        .bind(user)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    let Some((bytes,)) = deleted else {
        return Ok(Ok(OpOutcome::Deleted(false)));
    };
    sqlx::query(RELEASE_USAGE)
        .bind(user)
        .bind(bytes)
        .execute(&mut *conn)
        .await?;
    Ok(Ok(OpOutcome::Deleted(true)))
}
