//! [`AppState`]: everything the handlers share (settings, store, identity resolver, models, HTTP client,
//! metrics). Cheap to clone.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{LimitsConfig, Validated};
use crate::embedded_site::EmbeddedSite;
use crate::identity::{self, IdentityResolver};
use crate::metrics::Metrics;
use crate::model::client::{ClientSetupError, UpstreamClient};
use crate::model::registry::ModelRegistry;
use crate::spending::Spending;
use crate::store::Store;

/// One heavy task per core, but at least two (so one long task never blocks the next).
fn heavy_permits() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .max(2)
}

/// Why the shared state could not be built (at start-up, before the port opens).
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The outgoing HTTP client (TLS roots, resolver) could not be set up.
    #[error("http client: {0}")]
    HttpClient(#[source] ClientSetupError),
    /// The `OTEL_*` variables name an exporter that cannot be set up.
    #[error(transparent)]
    Telemetry(#[from] crate::telemetry::TelemetryError),
}

#[derive(Clone)]
pub struct AppState {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Clone)]
pub(crate) struct Inner {
    pub base_path: String,
    pub allowed_origins: Vec<String>,
    pub npm_dir: Option<PathBuf>,
    pub examples_dir: Option<PathBuf>,
    /// The MCP Apps sandbox origin (`crate::sandbox`), which the relay's own pages may frame.
    pub sandbox_origin: Option<String>,
    /// Files compiled into the binary, served where no directory is configured ([`AppState::with_site`]).
    pub site: Option<EmbeddedSite>,
    pub limits: LimitsConfig,
    pub spending: Spending,
    pub store: Store,
    pub identity: Option<Arc<dyn IdentityResolver>>,
    pub models: ModelRegistry,
    pub http: UpstreamClient,
    /// The MCP passthrough's servers and open exchanges (`crate::mcp_proxy`).
    pub mcp: Arc<crate::mcp_proxy::servers::McpProxy>,
    pub metrics: Arc<Metrics>,
    /// Traces (off unless the `OTEL_*` variables name an endpoint).
    pub telemetry: crate::telemetry::Telemetry,
    /// Permits for CPU-heavy request work run off the async workers (see [`AppState::heavy`]).
    pub heavy: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    /// Builds the state from a validated configuration and an opened store. The identity resolver comes from
    /// the configuration (none → every API answers 401); hosts replace it with [`AppState::with_identity`].
    pub fn new(config: Validated, store: Store) -> Result<Self, StateError> {
        // Never follows redirects: a 3xx is an upstream rejection (see `model/client.rs`).
        let http =
            UpstreamClient::from_env(Duration::from_millis(config.limits.connect_timeout_ms))
                .map_err(StateError::HttpClient)?
                .with_pools(config.workers);
        let metrics = Metrics::new();
        let identity = config
            .identity
            .as_ref()
            .map(|identity| identity::from_config(identity, &http, &metrics.jwks));
        let models = ModelRegistry::new(&config);
        let telemetry = crate::telemetry::Telemetry::from_env(
            |name| std::env::var(name).ok(),
            &config.telemetry,
            Duration::from_millis(config.limits.connect_timeout_ms),
        )?;
        // On PostgreSQL the counters check the policy's limits in the database (one statement per call).
        let counters = store.spending_counters(&config.spending);
        let spending = Spending::new(config.spending, counters, metrics.spending.clone());
        Ok(AppState {
            inner: Arc::new(Inner {
                base_path: config.base_path,
                allowed_origins: config.allowed_origins,
                npm_dir: config.npm_dir,
                examples_dir: config.examples_dir,
                sandbox_origin: config.sandbox.map(|s| s.public_origin),
                site: None,
                limits: config.limits,
                spending,
                store,
                identity,
                models,
                http,
                mcp: Arc::new(crate::mcp_proxy::servers::McpProxy::new(config.mcp)),
                metrics,
                telemetry,
                heavy: Arc::new(tokio::sync::Semaphore::new(heavy_permits())),
            }),
        })
    }

    /// Waits until the identity resolver can verify requests (a JWKS URL's first key set); the error is a
    /// configuration problem in words. Call it before listening.
    pub async fn identity_ready(&self) -> Result<(), String> {
        match &self.inner.identity {
            Some(resolver) => resolver.ready().await,
            None => Ok(()),
        }
    }

    /// The identity resolver's readiness now ([`IdentityResolver::status`]); no resolver is ready (it refuses
    /// every request, as configured).
    pub fn identity_status(&self) -> Result<(), String> {
        match &self.inner.identity {
            Some(resolver) => resolver.status(),
            None => Ok(()),
        }
    }

    /// Replaces the identity resolver (hosts plug in their own sessions).
    pub fn with_identity(self, resolver: Arc<dyn IdentityResolver>) -> Self {
        let inner = Arc::unwrap_or_clone(self.inner);
        AppState {
            inner: Arc::new(Inner {
                identity: Some(resolver),
                ..inner
            }),
        }
    }

    /// Replaces the tracing set up from the environment (hosts with their own exporter settings, tests).
    pub fn with_telemetry(self, telemetry: crate::telemetry::Telemetry) -> Self {
        let inner = Arc::unwrap_or_clone(self.inner);
        AppState {
            inner: Arc::new(Inner { telemetry, ..inner }),
        }
    }

    pub fn telemetry(&self) -> &crate::telemetry::Telemetry {
        &self.inner.telemetry
    }

    /// Serves `site` at `/npm/` and `/examples/` where `server.npmDir` / `server.examplesDir` are not set, and
    /// `/` as its demo page (`patchbridge-relay demo`).
    pub fn with_site(self, site: EmbeddedSite) -> Self {
        let inner = Arc::unwrap_or_clone(self.inner);
        AppState {
            inner: Arc::new(Inner {
                site: Some(site),
                ..inner
            }),
        }
    }

    /// Runs CPU-heavy work of one request (parsing or serialising megabytes of JSON, building a provider
    /// request) on the blocking pool, at most one task per core at a time. On the async workers it would stall
    /// every other request on that worker (`/healthz` included) for as long as it runs; with the permits, a
    /// flood of heavy requests queues instead of taking every core.
    pub async fn heavy<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, crate::RelayError> {
        let _permit = self
            .inner
            .heavy
            .clone()
            .acquire_owned()
            .await
            .map_err(crate::RelayError::internal)?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| crate::RelayError::internal(format!("heavy task failed: {e}")))
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The spending limits the model route asks before each call.
    pub fn spending(&self) -> &Spending {
        &self.inner.spending
    }

    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }
}
