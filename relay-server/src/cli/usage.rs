//! `patchbridge-relay usage --user ID [--config FILE]`: prints one user's usage of every spending limit, read
//! from the database the relay counts in. It reads the relay's own configuration (so the same windows and the
//! same tables) but checks only what it uses, the `database`, `spending` and `limits` sections and the model
//! ids ([`RelayConfig::validate_for_usage`]): an operator's shell needs no model API keys, identity keys or
//! served directories to run it.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::RelayConfig;
use crate::spending::report::render;
use crate::spending::{now_seconds, usage_report};
use crate::store::Store;

pub const USAGE: &str = "usage: patchbridge-relay usage --user ID [--config FILE]\n\
  --user ID       the user id as the relay's identity resolves it (the JWT's `sub`, the proxy's header)\n\
  --config FILE   the relay's configuration (default: $PATCHBRIDGE_CONFIG, else built-in defaults);\n\
                  only its database, spending and limits sections and model ids are read";

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
    let (database, spending) = match config.validate_for_usage() {
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
        let store = match Store::connect(&database).await {
            Ok(s) => s,
            Err(e) => return fail(&e.to_string()),
        };
        let lines = usage_report(&store, &spending, &user, now_seconds()).await;
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
