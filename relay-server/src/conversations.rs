//! `{base}/conversations` handlers (`docs/protocol.md` §6): list, create, read, compare-and-set write, delete.
//! Every query is scoped to the caller's user id, so another user's conversation is simply not found (404).

use axum::extract::{Extension, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use patchbridge_protocol::{
    ConversationContext, ConversationPage, ConversationSnapshot, ConversationSummary,
    CreateConversation, RelayErrorCode, SaveConversation,
};
use serde::Deserialize;

use crate::error::RelayError;
use crate::extract::{Path, Query, StrictJson};
use crate::identity::UserId;
use crate::state::AppState;
use crate::store::{Cursor, Quota, StoreError, StoredConversation, StoredSummary, WriteOutcome};
use crate::telemetry::{conversation, TraceParent};

/// Longest title accepted, in characters.
pub const MAX_TITLE_CHARS: usize = 500;
/// Page size bounds of the list.
pub const MAX_PAGE: u32 = 100;
pub const DEFAULT_PAGE: u32 = 20;
/// Longest conversation id looked up (generated ids are 34 bytes).
pub const MAX_ID_BYTES: usize = 200;

#[derive(Deserialize)]
pub struct ListQuery {
    limit: Option<String>,
    cursor: Option<String>,
}

pub async fn list(
    State(state): State<AppState>,
    Extension(user): Extension<UserId>,
    Query(q): Query<ListQuery>,
) -> Result<Response, RelayError> {
    let limit = match q.limit.as_deref() {
        None => DEFAULT_PAGE,
        Some(text) => match text.parse::<u32>() {
            Ok(n) if (1..=MAX_PAGE).contains(&n) => n,
            _ => {
                return Err(RelayError::new(
                    RelayErrorCode::InvalidRequest,
                    format!("limit must be an integer 1..={MAX_PAGE}"),
                ))
            }
        },
    };
    let cursor = match q.cursor.as_deref() {
        None | Some("") => None,
        Some(text) => Some(
            Cursor::decode(text)
                .ok_or_else(|| RelayError::new(RelayErrorCode::InvalidRequest, "invalid cursor"))?,
        ),
    };
    let (items, next) = state.store().list(&user.0, limit, cursor.as_ref()).await?;
    Ok(Json(ConversationPage {
        items: items.into_iter().map(summary_of).collect(),
        next_cursor: next.map(|c| c.encode()),
    })
    .into_response())
}

pub async fn create(
    State(state): State<AppState>,
    Extension(user): Extension<UserId>,
    trace: TraceParent,
    StrictJson(body): StrictJson<CreateConversation>,
) -> Result<Response, RelayError> {
    let title = check_title(body.title.unwrap_or_default())?;
    let context = body.context.unwrap_or(ConversationContext {
        messages: Vec::new(),
        model_state: None,
    });
    let text = encode_context(&state, &context)?;
    let id = format!("c_{}", uuid::Uuid::new_v4().simple());
    let quota = Quota::from_limits(&state.inner.limits);
    let create = state.store().create(&user.0, &id, &title, &text, quota);
    let stored = traced_write(&state, &trace, &id, create).await?;
    tracing::info!(conversation = %id, "conversation created");
    Ok((
        StatusCode::CREATED,
        Json(snapshot_of_parsed(stored, context)),
    )
        .into_response())
}

pub async fn read(
    State(state): State<AppState>,
    Extension(user): Extension<UserId>,
    id: Path<String>,
) -> Result<Response, RelayError> {
    let id = storable_id(id)?;
    let stored = state
        .store()
        .get(&user.0, &id)
        .await?
        .ok_or(RelayErrorCode::NotFound)?;
    // Parsing and re-serialising megabytes of stored context is CPU work: off the async workers when large.
    if stored.context.len() <= 64 * 1024 {
        return Ok(Json(snapshot_of(stored)?).into_response());
    }
    state
        .heavy(move || snapshot_of(stored).map(|s| Json(s).into_response()))
        .await?
}

pub async fn write(
    State(state): State<AppState>,
    Extension(user): Extension<UserId>,
    trace: TraceParent,
    id: Path<String>,
    StrictJson(body): StrictJson<SaveConversation>,
) -> Result<Response, RelayError> {
    let id = storable_id(id)?;
    let title = body.title.map(check_title).transpose()?;
    let text = encode_context(&state, &body.context)?;
    let expected = i64::try_from(body.expected_revision).map_err(|_| {
        RelayError::new(
            RelayErrorCode::InvalidRequest,
            "expectedRevision is out of range",
        )
    })?;
    let write = state.store().write(
        &user.0,
        &id,
        expected,
        title.as_deref(),
        &text,
        Quota::from_limits(&state.inner.limits),
    );
    match traced_write(&state, &trace, &id, write).await? {
        WriteOutcome::Written(stored) => {
            Ok(Json(snapshot_of_parsed(stored, body.context)).into_response())
        }
        WriteOutcome::Conflict { current } => {
            state.metrics().conversation_conflicts.inc();
            Err(RelayError::revision_conflict(current as u64))
        }
        WriteOutcome::NotFound => Err(RelayErrorCode::NotFound.into()),
    }
}

pub async fn delete(
    State(state): State<AppState>,
    Extension(user): Extension<UserId>,
    id: Path<String>,
) -> Result<Response, RelayError> {
    let id = storable_id(id)?;
    if state.store().delete(&user.0, &id).await? {
        tracing::info!(conversation = %id, "conversation deleted");
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(RelayErrorCode::NotFound.into())
    }
}

/// Path ids that no stored conversation can have are not found before any query: a NUL byte would otherwise
/// reach PostgreSQL (whose TEXT cannot hold it) and come back as a 500 instead of a 404. (An id that is not
/// UTF-8 after percent-decoding never gets here: `Path` answers it with a 404 itself.)
/// A conversation write inside its span ([`conversation::traced`]): `error.type` is the code the client gets.
async fn traced_write<T: WriteResult>(
    state: &AppState,
    trace: &TraceParent,
    id: &str,
    write: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    let db = match state.store() {
        crate::store::Store::Sqlite(_) => "sqlite",
        crate::store::Store::Postgres(_) => "postgresql",
    };
    conversation::traced(state.telemetry(), trace, Some(id), db, write, |r| match r {
        Ok(written) => written.refused(),
        Err(StoreError::QuotaExceeded(_)) => Some(RelayErrorCode::QuotaExceeded.as_str()),
        Err(_) => Some(RelayErrorCode::Internal.as_str()),
    })
    .await
}

/// What a store write answered that the client gets as an error.
trait WriteResult {
    fn refused(&self) -> Option<&'static str>;
}

impl WriteResult for StoredConversation {
    fn refused(&self) -> Option<&'static str> {
        None
    }
}

impl WriteResult for WriteOutcome {
    fn refused(&self) -> Option<&'static str> {
        match self {
            WriteOutcome::Written(_) => None,
            WriteOutcome::Conflict { .. } => Some(RelayErrorCode::RevisionConflict.as_str()),
            WriteOutcome::NotFound => Some(RelayErrorCode::NotFound.as_str()),
        }
    }
}

fn storable_id(Path(id): Path<String>) -> Result<String, RelayError> {
    if id.is_empty() || id.len() > MAX_ID_BYTES || id.chars().any(char::is_control) {
        return Err(RelayErrorCode::NotFound.into());
    }
    Ok(id)
}

fn check_title(title: String) -> Result<String, RelayError> {
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(RelayError::new(
            RelayErrorCode::InvalidRequest,
            format!("title is longer than {MAX_TITLE_CHARS} characters"),
        ));
    }
    if title.chars().any(|c| c.is_control()) {
        return Err(RelayError::new(
            RelayErrorCode::InvalidRequest,
            "title contains control characters",
        ));
    }
    Ok(title)
}

/// Serialises a context and enforces the per-conversation size bound.
fn encode_context(state: &AppState, context: &ConversationContext) -> Result<String, RelayError> {
    let text = serde_json::to_string(context).map_err(RelayError::internal)?;
    let limit = state.inner.limits.max_conversation_bytes;
    if text.len() as u64 > limit {
        return Err(RelayError::new(
            RelayErrorCode::PayloadTooLarge,
            format!(
                "conversation context is {} bytes; the limit is {limit}",
                text.len()
            ),
        ));
    }
    Ok(text)
}

fn rfc3339(micros: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1000)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

fn summary_of(s: StoredSummary) -> ConversationSummary {
    ConversationSummary {
        id: s.id,
        title: s.title,
        revision: s.revision as u64,
        created_at: rfc3339(s.created_at),
        updated_at: rfc3339(s.updated_at),
    }
}

fn snapshot_of_parsed(
    stored: StoredConversation,
    context: ConversationContext,
) -> ConversationSnapshot {
    ConversationSnapshot {
        conversation: summary_of(stored.summary),
        context,
    }
}

/// Parses the stored context. A row that no longer parses is an explicit error, never replaced by other data.
fn snapshot_of(stored: StoredConversation) -> Result<ConversationSnapshot, RelayError> {
    let context: ConversationContext = serde_json::from_str(&stored.context).map_err(|e| {
        RelayError::from(RelayErrorCode::ConversationCorrupt).with_source(format!(
            "conversation {} revision {}: {e}",
            stored.summary.id, stored.summary.revision
        ))
    })?;
    Ok(snapshot_of_parsed(stored, context))
}
