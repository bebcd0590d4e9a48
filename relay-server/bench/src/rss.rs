//! The sustained-load memory run (`rss` subcommand): the same users open the same number of concurrent streams
//! round after round, and the relay's resident memory is printed after each round (after a short settle, once
//! every stream of the round ended). A relay that keeps something per call (a map entry per user or call never
//! pruned, a label set per call, a cache without a bound) grows round after round; one whose memory is bounded
//! levels off after the first rounds have grown its pools and caches. Printed, never asserted: the figure to
//! read is the last round against a middle one (`round 20 vs round 10`).

use std::time::{Duration, Instant};

use hyper::header::{HeaderName, HeaderValue};

use crate::client::{self, Target};
use crate::procfs;

pub struct Options {
    pub relay: String,
    pub relay_pid: u32,
    pub rounds: usize,
    pub streams: usize,
    pub users: usize,
    pub chunks: usize,
    /// Pause after each round before reading RSS, so streams that just ended have released what they held.
    pub settle: Duration,
}

/// The relay target of one user (`bench-user-<n>`, the development identity header).
fn target_of(base: &Target, user: usize) -> Result<Target, String> {
    let mut target = base.clone();
    let header = HeaderName::from_static("x-patchbridge-user");
    let value = HeaderValue::from_str(&format!("bench-user-{user}")).map_err(|e| e.to_string())?;
    target.headers.retain(|(name, _)| name != header);
    target.headers.push((header, value));
    Ok(target)
}

pub async fn run(o: Options) -> Result<(), String> {
    let base = Target::relay(&o.relay, "bench")?;
    let targets: Vec<Target> = (0..o.users.max(1))
        .map(|u| target_of(&base, u))
        .collect::<Result<_, _>>()?;
    // Idle pooled connections are dropped before the relay's keep-alive bound (`limits.headerReadTimeoutMs`,
    // 10 s) closes them, so a slow round never reuses a connection the relay is closing.
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(5))
        .build({
            let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
            connector.set_nodelay(true);
            connector
        });
    let start_kib = procfs::rss_kib(o.relay_pid)?;
    println!(
        "Relay RSS under sustained load: {} rounds of {} concurrent streams from {} users, {} chunks each",
        o.rounds, o.streams, o.users, o.chunks
    );
    println!(
        "{:>6} {:>10} {:>10} {:>9}",
        "round", "RSS MiB", "Δ MiB", "seconds"
    );
    println!("{:>6} {:>10.1}", "start", start_kib as f64 / 1024.0);
    let mut figures = Vec::with_capacity(o.rounds);
    let mut previous = start_kib;
    for round in 1..=o.rounds {
        let began = Instant::now();
        let mut tasks = Vec::with_capacity(o.streams);
        for n in 0..o.streams {
            let client = client.clone();
            let target = targets[n % targets.len()].clone();
            let chunks = o.chunks;
            tasks.push(tokio::spawn(async move {
                client::stream_once(&client, &target, chunks, None).await
            }));
        }
        for task in tasks {
            task.await.map_err(|e| e.to_string())??;
        }
        let seconds = began.elapsed().as_secs_f64();
        tokio::time::sleep(o.settle).await;
        let kib = procfs::rss_kib(o.relay_pid)?;
        println!(
            "{round:>6} {:>10.1} {:>+10.2} {seconds:>9.2}",
            kib as f64 / 1024.0,
            (kib as f64 - previous as f64) / 1024.0
        );
        previous = kib;
        figures.push(kib);
    }
    if figures.len() >= 2 {
        let middle = figures[figures.len() / 2 - 1];
        let last = *figures.last().expect("two rounds at least");
        println!(
            "round {} vs round {}: {:+.1} % ({:.1} → {:.1} MiB; goal: within 5 %)",
            figures.len(),
            figures.len() / 2,
            (last as f64 / middle as f64 - 1.0) * 100.0,
            middle as f64 / 1024.0,
            last as f64 / 1024.0
        );
    }
    Ok(())
}
