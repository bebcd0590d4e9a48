//! `patchbridge-relay [--config FILE] [--demo]`: loads and validates the configuration (file, then
//! `PATCHBRIDGE_*` overrides), opens the database, and serves [`patchbridge_relay::router`] until SIGTERM or
//! Ctrl-C. Any configuration problem stops it before the port opens (exit code 2).

use std::path::PathBuf;
use std::process::ExitCode;

use patchbridge_relay::config::RelayConfig;
use patchbridge_relay::serve::{serve, Ended, ServeOptions};
use patchbridge_relay::store::Store;
use patchbridge_relay::{fdlimit, router, AppState};

const USAGE: &str = "usage: patchbridge-relay [--config FILE] [--demo]\n\
  --config FILE   strict JSON configuration (default: $PATCHBRIDGE_CONFIG, else built-in defaults)\n\
  --demo          serve the scripted demo model when no model is configured";

fn main() -> ExitCode {
    // `usage --user ID`: an operator reads a user's spending (`patchbridge_relay::spending::report`).
    if std::env::args().nth(1).as_deref() == Some("usage") {
        return patchbridge_relay::spending::report::main(std::env::args().skip(2));
    }
    let mut config_path: Option<PathBuf> =
        std::env::var_os("PATCHBRIDGE_CONFIG").map(PathBuf::from);
    let mut demo_flag = false;
    let mut args = std::env::args().skip(1);
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
    let validated = match config.validate() {
        Ok(v) => v,
        Err(e) => return config_error(&e.to_string()),
    };

    check_descriptors(&validated);

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return config_error(&format!("tokio runtime: {e}")),
    };
    runtime.block_on(async move {
        let store = match Store::connect(&validated.database).await {
            Ok(s) => s,
            Err(e) => return config_error(&e.to_string()),
        };
        let bind = validated.bind;
        let demo = validated.demo_active;
        let options = ServeOptions::from_limits(&validated.limits);
        let state = match AppState::new(validated, store.clone()) {
            Ok(s) => s,
            Err(e) => return config_error(&e.to_string()),
        };
        let listener = match tokio::net::TcpListener::bind(bind).await {
            Ok(l) => l,
            Err(e) => return config_error(&format!("server.bind: cannot listen on {bind}: {e}")),
        };
        let addr = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| bind.to_string());
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
        tracing::info!(%addr, "listening");
        // A machine-readable line for scripts and tests that bind port 0.
        println!("patchbridge-relay listening on http://{addr}");
        let ended = serve(listener, router(state), options, shutdown_signal(term)).await;
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
fn check_descriptors(validated: &patchbridge_relay::config::Validated) {
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
