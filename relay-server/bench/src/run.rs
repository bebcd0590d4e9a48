//! The measurement run (`patchbridge-relay-bench run`): the same fake upstream reached three ways (direct,
//! nginx, relay), in one process and one run, so every figure is a difference against a baseline measured
//! minutes apart at most.
//!
//! Order: a short warm-up of every path; the memory phase on fresh proxies (1,024 streams held open
//! mid-response, RSS before and during); then, for each concurrency level, the three paths one after the
//! other, each with one unmeasured warm-up round (opens the connections) and a measured closed loop; last,
//! the paced phase: the same at one concurrency with the upstream spacing its chunks in time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;

use crate::client::{self, HttpClient, Midway, Sample, Target};
use crate::metrics;
use crate::procfs::Group;
use crate::report::{self, MemoryResult, Path, PhaseResult};
use crate::sse::Wire;

pub struct Options {
    pub upstream: String,
    pub nginx: String,
    pub relay: String,
    pub relay_pid: u32,
    pub nginx_pid: u32,
    pub chunks: usize,
    pub levels: Vec<usize>,
    pub hold: usize,
    /// Concurrency of the paced phase (chunks spaced in time as a generating model sends them); 0 skips it.
    pub paced: usize,
}

/// Streams per worker at concurrency `c`: enough samples for a p99 at c=1, a few rounds at high concurrency.
fn rounds(c: usize) -> usize {
    if c == 1 {
        400
    } else {
        (640 / c).max(2)
    }
}

pub async fn run(o: Options) -> Result<(), String> {
    if o.chunks < 2 {
        return Err("--chunks must be at least 2 (streams are held at the half)".into());
    }
    let client = client::client();
    let direct = Target::chat(&o.upstream, "/v1/chat/completions")?;
    let nginx = Target::chat(&o.nginx, "/v1/chat/completions")?;
    let relay = Target::relay(&o.relay, "bench")?;
    let relay_group = Group::of(o.relay_pid);
    let nginx_group = Group::of(o.nginx_pid);
    if nginx_group.pids.len() < 2 {
        return Err(format!("nginx pid {} has no worker processes", o.nginx_pid));
    }

    let started = Instant::now();
    report::header(o.chunks, &relay_group, &nginx_group);
    for target in [&direct, &nginx, &relay] {
        phase(&client, target, o.chunks, 1, 20, None).await?;
    }

    let nginx_memory = hold_open(
        &client,
        &Target::chat(&o.nginx, "/hold/v1/chat/completions")?,
        &o,
        &nginx_group,
    )
    .await?;
    let relay_memory = hold_open(
        &client,
        &Target::relay(&o.relay, "bench-hold")?,
        &o,
        &relay_group,
    )
    .await?;

    let mut results = Vec::new();
    for &c in &o.levels {
        for (path, target, group) in [
            (Path::Direct, &direct, None),
            (Path::Nginx, &nginx, Some(&nginx_group)),
            (Path::Relay, &relay, Some(&relay_group)),
        ] {
            results.push(measure(&client, &o, path, target, c, rounds(c), group, false).await?);
        }
    }
    if o.paced > 0 {
        let c = o.paced;
        for (path, target, group) in [
            (
                Path::Direct,
                Target::chat(&o.upstream, "/paced/v1/chat/completions")?,
                None,
            ),
            (
                Path::Nginx,
                Target::chat(&o.nginx, "/paced/v1/chat/completions")?,
                Some(&nginx_group),
            ),
            (
                Path::Relay,
                Target::relay(&o.relay, "bench-paced")?,
                Some(&relay_group),
            ),
        ] {
            results.push(measure(&client, &o, path, &target, c, 2, group, true).await?);
        }
    }
    report::print(
        &results,
        &[(Path::Nginx, nginx_memory), (Path::Relay, relay_memory)],
        o.chunks,
        started.elapsed(),
    );
    Ok(())
}

/// One row of the table: an unmeasured round (opens the connections), then the measured loop; for the relay
/// also its own metrics over the loop.
#[allow(clippy::too_many_arguments)]
async fn measure(
    client: &HttpClient,
    o: &Options,
    path: Path,
    target: &Target,
    concurrency: usize,
    per_worker: usize,
    group: Option<&Group>,
    paced: bool,
) -> Result<PhaseResult, String> {
    phase(client, target, o.chunks, concurrency, 1, None).await?;
    let before = if path == Path::Relay {
        Some(metrics::scrape(client, &o.relay).await?)
    } else {
        None
    };
    let (samples, wall, cpu) =
        phase(client, target, o.chunks, concurrency, per_worker, group).await?;
    let mut result = PhaseResult::new(path, concurrency, o.chunks, samples, wall, cpu);
    result.paced = paced;
    if let Some(before) = before {
        let after = metrics::scrape(client, &o.relay).await?;
        result.relay_metrics = metrics::HISTOGRAMS
            .iter()
            .map(|(name, _)| metrics::mean_us(&before, &after, name))
            .collect();
    }
    Ok(result)
}

/// `concurrency` workers each run `per_worker` streams back to back. Returns the samples, the wall time and
/// the CPU time `proxy` consumed meanwhile.
async fn phase(
    client: &HttpClient,
    target: &Target,
    chunks: usize,
    concurrency: usize,
    per_worker: usize,
    proxy: Option<&Group>,
) -> Result<(Vec<Sample>, Duration, Option<u64>), String> {
    let cpu_before = proxy.map(Group::cpu_ns).transpose()?;
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let client = client.clone();
            let target = target.clone();
            tokio::spawn(async move {
                let mut samples = Vec::with_capacity(per_worker);
                for _ in 0..per_worker {
                    samples.push(client::stream_once(&client, &target, chunks, None).await?);
                }
                Ok::<_, String>(samples)
            })
        })
        .collect();
    let mut samples = Vec::with_capacity(concurrency * per_worker);
    let mut failure = None;
    for worker in workers {
        match worker.await.map_err(|e| e.to_string()).and_then(|r| r) {
            Ok(s) => samples.extend(s),
            Err(e) => failure = failure.or(Some(e)),
        }
    }
    let wall = started.elapsed();
    if let Some(e) = failure {
        return Err(e);
    }
    let cpu = match (proxy, cpu_before) {
        (Some(g), Some(before)) => Some(g.cpu_ns()?.saturating_sub(before)),
        _ => None,
    };
    Ok((samples, wall, cpu))
}

/// Opens `o.hold` streams that the upstream pauses at half of their content chunks, waits until every one
/// has received its first half, samples the proxy's RSS, releases them and checks they all complete.
async fn hold_open(
    client: &HttpClient,
    target: &Target,
    o: &Options,
    group: &Group,
) -> Result<MemoryResult, String> {
    let settle = Duration::from_millis(300);
    tokio::time::sleep(settle).await;
    let baseline = group.rss_kib()?;
    let half = o.chunks / 2;
    let events = match target.wire {
        Wire::OpenAiChat => half,
        // message-start and block-start come before the deltas.
        Wire::Neutral => half + 2,
    };
    let reached = Arc::new(AtomicUsize::new(0));
    let streams: Vec<_> = (0..o.hold)
        .map(|_| {
            let client = client.clone();
            let target = target.clone();
            let midway = Midway {
                events,
                reached: reached.clone(),
            };
            let chunks = o.chunks;
            tokio::spawn(async move {
                client::stream_once(&client, &target, chunks, Some(&midway)).await
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while reached.load(Ordering::SeqCst) < o.hold {
        if let Some(done) = streams.iter().position(|s| s.is_finished()) {
            // A held stream cannot finish before the release: it failed.
            let _ = release(client, &o.upstream).await;
            let result = futures_join(streams).await;
            return Err(result
                .err()
                .unwrap_or_else(|| format!("held stream {done} ended before the release")));
        }
        if Instant::now() > deadline {
            let _ = release(client, &o.upstream).await;
            return Err(format!(
                "only {} of {} streams reached mid-response in 60 s",
                reached.load(Ordering::SeqCst),
                o.hold
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(settle).await;
    let held = group.rss_kib()?;
    release(client, &o.upstream).await?;
    futures_join(streams).await?;
    Ok(MemoryResult {
        streams: o.hold,
        baseline_kib: baseline,
        held_kib: held,
    })
}

async fn futures_join(
    streams: Vec<tokio::task::JoinHandle<Result<Sample, String>>>,
) -> Result<(), String> {
    let mut failure = None;
    for s in streams {
        if let Err(e) = s.await.map_err(|e| e.to_string()).and_then(|r| r) {
            failure = failure.or(Some(e));
        }
    }
    failure.map_or(Ok(()), Err)
}

async fn release(client: &HttpClient, upstream: &str) -> Result<(), String> {
    let uri: hyper::Uri = format!("{upstream}/control/release")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let request = hyper::Request::post(uri)
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("release: {e}"))?;
    if response.status() != hyper::StatusCode::NO_CONTENT {
        return Err(format!("release: status {}", response.status()));
    }
    Ok(())
}
