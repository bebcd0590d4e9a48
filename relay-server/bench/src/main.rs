//! `patchbridge-relay-bench`: what the relay adds over calling a model provider directly, with nginx as the
//! floor, measured in one run (driven by `scripts/bench-relay.sh`, which builds, starts and cleans up).
//!
//! Subcommands:
//! - `upstream --bind ADDR --chunks N [--interval-us 1000]`: the fake OpenAI Chat Completions server ([`upstream`]).
//! - `run --upstream URL --nginx URL --relay URL --relay-pid PID --nginx-pid PID --chunks N
//!   [--levels 1,64,1024] [--hold 1024] [--paced 64]`: the load generator and the report ([`run`], [`report`]).
//! - `cas --relays label=URL[,label=URL] --engine sqlite [--levels 1,16] [--seconds 2] [--repeats 3]
//!   [--context-bytes 1024]`: the durable conversation write benchmark ([`cas`]); URLs include the base path.
//! - `admit --relays label=URL[,label=URL] [--levels 1,16] [--users one,each] [--seconds 2] [--repeats 3]`: the
//!   spending admission benchmark ([`admit`]); URLs include the base path, the first relay is the ratios' baseline.
//! - `rss --relay URL --relay-pid PID [--rounds 20] [--streams 500] [--users 50] [--chunks 20]
//!   [--settle-ms 500]`: the relay's RSS after each round of concurrent streams ([`rss`]).
//! - `free-port`: prints a free loopback TCP port (for nginx's generated config).
//!
//! Layout: [`admit`] the spending admission benchmark; [`cas`] the conversation write benchmark; [`chunks`] the upstream's SSE body (pure); [`sse`] incremental event counting (pure);
//! [`stats`] percentiles (pure); [`procfs`] RSS and CPU time from `/proc`; [`metrics`] the relay's own
//! Prometheus histograms; [`client`] one measured stream;
//! [`upstream`] the fake server; [`run`] the phases; [`report`] the printed tables.

mod admit;
mod cas;
mod chunks;
mod client;
mod metrics;
mod procfs;
mod report;
mod rss;
mod run;
mod sse;
mod stats;
mod upstream;

use std::collections::HashMap;
use std::process::ExitCode;

const USAGE: &str = "usage:
  patchbridge-relay-bench upstream --bind 127.0.0.1:0 --chunks N [--interval-us 1000]
  patchbridge-relay-bench run --upstream URL --nginx URL --relay URL --relay-pid PID --nginx-pid PID --chunks N [--levels 1,64,1024] [--hold 1024]
  patchbridge-relay-bench cas --relays label=URL[,label=URL] --engine NAME [--levels 1,16] [--seconds 2] [--repeats 3] [--context-bytes 1024]
  patchbridge-relay-bench admit --relays label=URL[,label=URL] [--levels 1,16] [--users one,each] [--seconds 2] [--repeats 3]
  patchbridge-relay-bench rss --relay URL --relay-pid PID [--rounds 20] [--streams 500] [--users 50] [--chunks 20] [--settle-ms 500]
  patchbridge-relay-bench free-port";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("upstream") => flags(&args[1..]).and_then(upstream_cmd),
        Some("run") => flags(&args[1..]).and_then(run_cmd),
        Some("cas") => flags(&args[1..]).and_then(cas_cmd),
        Some("admit") => flags(&args[1..]).and_then(admit_cmd),
        Some("rss") => flags(&args[1..]).and_then(rss_cmd),
        Some("free-port") => free_port(),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("patchbridge-relay-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--name value` pairs.
fn flags(args: &[String]) -> Result<HashMap<String, String>, String> {
    let mut map = HashMap::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let name = flag
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument `{flag}`\n{USAGE}"))?;
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        map.insert(name.to_string(), value.clone());
    }
    Ok(map)
}

fn take<T: std::str::FromStr>(
    map: &HashMap<String, String>,
    name: &str,
    default: Option<T>,
) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    match map.get(name) {
        Some(v) => v.parse().map_err(|e| format!("--{name} {v}: {e}")),
        None => default.ok_or_else(|| format!("--{name} is required\n{USAGE}")),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

fn upstream_cmd(f: HashMap<String, String>) -> Result<(), String> {
    let bind: std::net::SocketAddr =
        take(&f, "bind", Some("127.0.0.1:0".parse().expect("literal")))?;
    let chunks: usize = take(&f, "chunks", Some(100))?;
    let interval: u64 = take(&f, "interval-us", Some(1000))?;
    runtime()?.block_on(upstream::serve(
        bind,
        chunks,
        std::time::Duration::from_micros(interval),
    ))
}

fn levels(text: &str) -> Result<Vec<usize>, String> {
    text.split(',')
        .map(|l| {
            l.trim()
                .parse::<usize>()
                .map_err(|e| format!("--levels {l}: {e}"))
        })
        .collect()
}

/// `label=URL[,label=URL]`.
fn relay_list(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .map(|r| {
            r.split_once('=')
                .map(|(l, u)| (l.to_string(), u.to_string()))
                .ok_or_else(|| format!("--relays {r}: expected label=URL"))
        })
        .collect()
}

fn admit_cmd(f: HashMap<String, String>) -> Result<(), String> {
    let options = admit::Options {
        relays: relay_list(&take::<String>(&f, "relays", None)?)?,
        levels: levels(&take::<String>(&f, "levels", Some("1,16".to_string()))?)?,
        users: take::<String>(&f, "users", Some("one,each".to_string()))?
            .split(',')
            .map(admit::Users::parse)
            .collect::<Result<_, _>>()?,
        seconds: take(&f, "seconds", Some(2.0))?,
        repeats: take(&f, "repeats", Some(3))?,
    };
    if options.repeats == 0 || options.levels.contains(&0) {
        return Err("--repeats and every level must be at least 1".into());
    }
    runtime()?.block_on(async { admit::run(&client::client(), &options).await })
}

fn cas_cmd(f: HashMap<String, String>) -> Result<(), String> {
    let relays: String = take(&f, "relays", None)?;
    let relays = relays
        .split(',')
        .map(|r| {
            r.split_once('=')
                .map(|(l, u)| (l.to_string(), u.to_string()))
                .ok_or_else(|| format!("--relays {r}: expected label=URL"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let options = cas::Options {
        relays,
        engine: take(&f, "engine", None)?,
        levels: levels(&take::<String>(&f, "levels", Some("1,16".to_string()))?)?,
        seconds: take(&f, "seconds", Some(2.0))?,
        repeats: take(&f, "repeats", Some(3))?,
        context_bytes: take(&f, "context-bytes", Some(1024))?,
    };
    if options.repeats == 0 || options.levels.contains(&0) {
        return Err("--repeats and every level must be at least 1".into());
    }
    runtime()?.block_on(async { cas::run(&client::client(), &options).await })
}

fn run_cmd(f: HashMap<String, String>) -> Result<(), String> {
    let levels = levels(&take::<String>(
        &f,
        "levels",
        Some("1,64,1024".to_string()),
    )?)?;
    let options = run::Options {
        upstream: take(&f, "upstream", None)?,
        nginx: take(&f, "nginx", None)?,
        relay: take(&f, "relay", None)?,
        relay_pid: take(&f, "relay-pid", None)?,
        nginx_pid: take(&f, "nginx-pid", None)?,
        chunks: take(&f, "chunks", Some(100))?,
        levels,
        hold: take(&f, "hold", Some(1024))?,
        paced: take(&f, "paced", Some(64))?,
    };
    runtime()?.block_on(run::run(options))
}

fn rss_cmd(f: HashMap<String, String>) -> Result<(), String> {
    let options = rss::Options {
        relay: take(&f, "relay", None)?,
        relay_pid: take(&f, "relay-pid", None)?,
        rounds: take(&f, "rounds", Some(20))?,
        streams: take(&f, "streams", Some(500))?,
        users: take(&f, "users", Some(50))?,
        chunks: take(&f, "chunks", Some(20))?,
        settle: std::time::Duration::from_millis(take(&f, "settle-ms", Some(500))?),
    };
    if options.streams == 0 || options.users == 0 {
        return Err("--streams and --users must be at least 1".into());
    }
    runtime()?.block_on(rss::run(options))
}

fn free_port() -> Result<(), String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    println!(
        "{}",
        listener.local_addr().map_err(|e| e.to_string())?.port()
    );
    Ok(())
}
