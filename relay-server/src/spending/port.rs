//! The port through which spending reaches its counters: [`CounterStore`], and what crosses it (one call's
//! admission, [`Reserve`], and its end, [`Settle`]). The relay's database implements it
//! (`crate::store::spending`); spending knows nothing of SQL. The rule is a closure the admission carries, so a
//! store can run it inside its transaction; the relay's PostgreSQL counters (`crate::store::spending_pg`)
//! instead check the same [`super::Policy`]'s limits in one statement, and only a refusal's usage comes back
//! to the rule (docs/adr/013).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::counters::Delta;
use super::counts::{SliceRow, Snapshot};

/// Why the counters could not be read or written (the database's own error, for the log).
pub type CounterError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What the port's operations return: boxed so the trait stays object safe (spending holds an
/// `Arc<dyn CounterStore>`).
pub type CounterFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, CounterError>> + Send + 'a>>;

/// Per slice length, the oldest slice start still read: `(slice length, oldest start)`.
pub type Horizons = Vec<(i64, i64)>;

/// The counters' storage. Two ways to use it: a relay that counts in memory writes its deltas behind
/// ([`CounterStore::flush`]) and reads them back at start ([`CounterStore::load`]); relays that share the
/// counters admit and settle each call in the store ([`CounterStore::reserve`], [`CounterStore::settle`]),
/// each operation atomic across every relay sharing it.
pub trait CounterStore: Send + Sync + 'static {
    /// Whether several relays may share these counters (PostgreSQL), so admissions must go through the store.
    fn shared(&self) -> bool;
    /// Every user's stored slices within `horizons` (a start loads them).
    fn load(&self, horizons: Horizons) -> CounterFuture<'_, Vec<(String, SliceRow)>>;
    /// Adds `deltas` to the stored slices and deletes the slices older than `horizons`, in one transaction.
    fn flush(&self, deltas: Vec<Delta>, horizons: Horizons) -> CounterFuture<'_, ()>;
    /// Admits and records one model call atomically, or refuses it with the usage that refused it.
    fn reserve(&self, reserve: Reserve) -> CounterFuture<'_, Reserved>;
    /// Records a call's end (its tokens; no longer running).
    fn settle(&self, settle: Settle) -> CounterFuture<'_, ()>;
    /// Moves the end of every running mark of relay `instance` to `lease_until` (while its calls stream).
    fn renew<'a>(&'a self, instance: &'a str, lease_until: i64) -> CounterFuture<'a, ()>;
    /// A user's stored usage within `horizons`, and the calls marked running at `now` (no lock).
    fn snapshot<'a>(
        &'a self,
        user: &'a str,
        horizons: Horizons,
        now: i64,
    ) -> CounterFuture<'a, Snapshot>;
}

/// The caller's rule: whether the snapshot admits one more call.
pub type Admit = Arc<dyn Fn(&Snapshot) -> bool + Send + Sync>;

/// One call's admission: what to read, how to decide, what to record.
pub struct Reserve {
    pub user: String,
    pub call_id: String,
    /// The relay instance whose call this is (its running mark carries it, and it renews the mark).
    pub instance: String,
    pub model: String,
    /// Unix seconds.
    pub now: i64,
    /// The running mark ends here unless its relay renews it.
    pub lease_until: i64,
    /// Which slices the rule reads.
    pub horizons: Horizons,
    /// Whether the rule reads the running calls.
    pub read_running: bool,
    /// `(scope, slice length)`: the slices the call is counted in (the one `now` falls in, of each).
    pub slices: Vec<(String, i64)>,
    pub admit: Admit,
}

impl std::fmt::Debug for Reserve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reserve")
            .field("call_id", &self.call_id)
            .field("model", &self.model)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

/// What an admission decided: admitted (counted and marked running), or refused with the usage it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reserved {
    Admitted,
    Refused(Snapshot),
}

/// One call's end: the tokens it used, added to the slice `now` falls in.
#[derive(Debug, Clone)]
pub struct Settle {
    pub user: String,
    pub call_id: String,
    pub now: i64,
    pub slices: Vec<(String, i64)>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// This user's slices older than these are read by no window any more and are deleted.
    pub horizons: Horizons,
}
