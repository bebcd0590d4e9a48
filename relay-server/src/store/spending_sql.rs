//! The spending counters' statements (`spending_usage`, `spending_calls`), one SQL text for both backends:
//! - write-behind ([`crate::spending::counters`]): add a batch of deltas, delete slices no window reads, load;
//! - shared counters: an admission reads the user's usage, lets the caller's rule decide, then counts the call
//!   and marks it running (the mark names the relay instance); a settlement adds the tokens and ends the mark;
//!   a renewal moves the lease of every mark of one instance.
//!
//! Each runs inside a transaction the caller owns (the SQLite writer's group, or a PostgreSQL transaction
//! holding the user's advisory lock: [`super::spending`]). Reads are bounded per slice length by the horizons
//! (a minute window's one-second slices are read for a minute, not for the day the longest window needs).

use sqlx::{PgConnection, SqliteConnection};

use crate::spending::counters::Delta;
use crate::spending::counts::{SliceRow, Snapshot};
use crate::spending::port::{Reserve, Reserved, Settle};

type Row = (String, i64, i64, i64, i64, i64);

fn slice(r: Row) -> SliceRow {
    SliceRow {
        scope: r.0,
        slice_seconds: r.1,
        slice_start: r.2,
        calls: r.3,
        input_tokens: r.4,
        output_tokens: r.5,
    }
}

const SELECT_SLICES: &str =
    "SELECT scope, slice_seconds, slice_start, calls, input_tokens, output_tokens \
     FROM spending_usage WHERE user_id = $1 AND slice_seconds = $2 AND slice_start >= $3";
const LOAD_SLICES: &str =
    "SELECT user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens \
     FROM spending_usage WHERE slice_seconds = $1 AND slice_start >= $2";
const SELECT_RUNNING: &str = "SELECT model, COUNT(*) FROM spending_calls \
     WHERE user_id = $1 AND lease_until > $2 GROUP BY model ORDER BY model";
const DELETE_EXPIRED: &str = "DELETE FROM spending_calls WHERE user_id = $1 AND lease_until <= $2";
const ADD: &str = "INSERT INTO spending_usage \
     (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) \
     ON CONFLICT (user_id, scope, slice_seconds, slice_start) \
     DO UPDATE SET calls = spending_usage.calls + $5, \
     input_tokens = spending_usage.input_tokens + $6, \
     output_tokens = spending_usage.output_tokens + $7";
const MARK_RUNNING: &str =
    "INSERT INTO spending_calls (call_id, user_id, model, lease_until, instance_id) \
     VALUES ($1, $2, $3, $4, $5)";
const END_RUNNING: &str = "DELETE FROM spending_calls WHERE call_id = $1";
const RENEW: &str = "UPDATE spending_calls SET lease_until = $2 WHERE instance_id = $1";
const FORGET_USER: &str =
    "DELETE FROM spending_usage WHERE user_id = $1 AND slice_seconds = $2 AND slice_start < $3";
const FORGET: &str = "DELETE FROM spending_usage WHERE slice_seconds = $1 AND slice_start < $2";

/// Runs the same statements on a SQLite or a PostgreSQL connection (the SQL text is shared).
macro_rules! steps {
    ($name:ident, $conn:ty) => {
        pub(super) mod $name {
            use super::*;

            pub(crate) async fn snapshot(
                conn: &mut $conn,
                user: &str,
                horizons: &[(i64, i64)],
                now: i64,
                read_running: bool,
            ) -> Result<Snapshot, sqlx::Error> {
                let mut slices = Vec::new();
                for (len, since) in horizons {
                    let rows: Vec<Row> = sqlx::query_as(SELECT_SLICES)
                        .bind(user)
                        .bind(*len)
                        .bind(*since)
                        .fetch_all(&mut *conn)
                        .await?;
                    slices.extend(rows.into_iter().map(slice));
                }
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

            async fn add(
                conn: &mut $conn,
                user: &str,
                scope: &str,
                len: i64,
                start: i64,
                counts: [i64; 3],
            ) -> Result<(), sqlx::Error> {
                sqlx::query(ADD)
                    .bind(user)
                    .bind(scope)
                    .bind(len)
                    .bind(start)
                    .bind(counts[0])
                    .bind(counts[1])
                    .bind(counts[2])
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }

            /// Decides and, when admitted, records; a refusal changes nothing.
            pub(crate) async fn reserve(
                conn: &mut $conn,
                r: &Reserve,
            ) -> Result<Reserved, sqlx::Error> {
                let snap = snapshot(conn, &r.user, &r.horizons, r.now, r.read_running).await?;
                if !(r.admit)(&snap) {
                    return Ok(Reserved::Refused(snap));
                }
                for (scope, len) in &r.slices {
                    let start = r.now - r.now.rem_euclid(*len);
                    add(conn, &r.user, scope, *len, start, [1, 0, 0]).await?;
                }
                sqlx::query(MARK_RUNNING)
                    .bind(&r.call_id)
                    .bind(&r.user)
                    .bind(&r.model)
                    .bind(r.lease_until)
                    .bind(&r.instance)
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
                    for (scope, len) in &s.slices {
                        let start = s.now - s.now.rem_euclid(*len);
                        let counts = [0, s.input_tokens, s.output_tokens];
                        add(conn, &s.user, scope, *len, start, counts).await?;
                    }
                }
                for (len, before) in &s.horizons {
                    sqlx::query(FORGET_USER)
                        .bind(&s.user)
                        .bind(*len)
                        .bind(*before)
                        .execute(&mut *conn)
                        .await?;
                }
                Ok(())
            }

            pub(crate) async fn renew(
                conn: &mut $conn,
                instance: &str,
                lease_until: i64,
            ) -> Result<(), sqlx::Error> {
                sqlx::query(RENEW)
                    .bind(instance)
                    .bind(lease_until)
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }

            /// Adds a batch of deltas and deletes the slices no window reads any more.
            pub(crate) async fn flush(
                conn: &mut $conn,
                deltas: &[Delta],
                horizons: &[(i64, i64)],
            ) -> Result<(), sqlx::Error> {
                for ((user, scope, len, start), counts) in deltas {
                    add(conn, user, scope, *len, *start, *counts).await?;
                }
                for (len, before) in horizons {
                    sqlx::query(FORGET)
                        .bind(*len)
                        .bind(*before)
                        .execute(&mut *conn)
                        .await?;
                }
                Ok(())
            }

            /// Every user's slices within `horizons`.
            pub(crate) async fn load(
                conn: &mut $conn,
                horizons: &[(i64, i64)],
            ) -> Result<Vec<(String, SliceRow)>, sqlx::Error> {
                let mut out = Vec::new();
                for (len, since) in horizons {
                    let rows: Vec<(String, String, i64, i64, i64, i64, i64)> =
                        sqlx::query_as(LOAD_SLICES)
                            .bind(*len)
                            .bind(*since)
                            .fetch_all(&mut *conn)
                            .await?;
                    out.extend(
                        rows.into_iter()
                            .map(|r| (r.0, slice((r.1, r.2, r.3, r.4, r.5, r.6)))),
                    );
                }
                Ok(out)
            }
        }
    };
}

steps!(sqlite_steps, SqliteConnection);
steps!(pg_steps, PgConnection);
