//! Per-user spending limits on model calls: calls, input tokens and output tokens over the windows an operator
//! configures (`spending` in the configuration), concurrent calls, and a model's own limits on top.
//!
//! A component with its own inputs: the rules ([`Policy`]), a counter store behind a port
//! ([`port::CounterStore`], the relay's database implements it) and its metrics ([`SpendingMetrics`]). The model
//! route asks [`Spending::admit`] before any upstream call; a refusal is a [`Refused`], which the route turns
//! into its HTTP answer (`SPENDING_LIMIT_REACHED`, 429). A [`Ticket`] watches the call's events for the
//! provider's reported usage and, when the response ends however it ends, records the tokens, spawned off the
//! response. A limit reached mid-stream never cuts a running call: the next one is refused.
//!
//! - [`counts`]: a user's counted usage as data (what the rules read).
//! - [`policy`]: the rules as data and the pure decisions (admit or refuse, when to retry).
//! - [`config`]: the `spending` section and its validation into a [`Policy`].
//! - [`port`]: the counter store's interface and what crosses it.
//! - [`metrics`]: the `relay_spending_*` series.
//! - this file: [`Spending`], [`Ticket`], and the operators' usage report ([`Spending::usage_report`]).
//! - [`report`]: the `patchbridge-relay usage` subcommand.

pub mod config;
pub mod counts;
pub mod metrics;
pub mod policy;
pub mod port;
pub mod report;

use std::sync::Arc;

use patchbridge_protocol::{StreamEvent, Usage};

pub use config::SpendingConfig;
use metrics::SpendingMetrics;
pub use policy::{Policy, Refusal, UsageLine};
use port::{CounterError, CounterStore, Reserve, Reserved, Settle};

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

/// The spending limits of one relay: the rules, where the counters live, and the metrics.
#[derive(Clone)]
pub struct Spending {
    policy: Arc<Policy>,
    store: Arc<dyn CounterStore>,
    metrics: SpendingMetrics,
}

impl Spending {
    pub fn new(policy: Policy, store: Arc<dyn CounterStore>, metrics: SpendingMetrics) -> Self {
        Spending {
            policy: Arc::new(policy),
            store,
            metrics,
        }
    }

    /// The rules applied.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Admits one call of `model` by `user`, or refuses it.
    pub async fn admit(&self, user: &str, model: &str) -> Result<Ticket, Refused> {
        let policy = self.policy.clone();
        let now = now_seconds();
        let call_id = uuid::Uuid::new_v4().to_string();
        let slices = policy.slices(model);
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
            model: model.to_owned(),
            now,
            lease_until: now
                .saturating_add(i64::try_from(policy.lease_seconds).unwrap_or(i64::MAX)),
            since: policy.oldest_needed(model, now),
            read_running: policy.limits_running(model),
            slices: slices.clone(),
            admit: decide,
        };
        let began = std::time::Instant::now();
        let reserved = self.store.reserve(reserve).await;
        self.metrics.admit.observe(began.elapsed().as_secs_f64());
        match reserved {
            Ok(Reserved::Admitted) => Ok(Ticket {
                store: self.store.clone(),
                metrics: self.metrics.clone(),
                policy,
                user: user.to_owned(),
                call_id,
                model: model.to_owned(),
                slices,
                usage: None,
                streamed: false,
                free: false,
            }),
            Ok(Reserved::Refused(snapshot)) => {
                // The rule refused inside the transaction; the same snapshot and time give the same answer.
                let refusal = policy.refusal(model, &snapshot, now).ok_or_else(|| {
                    Refused::Unavailable("spending: a refusal without a limit".into())
                })?;
                self.metrics.refusal(&refusal);
                Err(Refused::Limit(refusal))
            }
            Err(e) => Err(Refused::Unavailable(e)),
        }
    }

    /// Every configured limit with `user`'s usage of it at `now`, read from the counters the relay counts in.
    pub async fn usage_report(&self, user: &str, now: i64) -> Result<Vec<UsageLine>, CounterError> {
        let snapshot = self
            .store
            .snapshot(user, self.policy.forget_before(now), now)
            .await?;
        Ok(self.policy.usage(&snapshot, now))
    }
}

/// One admitted call: watches its events and records its usage when dropped (when the response ends, fails, or
/// the browser goes away).
pub struct Ticket {
    store: Arc<dyn CounterStore>,
    metrics: SpendingMetrics,
    policy: Arc<Policy>,
    user: String,
    call_id: String,
    model: String,
    slices: Vec<(String, i64)>,
    /// The usage of the call's `message-stop`, when it reported any.
    usage: Option<Usage>,
    /// Whether the provider accepted the call (an event other than an error arrived).
    streamed: bool,
    /// The call costs no tokens (the scripted demo model).
    free: bool,
}

impl Ticket {
    /// Notes what the event says about the call's cost. Called for every event: a match and nothing else.
    pub fn observe(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::MessageStop { usage, .. } => {
                self.streamed = true;
                if usage.input_tokens > 0 || usage.output_tokens > 0 {
                    self.usage = Some(*usage);
                }
            }
            StreamEvent::Error { .. } => {}
            _ => self.streamed = true,
        }
    }

    /// Marks the call as costing no tokens (a model without a provider).
    pub fn free(mut self) -> Self {
        self.free = true;
        self
    }

    /// `(input, output)` tokens to record: the reported usage; without it, nothing when the provider never
    /// accepted the call, else the model's output bound (the most the call could have cost in output).
    fn tokens(&self) -> (u64, u64) {
        match (&self.usage, self.free, self.streamed) {
            (_, true, _) => (0, 0),
            (Some(usage), _, _) => (usage.input_tokens, usage.output_tokens),
            (None, _, false) => (0, 0),
            (None, _, true) => (0, self.policy.fallback_output_tokens(&self.model)),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let (input, output) = self.tokens();
        let now = now_seconds();
        let settle = Settle {
            user: std::mem::take(&mut self.user),
            call_id: std::mem::take(&mut self.call_id),
            now,
            slices: std::mem::take(&mut self.slices),
            input_tokens: i64::try_from(input).unwrap_or(i64::MAX),
            output_tokens: i64::try_from(output).unwrap_or(i64::MAX),
            forget_before: self.policy.forget_before(now),
        };
        let store = self.store.clone();
        let metrics = self.metrics.clone();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Outside a runtime (a host dropping the body after its runtime ended): the lease ends the mark.
            metrics.write_errors.inc();
            return;
        };
        runtime.spawn(async move {
            let began = std::time::Instant::now();
            let settled = store.settle(settle).await;
            metrics.settle.observe(began.elapsed().as_secs_f64());
            if let Err(e) = settled {
                metrics.write_errors.inc();
                tracing::warn!(error = %e, "spending counters: a call's usage was not recorded");
            }
        });
    }
}
