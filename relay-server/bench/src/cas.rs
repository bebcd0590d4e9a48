//! The durable conversation write benchmark (`patchbridge-relay-bench cas`): closed-loop compare-and-set
//! `PUT {base}/conversations/{id}` with `expectedRevision` and a ~1 KiB context, against one or more relays
//! (e.g. a baseline build and a candidate on the same database engine), interleaved repeat by repeat so a
//! shared machine's drift hits every relay alike.
//!
//! Each worker owns one conversation of its own user, so the revision check never conflicts and every write
//! commits: the figure is the cost of a durable write, not of retries. The context's size alternates by one
//! byte, so every write also changes the user's stored-bytes total (the quota bookkeeping runs each time).
//! Every answer is checked (status 200 and the next revision); timings are printed, never asserted.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, StatusCode, Uri};

use crate::client::HttpClient;
use crate::stats::{ms, percentile};

pub struct Options {
    /// `(label, base URL including the base path, e.g. http://127.0.0.1:8080/api)`.
    pub relays: Vec<(String, String)>,
    /// What the relays store in (printed only): "sqlite", "postgres".
    pub engine: String,
    pub levels: Vec<usize>,
    /// Measured time per repeat and relay.
    pub seconds: f64,
    pub repeats: usize,
    /// Approximate size of the stored context JSON.
    pub context_bytes: usize,
}

/// One relay at one concurrency, one repeat.
struct Round {
    writes: usize,
    wall: Duration,
    /// Ascending.
    latencies: Vec<Duration>,
}

impl Round {
    fn per_second(&self) -> f64 {
        self.writes as f64 / self.wall.as_secs_f64()
    }
}

/// One worker's conversation.
struct Writer {
    uri: Uri,
    origin: HeaderValue,
    user: HeaderValue,
    revision: u64,
    writes: u64,
}

pub async fn run(client: &HttpClient, o: &Options) -> Result<(), String> {
    let run_id = std::process::id();
    println!(
        "\nconversation PUT (compare-and-set, {} B context, one conversation per worker), {}: {} s x {} repeats per point, relays interleaved",
        o.context_bytes, o.engine, o.seconds, o.repeats
    );
    println!(
        "{:<10} {:>4} {:>10} {:>19} {:>9} {:>9} {:>19}",
        "relay", "C", "writes/s", "(min-max)", "p50 ms", "p99 ms", "p99 (min-max)"
    );
    for &c in &o.levels {
        // Fresh conversations per level, for every relay: its own users, so levels do not share rows.
        let mut writers = Vec::new();
        for (label, base) in &o.relays {
            let mut ws = Vec::with_capacity(c);
            for w in 0..c {
                ws.push(create(client, base, &format!("cas-{run_id}-{label}-c{c}-w{w}")).await?);
            }
            writers.push(ws);
        }
        // Warm-up: connections open, statements prepared, caches filled.
        for ws in &mut writers {
            *ws = round(
                client,
                std::mem::take(ws),
                Duration::from_millis(300),
                o.context_bytes,
            )
            .await?
            .0;
        }
        let mut rounds: Vec<Vec<Round>> = o.relays.iter().map(|_| Vec::new()).collect();
        for _ in 0..o.repeats {
            for (i, ws) in writers.iter_mut().enumerate() {
                let (back, r) = round(
                    client,
                    std::mem::take(ws),
                    Duration::from_secs_f64(o.seconds),
                    o.context_bytes,
                )
                .await?;
                *ws = back;
                rounds[i].push(r);
            }
        }
        for ((label, _), rs) in o.relays.iter().zip(&rounds) {
            print_point(label, c, rs);
        }
    }
    Ok(())
}

fn print_point(label: &str, c: usize, rounds: &[Round]) {
    let mut rates: Vec<f64> = rounds.iter().map(Round::per_second).collect();
    rates.sort_by(f64::total_cmp);
    let mut p50: Vec<f64> = rounds
        .iter()
        .map(|r| ms(percentile(&r.latencies, 50.0)))
        .collect();
    let mut p99: Vec<f64> = rounds
        .iter()
        .map(|r| ms(percentile(&r.latencies, 99.0)))
        .collect();
    p50.sort_by(f64::total_cmp);
    p99.sort_by(f64::total_cmp);
    println!(
        "{:<10} {:>4} {:>10.0} {:>19} {:>9.2} {:>9.2} {:>19}",
        label,
        c,
        median(&rates),
        format!("({:.0}-{:.0})", rates[0], rates[rates.len() - 1]),
        median(&p50),
        median(&p99),
        format!("({:.2}-{:.2})", p99[0], p99[p99.len() - 1]),
    );
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

/// Every writer writes back to back until `duration` has passed; returns the writers (with their new
/// revisions) and the round's figures.
async fn round(
    client: &HttpClient,
    writers: Vec<Writer>,
    duration: Duration,
    context_bytes: usize,
) -> Result<(Vec<Writer>, Round), String> {
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = writers
        .into_iter()
        .map(|mut w| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let t = Instant::now();
                    put_once(&client, &mut w, context_bytes).await?;
                    latencies.push(t.elapsed());
                }
                Ok::<_, String>((w, latencies))
            })
        })
        .collect();
    let mut writers = Vec::with_capacity(tasks.len());
    let mut latencies = Vec::new();
    let mut failure = None;
    for t in tasks {
        match t.await.map_err(|e| e.to_string()).and_then(|r| r) {
            Ok((w, l)) => {
                writers.push(w);
                latencies.extend(l);
            }
            Err(e) => failure = failure.or(Some(e)),
        }
    }
    let wall = started.elapsed();
    if let Some(e) = failure {
        return Err(e);
    }
    latencies.sort();
    Ok((
        writers,
        Round {
            writes: latencies.len(),
            wall,
            latencies,
        },
    ))
}

/// The write body: a context whose JSON is about `bytes` long, one byte longer on odd writes.
pub fn write_body(expected: u64, bytes: usize, odd: bool) -> String {
    const SHELL: usize = r#"{"messages":[{"id":"m1","role":"user","blocks":[{"type":"text","text":""}]}],"modelState":null}"#.len();
    let text = "x".repeat(bytes.saturating_sub(SHELL) + usize::from(odd));
    format!(
        r#"{{"expectedRevision":{expected},"context":{{"messages":[{{"id":"m1","role":"user","blocks":[{{"type":"text","text":"{text}"}}]}}],"modelState":null}}}}"#
    )
}

async fn put_once(client: &HttpClient, w: &mut Writer, context_bytes: usize) -> Result<(), String> {
    let body = write_body(w.revision, context_bytes, w.writes % 2 == 1);
    let (status, answer) = send(client, "PUT", &w.uri, &w.origin, &w.user, body).await?;
    let next = w.revision + 1;
    if status != StatusCode::OK || !answer.contains(&format!("\"revision\":{next},")) {
        return Err(format!(
            "PUT {}: expected revision {next}, got {status}: {answer}",
            w.uri
        ));
    }
    w.revision = next;
    w.writes += 1;
    Ok(())
}

/// Creates an empty conversation for `user`; the writer starts at revision 1.
async fn create(client: &HttpClient, base: &str, user: &str) -> Result<Writer, String> {
    let base = base.trim_end_matches('/');
    let origin_text = base.split('/').take(3).collect::<Vec<_>>().join("/");
    let origin = HeaderValue::from_str(&origin_text).map_err(|e| e.to_string())?;
    let user = HeaderValue::from_str(user).map_err(|e| e.to_string())?;
    let uri: Uri = format!("{base}/conversations")
        .parse()
        .map_err(|e| format!("{base}: {e}"))?;
    let (status, answer) = send(client, "POST", &uri, &origin, &user, "{}".into()).await?;
    let id = extract_id(&answer).filter(|_| status == StatusCode::CREATED);
    let Some(id) = id else {
        return Err(format!("POST {uri}: {status}: {answer}"));
    };
    let uri = format!("{base}/conversations/{id}")
        .parse()
        .map_err(|e| format!("{e}"))?;
    Ok(Writer {
        uri,
        origin,
        user,
        revision: 1,
        writes: 0,
    })
}

/// The conversation id of a created snapshot (`"id":"c_..."`, the only `id` before the context).
pub fn extract_id(answer: &str) -> Option<&str> {
    let start = answer.find("\"id\":\"")? + 6;
    let len = answer[start..].find('"')?;
    Some(&answer[start..start + len])
}

async fn send(
    client: &HttpClient,
    method: &str,
    uri: &Uri,
    origin: &HeaderValue,
    user: &HeaderValue,
    body: String,
) -> Result<(StatusCode, String), String> {
    let request = Request::builder()
        .method(method)
        .uri(uri.clone())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ORIGIN, origin)
        .header(HeaderName::from_static("x-patchbridge-user"), user)
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("{method} {uri}: {e:?}"))?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("{method} {uri}: body: {e}"))?
        .to_bytes();
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_body_is_a_save_request_whose_context_has_the_asked_size() {
        let even: serde_json::Value = serde_json::from_str(&write_body(7, 1024, false)).unwrap();
        assert_eq!(even["expectedRevision"], 7);
        let context = serde_json::to_string(&even["context"]).unwrap();
        assert_eq!(context.len(), 1024);
        let parsed: patchbridge_protocol::ConversationContext =
            serde_json::from_value(even["context"].clone()).unwrap();
        assert_eq!(
            serde_json::to_string(&parsed).unwrap().len(),
            1024,
            "the relay stores the same size"
        );
        let odd: serde_json::Value = serde_json::from_str(&write_body(7, 1024, true)).unwrap();
        assert_eq!(serde_json::to_string(&odd["context"]).unwrap().len(), 1025);
    }

    #[test]
    fn created_snapshot_id_is_found() {
        let answer =
            r#"{"conversation":{"id":"c_0123","title":"","revision":1},"context":{"messages":[]}}"#;
        assert_eq!(extract_id(answer), Some("c_0123"));
        assert_eq!(extract_id("{}"), None);
    }
}
