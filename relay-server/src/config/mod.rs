//! Relay configuration: one strict JSON file (unknown and duplicate keys rejected), a documented set of
//! environment overrides, secrets only by env-var name or owner-only file, and validation of everything before
//! the port opens. Errors name the path of the bad field.
//!
//! - [`strict_json`]: duplicate-key-rejecting parser with field paths.
//! - [`secret`]: `{"env": ..}` / `{"file": ..}` secret references.
//! - this file: the typed schema ([`RelayConfig`]), defaults, env overrides and validation into [`Validated`].

pub mod secret;
pub mod strict_json;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use patchbridge_providers::{
    ModelOptions, ProviderKind, ReasoningEffort, ReasoningOptions, ReasoningSummary,
};
use serde::Deserialize;

pub use secret::{Secret, SecretRef};

/// The largest config file accepted.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The whole file. Every section is optional; defaults are documented in `relay-server/README.md`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct RelayConfig {
    pub server: ServerConfig,
    pub identity: Option<IdentityConfig>,
    pub database: DatabaseConfig,
    pub limits: LimitsConfig,
    pub models: Vec<ModelConfig>,
    pub default_model: Option<String>,
    /// Start the scripted demo model when no model is configured.
    pub demo: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ServerConfig {
    pub bind: String,
    /// Where the API is mounted (`{base}` in docs/protocol.md); must start with `/`, no trailing slash.
    pub base_path: String,
    /// Origins allowed for non-GET requests besides same-origin, and the only origins CORS answers.
    pub allowed_origins: Vec<String>,
    /// Serve the built npm package at `/npm/` (off when absent).
    pub npm_dir: Option<PathBuf>,
    /// Serve the example pages at `/examples/` (off when absent).
    pub examples_dir: Option<PathBuf>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: "127.0.0.1:8787".into(),
            base_path: "/api".into(),
            allowed_origins: Vec::new(),
            npm_dir: None,
            examples_dir: None,
        }
    }
}

/// How a request's user is established. Absent means every API answers 401.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case", deny_unknown_fields)]
pub enum IdentityConfig {
    /// Trusts a client-supplied user id (header, or query parameter). Loopback binds only.
    #[serde(rename_all = "camelCase")]
    Development {
        #[serde(default = "default_dev_header")]
        header: String,
        #[serde(default = "default_dev_query")]
        query_param: String,
    },
    /// `Authorization: Bearer <jwt>`; `sub` is the user. Exactly one key source.
    #[serde(rename_all = "camelCase")]
    Jwt {
        #[serde(default)]
        hs256_secret: Option<SecretRef>,
        #[serde(default)]
        rs256_public_key_file: Option<PathBuf>,
        #[serde(default)]
        jwks_file: Option<PathBuf>,
        #[serde(default)]
        issuer: Option<String>,
        #[serde(default)]
        audience: Option<String>,
        #[serde(default = "default_leeway")]
        leeway_seconds: u64,
    },
    /// A reverse proxy that authenticates users sets this header (and strips it from client requests).
    #[serde(rename_all = "camelCase")]
    TrustedProxy { header: String },
}

fn default_dev_header() -> String {
    "x-patchbridge-user".into()
}
fn default_dev_query() -> String {
    "user".into()
}
fn default_leeway() -> u64 {
    30
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// `sqlite://path` (embedded file, created when missing) or `postgres://...`.
    pub url: String,
    /// PostgreSQL only: the schema holding the relay's tables (created when missing).
    pub schema: Option<String>,
    pub max_connections: u32,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            url: "sqlite://patchbridge-relay.sqlite3".into(),
            schema: None,
            max_connections: 8,
        }
    }
}

/// Bounds. All have defaults; none can be switched off (zero is rejected).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LimitsConfig {
    pub max_request_bytes: u64,
    pub max_conversation_bytes: u64,
    pub max_upstream_response_bytes: u64,
    pub max_events_per_call: u64,
    pub connect_timeout_ms: u64,
    pub first_byte_timeout_ms: u64,
    pub idle_timeout_ms: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_request_bytes: 8 * 1024 * 1024,
            max_conversation_bytes: 4 * 1024 * 1024,
            max_upstream_response_bytes: 8 * 1024 * 1024,
            max_events_per_call: 50_000,
            connect_timeout_ms: 10_000,
            first_byte_timeout_ms: 120_000,
            idle_timeout_ms: 60_000,
        }
    }
}

/// How the API key is sent upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthScheme {
    /// `Authorization: Bearer <key>` (OpenAI and compatible servers).
    Bearer,
    /// `x-api-key: <key>` (Anthropic).
    XApiKey,
    /// No credentials (a local server such as Ollama).
    None,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelConfig {
    /// The id clients use (`model` in the request, `models[].id` in `/models`).
    pub id: String,
    pub provider: ProviderKind,
    #[serde(default)]
    pub label: Option<String>,
    /// Protocol root, e.g. `https://api.openai.com/v1` or `https://api.anthropic.com/v1`.
    pub base_url: String,
    /// The provider's model name.
    pub upstream_model: String,
    /// The API key; required unless `authScheme` is `none`.
    #[serde(default)]
    pub api_key: Option<SecretRef>,
    /// Default: `x-api-key` for anthropic-messages, `bearer` otherwise.
    #[serde(default)]
    pub auth_scheme: Option<AuthScheme>,
    #[serde(default)]
    pub max_output_tokens: Option<u32>,
    #[serde(default)]
    pub reasoning: Option<ReasoningConfig>,
    /// A system prompt sent before the conversation.
    #[serde(default)]
    pub system_prompt: Option<String>,
    #[serde(default)]
    pub capabilities: CapabilitiesConfig,
    /// Allow `http://` to a non-loopback host (a LAN vLLM); https is required otherwise.
    #[serde(default)]
    pub allow_insecure_http: bool,
}

/// Reasoning controls passed to the adapter.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReasoningConfig {
    /// OpenAI reasoning effort (`minimal`, `low`, `medium`, `high`).
    #[serde(default)]
    pub effort: Option<ReasoningEffort>,
    /// Anthropic extended-thinking budget in tokens.
    #[serde(default)]
    pub budget_tokens: Option<u32>,
    /// OpenAI Responses reasoning summary (`auto`, `concise`, `detailed`).
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CapabilitiesConfig {
    pub tools: bool,
    pub images: bool,
    pub reasoning: bool,
}

impl Default for CapabilitiesConfig {
    fn default() -> Self {
        CapabilitiesConfig {
            tools: true,
            images: false,
            reasoning: false,
        }
    }
}

impl ModelConfig {
    /// What the adapter needs from this model's configuration.
    pub fn model_options(&self) -> ModelOptions {
        ModelOptions {
            upstream_model: self.upstream_model.clone(),
            max_output_tokens: self.max_output_tokens,
            reasoning: self.reasoning.as_ref().map(|r| ReasoningOptions {
                effort: r.effort,
                budget_tokens: r.budget_tokens,
                summary: r.summary,
            }),
            system_prompt: self.system_prompt.clone(),
        }
    }
}

/// A configuration error: the path of the bad field and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config error at `{path}`: {message}")]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        path: path.into(),
        message: message.into(),
    }
}

impl RelayConfig {
    /// Reads and strictly parses a config file.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let meta = std::fs::metadata(path)
            .map_err(|e| err("(file)", format!("{}: {e}", path.display())))?;
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(err(
                "(file)",
                format!("config file is larger than {MAX_CONFIG_BYTES} bytes"),
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| err("(file)", format!("{}: {e}", path.display())))?;
        Self::from_json(&text)
    }

    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        strict_json::parse_strict(text).map_err(|e| {
            err(
                if e.path.is_empty() {
                    ".".into()
                } else {
                    e.path
                },
                e.message,
            )
        })
    }

    /// Applies the documented environment overrides (`PATCHBRIDGE_*`), given a lookup function so tests need
    /// not touch the process environment.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if let Some(v) = get("PATCHBRIDGE_BIND") {
            self.server.bind = v;
        }
        if let Some(v) = get("PATCHBRIDGE_BASE_PATH") {
            self.server.base_path = v;
        }
        if let Some(v) = get("PATCHBRIDGE_DATABASE_URL") {
            self.database.url = v;
        }
        if let Some(v) = get("PATCHBRIDGE_DATABASE_SCHEMA") {
            self.database.schema = Some(v);
        }
        if let Some(v) = get("PATCHBRIDGE_NPM_DIR") {
            self.server.npm_dir = Some(v.into());
        }
        if let Some(v) = get("PATCHBRIDGE_EXAMPLES_DIR") {
            self.server.examples_dir = Some(v.into());
        }
        if let Some(v) = get("PATCHBRIDGE_DEMO") {
            self.demo = match v.as_str() {
                "1" | "true" => true,
                "0" | "false" => false,
                _ => {
                    return Err(err(
                        "demo (PATCHBRIDGE_DEMO)",
                        "must be 1, 0, true or false",
                    ))
                }
            };
        }
        Ok(())
    }
}

/// A model after validation, with its secret resolved.
#[derive(Debug, Clone)]
pub struct ValidatedModel {
    pub config: ModelConfig,
    pub base_url: reqwest::Url,
    pub auth_scheme: AuthScheme,
    pub api_key: Option<Secret>,
    pub options: ModelOptions,
}

/// Identity settings after validation (keys loaded).
#[derive(Debug, Clone)]
pub enum ValidatedIdentity {
    Development { header: String, query_param: String },
    Jwt(crate::identity::jwt::JwtSettings),
    TrustedProxy { header: String },
}

/// Everything the relay needs, checked.
#[derive(Debug, Clone)]
pub struct Validated {
    pub bind: SocketAddr,
    pub base_path: String,
    pub allowed_origins: Vec<String>,
    pub npm_dir: Option<PathBuf>,
    pub examples_dir: Option<PathBuf>,
    pub identity: Option<ValidatedIdentity>,
    pub database: DatabaseConfig,
    pub limits: LimitsConfig,
    pub models: Vec<ValidatedModel>,
    pub default_model: Option<String>,
    /// The scripted demo model is the (only) model.
    pub demo_active: bool,
}

impl RelayConfig {
    /// Validates every field and resolves secrets; nothing is started yet.
    pub fn validate(&self) -> Result<Validated, ConfigError> {
        let bind: SocketAddr = self
            .server
            .bind
            .parse()
            .map_err(|e| err("server.bind", format!("not a socket address: {e}")))?;
        let base_path = self.server.base_path.clone();
        if !base_path.starts_with('/') || (base_path.len() > 1 && base_path.ends_with('/')) {
            return Err(err(
                "server.basePath",
                "must start with `/` and not end with `/`",
            ));
        }
        if base_path.contains(['{', '}', '*', '?', '#']) {
            return Err(err("server.basePath", "must be a plain path"));
        }
        let mut allowed_origins = Vec::new();
        for (i, origin) in self.server.allowed_origins.iter().enumerate() {
            allowed_origins.push(
                validate_origin(origin)
                    .map_err(|m| err(format!("server.allowedOrigins[{i}]"), m))?,
            );
        }
        for (field, dir) in [
            ("server.npmDir", &self.server.npm_dir),
            ("server.examplesDir", &self.server.examples_dir),
        ] {
            if let Some(dir) = dir {
                if !dir.is_dir() {
                    return Err(err(
                        field,
                        format!("`{}` is not a directory", dir.display()),
                    ));
                }
            }
        }

        let identity = match &self.identity {
            None => None,
            Some(IdentityConfig::Development {
                header,
                query_param,
            }) => {
                if !bind.ip().is_loopback() {
                    return Err(err(
                        "identity.mode",
                        format!("development identity trusts client-supplied user ids and is allowed only on a loopback bind address, not {bind}"),
                    ));
                }
                check_header_name(header).map_err(|m| err("identity.header", m))?;
                if query_param.is_empty() {
                    return Err(err("identity.queryParam", "must not be empty"));
                }
                Some(ValidatedIdentity::Development {
                    header: header.to_ascii_lowercase(),
                    query_param: query_param.clone(),
                })
            }
            Some(IdentityConfig::Jwt {
                hs256_secret,
                rs256_public_key_file,
                jwks_file,
                issuer,
                audience,
                leeway_seconds,
            }) => {
                let settings = crate::identity::jwt::JwtSettings::load(
                    hs256_secret.as_ref(),
                    rs256_public_key_file.as_deref(),
                    jwks_file.as_deref(),
                    issuer.clone(),
                    audience.clone(),
                    *leeway_seconds,
                )
                .map_err(|(field, m)| err(format!("identity.{field}"), m))?;
                Some(ValidatedIdentity::Jwt(settings))
            }
            Some(IdentityConfig::TrustedProxy { header }) => {
                check_header_name(header).map_err(|m| err("identity.header", m))?;
                Some(ValidatedIdentity::TrustedProxy {
                    header: header.to_ascii_lowercase(),
                })
            }
        };

        let db = &self.database;
        if !(db.url.starts_with("sqlite:")
            || db.url.starts_with("postgres://")
            || db.url.starts_with("postgresql://"))
        {
            return Err(err(
                "database.url",
                "must start with `sqlite:`, `postgres://` or `postgresql://`",
            ));
        }
        if let Some(schema) = &db.schema {
            if db.url.starts_with("sqlite:") {
                return Err(err("database.schema", "only PostgreSQL has schemas"));
            }
            let ok = !schema.is_empty()
                && schema.len() <= 63
                && schema
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && !schema.starts_with(|c: char| c.is_ascii_digit());
            if !ok {
                return Err(err("database.schema", "must match [a-z_][a-z0-9_]{0,62}"));
            }
        }
        if db.max_connections == 0 || db.max_connections > 1000 {
            return Err(err("database.maxConnections", "must be 1..=1000"));
        }

        let l = &self.limits;
        for (name, value) in [
            ("maxRequestBytes", l.max_request_bytes),
            ("maxConversationBytes", l.max_conversation_bytes),
            ("maxUpstreamResponseBytes", l.max_upstream_response_bytes),
            ("maxEventsPerCall", l.max_events_per_call),
            ("connectTimeoutMs", l.connect_timeout_ms),
            ("firstByteTimeoutMs", l.first_byte_timeout_ms),
            ("idleTimeoutMs", l.idle_timeout_ms),
        ] {
            if value == 0 {
                return Err(err(
                    format!("limits.{name}"),
                    "must be positive (bounds cannot be switched off)",
                ));
            }
        }
        for (name, value, max) in [
            ("maxRequestBytes", l.max_request_bytes, 256 * 1024 * 1024),
            (
                "maxConversationBytes",
                l.max_conversation_bytes,
                256 * 1024 * 1024,
            ),
            (
                "maxUpstreamResponseBytes",
                l.max_upstream_response_bytes,
                1024 * 1024 * 1024,
            ),
            ("maxEventsPerCall", l.max_events_per_call, 10_000_000),
            ("connectTimeoutMs", l.connect_timeout_ms, 600_000),
            ("firstByteTimeoutMs", l.first_byte_timeout_ms, 3_600_000),
            ("idleTimeoutMs", l.idle_timeout_ms, 3_600_000),
        ] {
            if value > max {
                return Err(err(
                    format!("limits.{name}"),
                    format!("must be at most {max}"),
                ));
            }
        }

        let mut models = Vec::new();
        let mut ids = std::collections::HashSet::new();
        for (i, m) in self.models.iter().enumerate() {
            let at = |f: &str| format!("models[{i}].{f}");
            if m.id.trim().is_empty() || m.id.len() > 200 {
                return Err(err(at("id"), "must be 1..200 characters"));
            }
            if !ids.insert(m.id.clone()) {
                return Err(err(at("id"), format!("duplicate model id `{}`", m.id)));
            }
            if m.upstream_model.trim().is_empty() {
                return Err(err(at("upstreamModel"), "must not be empty"));
            }
            let base_url = reqwest::Url::parse(&m.base_url)
                .map_err(|e| err(at("baseUrl"), format!("not a URL: {e}")))?;
            match base_url.scheme() {
                "https" => {}
                "http" => {
                    let loopback = match base_url.host() {
                        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                        Some(url::Host::Domain(d)) => d == "localhost",
                        None => false,
                    };
                    if !loopback && !m.allow_insecure_http {
                        return Err(err(
                            at("baseUrl"),
                            "http:// is allowed only for loopback hosts (or set allowInsecureHttp)",
                        ));
                    }
                }
                other => {
                    return Err(err(
                        at("baseUrl"),
                        format!("scheme `{other}` is not http(s)"),
                    ))
                }
            }
            if !base_url.username().is_empty() || base_url.password().is_some() {
                return Err(err(
                    at("baseUrl"),
                    "must not contain credentials; use apiKey",
                ));
            }
            if base_url.query().is_some() || base_url.fragment().is_some() {
                return Err(err(at("baseUrl"), "must not have a query or fragment"));
            }
            let auth_scheme = m.auth_scheme.unwrap_or(match m.provider {
                ProviderKind::AnthropicMessages => AuthScheme::XApiKey,
                _ => AuthScheme::Bearer,
            });
            let api_key = match (&m.api_key, auth_scheme) {
                (None, AuthScheme::None) => None,
                (Some(_), AuthScheme::None) => {
                    return Err(err(at("apiKey"), "given but authScheme is `none`"));
                }
                (None, _) => {
                    return Err(err(at("apiKey"), "required (or set authScheme to `none`)"))
                }
                (Some(r), _) => Some(r.resolve().map_err(|m| err(at("apiKey"), m))?),
            };
            if m.max_output_tokens == Some(0) {
                return Err(err(at("maxOutputTokens"), "must be positive"));
            }
            if let Some(r) = &m.reasoning {
                if r.budget_tokens == Some(0) {
                    return Err(err(at("reasoning.budgetTokens"), "must be positive"));
                }
            }
            let options = m.model_options();
            patchbridge_providers::validate_options(m.provider, &options)
                .map_err(|e| err(at("provider"), e.message()))?;
            models.push(ValidatedModel {
                config: m.clone(),
                base_url,
                auth_scheme,
                api_key,
                options,
            });
        }
        let default_model = match &self.default_model {
            Some(id) if !ids.contains(id) => {
                return Err(err(
                    "defaultModel",
                    format!("`{id}` is not one of the configured models"),
                ))
            }
            Some(id) => Some(id.clone()),
            None => models.first().map(|m| m.config.id.clone()),
        };
        // An explicit provider configuration never falls back to the demo: the demo is used only when there
        // is no model at all.
        let demo_active = models.is_empty() && self.demo;
        if models.is_empty() && !self.demo {
            return Err(err(
                "models",
                "no model configured: add one, or start the scripted demo with --demo",
            ));
        }

        Ok(Validated {
            bind,
            base_path,
            allowed_origins,
            npm_dir: self.server.npm_dir.clone(),
            examples_dir: self.server.examples_dir.clone(),
            identity,
            database: db.clone(),
            limits: *l,
            models,
            default_model,
            demo_active,
        })
    }
}

/// Normalises an allow-listed origin to `scheme://host[:port]` (no path, no trailing slash).
fn validate_origin(origin: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(origin).map_err(|e| format!("not an origin: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err("must be an http(s) origin".into());
    }
    if url.path() != "/"
        || url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
    {
        return Err("must be scheme://host[:port] with no path".into());
    }
    Ok(url.origin().ascii_serialization())
}

fn check_header_name(name: &str) -> Result<(), String> {
    axum::http::HeaderName::from_bytes(name.as_bytes())
        .map(|_| ())
        .map_err(|_| format!("`{name}` is not a header name"))
}

#[cfg(test)]
mod tests;
