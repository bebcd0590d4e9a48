//! The key set of `identity.jwksUrl`: fetched with the relay's upstream client (the same proxy variables, TLS
//! roots and connect timeout as model calls; redirects are never followed), kept for as long as the answer's
//! `Cache-Control: max-age` / `Expires` say within the configured bounds, and refreshed by a background task
//! when three quarters of that lifetime have passed, so tokens never wait for a scheduled fetch.
//!
//! - A token naming a `kid` the set does not have triggers one refetch (the provider rotated its keys), at most
//!   once per `jwksUnknownKidCooldownSeconds`: a flood of made-up `kid`s costs the provider one request per
//!   cool-down, never one per token.
//! - While the provider is unreachable (connection errors, non-2xx, unusable documents) the last good set keeps
//!   serving until `jwksMaxStaleSeconds` past its lifetime; after that tokens are refused with
//!   `IDENTITY_UNAVAILABLE` until a fetch succeeds again (failed fetches are retried every
//!   `min(jwksMinCacheSeconds, 30 s)`).
//! - At start-up the first set must arrive ([`RemoteKeys::ready`]); without one the relay does not start.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use axum::http::{header, HeaderMap, Request, Uri};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};

use super::keys::KeySet;
use crate::model::client::{describe, UpstreamClient};

/// The largest JWKS document accepted (providers' are a few KiB).
pub const MAX_JWKS_BYTES: usize = 256 * 1024;
/// One fetch, from connecting to the last body byte, takes at most this long.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait between retries while the provider is unreachable.
const RETRY_CAP: Duration = Duration::from_secs(30);

/// Where the keys are and how long they are kept (validated configuration).
#[derive(Debug, Clone)]
pub struct JwksUrlSettings {
    pub url: Uri,
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
    /// defaults for those not given). `None` when no URL is configured; bounds without a URL are an error.
    /// Errors are `(field, message)`.
    pub fn from_config(
        url: Option<&str>,
        bounds: [Option<u64>; 4],
    ) -> Result<Option<Self>, (&'static str, String)> {
        let Some(url) = url else {
            if let Some(i) = bounds.iter().position(Option::is_some) {
                return Err((BOUNDS[i].0, "is a jwksUrl setting; set jwksUrl".into()));
            }
            return Ok(None);
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
        let parsed = url::Url::parse(url).map_err(|e| ("jwksUrl", format!("not a URL: {e}")))?;
        match parsed.scheme() {
            "https" => {}
            "http" => {
                let loopback = match parsed.host() {
                    Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                    Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                    Some(url::Host::Domain(d)) => d == "localhost",
                    None => false,
                };
                if !loopback {
                    return Err((
                        "jwksUrl",
                        "must be https:// (http:// only for loopback hosts)".into(),
                    ));
                }
            }
            other => return Err(("jwksUrl", format!("scheme `{other}` is not https"))),
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(("jwksUrl", "must not contain credentials".into()));
        }
        if parsed.fragment().is_some() {
            return Err(("jwksUrl", "must not have a fragment".into()));
        }
        let uri =
            Uri::try_from(parsed.as_str()).map_err(|e| ("jwksUrl", format!("not a URL: {e}")))?;
        let [min, max, cooldown, stale] = seconds.map(Duration::from_secs);
        Ok(Some(JwksUrlSettings {
            url: uri,
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

/// The key set of one URL, shared by the resolver and its refresh task.
pub struct RemoteKeys {
    settings: JwksUrlSettings,
    http: UpstreamClient,
    current: RwLock<Option<Arc<Loaded>>>,
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

impl RemoteKeys {
    /// The key set of `settings.url`, empty until the first fetch. Spawns the refresh task (which fetches at
    /// once), so this must run inside a Tokio runtime. The task ends when the last `Arc` is dropped.
    pub fn start(settings: JwksUrlSettings, http: UpstreamClient) -> Arc<Self> {
        let keys = Arc::new(RemoteKeys {
            settings,
            http,
            current: RwLock::new(None),
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

    pub fn url(&self) -> &Uri {
        &self.settings.url
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

    /// Resolves once a key set is there: after the refresh task's first fetch, or after one more fetch of its
    /// own when that failed. The error says why the key set could not be had.
    pub async fn ready(&self) -> Result<(), String> {
        let _guard = self.fetching.lock().await;
        if self.usable().is_some() {
            return Ok(());
        }
        self.fetch_and_store().await
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
        Refetch::Fetched(self.fetch_and_store().await)
    }

    /// One fetch; on success the new set replaces the old. Either way the next scheduled refresh is set. The
    /// caller holds `fetching`.
    async fn fetch_and_store(&self) -> Result<(), String> {
        let result = self.fetch().await;
        let next = match &result {
            Ok(loaded) => {
                tracing::info!(
                    url = %self.settings.url,
                    keys = loaded.keys.len(),
                    lifetime_s = loaded.lifetime.as_secs(),
                    "identity key set fetched"
                );
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(loaded));
                loaded.fetched_at + loaded.lifetime * 3 / 4
            }
            Err(why) => {
                let serving = self.usable().is_some();
                tracing::warn!(
                    url = %self.settings.url,
                    error = %crate::logging::escape(why),
                    serving_last_good_set = serving,
                    "identity key set fetch failed"
                );
                Instant::now() + self.settings.min_cache.min(RETRY_CAP)
            }
        };
        *self.next_refresh.lock().unwrap_or_else(|e| e.into_inner()) = next;
        self.rescheduled.notify_one();
        self.finished.fetch_add(1, Ordering::AcqRel);
        result.map(|_| ())
    }

    async fn fetch(&self) -> Result<Arc<Loaded>, String> {
        let request = Request::get(self.settings.url.clone())
            .header(header::ACCEPT, "application/jwk-set+json, application/json")
            .header(
                header::USER_AGENT,
                concat!("patchbridge-relay/", env!("CARGO_PKG_VERSION")),
            )
            .body(Full::new(Bytes::new()))
            .map_err(|e| format!("cannot build the request: {e}"))?;
        let answer = async {
            let response = self.http.send(request).await.map_err(|e| describe(&e))?;
            let status = response.status();
            if !status.is_success() {
                // A 3xx too: redirects are never followed, as for model calls.
                return Err(format!("answered HTTP {status}"));
            }
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, MAX_JWKS_BYTES)
                .collect()
                .await
                .map_err(|e| format!("reading the body (at most {MAX_JWKS_BYTES} bytes): {e}"))?
                .to_bytes();
            Ok((parts.headers, body))
        };
        let (headers, body) = tokio::time::timeout(FETCH_TIMEOUT, answer)
            .await
            .map_err(|_| format!("no complete answer within {} s", FETCH_TIMEOUT.as_secs()))??;
        let parsed = KeySet::from_jwks(&body)?;
        for skipped in &parsed.skipped {
            tracing::info!(url = %self.settings.url, key = %crate::logging::escape(skipped), "identity key skipped");
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

/// Fetches whenever the schedule says so, until the key set is dropped.
async fn refresh_task(keys: Weak<RemoteKeys>, rescheduled: Arc<tokio::sync::Notify>) {
    loop {
        let next = match keys.upgrade() {
            Some(keys) => *keys.next_refresh.lock().unwrap_or_else(|e| e.into_inner()),
            None => return,
        };
        tokio::select! {
            _ = tokio::time::sleep_until(next.into()) => {}
            _ = rescheduled.notified() => continue,
        }
        let Some(keys) = keys.upgrade() else { return };
        let _guard = keys.fetching.lock().await;
        // Another fetch (start-up, unknown kid) may have run meanwhile and moved the schedule.
        let due = *keys.next_refresh.lock().unwrap_or_else(|e| e.into_inner()) <= Instant::now();
        if due {
            let _ = keys.fetch_and_store().await;
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
