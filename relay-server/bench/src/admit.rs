//! The spending admission benchmark (`patchbridge-relay-bench admit`): closed-loop model calls
//! (`POST {base}/model`) to the scripted demo model, which answers at once without any upstream, so each call
//! costs the HTTP path, the spending admission before it and the settlement after it. Against one or more relays
//! (a baseline build and a candidate, each on its own PostgreSQL schema), interleaved repeat by repeat so a
//! shared machine's drift hits every relay alike.
//!
//! Two ways to share the load: `one` user for every worker (each admission waits for the user's advisory lock:
//! the worst case of the shared counters), and `each` worker its own user. Per point: calls/s and the client's
//! p50 / p99 latency (median over repeats), and the relay's own admission and settlement means from its
//! `relay_spending_admit` / `relay_spending_settle` histograms over the same rounds; then each relay beside the
//! first (the baseline) as a ratio. Every answer is checked (200 and a `message-stop`); timings are printed,
//! never asserted.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, StatusCode, Uri};

use crate::client::HttpClient;
use crate::metrics;
use crate::stats::{ms, percentile};

pub struct Options {
    /// `(label, base URL including the base path, e.g. http://127.0.0.1:8080/api)`; the first is the baseline
    /// of the ratios.
    pub relays: Vec<(String, String)>,
    pub levels: Vec<usize>,
    /// `one` (all workers one user) and/or `each` (a user per worker).
    pub users: Vec<Users>,
    /// Measured time per repeat and relay.
    pub seconds: f64,
    pub repeats: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Users {
    One,
    Each,
}

impl Users {
    pub fn parse(text: &str) -> Result<Users, String> {
        match text {
            "one" => Ok(Users::One),
            "each" => Ok(Users::Each),
            other => Err(format!("--users {other}: expected one or each")),
        }
    }
    fn label(self) -> &'static str {
        match self {
            Users::One => "one user",
            Users::Each => "user/worker",
        }
    }
}

/// The neutral request for the scripted model.
const BODY: &str = r#"{"model":"scripted","messages":[{"id":"m1","role":"user","blocks":[{"type":"text","text":"hello"}]}],"modelState":null,"tools":[]}"#;

/// One relay at one point, one repeat.
struct Round {
    calls: usize,
    wall: Duration,
    /// Ascending.
    latencies: Vec<Duration>,
    admit_us: Option<f64>,
    settle_us: Option<f64>,
}

/// One relay's figures at one point (medians over repeats).
struct Point {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    admit_us: Option<f64>,
    settle_us: Option<f64>,
}

/// A relay's addresses: its API base and its root (`/metrics`, `Origin`).
struct Relay {
    model: Uri,
    root: String,
    origin: HeaderValue,
}

fn relay(base: &str) -> Result<Relay, String> {
    let base = base.trim_end_matches('/');
    let root = base.split('/').take(3).collect::<Vec<_>>().join("/");
    Ok(Relay {
        model: format!("{base}/model")
            .parse()
            .map_err(|e| format!("{base}: {e}"))?,
        origin: HeaderValue::from_str(&root).map_err(|e| e.to_string())?,
        root,
    })
}

pub async fn run(client: &HttpClient, o: &Options) -> Result<(), String> {
    let run_id = std::process::id();
    let relays: Vec<Relay> = o
        .relays
        .iter()
        .map(|(_, base)| relay(base))
        .collect::<Result<_, _>>()?;
    println!(
        "\nspending admission (scripted model, no upstream): {} s x {} repeats per point, relays interleaved",
        o.seconds, o.repeats
    );
    println!(
        "{:<12} {:<12} {:>4} {:>9} {:>8} {:>8} {:>11} {:>11}",
        "relay", "users", "C", "calls/s", "p50 ms", "p99 ms", "admit µs", "settle µs"
    );
    for &users in &o.users {
        for &c in &o.levels {
            let names: Vec<String> = (0..c)
                .map(|w| match users {
                    Users::One => format!("admit-{run_id}-c{c}-one"),
                    Users::Each => format!("admit-{run_id}-c{c}-w{w}"),
                })
                .collect();
            for r in &relays {
                round(client, r, &names, Duration::from_millis(300)).await?;
            }
            let mut rounds: Vec<Vec<Round>> = relays.iter().map(|_| Vec::new()).collect();
            for _ in 0..o.repeats {
                for (i, r) in relays.iter().enumerate() {
                    rounds[i]
                        .push(round(client, r, &names, Duration::from_secs_f64(o.seconds)).await?);
                }
            }
            let points: Vec<Point> = rounds.iter().map(|rs| point(rs)).collect();
            for ((label, _), p) in o.relays.iter().zip(&points) {
                println!(
                    "{:<12} {:<12} {:>4} {:>9.0} {:>8.2} {:>8.2} {:>11} {:>11}",
                    label,
                    users.label(),
                    c,
                    p.per_second,
                    p.p50_ms,
                    p.p99_ms,
                    us(p.admit_us),
                    us(p.settle_us)
                );
            }
            let base = &points[0];
            for ((label, _), p) in o.relays.iter().zip(&points).skip(1) {
                println!(
                    "{:<12} {:<12} {:>4} {:>9} {:>8} {:>8} {:>11} {:>11}   (ratio {label} / {})",
                    "",
                    "",
                    "",
                    ratio(Some(p.per_second), Some(base.per_second)),
                    ratio(Some(p.p50_ms), Some(base.p50_ms)),
                    ratio(Some(p.p99_ms), Some(base.p99_ms)),
                    ratio(p.admit_us, base.admit_us),
                    ratio(p.settle_us, base.settle_us),
                    o.relays[0].0
                );
            }
        }
    }
    Ok(())
}

fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0}"))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    }
}

fn point(rounds: &[Round]) -> Point {
    let median_of = |f: &dyn Fn(&Round) -> Option<f64>| {
        let mut v: Vec<f64> = rounds.iter().filter_map(f).collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| median(&v))
    };
    Point {
        per_second: median_of(&|r| Some(r.calls as f64 / r.wall.as_secs_f64())).unwrap_or(0.0),
        p50_ms: median_of(&|r| Some(ms(percentile(&r.latencies, 50.0)))).unwrap_or(0.0),
        p99_ms: median_of(&|r| Some(ms(percentile(&r.latencies, 99.0)))).unwrap_or(0.0),
        admit_us: median_of(&|r| r.admit_us),
        settle_us: median_of(&|r| r.settle_us),
    }
}

/// Median of an ascending, non-empty slice.
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// One worker per name calls back to back until `duration` has passed; the relay's histograms are read before
/// and after (settlements still being written at the end fall into the next round's figures).
async fn round(
    client: &HttpClient,
    relay: &Relay,
    users: &[String],
    duration: Duration,
) -> Result<Round, String> {
    let before = metrics::scrape(client, &relay.root).await?;
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = users
        .iter()
        .map(|user| {
            let client = client.clone();
            let uri = relay.model.clone();
            let origin = relay.origin.clone();
            let user = HeaderValue::from_str(user).map_err(|e| e.to_string());
            tokio::spawn(async move {
                let user = user?;
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let t = Instant::now();
                    call(&client, &uri, &origin, &user).await?;
                    latencies.push(t.elapsed());
                }
                Ok::<_, String>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut failure = None;
    for t in tasks {
        match t.await.map_err(|e| e.to_string()).and_then(|r| r) {
            Ok(l) => latencies.extend(l),
            Err(e) => failure = failure.or(Some(e)),
        }
    }
    let wall = started.elapsed();
    if let Some(e) = failure {
        return Err(e);
    }
    let after = metrics::scrape(client, &relay.root).await?;
    latencies.sort();
    Ok(Round {
        calls: latencies.len(),
        wall,
        latencies,
        admit_us: metrics::mean_us(&before, &after, "relay_spending_admit"),
        settle_us: metrics::mean_us(&before, &after, "relay_spending_settle"),
    })
}

/// One model call read to its end; anything but a complete stream is an error (a refusal means the bench's
/// limits were too low).
async fn call(
    client: &HttpClient,
    uri: &Uri,
    origin: &HeaderValue,
    user: &HeaderValue,
) -> Result<(), String> {
    let request = Request::post(uri.clone())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ORIGIN, origin)
        .header(HeaderName::from_static("x-patchbridge-user"), user)
        .body(Full::new(Bytes::from_static(BODY.as_bytes())))
        .map_err(|e| e.to_string())?;
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("POST {uri}: {e:?}"))?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("POST {uri}: body: {e}"))?
        .to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    if status != StatusCode::OK || !text.contains("message-stop") {
        return Err(format!("POST {uri}: {status}: {text}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relay_base_gives_its_model_route_its_root_and_its_origin() {
        let r = relay("http://127.0.0.1:8080/api/").unwrap();
        assert_eq!(r.model, "http://127.0.0.1:8080/api/model");
        assert_eq!(r.root, "http://127.0.0.1:8080");
        assert_eq!(r.origin, "http://127.0.0.1:8080");
    }

    #[test]
    fn ratios_need_both_figures_and_a_positive_baseline() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), "1.50x");
        assert_eq!(ratio(None, Some(2.0)), "-");
        assert_eq!(ratio(Some(1.0), Some(0.0)), "-");
        assert_eq!(Users::parse("each"), Ok(Users::Each));
        assert!(Users::parse("all").is_err());
    }
}
