//! The conversation rows and the SQL text both backends run for them: what a stored conversation is
//! ([`StoredConversation`], [`StoredSummary`], [`Cursor`], [`WriteOutcome`]), the per-user [`Quota`], and the
//! shared statements and quota errors. A leaf of the store: [`super::sqlite_ops`], [`super::pg_ops`] and the
//! [`super::Store`] operations all build on it.

use super::error::StoreError;

/// One stored conversation row: its metadata and its context, still as text (parsed by the caller so
/// corruption is explicit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredConversation {
    pub summary: StoredSummary,
    pub context: String,
}

/// Metadata only (lists never parse contexts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSummary {
    pub id: String,
    pub title: String,
    pub revision: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A keyset cursor: the last row of the previous page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub updated_at: i64,
    pub id: String,
}

impl Cursor {
    pub fn encode(&self) -> String {
        format!("{}.{}", self.updated_at, self.id)
    }
    pub fn decode(text: &str) -> Option<Cursor> {
        let (ts, id) = text.split_once('.')?;
        let updated_at = ts.parse().ok()?;
        // Control characters (NUL above all: PostgreSQL TEXT cannot hold it) never occur in stored ids.
        if id.is_empty() || id.len() > 200 || id.chars().any(char::is_control) {
            return None;
        }
        Some(Cursor {
            updated_at,
            id: id.to_owned(),
        })
    }
}

/// Outcome of a compare-and-set write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    Written(StoredConversation),
    Conflict { current: i64 },
    NotFound,
}

/// Per-user storage bounds, from `limits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub max_conversations: i64,
    pub max_bytes: i64,
}

impl Quota {
    pub fn from_limits(limits: &crate::config::LimitsConfig) -> Self {
        Quota {
            max_conversations: i64::try_from(limits.max_conversations_per_user).unwrap_or(i64::MAX),
            max_bytes: i64::try_from(limits.max_stored_bytes_per_user).unwrap_or(i64::MAX),
        }
    }
}

pub(super) type Row = (String, String, i64, String, i64, i64);
pub(super) type SummaryRow = (String, String, i64, i64, i64);

pub(super) fn row(r: Row) -> StoredConversation {
    StoredConversation {
        summary: summary_row((r.0, r.1, r.2, r.4, r.5)),
        context: r.3,
    }
}

pub(super) fn summary_row(r: SummaryRow) -> StoredSummary {
    StoredSummary {
        id: r.0,
        title: r.1,
        revision: r.2,
        created_at: r.3,
        updated_at: r.4,
    }
}

// Quota and row SQL both backends run (one text each; `$n` placeholders work on SQLite and PostgreSQL).

/// `(conversations, bytes)` of user `$1`: what the quotas are checked against.
pub(super) const SELECT_USAGE: &str =
    "SELECT conversations, bytes FROM user_usage WHERE user_id = $1";
/// The byte total alone of user `$1`.
pub(super) const SELECT_USED_BYTES: &str = "SELECT bytes FROM user_usage WHERE user_id = $1";
/// A new conversation at revision 1 (`now` is both created and updated), returning its row; the statement and
/// its binds in one place for both backends, so the placeholders and the bind order cannot drift apart.
pub(super) fn insert_conversation<'q, DB>(
    user: &'q str,
    id: &'q str,
    title: &'q str,
    context: &'q str,
    now: i64,
    bytes: i64,
) -> sqlx::query::QueryAs<'q, DB, Row, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Row: for<'r> sqlx::FromRow<'r, DB::Row>,
{
    sqlx::query_as(
        "INSERT INTO conversations \
         (user_id, id, title, revision, context, created_at, updated_at, context_bytes) \
         VALUES ($1, $2, $3, 1, $4, $5, $5, $6) \
         RETURNING id, title, revision, context, created_at, updated_at",
    )
    .bind(user)
    .bind(id)
    .bind(title)
    .bind(context)
    .bind(now)
    .bind(bytes)
}
/// Deletes conversation `$2` of user `$1`, returning its context bytes for the usage row.
pub(super) const DELETE_CONVERSATION: &str =
    "DELETE FROM conversations WHERE user_id = $1 AND id = $2 RETURNING context_bytes";
/// Gives back one conversation and its `$2` bytes to user `$1`'s usage.
pub(super) const RELEASE_USAGE: &str =
    "UPDATE user_usage SET conversations = conversations - 1, bytes = bytes - $2 WHERE user_id = $1";

pub(super) fn conversations_quota_error(quota: Quota) -> StoreError {
    StoreError::QuotaExceeded(format!(
        "conversation quota reached: at most {} conversations per user",
        quota.max_conversations
    ))
}

pub(super) fn bytes_quota_error(used_by_others: i64, bytes: i64, quota: Quota) -> StoreError {
    StoreError::QuotaExceeded(format!(
        "storage quota reached: this conversation ({bytes} bytes) and the user's other conversations \
         ({used_by_others} bytes) exceed {} bytes per user",
        quota.max_bytes
    ))
}
