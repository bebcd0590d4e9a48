//! Prometheus series of the fetched key set (`identity.jwksUrl`, or the one OIDC discovery names): fetches by
//! trigger and outcome, how long each took, how many keys the last set held and when a fetch last succeeded.
//! [`crate::metrics::Metrics`] registers them beside the relay's other series.

use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

/// Why a key set was fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The first key set, before the relay listens.
    Startup,
    /// The background refresh, by the cache headers (or the retry after a failure).
    Refresh,
    /// A token named a `kid` the set does not have.
    UnknownKid,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Startup => "startup",
            Trigger::Refresh => "refresh",
            Trigger::UnknownKid => "unknown_kid",
        }
    }
}

/// The series; clones share their values (one set per [`crate::AppState`]).
#[derive(Clone)]
pub struct JwksMetrics {
    fetches: Family<Labels, Counter>,
    fetch_seconds: Histogram,
    keys: Gauge,
    last_success: Gauge,
}

impl Default for JwksMetrics {
    fn default() -> Self {
        JwksMetrics {
            fetches: Family::default(),
            // 1 ms .. ~16 s (a fetch gives up after 10 s).
            fetch_seconds: Histogram::new(exponential_buckets(0.001, 2.0, 15)),
            keys: Gauge::default(),
            last_success: Gauge::default(),
        }
    }
}

impl JwksMetrics {
    /// Adds the series to `registry` (prefixed like the relay's others).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "jwks_fetches",
            "Identity key set fetches by trigger (startup, refresh, unknown_kid) and outcome (ok, error); with OIDC discovery one fetch includes its discovery request",
            self.fetches.clone(),
        );
        registry.register(
            "jwks_fetch_seconds",
            "Time of each identity key set fetch, success or not",
            self.fetch_seconds.clone(),
        );
        registry.register(
            "jwks_keys",
            "Keys in the last identity key set fetched (0 before the first; /readyz says whether it is still usable)",
            self.keys.clone(),
        );
        registry.register(
            "jwks_last_success_timestamp_seconds",
            "Unix time of the last successful identity key set fetch (0 before the first)",
            self.last_success.clone(),
        );
    }

    /// Counts one finished fetch; `keys` is the size of the set it brought (`None`: it failed).
    pub fn fetched(&self, trigger: Trigger, took: Duration, keys: Option<usize>) {
        let outcome = if keys.is_some() { "ok" } else { "error" };
        self.fetches
            .get_or_create(&vec![
                ("trigger".into(), trigger.as_str().into()),
                ("outcome".into(), outcome.into()),
            ])
            .inc();
        self.fetch_seconds.observe(took.as_secs_f64());
        if let Some(keys) = keys {
            self.keys.set(keys as i64);
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            self.last_success.set(now as i64);
        }
    }
}
