//! The `sandbox` section of the configuration file: where the MCP Apps sandbox listener binds, the origin pages
//! reach it at, and the page origins allowed to frame it. Absent: no sandbox listener (and no MCP App can render,
//! since the element never uses the page's own origin for one).
//!
//! Checks: `bind` is a socket address other than `server.bind` (both port 0 is fine); `publicOrigin` and every `pageOrigins` entry is
//! an http(s) origin with no path; at least one page origin; the public origin is none of the page origins (the
//! whole point: an app never runs on a page's origin) and none of `server.allowedOrigins`.

use std::net::SocketAddr;

use serde::Deserialize;

use crate::config::error::{err, ConfigError};
use crate::config::origin::origin;

/// The section as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxConfig {
    /// The listener's address, e.g. `127.0.0.1:8788`.
    pub bind: String,
    /// The origin pages load the proxy from (`https://sandbox.example.com`), as the element's `app-sandbox`
    /// attribute names it; behind a reverse proxy it differs from `bind`.
    pub public_origin: String,
    /// The origins of the pages that show the element: the only ones allowed to frame the proxy.
    pub page_origins: Vec<String>,
}

/// The section, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatedSandbox {
    pub bind: SocketAddr,
    pub public_origin: String,
    pub page_origins: Vec<String>,
}

impl SandboxConfig {
    /// Checks the section against the main listener's address and `server.allowedOrigins` (serialized origins).
    pub fn validate(
        &self,
        server_bind: SocketAddr,
        allowed_origins: &[String],
    ) -> Result<ValidatedSandbox, ConfigError> {
        let bind: SocketAddr = self
            .bind
            .parse()
            .map_err(|e| err("sandbox.bind", format!("not a socket address: {e}")))?;
        // Port 0 on both picks two free ports: they cannot collide.
        if bind == server_bind && bind.port() != 0 {
            return Err(err(
                "sandbox.bind",
                "must differ from server.bind (the sandbox is a listener of its own)",
            ));
        }
        let public_origin =
            origin(&self.public_origin).map_err(|e| err("sandbox.publicOrigin", e))?;
        if self.page_origins.is_empty() {
            return Err(err(
                "sandbox.pageOrigins",
                "must name at least one page origin (the pages allowed to frame the sandbox)",
            ));
        }
        let mut page_origins = Vec::new();
        for (i, text) in self.page_origins.iter().enumerate() {
            let path = format!("sandbox.pageOrigins[{i}]");
            let o = origin(text).map_err(|e| err(path.clone(), e))?;
            if o == public_origin {
                return Err(err(
                    path,
                    "is the sandbox's own origin: an MCP App must never run on a page's origin",
                ));
            }
            if !page_origins.contains(&o) {
                page_origins.push(o);
            }
        }
        if allowed_origins.contains(&public_origin) {
            return Err(err(
                "sandbox.publicOrigin",
                "is one of server.allowedOrigins: the sandbox origin must not be trusted by the API",
            ));
        }
        Ok(ValidatedSandbox {
            bind,
            public_origin,
            page_origins,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(public: &str, pages: &[&str]) -> SandboxConfig {
        SandboxConfig {
            bind: "127.0.0.1:8788".into(),
            public_origin: public.into(),
            page_origins: pages.iter().map(|s| s.to_string()).collect(),
        }
    }

    const MAIN: &str = "127.0.0.1:8787";

    #[test]
    fn a_page_origin_equal_to_the_sandbox_origin_is_refused() {
        let e = section("http://localhost:8788", &["http://localhost:8788/"])
            .validate(MAIN.parse().unwrap(), &[])
            .unwrap_err();
        assert_eq!(e.path, "sandbox.pageOrigins[0]");
    }

    #[test]
    fn the_sandbox_shares_no_socket_with_the_api() {
        let mut s = section("http://localhost:8788", &["http://127.0.0.1:8787"]);
        s.bind = MAIN.into();
        assert_eq!(
            s.validate(MAIN.parse().unwrap(), &[]).unwrap_err().path,
            "sandbox.bind"
        );
    }

    #[test]
    fn origins_are_normalized_and_paths_refused() {
        let v = section(
            "HTTPS://Sandbox.Example.com:443",
            &["https://app.example.com", "https://app.example.com/"],
        )
        .validate(MAIN.parse().unwrap(), &[])
        .unwrap();
        assert_eq!(v.public_origin, "https://sandbox.example.com");
        assert_eq!(v.page_origins, vec!["https://app.example.com"]);
        for bad in ["https://a.example/x", "file:///x", "not a url"] {
            assert!(section("https://s.example", &[bad])
                .validate(MAIN.parse().unwrap(), &[])
                .is_err());
        }
        assert_eq!(
            section("https://s.example", &[])
                .validate(MAIN.parse().unwrap(), &[])
                .unwrap_err()
                .path,
            "sandbox.pageOrigins"
        );
    }

    #[test]
    fn a_sandbox_origin_the_api_trusts_is_refused() {
        let e = section("https://s.example", &["https://app.example"])
            .validate(MAIN.parse().unwrap(), &["https://s.example".into()])
            .unwrap_err();
        assert_eq!(e.path, "sandbox.publicOrigin");
    }
}
