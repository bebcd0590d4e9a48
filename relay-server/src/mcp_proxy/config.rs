//! The `mcp` section of the relay's configuration: the MCP servers the relay forwards to
//! (`{basePath}/mcp/{name}`), each with its URL, the operator's secret headers and the users allowed, and the
//! bounds of the passthrough. Validated before the port opens; an error names the entry.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use axum::http::{HeaderName, HeaderValue, Uri};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use crate::config::{ConfigError, SecretRef};

/// `mcp`: off (no servers) by default.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct McpConfig {
    pub servers: Vec<McpServerConfig>,
    /// Largest request body forwarded (a JSON-RPC message or batch), in bytes.
    pub max_request_bytes: u64,
    /// The upstream server must answer with its response head within this time.
    pub first_byte_timeout_ms: u64,
    /// An answer (a JSON body, or an SSE stream) whose upstream sends nothing for this long is cut.
    pub idle_timeout_ms: u64,
    /// Longest an exchange stays open, however busy: an SSE stream is then ended (the client reconnects with
    /// `Last-Event-ID`), so a page cannot hold an upstream connection and its permit for ever.
    pub max_exchange_ms: u64,
    /// Largest answer forwarded, in bytes: a larger declared `content-length` is refused before any byte, a
    /// stream is cut when it passes the bound.
    pub max_response_bytes: u64,
    /// Exchanges (POSTs, open GET streams, DELETEs) one user may have open at once, over all servers.
    pub max_concurrent_per_user: u64,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            servers: Vec::new(),
            max_request_bytes: 1024 * 1024,
            first_byte_timeout_ms: 30_000,
            idle_timeout_ms: 300_000,
            max_exchange_ms: 30 * 60_000,
            max_response_bytes: 16 * 1024 * 1024,
            max_concurrent_per_user: 8,
        }
    }
}

/// `mcp.servers[]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerConfig {
    /// The path segment of `{basePath}/mcp/{name}`: 1..64 of `A-Z a-z 0-9 _ -`.
    pub name: String,
    /// The server's Streamable HTTP endpoint (https; http only for loopback hosts or with `allowInsecureHttp`).
    pub url: String,
    /// Headers the relay adds to every forwarded request (an API key), secrets by env-var name or file.
    #[serde(default)]
    pub headers: BTreeMap<String, SecretRef>,
    /// The user ids allowed, or `"all"` (every identified user).
    pub users: McpUsers,
    #[serde(default)]
    pub allow_insecure_http: bool,
}

/// Who may use a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpUsers {
    /// Every user the identity mode resolves.
    All,
    /// These user ids only.
    Only(HashSet<String>),
}

impl McpUsers {
    pub fn allows(&self, user: &str) -> bool {
        match self {
            McpUsers::All => true,
            McpUsers::Only(ids) => ids.contains(user),
        }
    }
}

impl<'de> Deserialize<'de> for McpUsers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct UsersVisitor;
        impl<'de> Visitor<'de> for UsersVisitor {
            type Value = McpUsers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"all\" or a list of user ids")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<McpUsers, E> {
                if v == "all" {
                    Ok(McpUsers::All)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<McpUsers, A::Error> {
                let mut ids = HashSet::new();
                while let Some(id) = seq.next_element::<String>()? {
                    if id.is_empty() {
                        return Err(de::Error::custom("a user id must not be empty"));
                    }
                    if !ids.insert(id.clone()) {
                        return Err(de::Error::custom(format!("user id `{id}` is listed twice")));
                    }
                }
                if ids.is_empty() {
                    return Err(de::Error::custom(
                        "must list at least one user id (or be \"all\")",
                    ));
                }
                Ok(McpUsers::Only(ids))
            }
        }
        deserializer.deserialize_any(UsersVisitor)
    }
}

/// One server after validation: its endpoint parsed, its headers resolved.
#[derive(Debug, Clone)]
pub struct ValidatedMcpServer {
    pub name: String,
    pub endpoint: Uri,
    /// Sensitive values (kept out of debug output).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub users: McpUsers,
}

/// The section after validation.
#[derive(Debug, Clone)]
pub struct ValidatedMcp {
    pub servers: Vec<ValidatedMcpServer>,
    pub max_request_bytes: usize,
    pub first_byte_timeout: std::time::Duration,
    pub idle_timeout: std::time::Duration,
    pub max_exchange: std::time::Duration,
    pub max_response_bytes: u64,
    pub max_concurrent_per_user: usize,
}

/// Headers the relay sets or forwards itself, which an operator's header must not replace.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-authorization",
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

fn err(path: String, message: impl Into<String>) -> ConfigError {
    ConfigError {
        path,
        message: message.into(),
    }
}

/// Checks the section and resolves its secrets.
pub fn validate(config: &McpConfig) -> Result<ValidatedMcp, ConfigError> {
    for (field, value) in [
        ("maxRequestBytes", config.max_request_bytes),
        ("firstByteTimeoutMs", config.first_byte_timeout_ms),
        ("idleTimeoutMs", config.idle_timeout_ms),
        ("maxExchangeMs", config.max_exchange_ms),
        ("maxResponseBytes", config.max_response_bytes),
        ("maxConcurrentPerUser", config.max_concurrent_per_user),
    ] {
        if value == 0 {
            return Err(err(format!("mcp.{field}"), "must be positive"));
        }
    }
    let mut names = HashSet::new();
    let mut servers = Vec::new();
    for (i, s) in config.servers.iter().enumerate() {
        let at = |f: &str| format!("mcp.servers[{i}].{f}");
        let name_ok = !s.name.is_empty()
            && s.name.len() <= 64
            && s.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(err(
                at("name"),
                "must be 1..64 characters of A-Z, a-z, 0-9, `_` and `-`",
            ));
        }
        if !names.insert(s.name.as_str()) {
            return Err(err(
                at("name"),
                format!("duplicate server name `{}`", s.name),
            ));
        }
        let url = url::Url::parse(&s.url).map_err(|e| err(at("url"), format!("not a URL: {e}")))?;
        match url.scheme() {
            "https" => {}
            "http" => {
                let loopback = match url.host() {
                    Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                    Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                    Some(url::Host::Domain(d)) => d == "localhost",
                    None => false,
                };
                if !loopback && !s.allow_insecure_http {
                    return Err(err(
                        at("url"),
                        "http:// is allowed only for loopback hosts (or set allowInsecureHttp)",
                    ));
                }
            }
            other => return Err(err(at("url"), format!("scheme `{other}` is not http(s)"))),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(err(at("url"), "must not contain credentials; use headers"));
        }
        if url.fragment().is_some() {
            return Err(err(at("url"), "must not have a fragment"));
        }
        let endpoint =
            Uri::try_from(url.as_str()).map_err(|e| err(at("url"), format!("not a URL: {e}")))?;
        let mut headers = Vec::new();
        for (key, secret) in &s.headers {
            let path = at(&format!("headers.{key}"));
            let name = HeaderName::try_from(key.as_str())
                .map_err(|_| err(path.clone(), "not a valid header name"))?;
            if RESERVED_HEADERS.contains(&name.as_str()) {
                return Err(err(path, "is set by the relay itself"));
            }
            let value = secret.resolve().map_err(|m| err(path.clone(), m))?;
            let mut value = HeaderValue::try_from(value.expose())
                .map_err(|_| err(path, "the secret is not a valid header value"))?;
            value.set_sensitive(true);
            headers.push((name, value));
        }
        servers.push(ValidatedMcpServer {
            name: s.name.clone(),
            endpoint,
            headers,
            users: s.users.clone(),
        });
    }
    Ok(ValidatedMcp {
        servers,
        max_request_bytes: usize::try_from(config.max_request_bytes).unwrap_or(usize::MAX),
        first_byte_timeout: std::time::Duration::from_millis(config.first_byte_timeout_ms),
        idle_timeout: std::time::Duration::from_millis(config.idle_timeout_ms),
        max_exchange: std::time::Duration::from_millis(config.max_exchange_ms),
        max_response_bytes: config.max_response_bytes,
        max_concurrent_per_user: usize::try_from(config.max_concurrent_per_user)
            .unwrap_or(usize::MAX),
    })
}
