//! The one upstream retry rule (`docs/protocol.md` §4), decided on the typed error of a failed attempt:
//!
//! - at most [`MAX_ATTEMPTS`] upstream attempts per call;
//! - only for a failure whose code says retrying may help ([`RelayErrorCode::retryable`]) other than a
//!   timeout, which already spent the caller's first-byte time: connection failures and 5xx
//!   (`UPSTREAM_UNAVAILABLE`) and 429 (`UPSTREAM_RATE_LIMITED`), whether the provider answered with that status
//!   or reported it inside the stream before its first event;
//! - only while nothing has gone to the browser (the handler asks before the first event, never after);
//! - only when the wait (a 429's `Retry-After`, else [`DEFAULT_DELAY`]) is at most [`MAX_RETRY_AFTER`] and
//!   ends inside the first-byte timeout.

use std::time::Duration;

use patchbridge_protocol::RelayErrorCode;

use crate::error::RelayError;

/// Upstream attempts per call: the first and one retry.
pub const MAX_ATTEMPTS: u32 = 2;
/// The wait before the retry when the provider named none.
pub const DEFAULT_DELAY: Duration = Duration::from_millis(200);
/// Longest `Retry-After` honoured; a provider asking for more fails the call at once.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(2);

/// After attempt number `attempt` (1-based) failed with `error`, `elapsed` after the call arrived: how long to
/// wait before the next attempt, or `None` to give up. `retry_after` is the provider's `Retry-After`, if any.
pub fn delay_before_retry(
    error: &RelayError,
    attempt: u32,
    elapsed: Duration,
    retry_after: Option<Duration>,
    first_byte_timeout: Duration,
) -> Option<Duration> {
    let code = error.code();
    if attempt >= MAX_ATTEMPTS || !code.retryable() || code == RelayErrorCode::UpstreamTimeout {
        return None;
    }
    let delay = retry_after.unwrap_or(DEFAULT_DELAY);
    (delay <= MAX_RETRY_AFTER && elapsed + delay < first_byte_timeout).then_some(delay)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::upstream::error_for_status;

    const FIRST_BYTE: Duration = Duration::from_secs(30);

    fn decide(error: &RelayError) -> Option<Duration> {
        delay_before_retry(error, 1, Duration::ZERO, None, FIRST_BYTE)
    }

    #[test]
    fn only_connection_failures_429_and_5xx_are_retried() {
        for status in [429, 500, 502, 503, 529] {
            assert_eq!(
                decide(&error_for_status(status)),
                Some(DEFAULT_DELAY),
                "{status}"
            );
        }
        for status in [300, 307, 400, 401, 403, 404, 408, 413, 422] {
            assert_eq!(decide(&error_for_status(status)), None, "{status}");
        }
        let connection =
            RelayError::from(RelayErrorCode::UpstreamUnavailable).with_source("refused");
        assert_eq!(decide(&connection), Some(DEFAULT_DELAY));
        let timeout = RelayError::from(RelayErrorCode::UpstreamTimeout).with_source("slow");
        assert_eq!(
            decide(&timeout),
            None,
            "a timeout already spent the first-byte time"
        );
    }

    #[test]
    fn provider_errors_reported_in_the_stream_follow_the_same_rule() {
        let overloaded = RelayError::new(RelayErrorCode::UpstreamUnavailable, "overloaded");
        let rejected = RelayError::new(RelayErrorCode::UpstreamRejected, "policy");
        let broken = RelayError::new(RelayErrorCode::UpstreamProtocolError, "garbled");
        assert_eq!(decide(&overloaded), Some(DEFAULT_DELAY));
        assert_eq!(decide(&rejected), None);
        assert_eq!(decide(&broken), None);
    }

    #[test]
    fn there_is_one_retry_and_it_must_fit_the_first_byte_time() {
        let busy = error_for_status(503);
        assert_eq!(
            delay_before_retry(&busy, 2, Duration::ZERO, None, FIRST_BYTE),
            None
        );
        let late = FIRST_BYTE - DEFAULT_DELAY;
        assert_eq!(delay_before_retry(&busy, 1, late, None, FIRST_BYTE), None);
        let asked = Some(Duration::from_secs(1));
        assert_eq!(
            delay_before_retry(&busy, 1, Duration::ZERO, asked, FIRST_BYTE),
            asked
        );
        let too_long = Some(MAX_RETRY_AFTER + Duration::from_millis(1));
        assert_eq!(
            delay_before_retry(&busy, 1, Duration::ZERO, too_long, FIRST_BYTE),
            None
        );
    }
}
