//! Prometheus metrics (served at `/metrics`), one registry per [`crate::AppState`] so several relays in one
//! process (tests, hosts) do not share counters.
//!
//! The relay's own added latency is measured per model call: `relay_upstream_first_byte_seconds` (request
//! received → first upstream body byte), `relay_first_event_seconds` (request received → first event handed
//! to the browser), their difference `relay_added_first_event_seconds`, and `relay_chunk_processing_seconds`
//! (decode + encode time of each upstream SSE message).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, RwLock};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

pub struct Metrics {
    registry: Registry,
    pub http_requests: Family<Labels, Counter>,
    pub model_calls: Family<Labels, Counter>,
    pub upstream_retries: Counter,
    /// Model calls that failed over, by the model that failed, the one tried next and the failure's code.
    pub model_failovers: Family<Labels, Counter>,
    pub open_streams: Gauge,
    pub upstream_first_byte: Histogram,
    pub first_event: Histogram,
    pub added_first_event: Histogram,
    pub chunk_processing: Histogram,
    pub conversation_conflicts: Counter,
    /// Model calls refused by a spending limit, by the limit's kind, window and model (never by user).
    pub spending_refusals: Family<Labels, Counter>,
    /// Spending counter updates that failed after a call ended (its usage went unrecorded).
    pub spending_write_errors: Counter,
    /// The admission transaction of each model call (on the call's path, before any upstream call).
    pub spending_admit: Histogram,
    /// The settling transaction of each model call (after the response ended, off its path).
    pub spending_settle: Histogram,
    /// The identity key set's fetches (`identity.jwksUrl` or OIDC discovery).
    pub jwks: crate::identity::jwks_metrics::JwksMetrics,
    /// `http_requests` series by status, then route.
    http_request_series: SeriesCache<u16>,
    /// `model_calls` series by outcome, then model.
    model_call_series: SeriesCache<&'static str>,
}

/// Handles to the series of a [`Family`] already counted, by their two label values: a `Family` lookup needs
/// an owned label set, a `Vec` and four `String`s per count, while a lookup here borrows. A handle shares its
/// value with the series in the family (a cloned [`Counter`] is the same counter).
struct SeriesCache<K>(RwLock<HashMap<K, HashMap<String, Counter>>>);

impl<K: Copy + Hash + Eq> SeriesCache<K> {
    fn new() -> Self {
        SeriesCache(RwLock::new(HashMap::new()))
    }

    /// Counts one for (`key`, `name`), whose counter `create` takes from the family the first time.
    fn inc(&self, key: K, name: &str, create: impl FnOnce() -> Counter) {
        if let Some(counter) = self
            .0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .and_then(|by_name| by_name.get(name))
        {
            counter.inc();
            return;
        }
        let mut series = self.0.write().unwrap_or_else(|e| e.into_inner());
        series
            .entry(key)
            .or_default()
            .entry(name.to_owned())
            .or_insert_with(create)
            .inc();
    }
}

impl Metrics {
    pub fn new() -> Arc<Self> {
        let mut registry = Registry::with_prefix("relay");
        let http_requests = Family::<Labels, Counter>::default();
        let model_calls = Family::<Labels, Counter>::default();
        let upstream_retries = Counter::default();
        let model_failovers = Family::<Labels, Counter>::default();
        let open_streams = Gauge::default();
        // 10 µs .. ~42 s for latencies; 1 µs .. ~1 s for per-chunk processing.
        let upstream_first_byte = Histogram::new(exponential_buckets(0.00001, 2.0, 23));
        let first_event = Histogram::new(exponential_buckets(0.00001, 2.0, 23));
        let added_first_event = Histogram::new(exponential_buckets(0.000001, 2.0, 24));
        let chunk_processing = Histogram::new(exponential_buckets(0.000001, 2.0, 20));
        let conversation_conflicts = Counter::default();
        let spending_refusals = Family::<Labels, Counter>::default();
        let spending_write_errors = Counter::default();
        let spending_admit = Histogram::new(exponential_buckets(0.00001, 2.0, 23));
        let spending_settle = Histogram::new(exponential_buckets(0.00001, 2.0, 23));
        registry.register(
            "spending_admit_seconds",
            "Spending counters: the admission transaction at each model call's start",
            spending_admit.clone(),
        );
        registry.register(
            "spending_settle_seconds",
            "Spending counters: the usage transaction after each model call's end",
            spending_settle.clone(),
        );
        registry.register(
            "spending_refusals",
            "Model calls refused by a spending limit, by limit kind, window (`<seconds>s sliding|fixed`, empty for concurrent calls) and model (empty: the limits of all models)",
            spending_refusals.clone(),
        );
        registry.register(
            "spending_write_errors",
            "Spending counter updates that failed at the end of a call",
            spending_write_errors.clone(),
        );
        registry.register(
            "http_requests",
            "HTTP requests by route and status",
            http_requests.clone(),
        );
        registry.register(
            "model_calls",
            "Model calls by model and outcome",
            model_calls.clone(),
        );
        registry.register(
            "upstream_retries",
            "Upstream calls retried (connection error, 429, 5xx)",
            upstream_retries.clone(),
        );
        registry.register(
            "model_failovers",
            "Model calls that failed over to the next model (labels: from, to, code)",
            model_failovers.clone(),
        );
        registry.register(
            "open_streams",
            "Model streams currently open",
            open_streams.clone(),
        );
        registry.register(
            "upstream_first_byte_seconds",
            "Time from request received to the first upstream body byte",
            upstream_first_byte.clone(),
        );
        registry.register(
            "first_event_seconds",
            "Time from request received to the first event sent to the browser",
            first_event.clone(),
        );
        registry.register(
            "added_first_event_seconds",
            "Relay-added latency: first event sent minus first upstream byte",
            added_first_event.clone(),
        );
        registry.register(
            "chunk_processing_seconds",
            "Relay processing time per upstream SSE message (decode and encode)",
            chunk_processing.clone(),
        );
        registry.register(
            "conversation_conflicts",
            "Conversation writes refused because of a stale revision",
            conversation_conflicts.clone(),
        );
        let jwks = crate::identity::jwks_metrics::JwksMetrics::default();
        jwks.register(&mut registry);
        Arc::new(Metrics {
            registry,
            jwks,
            http_requests,
            model_calls,
            upstream_retries,
            model_failovers,
            open_streams,
            upstream_first_byte,
            first_event,
            added_first_event,
            chunk_processing,
            conversation_conflicts,
            spending_refusals,
            spending_write_errors,
            spending_admit,
            spending_settle,
            http_request_series: SeriesCache::new(),
            model_call_series: SeriesCache::new(),
        })
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String cannot fail");
        out
    }

    pub fn model_call(&self, model: &str, outcome: &'static str) {
        self.model_call_series.inc(outcome, model, || {
            self.model_calls
                .get_or_create(&vec![
                    ("model".into(), model.into()),
                    ("outcome".into(), outcome.into()),
                ])
                .clone()
        });
    }

    /// Counts a failover from `from` to `to` after a failure with `code`. The labels are configured model ids
    /// and the few codes that fail over, so their number is bounded.
    pub fn model_failover(&self, from: &str, to: &str, code: &str) {
        self.model_failovers
            .get_or_create(&vec![
                ("from".into(), from.into()),
                ("to".into(), to.into()),
                ("code".into(), code.into()),
            ])
            .inc();
    }

    /// Counts a refusal by its limit. The labels come from the configuration (kind, window, the model of a
    /// model's own limit, empty for the limits of all models), so their number is bounded.
    pub fn spending_refusal(&self, refusal: &crate::spending::Refusal) {
        let limit = &refusal.limit;
        let window = match (limit.window_seconds, limit.sliding) {
            (Some(seconds), Some(true)) => format!("{seconds}s sliding"),
            (Some(seconds), _) => format!("{seconds}s fixed"),
            (None, _) => String::new(),
        };
        self.spending_refusals
            .get_or_create(&vec![
                ("limit".into(), refusal.kind.as_str().into()),
                ("window".into(), window),
                ("model".into(), limit.model.clone().unwrap_or_default()),
            ])
            .inc();
    }

    pub fn http_request(&self, route: &str, status: u16) {
        self.http_request_series.inc(status, route, || {
            self.http_requests
                .get_or_create(&vec![
                    ("route".into(), route.into()),
                    ("status".into(), status.to_string()),
                ])
                .clone()
        });
    }
}
