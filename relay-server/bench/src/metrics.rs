//! The relay's own view of a phase, from its Prometheus endpoint (`GET /metrics`): the mean of each latency
//! histogram over the phase (difference of `_sum` / `_count` before and after). It splits the relay's time to
//! first event into "before the upstream answered" and "decode and send", and gives the pure decode+encode
//! time per upstream message. Parsing is pure; fetching is in [`scrape`].

use std::collections::HashMap;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};

use crate::client::HttpClient;

/// The histograms read (without the `_seconds_sum` / `_seconds_count` suffixes).
pub const HISTOGRAMS: [(&str, &str); 6] = [
    (
        "relay_upstream_first_byte",
        "request handled -> first upstream body byte",
    ),
    ("relay_first_event", "request handled -> first event sent"),
    (
        "relay_added_first_event",
        "first upstream byte -> first event sent",
    ),
    (
        "relay_chunk_processing",
        "decode + encode per upstream SSE message",
    ),
    (
        "relay_spending_admit",
        "spending counters: admission transaction per call (on its path)",
    ),
    (
        "relay_spending_settle",
        "spending counters: usage transaction per call (after its end)",
    ),
];

/// `name -> (sum seconds, count)` for every `<name>_seconds_sum` / `<name>_seconds_count` line.
pub fn parse(text: &str) -> HashMap<String, (f64, f64)> {
    let mut out: HashMap<String, (f64, f64)> = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut parts = line.split_whitespace();
        let (Some(key), Some(value)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        if let Some(name) = key.strip_suffix("_seconds_sum") {
            out.entry(name.to_string()).or_default().0 = value;
        } else if let Some(name) = key.strip_suffix("_seconds_count") {
            out.entry(name.to_string()).or_default().1 = value;
        }
    }
    out
}

/// Mean in microseconds of `name` between two scrapes; `None` when nothing was observed.
pub fn mean_us(
    before: &HashMap<String, (f64, f64)>,
    after: &HashMap<String, (f64, f64)>,
    name: &str,
) -> Option<f64> {
    let (s1, c1) = after.get(name).copied()?;
    let (s0, c0) = before.get(name).copied().unwrap_or((0.0, 0.0));
    (c1 > c0).then(|| (s1 - s0) / (c1 - c0) * 1e6)
}

pub async fn scrape(
    client: &HttpClient,
    relay: &str,
) -> Result<HashMap<String, (f64, f64)>, String> {
    let uri: hyper::Uri = format!("{relay}/metrics")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let request = hyper::Request::get(uri)
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("relay /metrics: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("relay /metrics: status {}", response.status()));
    }
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok(parse(&String::from_utf8_lossy(&body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_are_taken_between_two_scrapes() {
        let before = parse("# TYPE relay_first_event_seconds histogram\nrelay_first_event_seconds_sum 0.5\nrelay_first_event_seconds_count 10\nrelay_first_event_seconds_bucket{le=\"0.001\"} 3\n");
        let after = parse("relay_first_event_seconds_sum 0.7\nrelay_first_event_seconds_count 20\nrelay_open_streams 0\n");
        let mean = mean_us(&before, &after, "relay_first_event").unwrap();
        assert!((mean - 20_000.0).abs() < 1e-6, "{mean}");
        assert_eq!(
            mean_us(&after, &after, "relay_first_event"),
            None,
            "no new observations"
        );
        assert_eq!(mean_us(&before, &after, "relay_chunk_processing"), None);
    }
}
