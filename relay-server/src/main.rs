//! `patchbridge-relay [--config FILE] [--demo]`: loads and validates the configuration (file, then
//! `PATCHBRIDGE_*` overrides), opens the database, and serves [`patchbridge_relay::router`] until SIGTERM or
//! Ctrl-C. Any configuration problem stops it before the port opens (exit code 2).
//!
//! Subcommands: `patchbridge-relay demo [...]` (try it locally with the demo page built in,
//! [`patchbridge_relay::cli::demo`]) and `patchbridge-relay healthcheck` (asks `/readyz`, for containers,
//! [`patchbridge_relay::cli::healthcheck`]).

use std::path::PathBuf;
use std::process::ExitCode;

use patchbridge_relay::cli::demo::{DemoArgs, DemoCommand, DemoSetup};
use patchbridge_relay::cli::{demo, healthcheck};
use patchbridge_relay::config::{RelayConfig, Validated};
use patchbridge_relay::embedded_site::{self, EmbeddedSite};
use patchbridge_relay::serve::{serve, Ended, ServeOptions};
use patchbridge_relay::store::Store;
use patchbridge_relay::workers::Workers;
use patchbridge_relay::{fdlimit, router, AppState};

/// jemalloc, not the system allocator: glibc's malloc kept the memory of finished streams in its arenas, so the
/// relay's RSS grew round after round of concurrent streams while its live heap stayed flat (measured with
/// `scripts/bench-relay.sh`'s memory run, `relay-server/bench/README.md`). The binary only: the library leaves
/// the allocator to its host. glibc targets only: the static musl build keeps musl's allocator.
#[cfg(target_env = "gnu")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const USAGE: &str = "usage: patchbridge-relay [--config FILE] [--demo]\n\
  --config FILE   strict JSON configuration (default: $PATCHBRIDGE_CONFIG, else built-in defaults)\n\
  --demo          serve the scripted demo model when no model is configured\n\
  --version       print the version\n\
       patchbridge-relay demo [--port N] [--data-dir DIR] [--provider P ...]   (try it locally; demo --help)\n\
       patchbridge-relay healthcheck [--url URL]   (exit 0 when /readyz answers 200)\n\
       patchbridge-relay usage --user ID [--config FILE]   (a user's spending in each window)";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("demo") => return demo_main(args.split_off(1)),
        Some("healthcheck") => return healthcheck_main(args.split_off(1)),
        // `usage --user ID`: an operator reads a user's spending (`patchbridge_relay::cli::usage`).
        Some("usage") => return patchbridge_relay::cli::usage::main(args.split_off(1).into_iter()),
        _ => {}
    }
    let mut config_path: Option<PathBuf> =
        std::env::var_os("PATCHBRIDGE_CONFIG").map(PathBuf::from);
    let mut demo_flag = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--config" => match args.next() {
                Some(p) => config_path = Some(PathBuf::from(p)),
                None => return usage_error("--config needs a file"),
            },
            "--demo" => demo_flag = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" => {
                println!(
                    "patchbridge-relay {} (demo page built in: {})",
                    env!("CARGO_PKG_VERSION"),
                    embedded_site::DEMO_SITE_SOURCE
                );
                return ExitCode::SUCCESS;
            }
            other => return usage_error(&format!("unknown argument `{other}`")),
        }
    }
    init_tracing();

    let mut config = match &config_path {
        Some(path) => match RelayConfig::from_file(path) {
            Ok(c) => c,
            Err(e) => return config_error(&e.to_string()),
        },
        None => RelayConfig::default(),
    };
    if let Err(e) = config.apply_env(|name| std::env::var(name).ok()) {
        return config_error(&e.to_string());
    }
    if demo_flag {
        config.demo = true;
    }
    match config.validate() {
        Ok(validated) => run(validated, None),
        Err(e) => config_error(&e.to_string()),
    }
}

/// `patchbridge-relay demo ...`: the configuration comes from the flags, the page from the binary.
fn demo_main(args: Vec<String>) -> ExitCode {
    let demo_args = match DemoArgs::parse(args) {
        Ok(DemoCommand::Run(a)) => a,
        Ok(DemoCommand::Help) => {
            println!("{}", demo::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("patchbridge-relay demo: {e}\n{}", demo::USAGE);
            return ExitCode::from(2);
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return config_error(&format!("demo: the working directory: {e}")),
    };
    let setup = match demo_args.setup(|name| std::env::var(name).ok(), &cwd) {
        Ok(s) => s,
        Err(e) => return config_error(&format!("demo: {e}")),
    };
    init_tracing();
    // Validated before the data folder is made: a refused configuration leaves nothing behind.
    let validated = match setup.config.validate() {
        Ok(v) => v,
        Err(e) => return config_error(&e.to_string()),
    };
    if let Some(dir) = &setup.data_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return config_error(&format!("demo: --data-dir {}: {e}", dir.display()));
        }
    }
    run(validated, Some(setup))
}

/// `patchbridge-relay healthcheck ...`: exit 0 when `/readyz` answers 200.
fn healthcheck_main(args: Vec<String>) -> ExitCode {
    let mut url = None;
    let mut config_path: Option<PathBuf> =
        std::env::var_os("PATCHBRIDGE_CONFIG").map(PathBuf::from);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--url" => match args.next() {
                Some(u) => url = Some(u),
                None => return healthcheck_usage("--url needs a URL"),
            },
            "--config" => match args.next() {
                Some(p) => config_path = Some(PathBuf::from(p)),
                None => return healthcheck_usage("--config needs a file"),
            },
            "-h" | "--help" => {
                println!("{}", healthcheck::USAGE);
                return ExitCode::SUCCESS;
            }
            other => return healthcheck_usage(&format!("unknown argument `{other}`")),
        }
    }
    let url = match url {
        Some(u) => u,
        None => {
            let mut config = match &config_path {
                Some(path) => match RelayConfig::from_file(path) {
                    Ok(c) => c,
                    Err(e) => return unhealthy(&e.to_string()),
                },
                None => RelayConfig::default(),
            };
            if let Err(e) = config.apply_env(|name| std::env::var(name).ok()) {
                return unhealthy(&e.to_string());
            }
            match healthcheck::readyz_url(&config.server.bind) {
                Ok(u) => u,
                Err(e) => return unhealthy(&e),
            }
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return unhealthy(&format!("tokio runtime: {e}")),
    };
    match runtime.block_on(healthcheck::check(&url)) {
        Ok(()) => {
            println!("ready: {url}");
            ExitCode::SUCCESS
        }
        Err(e) => unhealthy(&e),
    }
}

fn healthcheck_usage(message: &str) -> ExitCode {
    eprintln!(
        "patchbridge-relay healthcheck: {message}\n{}",
        healthcheck::USAGE
    );
    ExitCode::from(2)
}

fn unhealthy(message: &str) -> ExitCode {
    eprintln!("patchbridge-relay healthcheck: {message}");
    ExitCode::from(1)
}

/// Opens the database and serves until a signal. `demo_setup`: started by `patchbridge-relay demo` (serves the
/// embedded site, prints where to look).
fn run(validated: Validated, demo_setup: Option<DemoSetup>) -> ExitCode {
    check_descriptors(&validated);

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return config_error(&format!("tokio runtime: {e}")),
    };
    // The threads that serve connections (`server.workers`); stopped when `run` returns, after the store has
    // closed, so tasks a call started run through the shutdown.
    let options = ServeOptions::from_limits(&validated.limits);
    let workers = match Workers::start(validated.workers, options.shutdown_grace) {
        Ok(w) => w,
        Err(e) => {
            return config_error(&format!(
                "server.workers: cannot start the worker threads: {e}"
            ))
        }
    };
    let workers = &workers;
    runtime.block_on(async move {
        let store = match Store::connect(&validated.database).await {
            Ok(s) => s,
            Err(e) => return config_error(&e.to_string()),
        };
        let bind = validated.bind;
        let sandbox = validated.sandbox.clone();
        let demo = validated.demo_active;
        let state = match AppState::new(validated, store.clone()) {
            Ok(s) => s,
            Err(e) => return config_error(&e.to_string()),
        };
        if let Err(e) = state.identity_ready().await {
            return config_error(&e);
        }
        let site = EmbeddedSite::demo();
        let state = if demo_setup.is_some() {
            state.with_site(site)
        } else {
            state
        };
        let listener = match tokio::net::TcpListener::bind(bind).await {
            Ok(l) => l,
            Err(e) => return config_error(&format!("server.bind: cannot listen on {bind}: {e}")),
        };
        let addr = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| bind.to_string());
        // The MCP Apps sandbox origin (`patchbridge_relay::sandbox`), a listener of its own, bound before the
        // "listening" lines so a refused address stops the start like `server.bind` does.
        let sandbox = match &sandbox {
            Some(config) => match tokio::net::TcpListener::bind(config.bind).await {
                Ok(l) => Some((l, patchbridge_relay::sandbox::router(config))),
                // The demo's sandbox is its own choice (port + 1): a busy port costs only the MCP Apps.
                Err(e) if demo_setup.is_some() => {
                    tracing::warn!(addr = %config.bind, error = %e, "demo: no MCP Apps sandbox (its port is taken)");
                    None
                }
                Err(e) => {
                    return config_error(&format!(
                        "sandbox.bind: cannot listen on {}: {e}",
                        config.bind
                    ))
                }
            },
            None => None,
        };
        // Registered before the "listening" line: a SIGTERM sent as soon as a script sees it must shut down
        // gracefully, not hit the default action (termination) before the handler exists.
        let term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(e) => return config_error(&format!("cannot handle SIGTERM: {e}")),
        };
        if demo {
            tracing::warn!(
                "demo mode: the scripted model is active (deterministic scripts, not AI)"
            );
        }
        if cfg!(feature = "bench-spending-off") {
            tracing::warn!("bench-only build (bench-spending-off): spending limits count nothing and refuse nothing");
            println!("patchbridge-relay: bench-only build, spending limits are OFF");
        }
        tracing::info!(%addr, workers = workers.len(), "listening");
        // A machine-readable line for scripts and tests that bind port 0.
        println!("patchbridge-relay listening on http://{addr}");
        // Stops the sandbox listener when the API's shutdown starts (the sender is dropped then).
        let (stop_sandbox, sandbox_stopped) = tokio::sync::watch::channel(());
        let sandbox_task = sandbox.map(|(listener, app)| {
            let sandbox_addr = listener
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default();
            tracing::info!(addr = %sandbox_addr, "MCP Apps sandbox listening");
            println!("patchbridge-relay sandbox listening on http://{sandbox_addr}");
            let mut stopped = sandbox_stopped;
            // The sandbox serves one small page per app: it stays on this runtime.
            tokio::spawn(serve(listener, app, options, None, async move {
                let _ = stopped.changed().await;
            }))
        });
        if let Some(setup) = &demo_setup {
            announce_demo(&addr, setup, site);
        }
        let telemetry = state.telemetry().clone();
        let spending = state.spending().clone();
        let ended = serve(listener, router(state), options, Some(workers), async move {
            shutdown_signal(term).await;
            drop(stop_sandbox);
        })
        .await;
        if let Some(task) = sandbox_task {
            let _ = tokio::time::timeout(options.shutdown_grace, task).await;
        }
        // Every call settles into the counters and the last counts are written before the store closes.
        let unsettled = spending.close(options.shutdown_grace).await;
        if unsettled > 0 {
            tracing::warn!(
                calls = unsettled,
                "spending: calls still open at shutdown were not counted"
            );
        }
        // The spans still queued are exported before the process ends (bounded like the store's close).
        let flush = tokio::task::spawn_blocking(move || telemetry.shutdown());
        if tokio::time::timeout(options.shutdown_grace, flush)
            .await
            .is_err()
        {
            tracing::warn!(
                "OpenTelemetry spans were not exported within the shutdown grace period"
            );
        }
        // Bounded too: a database that does not answer must not keep the process alive after the grace.
        if tokio::time::timeout(options.shutdown_grace, store.close())
            .await
            .is_err()
        {
            tracing::warn!("database pool did not close within the shutdown grace period");
        }
        match ended {
            Ended::Drained => tracing::info!("stopped"),
            Ended::GraceElapsed(n) => tracing::warn!(
                connections = n,
                "stopped after closing unfinished connections"
            ),
        }
        ExitCode::SUCCESS
    })
}

/// What a person who typed `patchbridge-relay demo` needs to know, on stdout after the listening line.
fn announce_demo(addr: &str, setup: &DemoSetup, site: EmbeddedSite) {
    println!("model: {}", setup.model);
    if let Some(dir) = &setup.data_dir {
        println!("data: {}", dir.display());
    }
    let served_from_disk = setup.config.server.examples_dir.is_some();
    if served_from_disk || site.has_demo_page() {
        println!("open http://{addr}/ (Ctrl-C stops)");
    } else {
        eprintln!("patchbridge-relay demo: {}", embedded_site::MISSING_SITE);
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("patchbridge-relay: {message}\n{USAGE}");
    ExitCode::from(2)
}

fn config_error(message: &str) -> ExitCode {
    eprintln!("patchbridge-relay: {message}");
    ExitCode::from(2)
}

/// `PATCHBRIDGE_LOG` is a tracing filter (default `info`); `PATCHBRIDGE_LOG_FORMAT=json` for JSON lines.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PATCHBRIDGE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let json = std::env::var("PATCHBRIDGE_LOG_FORMAT").as_deref() == Ok("json");
    patchbridge_relay::logging::init(filter, json);
}

/// Raises the descriptor soft limit to the hard limit and says whether it covers the connection limit.
fn check_descriptors(validated: &Validated) {
    let needed = fdlimit::needed_descriptors(
        validated.limits.max_connections,
        validated.database.max_connections,
    );
    match fdlimit::raise_to_hard_limit() {
        Ok(raised) => {
            tracing::info!(
                before = raised.before,
                soft = raised.after,
                hard = raised.hard,
                needed,
                "file descriptor limit (RLIMIT_NOFILE)"
            );
            if raised.after < needed {
                tracing::warn!(
                    soft = raised.after,
                    needed,
                    max_connections = validated.limits.max_connections,
                    "the file descriptor limit is below what limits.maxConnections needs (2 per connection plus reserve): \
                     accepts will fail with EMFILE under load; raise the hard limit (LimitNOFILE=, ulimit -Hn) or lower limits.maxConnections"
                );
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot raise the file descriptor limit"),
    }
}

async fn shutdown_signal(mut term: tokio::signal::unix::Signal) {
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
    tracing::info!("shutting down");
}
