//! Per-user spending limits on model calls: calls, input tokens and output tokens over the windows an operator
//! configures (`spending` in the configuration), concurrent calls, and a model's own limits on top.
//!
//! A component with its own inputs: the rules ([`Policy`]), a counter store behind a port
//! ([`port::CounterStore`], the relay's database implements it) and its metrics ([`SpendingMetrics`]). The model
//! route asks [`Spending::admit`] before any upstream call; a refusal is a [`Refused`], which the route turns
//! into its HTTP answer (`SPENDING_LIMIT_REACHED`, 429). A [`Ticket`] watches the call's events for the
//! provider's reported usage and, when the response ends however it ends, records the tokens (without usage:
//! the request's input bound, [`estimate`], and the model's output bound, once the request may have reached the
//! provider; the model route tells the ticket when an attempt is sent and how it was answered). A limit reached
//! mid-stream never cuts a running call: the next one is refused.
//!
//! Where the counters live (docs/adr/013):
//! - **one relay (SQLite)**: in memory ([`counters`]); an admission is a lock and a few additions, no database
//!   round trip. Counts are written behind every [`FLUSH_INTERVAL`] and loaded at start, so a restart keeps
//!   them; a SIGKILL forgets at most the counts of the last [`FLUSH_INTERVAL`] plus one write in progress
//!   (under 2 s). Running calls are counted in memory only (the ticket is the guard): they end with the
//!   process, so after a crash the user can call again at once. [`Spending::close`] (SIGTERM) waits for the
//!   open calls to settle, then writes the last counts, before the store closes.
//! - **replicas (PostgreSQL)**: in the database, so the limits hold across replicas: one statement per
//!   admission (`patchbridge_admit`, migration 0005: the user's advisory lock, each window's own slices, the
//!   decision, the count and the mark; `crate::store::spending_pg`), one per settlement. A running call's mark carries this relay's
//!   instance id (random, chosen at start); the instance renews all its marks every [`RENEW_INTERVAL`], and a
//!   mark expires [`MARK_LEASE_SECONDS`] after its last renewal, so a crashed relay's calls stop counting
//!   within a minute.
//!
//! - [`counts`]: a user's counted usage as data (what the rules read).
//! - [`policy`]: the rules as data and the pure decisions (admit or refuse, when to retry).
//! - [`config`]: the `spending` section and its validation into a [`Policy`].
//! - [`estimate`]: the input bound of a request.
//! - [`counters`]: the in-memory counters of one relay.
//! - [`port`]: the counter store's interface and what crosses it.
//! - [`metrics`]: the `relay_spending_*` series.
//! - this file: [`Spending`], [`Ticket`], and the operators' usage report ([`Spending::usage_report`]).
//! - [`report`]: the `patchbridge-relay usage` subcommand.

// The bench-only build (`bench-spending-off`) skips the counting, so what only it uses is unused there.
#![cfg_attr(feature = "bench-spending-off", allow(dead_code, unused_imports))]

pub mod config;
pub mod counters;
pub mod counts;
pub mod estimate;
pub mod metrics;
pub mod policy;
pub mod port;
pub mod report;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use patchbridge_protocol::{ModelRequest, StreamEvent, Usage};

pub use config::SpendingConfig;
use counters::Counters;
use metrics::SpendingMetrics;
pub use policy::{Policy, Refusal, UsageLine};
use port::{CounterError, CounterStore, Reserve, Reserved, Settle};

/// How often a relay that counts in memory writes its counts behind (and the most a SIGKILL forgets, plus
/// one write in progress).
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(1);
/// How long a running call's mark in a shared database lasts without renewal.
pub const MARK_LEASE_SECONDS: i64 = 60;
/// How often a relay renews the marks of its running calls in a shared database.
pub const RENEW_INTERVAL: Duration = Duration::from_secs(20);

/// Now in Unix seconds.
pub fn now_seconds() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.as_secs()).unwrap_or(i64::MAX)
}

/// Why a call was not admitted.
#[derive(Debug)]
pub enum Refused {
    /// A limit refuses it (the user may try again after the refusal's `retry_after_seconds`).
    Limit(Refusal),
    /// The counters could not be read or written: a relay that cannot count must not spend without limits.
    Unavailable(CounterError),
}

/// The spending limits of one relay: the rules, where the counters live, and the metrics. Cheap to clone.
#[derive(Clone)]
pub struct Spending {
    inner: Arc<Inner>,
}

struct Inner {
    policy: Arc<Policy>,
    store: Arc<dyn CounterStore>,
    metrics: SpendingMetrics,
    /// This relay instance (random, chosen at start): the running marks it writes carry it.
    instance: String,
    /// Whether admissions go through the store (shared by replicas) rather than [`Inner::counters`].
    shared: bool,
    counters: Counters,
    /// Set once the stored counts are loaded and the background task runs.
    started: tokio::sync::OnceCell<()>,
    /// Tickets alive plus settlements not yet written (shared counters).
    open: AtomicUsize,
    settled: tokio::sync::Notify,
}

impl Spending {
    pub fn new(policy: Policy, store: Arc<dyn CounterStore>, metrics: SpendingMetrics) -> Self {
        let shared = store.shared();
        Spending {
            inner: Arc::new(Inner {
                policy: Arc::new(policy),
                store,
                metrics,
                instance: uuid::Uuid::new_v4().simple().to_string(),
                shared,
                counters: Counters::default(),
                started: tokio::sync::OnceCell::new(),
                open: AtomicUsize::new(0),
                settled: tokio::sync::Notify::new(),
            }),
        }
    }

    /// The rules applied.
    pub fn policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// This relay instance's id (in the running marks it writes to a shared database).
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// Calls admitted and not yet settled (tickets alive, and settlements still being written).
    pub fn open_calls(&self) -> usize {
        self.inner.open.load(Ordering::SeqCst)
    }

    /// Loads the stored counts (in memory) and starts the background task, once.
    async fn start(&self) -> Result<(), CounterError> {
        let inner = &self.inner;
        inner
            .started
            .get_or_try_init(|| async {
                if !inner.shared {
                    let rows = inner
                        .store
                        .load(inner.policy.horizons(now_seconds()))
                        .await?;
                    inner.counters.load(&inner.policy, rows);
                }
                tokio::spawn(background(Arc::downgrade(inner)));
                Ok::<(), CounterError>(())
            })
            .await?;
        Ok(())
    }

    /// The bench-only build (`bench-spending-off`): every call admitted, nothing counted.
    #[cfg(feature = "bench-spending-off")]
    pub async fn admit(
        &self,
        user: &str,
        _model: &str,
        _request: &ModelRequest,
    ) -> Result<Ticket, Refused> {
        Ok(Ticket::uncounted(self.inner.clone(), user))
    }

    /// Admits one call of `model` by `user` for `request`, or refuses it.
    #[cfg(not(feature = "bench-spending-off"))]
    pub async fn admit(
        &self,
        user: &str,
        model: &str,
        request: &ModelRequest,
    ) -> Result<Ticket, Refused> {
        self.start().await.map_err(Refused::Unavailable)?;
        let inner = &self.inner;
        let policy = &inner.policy;
        let now = now_seconds();
        let began = std::time::Instant::now();
        let mut call_id = String::new();
        let refused = if inner.shared {
            call_id = uuid::Uuid::new_v4().to_string();
            let decide = {
                let policy = policy.clone();
                let model = model.to_owned();
                Arc::new(move |snapshot: &counts::Snapshot| {
                    policy.refusal(&model, snapshot, now).is_none()
                })
            };
            let reserve = Reserve {
                user: user.to_owned(),
                call_id: call_id.clone(),
                instance: inner.instance.clone(),
                model: model.to_owned(),
                now,
                lease_until: now.saturating_add(MARK_LEASE_SECONDS),
                horizons: policy.horizons(now),
                read_running: policy.limits_running(model),
                slices: policy.slices(model),
                admit: decide,
            };
            match inner.store.reserve(reserve).await {
                Ok(Reserved::Admitted) => None,
                // The rule refused inside the transaction; the same snapshot and time give the same answer.
                Ok(Reserved::Refused(snapshot)) => {
                    Some(policy.refusal(model, &snapshot, now).ok_or_else(|| {
                        Refused::Unavailable("spending: a refusal without a limit".into())
                    })?)
                }
                Err(e) => return Err(Refused::Unavailable(e)),
            }
        } else {
            inner.counters.admit(policy, user, model, now).err()
        };
        inner.metrics.admit.observe(began.elapsed().as_secs_f64());
        if let Some(refusal) = refused {
            inner.metrics.refusal(&refusal);
            return Err(Refused::Limit(refusal));
        }
        inner.open.fetch_add(1, Ordering::SeqCst);
        Ok(Ticket {
            spending: self.inner.clone(),
            user: user.to_owned(),
            call_id,
            model: model.to_owned(),
            input_bound: estimate::input_bound(request),
            usage: None,
            in_flight: false,
            reached: false,
            free: false,
            counted: true,
        })
    }

    /// Every configured limit with `user`'s usage of it at `now`, as this relay counts it.
    pub async fn usage_report(&self, user: &str, now: i64) -> Result<Vec<UsageLine>, CounterError> {
        self.start().await?;
        let inner = &self.inner;
        let snapshot = if inner.shared {
            inner
                .store
                .snapshot(user, inner.policy.horizons(now), now)
                .await?
        } else {
            inner.counters.snapshot(user, now)
        };
        Ok(inner.policy.usage(&snapshot, now))
    }

    /// Writes the counts counted in memory since the last write (nothing for shared counters).
    pub async fn flush(&self) -> Result<(), CounterError> {
        flush(&self.inner).await
    }

    /// Before the store closes (SIGTERM): waits up to `grace` for every open call to settle, then writes the
    /// last counts. Returns the calls still open when the grace ended (their counts are lost with them).
    pub async fn close(&self, grace: Duration) -> usize {
        let inner = &self.inner;
        let waited = tokio::time::timeout(grace, async {
            loop {
                let notified = inner.settled.notified();
                if inner.open.load(Ordering::SeqCst) == 0 {
                    break;
                }
                notified.await;
            }
        })
        .await;
        if let Err(e) = flush(inner).await {
            tracing::warn!(error = %e, "spending counters: the last counts were not written");
        }
        if waited.is_err() {
            inner.open.load(Ordering::SeqCst)
        } else {
            0
        }
    }
}

async fn flush(inner: &Inner) -> Result<(), CounterError> {
    if inner.shared {
        return Ok(());
    }
    let now = now_seconds();
    let deltas = inner.counters.take_pending(now);
    if deltas.is_empty() {
        return Ok(());
    }
    let began = std::time::Instant::now();
    let written = inner
        .store
        .flush(deltas.clone(), inner.policy.horizons(now))
        .await;
    inner.metrics.settle.observe(began.elapsed().as_secs_f64());
    if let Err(e) = written {
        inner.metrics.write_errors.inc();
        inner.counters.restore_pending(deltas);
        return Err(e);
    }
    Ok(())
}

/// Writes the counts behind (in memory) or renews the running marks (shared), until the relay is dropped.
async fn background(inner: Weak<Inner>) {
    let mut since_renewal = Duration::ZERO;
    loop {
        tokio::time::sleep(FLUSH_INTERVAL).await;
        let Some(inner) = inner.upgrade() else { return };
        if inner.shared {
            since_renewal += FLUSH_INTERVAL;
            if since_renewal >= RENEW_INTERVAL {
                since_renewal = Duration::ZERO;
                let until = now_seconds().saturating_add(MARK_LEASE_SECONDS);
                if let Err(e) = inner.store.renew(&inner.instance, until).await {
                    inner.metrics.write_errors.inc();
                    tracing::warn!(error = %e, "spending counters: running calls were not renewed");
                }
            }
        } else if let Err(e) = flush(&inner).await {
            tracing::warn!(error = %e, "spending counters: counts not written yet (retried)");
        }
    }
}

/// One admitted call: watches its events and records its usage when dropped (when the response ends, fails, or
/// the browser goes away). Until then it counts as running.
pub struct Ticket {
    spending: Arc<Inner>,
    user: String,
    /// The running mark's id in a shared database (empty when counting in memory).
    call_id: String,
    model: String,
    /// [`estimate::input_bound`] of the request: charged when the stream ends without usage.
    input_bound: u64,
    /// The usage of the call's `message-stop`, when it reported any.
    usage: Option<Usage>,
    /// An attempt's request is on its way to the provider and has no answer yet.
    in_flight: bool,
    /// An attempt reached the provider: it answered 2xx, or its answer never came in time (the provider may
    /// be running it). Never unset: a later refused retry does not undo what an earlier attempt may cost.
    reached: bool,
    /// The call costs no tokens (the scripted demo model).
    free: bool,
    /// False only in the bench-only build without limits (`bench-spending-off`): nothing is recorded.
    counted: bool,
}

impl Ticket {
    /// The bench-only build's ticket (`bench-spending-off`): admitted without a count, records nothing.
    #[cfg(feature = "bench-spending-off")]
    fn uncounted(spending: Arc<Inner>, user: &str) -> Self {
        Ticket {
            spending,
            user: user.to_owned(),
            call_id: String::new(),
            model: String::new(),
            input_bound: 0,
            usage: None,
            in_flight: false,
            reached: false,
            free: true,
            counted: false,
        }
    }

    /// Notes what the event says about the call's cost. Called for every event: a match and nothing else.
    pub fn observe(&mut self, event: &StreamEvent) {
        if let StreamEvent::MessageStop { usage, .. } = event {
            if usage.input_tokens > 0 || usage.output_tokens > 0 {
                self.usage = Some(*usage);
            }
        }
    }

    /// An attempt's request is about to leave for the provider. From here until [`Ticket::attempt_ended`]
    /// says otherwise, a call that ends without usage (the browser hung up while the provider was answering,
    /// say) is charged the bounds.
    pub fn attempt_sent(&mut self) {
        self.in_flight = true;
    }

    /// The attempt's answer: `reached` when the provider accepted the request (2xx) or never answered in time;
    /// not when it refused it (a non-2xx status) or could not be reached (its connection failed), which costs
    /// nothing.
    pub fn attempt_ended(&mut self, reached: bool) {
        self.in_flight = false;
        self.reached |= reached;
    }

    /// Marks the call as costing no tokens (a model without a provider).
    pub fn free(mut self) -> Self {
        self.free = true;
        self
    }

    /// `(input, output)` tokens to record: the reported usage; without it, nothing when no attempt reached the
    /// provider, else the request's input bound and the model's output bound (the most the call could have
    /// cost: the stream was cut, cancelled or closed by the browser before the provider said, or it failed
    /// after the provider accepted it).
    fn tokens(&self) -> (u64, u64) {
        match (&self.usage, self.free, self.reached || self.in_flight) {
            (_, true, _) => (0, 0),
            (Some(usage), _, _) => (usage.input_tokens, usage.output_tokens),
            (None, _, false) => (0, 0),
            (None, _, true) => (
                self.input_bound,
                self.spending.policy.fallback_output_tokens(&self.model),
            ),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.counted {
            return;
        }
        let (input, output) = self.tokens();
        let tokens = [
            i64::try_from(input).unwrap_or(i64::MAX),
            i64::try_from(output).unwrap_or(i64::MAX),
        ];
        let now = now_seconds();
        let inner = self.spending.clone();
        if !inner.shared {
            inner
                .counters
                .settle(&inner.policy, &self.user, &self.model, tokens, now);
            inner.open.fetch_sub(1, Ordering::SeqCst);
            inner.settled.notify_waiters();
            return;
        }
        let settle = Settle {
            user: std::mem::take(&mut self.user),
            call_id: std::mem::take(&mut self.call_id),
            now,
            slices: inner.policy.slices(&self.model),
            input_tokens: tokens[0],
            output_tokens: tokens[1],
            horizons: inner.policy.horizons(now),
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Outside a runtime (a host dropping the body after its runtime ended): the lease ends the mark.
            inner.metrics.write_errors.inc();
            inner.open.fetch_sub(1, Ordering::SeqCst);
            inner.settled.notify_waiters();
            return;
        };
        runtime.spawn(async move {
            let began = std::time::Instant::now();
            let settled = inner.store.settle(settle).await;
            inner.metrics.settle.observe(began.elapsed().as_secs_f64());
            if let Err(e) = settled {
                inner.metrics.write_errors.inc();
                tracing::warn!(error = %e, "spending counters: a call's usage was not recorded");
            }
            inner.open.fetch_sub(1, Ordering::SeqCst);
            inner.settled.notify_waiters();
        });
    }
}
