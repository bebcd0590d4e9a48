//! `patchbridge-relay [--config FILE] [--demo]`: loads and validates the configuration (file, then
//! `PATCHBRIDGE_*` overrides), opens the database, and serves [`patchbridge_relay::router`] until SIGTERM or
//! Ctrl-C. Any configuration problem stops it before the port opens (exit code 2).

use axum::serve::ListenerExt;
use std::path::PathBuf;
use std::process::ExitCode;

use patchbridge_relay::config::RelayConfig;
use patchbridge_relay::store::Store;
use patchbridge_relay::{router, AppState};

const USAGE: &str = "usage: patchbridge-relay [--config FILE] [--demo]\n\
  --config FILE   strict JSON configuration (default: $PATCHBRIDGE_CONFIG, else built-in defaults)\n\
  --demo          serve the scripted demo model when no model is configured";

fn main() -> ExitCode {
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
            Err(e) => return config_error(&e),
        };
        let bind = validated.bind;
        let demo = validated.demo_active;
        let state = match AppState::new(validated, store.clone()) {
            Ok(s) => s,
            Err(e) => return config_error(&e),
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
        // SSE writes are small and latency-bound: without TCP_NODELAY each event waits for the browser's
        // delayed ACK (Nagle), which the benchmark measured as ~0.3 ms added per chunk.
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY on an accepted socket");
            }
        });
        let served = axum::serve(listener, router(state))
            .with_graceful_shutdown(shutdown_signal(term))
            .await;
        store.close().await;
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                tracing::error!(error = %e, "server failed");
                ExitCode::FAILURE
            }
        }
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
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if std::env::var("PATCHBRIDGE_LOG_FORMAT").as_deref() == Ok("json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

async fn shutdown_signal(mut term: tokio::signal::unix::Signal) {
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
    tracing::info!("shutting down");
}
