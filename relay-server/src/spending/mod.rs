//! Per-user spending limits on model calls: calls, input tokens and output tokens over the windows an operator
//! configures (`spending` in the configuration), concurrent calls, and a model's own limits on top.
//!
//! A call is admitted (or refused with `SPENDING_LIMIT_REACHED`, 429, before any upstream call) by one database
//! transaction at its start, which also counts it and marks it running; a [`Ticket`] watches its events for the
//! provider's reported usage and, when the response ends however it ends, records the tokens in one more
//! transaction, spawned off the response. Nothing touches the database while the stream runs, and a limit reached
//! mid-stream never cuts a running call: the next one is refused.
//!
//! - [`config`]: the `spending` section and its validation into a [`Policy`].
//! - [`policy`]: the rules as data and the pure decisions (admit or refuse, when to retry).
//! - [`report`]: the `patchbridge-relay usage` subcommand.
//! - this file: [`admit`], [`Ticket`], and the operators' usage report ([`usage_report`]).
//!
//! The counters live in the relay's database ([`crate::store::spending`]), so replicas on one PostgreSQL
//! schema share them.

pub mod config;
pub mod policy;
pub mod report;

use std::sync::Arc;

use patchbridge_protocol::{StreamEvent, Usage};

use crate::error::RelayError;
use crate::metrics::Metrics;
use crate::state::AppState;
use crate::store::spending::{Reserve, Reserved, Settle, Snapshot};
use crate::store::Store;
pub use config::SpendingConfig;
pub use policy::{Policy, Refusal};

/// Now in Unix seconds.
pub fn now_seconds() -> i64 {
    crate::store::now_micros() / 1_000_000
}

/// Admits one call of `model` by `user`, or refuses it. A database failure refuses too (as an internal error):
/// a relay that cannot count must not spend without limits.
pub async fn admit(state: &AppState, user: &str, model: &str) -> Result<Ticket, RelayError> {
    let policy = state.inner.spending.clone();
    let now = now_seconds();
    let call_id = uuid::Uuid::new_v4().to_string();
    let slices = policy.slices(model);
    let decide = {
        let policy = policy.clone();
        let model = model.to_owned();
        Arc::new(move |snapshot: &Snapshot| policy.refusal(&model, snapshot, now).is_none())
    };
    let reserve = Reserve {
        user: user.to_owned(),
        call_id: call_id.clone(),
        model: model.to_owned(),
        now,
        lease_until: now.saturating_add(i64::try_from(policy.lease_seconds).unwrap_or(i64::MAX)),
        since: policy.oldest_needed(model, now),
        read_running: policy.limits_running(model),
        slices: slices.clone(),
        admit: decide,
    };
    let began = std::time::Instant::now();
    let reserved = state.store().spending_reserve(reserve).await;
    state
        .metrics()
        .spending_admit
        .observe(began.elapsed().as_secs_f64());
    match reserved {
        Ok(Reserved::Admitted) => Ok(Ticket {
            store: state.store().clone(),
            metrics: state.inner.metrics.clone(),
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
            let refusal = policy
                .refusal(model, &snapshot, now)
                .ok_or_else(|| RelayError::internal("spending: a refusal without a limit"))?;
            state.metrics().spending_refusal(&refusal);
            Err(RelayError::spending_limit(refusal))
        }
        Err(e) => Err(RelayError::internal(format!("spending counters: {e}"))),
    }
}

/// One admitted call: watches its events and records its usage when dropped (when the response ends, fails, or
/// the browser goes away).
pub struct Ticket {
    store: Store,
    metrics: Arc<Metrics>,
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
            metrics.spending_write_errors.inc();
            return;
        };
        runtime.spawn(async move {
            let began = std::time::Instant::now();
            let settled = store.spending_settle(settle).await;
            metrics
                .spending_settle
                .observe(began.elapsed().as_secs_f64());
            if let Err(e) = settled {
                metrics.spending_write_errors.inc();
                tracing::warn!(error = %e, "spending counters: a call's usage was not recorded");
            }
        });
    }
}

/// One line of [`usage_report`]: a limit, what the user used of it now, and the maximum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageLine {
    /// `None`: all models.
    pub model: Option<String>,
    pub kind: patchbridge_protocol::SpendingLimitKind,
    /// `None` for concurrent calls.
    pub window_seconds: Option<u64>,
    pub sliding: bool,
    pub used: i64,
    pub max: u64,
}

/// Every configured limit with the user's usage of it at `now`, read from the same tables the relay counts in.
pub async fn usage_report(
    store: &Store,
    policy: &Policy,
    user: &str,
    now: i64,
) -> Result<Vec<UsageLine>, crate::store::StoreError> {
    let snapshot = store
        .spending_snapshot(user, policy.forget_before(now), now)
        .await?;
    Ok(policy.usage(&snapshot, now))
}
