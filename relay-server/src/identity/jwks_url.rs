//! The key set of `identity.jwksUrl` (or of the `jwks_uri` that OIDC discovery of `identity.issuer` finds,
//! [`super::discovery`]): fetched with the relay's upstream client ([`super::fetch`]: the same proxy variables,
//! TLS roots and connect timeout as model calls; redirects are never followed), kept for as long as the answer's
//! `Cache-Control: max-age` / `Expires` say within the configured bounds, and refreshed by a background task
//! when three quarters of that lifetime have passed, so tokens never wait for a scheduled fetch.
//!
//! - A token naming a `kid` the set does not have triggers one refetch (the provider rotated its keys), at most
//!   once per `jwksUnknownKidCooldownSeconds`: a flood of made-up `kid`s costs the provider one request per
//!   cool-down, never one per token.
//! - While the provider is unreachable (connection errors, non-2xx, unusable documents) the last good set keeps
//!   serving until `jwksMaxStaleSeconds` past its lifetime; after that tokens are refused with
//!   `IDENTITY_UNAVAILABLE` and `/readyz` answers 503 until a fetch succeeds again (failed fetches are retried
//!   every `min(jwksMinCacheSeconds, 30 s)`).
//! - With discovery, the `jwks_uri` found is kept while its fetches succeed; a failed fetch discovers again.
//! - At start-up the first set must arrive ([`RemoteKeys::ready`]); without one the relay does not start.
//! - Every fetch is counted ([`super::jwks_metrics`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use axum::http::{header, HeaderMap, Uri};

use super::discovery::Discovery;
use super::fetch;
use super::jwks_metrics::{JwksMetrics, Trigger};
use super::keys::KeySet;
use crate::model::client::UpstreamClient;

pub use fetch::{FETCH_TIMEOUT, MAX_DOCUMENT_BYTES as MAX_JWKS_BYTES};
/// The longest wait between retries while the provider is unreachable.
const RETRY_CAP: Duration = Duration::from_secs(30);

/// Where the key set is found.
#[derive(Debug, Clone)]
pub enum JwksSource {
    /// `identity.jwksUrl`.
    Url(Uri),
    /// The `jwks_uri` of `identity.issuer`'s OpenID provider configuration.
    Discovery(Box<Discovery>),
}

impl std::fmt::Display for JwksSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JwksSource::Url(url) => write!(f, "{url}"),
            JwksSource::Discovery(d) => write!(f, "{} (OIDC discovery)", d.document),
        }
    }
}

/// Where the keys are and how long they are kept (validated configuration).
#[derive(Debug, Clone)]
pub struct JwksUrlSettings {
    pub source: JwksSource,
    /// A key set is kept at least this long, whatever the cache headers say (also when they say nothing).
    pub min_cache: Duration,
    /// ... and at most this long.
    pub max_cache: Duration,
    /// Refetches for unknown `kid`s are at least this far apart.
    pub unknown_kid_cooldown: Duration,
    /// How long past its lifetime the last good set serves while no fetch succeeds.
    pub max_stale: Duration,
}

/// The bounds' config names, defaults and largest values, in the order [`JwksUrlSettings::from_config`] takes.
const BOUNDS: [(&str, u64, u64); 4] = [
    ("jwksMinCacheSeconds", 300, 86_400),
    ("jwksMaxCacheSeconds", 86_400, 7 * 86_400),
    ("jwksUnknownKidCooldownSeconds", 30, 3_600),
    ("jwksMaxStaleSeconds", 6 * 3_600, 7 * 86_400),
];

impl JwksUrlSettings {
    /// Checks `identity.jwksUrl` and its bounds (`[min cache, max cache, cool-down, max stale]` in seconds,
    /// defaults for those not given). `discover`: the issuer whose configuration names the key set, when no key
    /// source is configured. `None` when neither is given; bounds without either are an error. Errors are
    /// `(field, message)`.
    pub fn from_config(
        url: Option<&str>,
        discover: Option<&str>,
        bounds: [Option<u64>; 4],
    ) -> Result<Option<Self>, (&'static str, String)> {
        let source = match (url, discover) {
            (Some(url), _) => JwksSource::Url(fetch::checked_url(url).map_err(|m| ("jwksUrl", m))?),
            (None, Some(issuer)) => JwksSource::Discovery(Box::new(
                Discovery::from_issuer(issuer).map_err(|m| ("issuer", m))?,
            )),
            (None, None) => {
                if let Some(i) = bounds.iter().position(Option::is_some) {
                    return Err((
                        BOUNDS[i].0,
                        "is a jwksUrl setting; set jwksUrl (or issuer alone, for OIDC discovery)"
                            .into(),
                    ));
                }
                return Ok(None);
            }
        };
        let mut seconds = [0u64; 4];
        for (i, ((name, default, max), given)) in BOUNDS.iter().zip(bounds).enumerate() {
            let value = given.unwrap_or(*default);
            if value == 0 || value > *max {
                return Err((name, format!("must be 1..={max}")));
            }
            seconds[i] = value;
        }
        if seconds[1] < seconds[0] {
            return Err((
                "jwksMaxCacheSeconds",
                "must be at least jwksMinCacheSeconds".into(),
            ));
        }
        let [min, max, cooldown, stale] = seconds.map(Duration::from_secs);
        Ok(Some(JwksUrlSettings {
            source,
            min_cache: min,
            max_cache: max,
            unknown_kid_cooldown: cooldown,
            max_stale: stale,
        }))
    }
}

/// A fetched key set and when it was fetched.
pub struct Loaded {
    pub keys: KeySet,
    fetched_at: Instant,
    lifetime: Duration,
}

/// The key set of one source, shared by the resolver and its refresh task.
pub struct RemoteKeys {
    settings: JwksUrlSettings,
    http: UpstreamClient,
    metrics: JwksMetrics,
    current: RwLock<Option<Arc<Loaded>>>,
    /// With discovery: the `jwks_uri` found, kept while its fetches succeed.
    discovered: Mutex<Option<Uri>>,
    /// Why the last fetch failed, until one succeeds (what `/readyz` says while no set is usable).
    last_error: Mutex<Option<String>>,
    /// Serialises fetches; holds when the last unknown-`kid` refetch started.
    fetching: tokio::sync::Mutex<Option<Instant>>,
    /// Fetches finished (success or not): a caller that waited for the lock sees whether one ran meanwhile.
    finished: AtomicU64,
    /// When the refresh task fetches next.
    next_refresh: Mutex<Instant>,
    /// Wakes the refresh task when `next_refresh` moved (another fetch ran).
    rescheduled: Arc<tokio::sync::Notify>,
}

/// What an unknown-`kid` refetch did.
#[derive(Debug, PartialEq, Eq)]
pub enum Refetch {
    /// This call fetched; the set is new (or the fetch failed and the old set stays).
    Fetched(Result<(), String>),
    /// Another fetch finished while this call waited; its set is current.
    Joined,
    /// The last unknown-`kid` refetch was less than a cool-down ago.
    CoolingDown,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl RemoteKeys {
    /// The key set of `settings.source`, empty until the first fetch. Spawns the refresh task (which fetches at
    /// once), so this must run inside a Tokio runtime. The task ends when the last `Arc` is dropped.
    pub fn start(
        settings: JwksUrlSettings,
        http: UpstreamClient,
        metrics: JwksMetrics,
    ) -> Arc<Self> {
        let keys = Arc::new(RemoteKeys {
            settings,
            http,
            metrics,
            current: RwLock::new(None),
            discovered: Mutex::new(None),
            last_error: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(None),
            finished: AtomicU64::new(0),
            next_refresh: Mutex::new(Instant::now()),
            rescheduled: Arc::new(tokio::sync::Notify::new()),
        });
        tokio::spawn(refresh_task(
            Arc::downgrade(&keys),
            keys.rescheduled.clone(),
        ));
        keys
    }

    /// Where the keys come from, for messages.
    pub fn source(&self) -> &JwksSource {
        &self.settings.source
    }

    /// The current set, unless there is none yet or it is past its lifetime plus `max_stale`.
    pub fn usable(&self) -> Option<Arc<Loaded>> {
        let current = self
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()?;
        let usable_until = current.fetched_at + current.lifetime + self.settings.max_stale;
        (Instant::now() < usable_until).then_some(current)
    }

    /// Whether tokens can be verified now; if not, why (for `/readyz`).
    pub fn status(&self) -> Result<(), String> {
        if self.usable().is_some() {
            return Ok(());
        }
        let held = self
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        let state = if held {
            "the last key set is past jwksMaxStaleSeconds"
        } else {
            "no key set has been fetched yet"
        };
        let why = lock(&self.last_error)
            .clone()
            .unwrap_or_else(|| "no fetch has finished yet".into());
        Err(format!(
            "no usable identity key set from {}: {state}; last fetch: {why}",
            self.settings.source
        ))
    }

    /// Resolves once a key set is there: after the refresh task's first fetch, or after one more fetch of its
    /// own when that failed. The error says why the key set could not be had.
    pub async fn ready(&self) -> Result<(), String> {
        let _guard = self.fetching.lock().await;
        if self.usable().is_some() {
            return Ok(());
        }
        self.fetch_and_store(Trigger::Startup).await
    }

    /// Refetches because a token named a `kid` the set does not have, unless one ran within the cool-down.
    pub async fn refetch_for_unknown_kid(&self) -> Refetch {
        let seen = self.finished.load(Ordering::Acquire);
        let mut last = self.fetching.lock().await;
        if self.finished.load(Ordering::Acquire) != seen {
            return Refetch::Joined;
        }
        let now = Instant::now();
        if last.is_some_and(|at| now.duration_since(at) < self.settings.unknown_kid_cooldown) {
            return Refetch::CoolingDown;
        }
        *last = Some(now);
        Refetch::Fetched(self.fetch_and_store(Trigger::UnknownKid).await)
    }

    /// One fetch; on success the new set replaces the old. Either way the next scheduled refresh is set and the
    /// fetch is counted. The caller holds `fetching`.
    async fn fetch_and_store(&self, trigger: Trigger) -> Result<(), String> {
        let started = Instant::now();
        let result = self.fetch().await;
        let source = &self.settings.source;
        let next = match &result {
            Ok(loaded) => {
                tracing::info!(
                    source = %source,
                    keys = loaded.keys.len(),
                    lifetime_s = loaded.lifetime.as_secs(),
                    "identity key set fetched"
                );
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(loaded));
                *lock(&self.last_error) = None;
                loaded.fetched_at + loaded.lifetime * 3 / 4
            }
            Err(why) => {
                let serving = self.usable().is_some();
                tracing::warn!(
                    source = %source,
                    error = %crate::logging::escape(why),
                    serving_last_good_set = serving,
                    "identity key set fetch failed"
                );
                *lock(&self.last_error) = Some(why.clone());
                // A discovered `jwks_uri` that fails may have moved: the next fetch discovers again.
                *lock(&self.discovered) = None;
                Instant::now() + self.settings.min_cache.min(RETRY_CAP)
            }
        };
        self.metrics.fetched(
            trigger,
            started.elapsed(),
            result.as_ref().ok().map(|l| l.keys.len()),
        );
        *lock(&self.next_refresh) = next;
        self.rescheduled.notify_one();
        self.finished.fetch_add(1, Ordering::AcqRel);
        result.map(|_| ())
    }

    /// The URL of the key set: the configured one, or the one discovery finds (kept while it works).
    async fn jwks_url(&self) -> Result<Uri, String> {
        let discovery = match &self.settings.source {
            JwksSource::Url(url) => return Ok(url.clone()),
            JwksSource::Discovery(discovery) => discovery,
        };
        if let Some(url) = lock(&self.discovered).clone() {
            return Ok(url);
        }
        let url = discovery
            .jwks_uri(&self.http)
            .await
            .map_err(|e| format!("OIDC discovery at {}: {e}", discovery.document))?;
        tracing::info!(issuer = %crate::logging::escape(&discovery.issuer), jwks_uri = %url, "OIDC discovery found the key set");
        *lock(&self.discovered) = Some(url.clone());
        Ok(url)
    }

    async fn fetch(&self) -> Result<Arc<Loaded>, String> {
        let url = self.jwks_url().await?;
        let (headers, body) = fetch::get(
            &self.http,
            &url,
            "application/jwk-set+json, application/json",
        )
        .await?;
        let parsed = KeySet::from_jwks(&body)?;
        for skipped in &parsed.skipped {
            tracing::info!(url = %url, key = %crate::logging::escape(skipped), "identity key skipped");
        }
        Ok(Arc::new(Loaded {
            keys: parsed.keys,
            fetched_at: Instant::now(),
            lifetime: cache_lifetime(
                &headers,
                SystemTime::now(),
                self.settings.min_cache,
                self.settings.max_cache,
            ),
        }))
    }
}

/// Fetches whenever the schedule says so, until the key set is dropped. Its first fetch, at once, is the
/// start-up one.
async fn refresh_task(keys: Weak<RemoteKeys>, rescheduled: Arc<tokio::sync::Notify>) {
    loop {
        let next = match keys.upgrade() {
            Some(keys) => *lock(&keys.next_refresh),
            None => return,
        };
        tokio::select! {
            _ = tokio::time::sleep_until(next.into()) => {}
            _ = rescheduled.notified() => continue,
        }
        let Some(keys) = keys.upgrade() else { return };
        let _guard = keys.fetching.lock().await;
        // Another fetch (start-up, unknown kid) may have run meanwhile and moved the schedule.
        let due = *lock(&keys.next_refresh) <= Instant::now();
        if due {
            let trigger = if keys.finished.load(Ordering::Acquire) == 0 {
                Trigger::Startup
            } else {
                Trigger::Refresh
            };
            let _ = keys.fetch_and_store(trigger).await;
        }
    }
}

/// How long a fetched key set is kept: `Cache-Control: max-age` (less `Age`), else `Expires` less `Date`, within
/// `[min, max]`. `no-store` / `no-cache`, a past or unreadable `Expires` and no cache headers at all keep it `min`.
pub fn cache_lifetime(
    headers: &HeaderMap,
    now: SystemTime,
    min: Duration,
    max: Duration,
) -> Duration {
    told_lifetime(headers, now)
        .unwrap_or(Duration::ZERO)
        .clamp(min, max.max(min))
}

fn told_lifetime(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let mut max_age = None;
    for value in headers.get_all(header::CACHE_CONTROL) {
        let Ok(value) = value.to_str() else { continue };
        for directive in value.split(',') {
            let (name, argument) = match directive.split_once('=') {
                Some((name, argument)) => (name.trim(), Some(argument.trim().trim_matches('"'))),
                None => (directive.trim(), None),
            };
            if name.eq_ignore_ascii_case("no-store") || name.eq_ignore_ascii_case("no-cache") {
                return Some(Duration::ZERO);
            }
            if name.eq_ignore_ascii_case("max-age") {
                max_age = Some(argument.and_then(|a| a.parse::<u64>().ok()).unwrap_or(0));
            }
        }
    }
    if let Some(seconds) = max_age {
        let age = headers
            .get(header::AGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
        return Some(Duration::from_secs(seconds.saturating_sub(age)));
    }
    let expires = headers.get(header::EXPIRES)?;
    let Some(expires) = expires
        .to_str()
        .ok()
        .and_then(|v| httpdate::parse_http_date(v.trim()).ok())
    else {
        return Some(Duration::ZERO);
    };
    let date = headers
        .get(header::DATE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v.trim()).ok())
        .unwrap_or(now);
    Some(expires.duration_since(date).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::cache_lifetime;
    use axum::http::{HeaderMap, HeaderValue};
    use std::time::Duration;

    const MIN: Duration = Duration::from_secs(60);
    const MAX: Duration = Duration::from_secs(3600);

    fn lifetime(pairs: &[(&'static str, &'static str)]) -> u64 {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        let now = httpdate::parse_http_date("Tue, 01 Dec 2026 10:00:00 GMT").unwrap();
        cache_lifetime(&headers, now, MIN, MAX).as_secs()
    }

    #[test]
    fn max_age_decides_within_the_bounds() {
        assert_eq!(lifetime(&[("cache-control", "public, max-age=600")]), 600);
        assert_eq!(
            lifetime(&[("cache-control", "max-age=\"900\", must-revalidate")]),
            900
        );
        assert_eq!(
            lifetime(&[("cache-control", "max-age=15")]),
            60,
            "raised to the minimum"
        );
        assert_eq!(
            lifetime(&[("cache-control", "max-age=3832304")]),
            3600,
            "cut to the maximum"
        );
        assert_eq!(lifetime(&[("cache-control", "MAX-AGE=700")]), 700);
        assert_eq!(
            lifetime(&[("cache-control", "max-age=900"), ("age", "200")]),
            700
        );
        assert_eq!(lifetime(&[("cache-control", "max-age=nonsense")]), 60);
    }

    #[test]
    fn no_cache_no_store_and_silence_keep_the_minimum() {
        assert_eq!(lifetime(&[("cache-control", "no-cache, max-age=900")]), 60);
        assert_eq!(lifetime(&[("cache-control", "no-store")]), 60);
        assert_eq!(lifetime(&[]), 60);
        assert_eq!(lifetime(&[("cache-control", "public")]), 60);
    }

    #[test]
    fn expires_counts_from_date_or_now() {
        assert_eq!(
            lifetime(&[
                ("date", "Tue, 01 Dec 2026 09:00:00 GMT"),
                ("expires", "Tue, 01 Dec 2026 09:20:00 GMT")
            ]),
            1200
        );
        assert_eq!(
            lifetime(&[("expires", "Tue, 01 Dec 2026 10:30:00 GMT")]),
            1800
        );
        assert_eq!(
            lifetime(&[("expires", "Tue, 01 Dec 2026 09:00:00 GMT")]),
            60,
            "already expired"
        );
        assert_eq!(
            lifetime(&[("expires", "0")]),
            60,
            "unreadable means expired"
        );
        assert_eq!(
            lifetime(&[
                ("cache-control", "max-age=300"),
                ("expires", "Tue, 01 Dec 2026 10:30:00 GMT")
            ]),
            300,
            "max-age wins over Expires"
        );
    }
}
