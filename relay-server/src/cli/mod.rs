//! The binary's subcommands besides serving a configuration file (`src/main.rs` dispatches):
//! - [`demo`]: `patchbridge-relay demo`, the one-command local try-out (demo page built in, SQLite in a data
//!   folder, development identity on loopback, the scripted model or a real provider from flags).
//! - [`healthcheck`]: `patchbridge-relay healthcheck`, a container health check that asks `/readyz` (a `FROM
//!   scratch` image has no curl).
//! - [`usage`]: `patchbridge-relay usage`, one user's spending, with only the database settings needed.

pub mod demo;
pub mod healthcheck;
pub mod usage;
