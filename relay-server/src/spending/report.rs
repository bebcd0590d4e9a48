//! The text of `patchbridge-relay usage` ([`crate::cli::usage`]): one user's usage of every spending limit.

use super::UsageLine;

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
