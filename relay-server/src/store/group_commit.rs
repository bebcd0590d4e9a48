//! Group commit for SQLite: one writer task owns one connection and commits the writes that arrived while
//! the previous commit was being made durable, together, in one `BEGIN IMMEDIATE` ... `COMMIT`.
//!
//! Why: with WAL and `synchronous=FULL` every commit waits for an fsync of the WAL, and SQLite has one writer
//! at a time, so commit-per-request caps the write rate at one fsync per write and queues everyone else on
//! the file lock (busy-waiting with sleeps). One fsync per group keeps the same durability for each write.
//!
//! Guarantees, each the same as a transaction per write:
//! - A write is acknowledged only after the `COMMIT` that contains it has returned (durable: FULL fsyncs). The
//!   spending counters are the exception: a group holding only their updates commits without an fsync of its
//!   own (a model call's start must not wait for the disk; a power loss may forget the last counts).
//! - Operations run one after another in arrival order inside the group, each checking revision and quota
//!   against everything before it, so two writes expecting the same revision still have exactly one winner
//!   and a user's quota counts every earlier write of the group.
//! - An operation refused for a domain reason (conflict, not found, quota) changes nothing
//!   ([`super::sqlite_ops`]), so it is answered and the group goes on.
//! - If a statement fails (a database error), the whole group is rolled back and its operations are run
//!   again one per transaction, so one bad operation fails alone. If the `COMMIT` itself fails, every
//!   operation of the group gets the error (none was acknowledged; clients retry with their revision).
//!
//! No waiting to fill a group: a lone write commits at once; groups form only under concurrency.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};
use tokio::sync::{mpsc, oneshot};

use super::sqlite_ops::{apply, OpOutcome, WriteOp};
use super::StoreError;

/// Most operations committed together (bounds the time one group holds the write lock and its memory).
const MAX_GROUP: usize = 256;
/// Operations waiting for the writer before submitters wait for room.
const QUEUE: usize = 4096;

type Reply = oneshot::Sender<Result<OpOutcome, StoreError>>;

enum Job {
    Op(WriteOp, Reply),
    /// Finish what was queued before, close the connection, then answer.
    Close(oneshot::Sender<()>),
}

/// The handle to the writer task (cheap to clone).
#[derive(Clone, Debug)]
pub(super) struct GroupWriter {
    jobs: mpsc::Sender<Job>,
    counts: Arc<Counts>,
}

/// Committed transactions and the operations they held (how much grouping happens).
#[derive(Debug, Default)]
struct Counts {
    commits: AtomicU64,
    ops: AtomicU64,
}

impl GroupWriter {
    /// Opens the writer's own connection and starts its task on the current tokio runtime.
    pub(super) async fn start(options: &SqliteConnectOptions) -> Result<GroupWriter, sqlx::Error> {
        let conn = SqliteConnection::connect_with(options).await?;
        let (jobs, queue) = mpsc::channel(QUEUE);
        let counts = Arc::new(Counts::default());
        tokio::spawn(run(conn, queue, counts.clone()));
        Ok(GroupWriter { jobs, counts })
    }

    /// `(commits, operations in committed groups, refused ones included)` since the start.
    pub(super) fn counts(&self) -> (u64, u64) {
        (
            self.counts.commits.load(Ordering::Relaxed),
            self.counts.ops.load(Ordering::Relaxed),
        )
    }

    /// Runs `op` in the next group; returns once that group's commit is durable (or failed).
    pub(super) async fn submit(&self, op: WriteOp) -> Result<OpOutcome, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job::Op(op, reply))
            .await
            .map_err(|_| StoreError::Writer("the SQLite writer is closed".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Writer("the SQLite writer stopped".into()))?
    }

    /// Commits what is queued, then closes the writer's connection.
    pub(super) async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.jobs.send(Job::Close(done)).await.is_ok() {
            let _ = closed.await;
        }
    }
}

async fn run(mut conn: SqliteConnection, mut queue: mpsc::Receiver<Job>, counts: Arc<Counts>) {
    let mut group: Vec<(WriteOp, Reply)> = Vec::with_capacity(MAX_GROUP);
    let mut close = None;
    while close.is_none() {
        let Some(first) = queue.recv().await else {
            break;
        };
        let mut next = Some(first);
        // Everything already waiting joins this group (no waiting for more).
        while let Some(job) = next.take() {
            match job {
                Job::Op(op, reply) => group.push((op, reply)),
                Job::Close(done) => {
                    close = Some(done);
                    break;
                }
            }
            if group.len() < MAX_GROUP {
                next = queue.try_recv().ok();
            }
        }
        if !group.is_empty() {
            commit_group(&mut conn, &mut group, &counts).await;
        }
    }
    let _ = conn.close().await;
    if let Some(done) = close {
        let _ = done.send(());
    }
}

/// Commits `group` (emptying it) and answers every operation in it.
async fn commit_group(
    conn: &mut SqliteConnection,
    group: &mut Vec<(WriteOp, Reply)>,
    counts: &Counts,
) {
    let ops: Vec<&WriteOp> = group.iter().map(|(op, _)| op).collect();
    match try_group(conn, &ops, counts).await {
        Ok(outcomes) => {
            for ((_, reply), outcome) in group.drain(..).zip(outcomes) {
                let _ = reply.send(outcome);
            }
        }
        Err(GroupFailure::Commit(e)) => {
            let detail = format!("commit failed: {e}");
            for (_, reply) in group.drain(..) {
                let _ = reply.send(Err(StoreError::Writer(detail.clone())));
            }
        }
        Err(GroupFailure::Statement(e)) if group.len() == 1 => {
            let (_, reply) = group.pop().expect("one operation");
            let _ = reply.send(Err(StoreError::from(e)));
        }
        Err(GroupFailure::Statement(_)) => {
            // Rolled back: nothing of the group happened. Again, one transaction per operation.
            for (op, reply) in group.drain(..) {
                let outcome = match try_group(conn, &[&op], counts).await {
                    Ok(mut one) => one.pop().expect("one outcome"),
                    Err(GroupFailure::Commit(e) | GroupFailure::Statement(e)) => {
                        Err(StoreError::from(e))
                    }
                };
                let _ = reply.send(outcome);
            }
        }
    }
}

enum GroupFailure {
    /// A statement of an operation (or `BEGIN`) failed; the transaction was rolled back.
    Statement(sqlx::Error),
    /// `COMMIT` failed.
    Commit(sqlx::Error),
}

/// One transaction holding `ops` in order; the answers in the same order once committed.
async fn try_group(
    conn: &mut SqliteConnection,
    ops: &[&WriteOp],
    counts: &Counts,
) -> Result<Vec<Result<OpOutcome, StoreError>>, GroupFailure> {
    // A group of spending counter updates alone commits without its own fsync (WAL, `synchronous=NORMAL`: it
    // survives a process crash and is made durable by the next fsync); every other group waits for one.
    let sync = if ops.iter().any(|op| op.needs_fsync()) {
        "PRAGMA synchronous = FULL"
    } else {
        "PRAGMA synchronous = NORMAL"
    };
    sqlx::query(sync)
        .execute(&mut *conn)
        .await
        .map_err(GroupFailure::Statement)?;
    let mut tx = conn
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(GroupFailure::Statement)?;
    let mut outcomes = Vec::with_capacity(ops.len());
    for op in ops {
        // Dropping `tx` on an error rolls back.
        outcomes.push(apply(&mut tx, op).await.map_err(GroupFailure::Statement)?);
    }
    tx.commit().await.map_err(GroupFailure::Commit)?;
    counts.commits.fetch_add(1, Ordering::Relaxed);
    counts.ops.fetch_add(ops.len() as u64, Ordering::Relaxed);
    Ok(outcomes)
}
