//! The PostgreSQL compare-and-set write as one statement (one round trip, one implicit transaction):
//! the revision check, the per-user byte quota and both row changes commit together or not at all.
//!
//! Why it stays correct under concurrency (READ COMMITTED, several relay replicas on one database):
//! - `old` takes the conversation row lock (`FOR NO KEY UPDATE`, the level the `UPDATE` takes anyway). A
//!   second writer of the same conversation waits on that lock; once the first commits, PostgreSQL rechecks
//!   `revision = $expected` against the new row version, which no longer matches, so the loser gets no row and
//!   writes nothing: exactly one winner per revision. A deleted row is skipped the same way (404).
//! - `usage` changes the user's byte total only for a locked `old` row; its `WHERE` holds the quota check. Two
//!   writers of one user (different conversations) meet on the `user_usage` row lock, and the second's check
//!   is re-evaluated against the first's committed total, so together they never pass the quota.
//! - `upd` writes the conversation only if the quota admitted the new size (or the context did not grow).
//! - Lock order is conversation row, then usage row, as in delete; create locks only the usage row before
//!   inserting a new row, so the three paths cannot deadlock with each other.
//!
//! Data-modifying CTEs run to completion even when the final query reads none of their rows, and all of
//! them commit or roll back with the statement.

use sqlx::PgPool;

use super::error::StoreError;
use super::rows::{Quota, Row};

/// The CAS write. `$1` title (NULL keeps it), `$2` context, `$3` now (µs), `$4` user, `$5` id,
/// `$6` expected revision, `$7` new context bytes, `$8` the user's byte quota.
///
/// One row when the revision matched (`old_bytes` and, if written, the new row); no row on a revision
/// conflict or a missing conversation. `updated_at` never goes backwards for a row, so list order follows
/// write order even if clocks step.
const COMPARE_AND_SET: &str = "\
WITH old AS (
    SELECT context_bytes FROM conversations
    WHERE user_id = $4 AND id = $5 AND revision = $6
    FOR NO KEY UPDATE
), usage AS (
    UPDATE user_usage AS u SET bytes = u.bytes + ($7 - old.context_bytes)
    FROM old
    WHERE u.user_id = $4 AND old.context_bytes <> $7
      AND ($7 < old.context_bytes OR u.bytes + ($7 - old.context_bytes) <= $8)
    RETURNING u.bytes
), upd AS (
    UPDATE conversations AS c SET title = COALESCE($1, c.title), context = $2,
        revision = c.revision + 1, context_bytes = $7,
        updated_at = CASE WHEN c.updated_at >= $3 THEN c.updated_at + 1 ELSE $3 END
    FROM old
    WHERE c.user_id = $4 AND c.id = $5 AND c.revision = $6
      AND (old.context_bytes >= $7 OR EXISTS (SELECT 1 FROM usage))
    RETURNING c.id, c.title, c.revision, c.context, c.created_at, c.updated_at
)
SELECT old.context_bytes, upd.id, upd.title, upd.revision, upd.context, upd.created_at, upd.updated_at
FROM old LEFT JOIN upd ON TRUE";

type CasRow = (
    i64,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<i64>,
);

/// `(Some(old context bytes), Some(row))`: written. `(Some(old), None)`: the revision matched but the byte
/// quota refused the new size; nothing changed. `(None, None)`: revision conflict or no such conversation
/// (the caller reads which, with a fresh snapshot).
#[allow(clippy::too_many_arguments)]
pub(super) async fn compare_and_set(
    pool: &PgPool,
    user: &str,
    id: &str,
    expected: i64,
    title: Option<&str>,
    context: &str,
    bytes: i64,
    quota: Quota,
    now: i64,
) -> Result<(Option<i64>, Option<Row>), StoreError> {
    let r: Option<CasRow> = sqlx::query_as(COMPARE_AND_SET)
        .bind(title)
        .bind(context)
        .bind(now)
        .bind(user)
        .bind(id)
        .bind(expected)
        .bind(bytes)
        .bind(quota.max_bytes)
        .fetch_optional(pool)
        .await?;
    Ok(match r {
        None => (None, None),
        Some((
            old,
            Some(id),
            Some(title),
            Some(revision),
            Some(context),
            Some(created),
            Some(updated),
        )) => (
            Some(old),
            Some((id, title, revision, context, created, updated)),
        ),
        Some((old, ..)) => (Some(old), None),
    })
}
