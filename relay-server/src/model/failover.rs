//! Failover between models (`models[].fallbacks`, `docs/protocol.md` §4): which models a call may try, in
//! which order, how long each attempt may wait for its first event, and which failures move on to the next.
//!
//! - The chain: the requested model, then its fallbacks in order, each followed by its own (depth first, every
//!   model once, at most `config::fallbacks::MAX_CHAIN`; built by [`super::registry`]), without the fallbacks
//!   that cannot serve this request ([`unfit`]): a request with a ModelState goes only to models of the
//!   requested model's `stateGroup` (the provider alone judges its state, and dropping it is not allowed), and a
//!   fallback must take the request's tools and images.
//! - Which failures fail over ([`fails_over`]): the provider could not be reached, answered 429 or 5xx,
//!   reported overload or rate limiting before its first event, or sent no first event in time. Never once an
//!   event went to the browser (the handler asks only before the first one), never for a refusal of the request
//!   itself (4xx, a broken stream).
//! - Time ([`Budget`]): every attempt together stays inside `limits.firstByteTimeoutMs` counted from the call's
//!   arrival; an attempt with a model after it waits at most `limits.failoverFirstByteTimeoutMs`.
//! - `Retry-After` ([`Holds`]): a 429's wait holds every later attempt of the call at the same host until it
//!   ends; a wait that would end past the call's first-byte deadline skips that model.

use std::time::{Duration, Instant};

use patchbridge_protocol::{ModelRequest, RelayErrorCode};

use crate::config::{LimitsConfig, ValidatedModel};
use crate::error::RelayError;

/// Why a fallback cannot serve a request, for the log.
pub fn unfit(
    requested: &ValidatedModel,
    fallback: &ValidatedModel,
    request: &ModelRequest,
) -> Option<&'static str> {
    if request.model_state.is_some() {
        let same_group = requested.config.state_group.is_some()
            && requested.config.state_group == fallback.config.state_group
            && requested.config.provider == fallback.config.provider;
        if !same_group {
            return Some("the request carries a modelState and the fallback is not in the model's stateGroup");
        }
    }
    if !request.tools.is_empty() && !fallback.config.capabilities.tools {
        return Some("the request has tools and the fallback does not take tools");
    }
    if super::inputs::check(request, fallback).is_err() {
        return Some("the request has images or PDFs the fallback does not take");
    }
    None
}

/// Whether an attempt that failed with `error` before any event went to the browser moves on to the next model.
pub fn fails_over(error: &RelayError) -> bool {
    matches!(
        error.code(),
        RelayErrorCode::UpstreamUnavailable
            | RelayErrorCode::UpstreamRateLimited
            | RelayErrorCode::UpstreamTimeout
    )
}

/// The call's time for first events.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    started: Instant,
    /// The call's first-byte deadline: no attempt waits past it.
    first_byte_by: Instant,
    failover_wait: Duration,
}

impl Budget {
    pub fn new(started: Instant, limits: &LimitsConfig) -> Self {
        Budget {
            started,
            first_byte_by: started + Duration::from_millis(limits.first_byte_timeout_ms),
            failover_wait: Duration::from_millis(limits.failover_first_byte_timeout_ms),
        }
    }

    /// The first-byte bound of an attempt beginning `now`, counted from the call's arrival (what
    /// [`super::stream::StreamBounds::first_byte`] and [`super::upstream::Prepared::send`] take): the call's
    /// whole first-byte time for the last model of the chain, at most the failover wait for one with a next.
    pub fn attempt_first_byte(&self, now: Instant, has_next: bool) -> Duration {
        let by = if has_next {
            (now + self.failover_wait).min(self.first_byte_by)
        } else {
            self.first_byte_by
        };
        by.saturating_duration_since(self.started)
    }

    /// Whether the call's first-byte time has run out.
    pub fn spent(&self, now: Instant) -> bool {
        now >= self.first_byte_by
    }
}

/// The `Retry-After` waits a call was asked for, by host (`scheme://host:port` of the model's base URL).
#[derive(Debug, Default)]
pub struct Holds(Vec<(String, Instant)>);

impl Holds {
    /// A 429 from `model` asked for `retry_after`, from `now`.
    pub fn hold(&mut self, model: &ValidatedModel, now: Instant, retry_after: Duration) {
        let host = host_of(model);
        let until = now + retry_after;
        match self.0.iter_mut().find(|(h, _)| *h == host) {
            Some((_, at)) => *at = (*at).max(until),
            None => self.0.push((host, until)),
        }
    }

    /// How long to wait before an attempt at `model` beginning `now`: zero without a hold on its host; `None`
    /// when the hold ends past the call's first-byte deadline (the model is skipped).
    pub fn wait(&self, model: &ValidatedModel, now: Instant, budget: &Budget) -> Option<Duration> {
        let host = host_of(model);
        match self.0.iter().find(|(h, _)| *h == host) {
            None => Some(Duration::ZERO),
            Some((_, until)) if *until >= budget.first_byte_by => None,
            Some((_, until)) => Some(until.saturating_duration_since(now)),
        }
    }
}

fn host_of(model: &ValidatedModel) -> String {
    model.base_url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::upstream::error_for_status;

    fn limits() -> LimitsConfig {
        LimitsConfig {
            first_byte_timeout_ms: 60_000,
            failover_first_byte_timeout_ms: 10_000,
            ..LimitsConfig::default()
        }
    }

    #[test]
    fn unreachable_429_5xx_and_timeouts_fail_over_and_refusals_do_not() {
        for status in [429, 500, 502, 503, 529] {
            assert!(fails_over(&error_for_status(status)), "{status}");
        }
        for status in [400, 401, 403, 404, 408, 413, 422] {
            assert!(!fails_over(&error_for_status(status)), "{status}");
        }
        assert!(fails_over(&RelayError::from(
            RelayErrorCode::UpstreamTimeout
        )));
        assert!(!fails_over(&RelayError::from(
            RelayErrorCode::UpstreamProtocolError
        )));
        assert!(!fails_over(&RelayError::from(
            RelayErrorCode::UpstreamResponseTooLarge
        )));
    }

    #[test]
    fn an_attempt_with_a_next_model_waits_the_failover_time_and_never_past_the_call() {
        let started = Instant::now();
        let budget = Budget::new(started, &limits());
        assert_eq!(
            budget.attempt_first_byte(started, true),
            Duration::from_secs(10)
        );
        assert_eq!(
            budget.attempt_first_byte(started, false),
            Duration::from_secs(60)
        );
        let late = started + Duration::from_secs(55);
        assert_eq!(
            budget.attempt_first_byte(late, true),
            Duration::from_secs(60)
        );
        assert!(!budget.spent(late));
        assert!(budget.spent(started + Duration::from_secs(60)));
    }
}
