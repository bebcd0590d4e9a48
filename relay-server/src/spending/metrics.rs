//! The spending limits' Prometheus series (`relay_spending_*`): refusals by limit, admission and settlement
//! times, counter writes that failed. Registered into the relay's registry by `crate::metrics`, which knows
//! nothing else of spending; the handles are cheap clones sharing their values.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use super::policy::Refusal;

type Labels = Vec<(String, String)>;

#[derive(Clone)]
pub struct SpendingMetrics {
    /// Model calls refused by a spending limit, by the limit's kind, window and model (never by user).
    pub refusals: Family<Labels, Counter>,
    /// Spending counter updates that failed (a call's usage went unrecorded).
    pub write_errors: Counter,
    /// The admission of each model call (on the call's path, before any upstream call).
    pub admit: Histogram,
    /// The settling of each model call (after the response ended, off its path).
    pub settle: Histogram,
}

impl SpendingMetrics {
    /// The series, registered into `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = SpendingMetrics {
            refusals: Family::default(),
            write_errors: Counter::default(),
            // 10 µs .. ~42 s.
            admit: Histogram::new(exponential_buckets(0.00001, 2.0, 23)),
            settle: Histogram::new(exponential_buckets(0.00001, 2.0, 23)),
        };
        registry.register(
            "spending_admit_seconds",
            "Spending counters: the admission at each model call's start",
            metrics.admit.clone(),
        );
        registry.register(
            "spending_settle_seconds",
            "Spending counters: recording the usage after each model call's end",
            metrics.settle.clone(),
        );
        registry.register(
            "spending_refusals",
            "Model calls refused by a spending limit, by limit kind, window (`<seconds>s sliding|fixed`, empty for concurrent calls) and model (empty: the limits of all models)",
            metrics.refusals.clone(),
        );
        registry.register(
            "spending_write_errors",
            "Spending counter updates that failed",
            metrics.write_errors.clone(),
        );
        metrics
    }

    /// Counts a refusal by its limit. The labels come from the configuration (kind, window, the model of a
    /// model's own limit, empty for the limits of all models), so their number is bounded.
    pub fn refusal(&self, refusal: &Refusal) {
        let limit = &refusal.limit;
        let window = match (limit.window_seconds, limit.sliding) {
            (Some(seconds), Some(true)) => format!("{seconds}s sliding"),
            (Some(seconds), _) => format!("{seconds}s fixed"),
            (None, _) => String::new(),
        };
        self.refusals
            .get_or_create(&vec![
                ("limit".into(), refusal.kind.as_str().into()),
                ("window".into(), window),
                ("model".into(), limit.model.clone().unwrap_or_default()),
            ])
            .inc();
    }
}
