//! `patchbridge-relay usage --user ID [--config FILE]`: prints one user's usage of every spending limit, read
//! from the database the relay counts in (the same configuration, so the same windows and the same tables).

use std::path::PathBuf;
use std::process::ExitCode;

use super::{now_seconds, Spending, UsageLine};
use crate::config::RelayConfig;
use crate::store::Store;

pub const USAGE: &str = "usage: patchbridge-relay usage --user ID [--config FILE]\n\
  --user ID       the user id as the relay's identity resolves it (the JWT's `sub`, the proxy's header)\n\
  --config FILE   the relay's configuration (default: $PATCHBRIDGE_CONFIG, else built-in defaults)";

/// Runs the subcommand with the arguments after `usage`; exit code 2 for a usage or configuration error.
pub fn main(args: impl Iterator<Item = String>) -> ExitCode {
    let mut config_path: Option<PathBuf> =
        std::env::var_os("PATCHBRIDGE_CONFIG").map(PathBuf::from);
    let mut user = None;
    let mut args = args;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--config", Some(path)) => config_path = Some(PathBuf::from(path)),
            ("--user", Some(id)) => user = Some(id),
            ("-h" | "--help", _) => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            (other, _) => return fail(&format!("unexpected argument `{other}`\n{USAGE}")),
        }
    }
    let Some(user) = user else {
        return fail(&format!("--user is required\n{USAGE}"));
    };
    let mut config = match &config_path {
        Some(path) => match RelayConfig::from_file(path) {
            Ok(c) => c,
            Err(e) => return fail(&e.to_string()),
        },
        None => RelayConfig::default(),
    };
    if let Err(e) = config.apply_env(|name| std::env::var(name).ok()) {
        return fail(&e.to_string());
    }
    let validated = match config.validate() {
        Ok(v) => v,
        Err(e) => return fail(&e.to_string()),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("tokio runtime: {e}")),
    };
    runtime.block_on(async move {
        let store = match Store::connect(&validated.database).await {
            Ok(s) => s,
            Err(e) => return fail(&e.to_string()),
        };
        let now = now_seconds();
        let spending = Spending::new(
            validated.spending,
            std::sync::Arc::new(store.clone()),
            super::metrics::SpendingMetrics::register(&mut Default::default()),
        );
        let lines = spending.usage_report(&user, now).await;
        store.close().await;
        match lines {
            Ok(lines) => {
                print!("{}", render(&user, &lines));
                ExitCode::SUCCESS
            }
            Err(e) => fail(&format!("database: {e}")),
        }
    })
}

fn fail(message: &str) -> ExitCode {
    eprintln!("patchbridge-relay usage: {message}");
    ExitCode::from(2)
}

/// The report as text: a header, then one line per limit (`scope`, `limit`, `window`, `used`, `max`).
pub fn render(user: &str, lines: &[UsageLine]) -> String {
    let mut out = format!(
        "spending of user {}\n{:<24} {:<16} {:<16} {:>14} {:>14}\n",
        crate::logging::escape(user),
        "scope",
        "limit",
        "window",
        "used",
        "max"
    );
    for line in lines {
        let scope = match &line.model {
            None => "all models".to_owned(),
            Some(m) => format!("model {}", crate::logging::escape(m)),
        };
        let window = match line.window_seconds {
            None => "running now".to_owned(),
            Some(s) if line.sliding => format!("{s} s sliding"),
            Some(s) => format!("{s} s fixed"),
        };
        out.push_str(&format!(
            "{scope:<24} {:<16} {window:<16} {:>14} {:>14}\n",
            line.kind.as_str(),
            line.used,
            line.max
        ));
    }
    out
}
