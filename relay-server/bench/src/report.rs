//! The printed result: one table of time to first event and per-chunk cost per concurrency level and path,
//! one table of memory per open stream, and the targets next to the figures. Figures only: nothing here
//! fails a run.

use std::time::Duration;

use crate::client::Sample;
use crate::metrics;
use crate::procfs::Group;
use crate::stats::{ms, percentile};

// The targets, each checked against the baseline measured in the same run (nginx, the bare proxy that does no
// translation) where it has one: the machine's speed cancels out of the ratios.
/// Relay CPU per streamed chunk, µs.
const CHUNK_CPU_TARGET_US: f64 = 3.0;
/// Relay CPU per request of a short stream (all of its CPU, with at most [`SHORT_STREAM_CHUNKS`] chunks), µs.
const REQUEST_CPU_TARGET_US: f64 = 150.0;
const SHORT_STREAM_CHUNKS: usize = 20;
/// Added time to first event at concurrency 1: at most nginx's plus this, ms.
const TTFE_C1_MARGIN_MS: f64 = 0.1;
/// Added time to first event at higher concurrency: at most this multiple of nginx's.
const TTFE_LOADED_RATIO: f64 = 1.5;
/// Streams per second at concurrency 16 and above, back-to-back chunks: at least this share of nginx's.
const THROUGHPUT_RATIO: f64 = 0.8;
/// Memory per open stream, KiB.
const MEMORY_TARGET_KIB: f64 = 24.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Direct,
    Nginx,
    Relay,
}

impl Path {
    fn name(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::Nginx => "nginx",
            Path::Relay => "relay",
        }
    }
}

pub struct PhaseResult {
    pub path: Path,
    pub concurrency: usize,
    pub chunks: usize,
    pub streams: usize,
    /// Ascending.
    pub first_event: Vec<Duration>,
    /// Ascending.
    pub total: Vec<Duration>,
    pub wall: Duration,
    /// CPU time the proxy (relay process, or nginx master + workers) used during the measured phase.
    pub proxy_cpu_ns: Option<u64>,
    /// Relay only: means (µs) of the relay's own histograms over the phase, in [`metrics::HISTOGRAMS`] order.
    pub relay_metrics: Vec<Option<f64>>,
    /// The upstream spaced its chunks in time (`/paced/...`).
    pub paced: bool,
}

impl PhaseResult {
    pub fn new(
        path: Path,
        concurrency: usize,
        chunks: usize,
        samples: Vec<Sample>,
        wall: Duration,
        proxy_cpu_ns: Option<u64>,
    ) -> Self {
        let mut first_event: Vec<Duration> = samples.iter().map(|s| s.first_event).collect();
        let mut total: Vec<Duration> = samples.iter().map(|s| s.total).collect();
        first_event.sort();
        total.sort();
        PhaseResult {
            path,
            concurrency,
            chunks,
            streams: samples.len(),
            first_event,
            total,
            wall,
            proxy_cpu_ns,
            relay_metrics: Vec::new(),
            paced: false,
        }
    }

    /// The concurrency column: `64` or `64p` for the paced phase.
    fn label(&self) -> String {
        if self.paced {
            format!("{}p", self.concurrency)
        } else {
            self.concurrency.to_string()
        }
    }

    fn p(&self, pct: f64) -> Duration {
        percentile(&self.first_event, pct)
    }

    /// Wall time per stream (the closed loop's throughput, inverted), per chunk, in µs.
    fn wall_us_per_chunk(&self) -> f64 {
        self.wall.as_secs_f64() * 1e6 / (self.streams * self.chunks) as f64
    }

    fn cpu_us_per_chunk(&self) -> Option<f64> {
        self.proxy_cpu_ns
            .map(|ns| ns as f64 / 1e3 / (self.streams * self.chunks) as f64)
    }
}

pub struct MemoryResult {
    pub streams: usize,
    pub baseline_kib: u64,
    pub held_kib: u64,
}

impl MemoryResult {
    fn per_stream_kib(&self) -> f64 {
        (self.held_kib as f64 - self.baseline_kib as f64) / self.streams as f64
    }
}

pub fn header(chunks: usize, relay: &Group, nginx: &Group) {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    println!("PatchBridge relay benchmark: fake OpenAI Chat Completions upstream, {chunks} content chunks per response,");
    println!(
        "{cpus} CPUs (shared), relay pid {:?}, nginx pids {:?}",
        relay.pids, nginx.pids
    );
    println!("Paths: direct = fake upstream; nginx = proxy_buffering off, HTTP/1.1 keepalive upstream (the floor);");
    println!("       relay = POST /api/model, neutral request, Chat Completions decoded and re-encoded as neutral events.");
}

/// `relay / nginx`, e.g. `12.3x`; `-` when nginx's figure is zero or missing.
fn ratio(relay: f64, nginx: f64) -> String {
    if nginx > 0.0 && relay.is_finite() {
        format!("{:.1}x", relay / nginx)
    } else {
        "-".to_string()
    }
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

pub fn print(
    results: &[PhaseResult],
    memory: &[(Path, MemoryResult)],
    chunks: usize,
    elapsed: Duration,
) {
    let direct_of = |r: &PhaseResult| {
        results.iter().find(|d| {
            d.path == Path::Direct && d.concurrency == r.concurrency && d.paced == r.paced
        })
    };
    println!();
    println!("Time to first event (TTFE, from sending the request to the first complete SSE event) and per-chunk cost.");
    println!("'+' columns: minus direct at the same concurrency. +wall/chunk: added wall time of the closed loop per");
    println!("chunk relayed; CPU/chunk: the proxy process's own CPU time per chunk (both include per-request work,");
    println!("amortised over {chunks} chunks). Rows 'Np': the upstream spaces its chunks in time (paced), as a model");
    println!("generating tokens does, so every chunk is read and written on its own.");
    println!();
    println!(
        "{:>5} {:<7} {:>7} {:>10} {:>10} {:>10} {:>10} {:>11} {:>12} {:>10} {:>10}",
        "conc",
        "path",
        "streams",
        "TTFE p50",
        "TTFE p99",
        "+TTFE p50",
        "+TTFE p99",
        "stream p50",
        "+wall/chunk",
        "CPU/chunk",
        "streams/s"
    );
    for r in results {
        let base = direct_of(r);
        let added = |pct: f64| match (r.path, base) {
            (Path::Direct, _) | (_, None) => "-".to_string(),
            (_, Some(d)) => format!("{:+.3} ms", ms(r.p(pct)) - ms(d.p(pct))),
        };
        let wall = match (r.path, base) {
            (Path::Direct, _) | (_, None) => "-".to_string(),
            (_, Some(d)) => format!("{:+.2} us", r.wall_us_per_chunk() - d.wall_us_per_chunk()),
        };
        let cpu = r
            .cpu_us_per_chunk()
            .map_or("-".to_string(), |c| format!("{c:.2} us"));
        println!(
            "{:>5} {:<7} {:>7} {:>7.3} ms {:>7.3} ms {:>10} {:>10} {:>8.3} ms {:>12} {:>10} {:>10.0}",
            r.label(),
            r.path.name(),
            r.streams,
            ms(r.p(50.0)),
            ms(r.p(99.0)),
            added(50.0),
            added(99.0),
            ms(percentile(&r.total, 50.0)),
            wall,
            cpu,
            r.streams as f64 / r.wall.as_secs_f64(),
        );
    }

    println!();
    println!("The relay's own metrics (GET /metrics), mean over each measured relay phase, microseconds:");
    for (name, meaning) in metrics::HISTOGRAMS {
        println!("  {name:<26} {meaning}");
    }
    print!("{:>5}", "conc");
    for (name, _) in metrics::HISTOGRAMS {
        print!(" {:>26}", name);
    }
    println!();
    for r in results
        .iter()
        .filter(|r| r.path == Path::Relay && !r.relay_metrics.is_empty())
    {
        print!("{:>5}", r.label());
        for m in &r.relay_metrics {
            print!(" {:>26}", m.map_or("-".to_string(), |v| format!("{v:.1}")));
        }
        println!();
    }

    println!();
    println!("Memory per open stream: RSS (VmRSS; nginx: master + workers) with streams held open mid-response");
    println!("(upstream paused after half of the chunks), minus RSS before they were opened, divided by the streams.");
    println!();
    println!(
        "{:<7} {:>8} {:>12} {:>12} {:>12}",
        "path", "streams", "RSS before", "RSS held", "per stream"
    );
    for (path, m) in memory {
        println!(
            "{:<7} {:>8} {:>8} KiB {:>8} KiB {:>8.1} KiB",
            path.name(),
            m.streams,
            m.baseline_kib,
            m.held_kib,
            m.per_stream_kib()
        );
    }

    println!();
    println!(
        "Targets, each beside the same figure of nginx in this run (relay / nginx as a ratio):"
    );
    let find = |p: Path, c: usize, paced: bool| {
        results
            .iter()
            .find(|r| r.path == p && r.concurrency == c && r.paced == paced)
    };
    for r in results.iter().filter(|r| r.path == Path::Relay && !r.paced) {
        let (Some(d), Some(n)) = (direct_of(r), find(Path::Nginx, r.concurrency, false)) else {
            continue;
        };
        let c = r.concurrency;
        let relay_added = ms(r.p(50.0)) - ms(d.p(50.0));
        // A nginx figure below zero is noise (it cannot be faster than direct): compare with 0 then, and allow
        // 5 µs of rounding either way.
        let nginx_added = (ms(n.p(50.0)) - ms(d.p(50.0))).max(0.0);
        let (bound, rule) = if c == 1 {
            (
                nginx_added + TTFE_C1_MARGIN_MS,
                format!("<= nginx + {TTFE_C1_MARGIN_MS} ms"),
            )
        } else {
            (
                nginx_added * TTFE_LOADED_RATIO,
                format!("<= {TTFE_LOADED_RATIO}x nginx"),
            )
        };
        println!(
            "  c={c:<4} added TTFE p50     relay {relay_added:+.3} ms | nginx {nginx_added:+.3} ms   {}   target {rule}: {}",
            ratio(relay_added, nginx_added),
            met(relay_added <= bound + 0.005)
        );
        let (cpu, nginx_cpu) = (
            r.cpu_us_per_chunk().unwrap_or(f64::NAN),
            n.cpu_us_per_chunk().unwrap_or(f64::NAN),
        );
        println!(
            "  c={c:<4} CPU per chunk      relay {cpu:.2} us | nginx {nginx_cpu:.2} us   {}   target <= {CHUNK_CPU_TARGET_US} us: {}",
            ratio(cpu, nginx_cpu),
            met(cpu <= CHUNK_CPU_TARGET_US)
        );
        if r.chunks <= SHORT_STREAM_CHUNKS {
            let per = |x: f64| x * r.chunks as f64;
            println!(
                "  c={c:<4} CPU per request    relay {:.0} us | nginx {:.0} us   {}   target <= {REQUEST_CPU_TARGET_US} us ({} chunks per stream): {}",
                per(cpu),
                per(nginx_cpu),
                ratio(cpu, nginx_cpu),
                r.chunks,
                met(per(cpu) <= REQUEST_CPU_TARGET_US)
            );
        }
        if c >= 16 {
            let rate = |x: &PhaseResult| x.streams as f64 / x.wall.as_secs_f64();
            println!(
                "  c={c:<4} streams/s          relay {:.0} | nginx {:.0}   {}   target >= {THROUGHPUT_RATIO}x nginx: {}",
                rate(r),
                rate(n),
                ratio(rate(r), rate(n)),
                met(rate(r) >= THROUGHPUT_RATIO * rate(n))
            );
        }
    }
    if results.iter().all(|r| r.chunks > SHORT_STREAM_CHUNKS) {
        println!("  (CPU per request: run with CHUNKS={SHORT_STREAM_CHUNKS} or fewer)");
    }
    let nginx_memory = memory
        .iter()
        .find(|(p, _)| *p == Path::Nginx)
        .map(|(_, m)| m.per_stream_kib());
    for (path, m) in memory {
        if *path == Path::Relay {
            let relay = m.per_stream_kib();
            let nginx = nginx_memory.unwrap_or(f64::NAN);
            println!(
                "  {} open  memory per stream  relay {relay:.1} KiB | nginx {nginx:.1} KiB   {}   target <= {MEMORY_TARGET_KIB} KiB: {}",
                m.streams,
                ratio(relay, nginx),
                met(relay <= MEMORY_TARGET_KIB)
            );
        }
    }
    println!();
    println!(
        "Run took {:.1} s. Every stream was checked complete (event count, tokens, final event).",
        elapsed.as_secs_f64()
    );
}
