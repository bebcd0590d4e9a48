//! The spending counters' statements (`spending_usage`, `spending_calls`), one SQL text for both backends: an
//! admission reads the user's usage, lets the caller's rule decide, then counts the call and marks it running;
//! a settlement adds the tokens and ends the mark. Run inside a transaction the caller owns (the SQLite
//! writer's group, or a PostgreSQL transaction holding the user's advisory lock: [`super::spending`]).

use sqlx::{PgConnection, SqliteConnection};

use crate::spending::counts::{SliceRow, Snapshot};
use crate::spending::port::{Reserve, Reserved, Settle};

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
                let rows: Vec<(String, i64, i64, i64, i64, i64)> = sqlx::query_as(SELECT_SLICES)
                    .bind(user)
                    .bind(since)
                    .fetch_all(&mut *conn)
                    .await?;
                let slices = rows
                    .into_iter()
                    .map(|r| SliceRow {
                        scope: r.0,
                        slice_seconds: r.1,
                        slice_start: r.2,
                        calls: r.3,
                        input_tokens: r.4,
                        output_tokens: r.5,
                    })
                    .collect();
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
