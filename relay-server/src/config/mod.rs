//! Relay configuration: one strict JSON file (unknown and duplicate keys rejected), a documented set of
//! environment overrides, secrets only by env-var name or owner-only file, and validation of everything before
//! the port opens. Errors name the path of the bad field.
//!
//! - [`strict_json`]: duplicate-key-rejecting parser with field paths.
//! - [`secret`]: `{"env": ..}` / `{"file": ..}` secret references.
//! - `validate`: checks everything and resolves secrets into [`Validated`].
//! - `fallbacks`: the checks of `models[].fallbacks` and `models[].stateGroup` (failover, `model/failover.rs`).
//! - [`error`]: [`ConfigError`], the one error of every section (a leaf).
//! - [`origin`]: an origin as every section names one, normalised (a leaf).
//! - this file: the typed schema ([`RelayConfig`]), defaults, parsing and env overrides.

pub mod error;
pub(crate) mod fallbacks;
pub mod origin;
pub mod secret;
pub mod strict_json;
mod validate;

use std::path::{Path, PathBuf};

use patchbridge_protocol::InputKind;
use patchbridge_providers::{ModelOptions, ProviderKind, ReasoningOptions};
use serde::Deserialize;

use error::err;
pub use error::ConfigError;
pub use secret::{Secret, SecretRef};
pub use validate::{Validated, ValidatedIdentity, ValidatedModel};

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
    /// Per-user limits on model calls (`crate::spending`).
    pub spending: crate::spending::SpendingConfig,
    /// What traces may carry (`crate::telemetry`; whether they are exported is the `OTEL_*` variables' say).
    pub telemetry: TelemetryConfig,
    /// MCP servers the relay forwards to (`crate::mcp_proxy`); none by default.
    pub mcp: crate::mcp_proxy::McpConfig,
    /// The MCP Apps sandbox listener (`crate::sandbox`); none by default.
    pub sandbox: Option<crate::sandbox::config::SandboxConfig>,
    pub models: Vec<ModelConfig>,
    pub default_model: Option<String>,
    /// Start the scripted demo model when no model is configured.
    pub demo: bool,
}

/// The most `server.workers` takes (a thread each).
pub const MAX_WORKERS: u32 = 1024;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ServerConfig {
    pub bind: String,
    /// Where the API is mounted (`{base}` in docs/protocol.md); must start with `/`, no trailing slash.
    pub base_path: String,
    /// Origins allowed for non-GET requests besides same-origin, and the only origins CORS answers.
    pub allowed_origins: Vec<String>,
    /// Serve the built npm package at `/npm/` (off when absent). Relative to the config file's folder.
    pub npm_dir: Option<PathBuf>,
    /// Serve the example pages at `/examples/` (off when absent). Relative to the config file's folder.
    pub examples_dir: Option<PathBuf>,
    /// Threads serving connections, each with its own single-threaded runtime (`crate::workers`); absent: one
    /// per CPU the process may use.
    pub workers: Option<u32>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: "127.0.0.1:8787".into(),
            base_path: "/api".into(),
            allowed_origins: Vec::new(),
            npm_dir: None,
            examples_dir: None,
            workers: None,
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
    /// `Authorization: Bearer <jwt>`; the claim `userIdClaim` (default `sub`) is the user. Exactly one key
    /// source.
    #[serde(rename_all = "camelCase")]
    Jwt {
        #[serde(default)]
        hs256_secret: Option<SecretRef>,
        #[serde(default)]
        rs256_public_key_file: Option<PathBuf>,
        #[serde(default)]
        jwks_file: Option<PathBuf>,
        /// The identity provider's key set (https; http only for loopback hosts), fetched and kept fresh.
        #[serde(default)]
        jwks_url: Option<String>,
        /// `jwksUrl` only: bounds on how long a fetched key set is kept, whatever its cache headers say.
        #[serde(default)]
        jwks_min_cache_seconds: Option<u64>,
        #[serde(default)]
        jwks_max_cache_seconds: Option<u64>,
        /// `jwksUrl` only: refetches for tokens naming an unknown `kid` are at least this far apart.
        #[serde(default)]
        jwks_unknown_kid_cooldown_seconds: Option<u64>,
        /// `jwksUrl` only: how long past its lifetime the last good key set serves while the provider is down.
        #[serde(default)]
        jwks_max_stale_seconds: Option<u64>,
        #[serde(default)]
        issuer: Option<String>,
        #[serde(default)]
        audience: Option<String>,
        #[serde(default = "default_leeway")]
        leeway_seconds: u64,
        /// The claim holding the user id (a string).
        #[serde(default = "default_user_id_claim")]
        user_id_claim: String,
    },
    /// A reverse proxy that authenticates users sets this header (and strips it from client requests). The
    /// header is believed only from peers in `trustedProxies` (IP addresses or CIDR ranges; loopback only when
    /// absent).
    #[serde(rename_all = "camelCase")]
    TrustedProxy {
        header: String,
        #[serde(default)]
        trusted_proxies: Option<Vec<String>>,
    },
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
fn default_user_id_claim() -> String {
    "sub".into()
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

/// What the relay's OpenTelemetry spans may carry besides counts and names; both off by default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// Prompt and completion text as `gen_ai.input.messages` / `gen_ai.output.messages`.
    pub capture_content: bool,
    /// The user id as `user.id`.
    pub record_user_ids: bool,
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
    /// Longest a model stream may last in all, whatever the upstream sends (comments and pings included).
    pub max_stream_duration_ms: u64,
    /// A client must send a request's complete headers within this time (also bounds idle keep-alive).
    pub header_read_timeout_ms: u64,
    /// A client must send a request's complete body within this time (408 `REQUEST_TIMEOUT` after).
    pub request_body_timeout_ms: u64,
    /// A client connection whose writes make no progress for this long (it stopped reading) is closed.
    pub client_write_timeout_ms: u64,
    /// Open client connections at most; further connections wait in the listen backlog.
    pub max_connections: u64,
    /// Largest request head (request line and headers) accepted, in bytes.
    pub max_header_bytes: u64,
    /// On SIGTERM, how long open requests and streams may finish before their connections are closed.
    pub shutdown_grace_ms: u64,
    /// Conversations one user may store.
    pub max_conversations_per_user: u64,
    /// Bytes of conversation context one user may store in all.
    pub max_stored_bytes_per_user: u64,
    /// How long an attempt at a model that has a fallback after it may wait for its first event before the
    /// next model is tried (`model/failover.rs`). Every attempt together stays inside `firstByteTimeoutMs`.
    pub failover_first_byte_timeout_ms: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            // A conversation at its limit (the runtime's default too) plus 4 MiB of tool definitions fits a
            // model request; a message at the runtime's file limits (3 MiB a file, 4 MiB of files, base64 adds a
            // third) fits a conversation about three times (`docs/protocol.md` §1 "Sizes").
            max_request_bytes: 20 * 1024 * 1024,
            max_conversation_bytes: 16 * 1024 * 1024,
            max_upstream_response_bytes: 8 * 1024 * 1024,
            max_events_per_call: 50_000,
            connect_timeout_ms: 10_000,
            first_byte_timeout_ms: 120_000,
            idle_timeout_ms: 60_000,
            max_stream_duration_ms: 900_000,
            header_read_timeout_ms: 10_000,
            request_body_timeout_ms: 60_000,
            client_write_timeout_ms: 60_000,
            max_connections: 1024,
            max_header_bytes: 64 * 1024,
            shutdown_grace_ms: 10_000,
            max_conversations_per_user: 10_000,
            max_stored_bytes_per_user: 1024 * 1024 * 1024,
            failover_first_byte_timeout_ms: 15_000,
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
    /// Reasoning controls, in the adapter's own type (`effort`, `budgetTokens`, `summary`).
    #[serde(default)]
    pub reasoning: Option<ReasoningOptions>,
    /// A system prompt sent before the conversation.
    #[serde(default)]
    pub system_prompt: Option<String>,
    #[serde(default)]
    pub capabilities: CapabilitiesConfig,
    /// Allow `http://` to a non-loopback host (a LAN vLLM); https is required otherwise.
    #[serde(default)]
    pub allow_insecure_http: bool,
    /// Ask the provider to cache each request's stable prefix (Anthropic `cache_control` breakpoints, OpenAI
    /// Responses `prompt_cache_key`). On by default.
    #[serde(default = "default_true")]
    pub prompt_caching: bool,
    /// Models tried in this order when this one fails before the first event (connection refused, 429, 5xx,
    /// `limits.failoverFirstByteTimeoutMs`); each fallback's own fallbacks follow it (`model/failover.rs`).
    #[serde(default)]
    pub fallbacks: Vec<String>,
    /// Models of one provider sharing a `stateGroup` accept each other's ModelState (the same model behind
    /// two deployments or keys): a call carrying a ModelState fails over only inside its model's group.
    #[serde(default)]
    pub state_group: Option<String>,
}

fn default_true() -> bool {
    true
}

/// `models[].capabilities`: what the model takes, reported by `GET /models` and enforced on `POST /model`
/// (`inputs`; `images` is its documented alias).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CapabilitiesConfig {
    pub tools: bool,
    /// The input kinds the model takes (`text`, `image`, `pdf`); default `["text", "image"]`.
    pub inputs: Option<Vec<InputKind>>,
    /// The alias of `"image"` in `inputs`: `true` adds it; when both are given they must agree.
    pub images: Option<bool>,
    pub reasoning: bool,
}

impl Default for CapabilitiesConfig {
    fn default() -> Self {
        CapabilitiesConfig {
            tools: true,
            inputs: None,
            images: None,
            reasoning: false,
        }
    }
}

impl CapabilitiesConfig {
    /// The input kinds, in the protocol's order (`text`, `image`, `pdf`): `inputs` as given (it must hold
    /// `text`, each kind once); else `text`, plus `image` unless `images` is false. With neither given a model
    /// takes text and images, as every model did before inputs were enforced (a conversation holding an image
    /// keeps working); PDFs only when listed. The error says what is wrong.
    pub fn resolved_inputs(&self) -> Result<Vec<InputKind>, String> {
        let inputs = match &self.inputs {
            None => {
                let mut inputs = vec![InputKind::Text];
                if self.images != Some(false) {
                    inputs.push(InputKind::Image);
                }
                return Ok(inputs);
            }
            Some(inputs) => inputs,
        };
        for (i, kind) in inputs.iter().enumerate() {
            if inputs[..i].contains(kind) {
                return Err(format!("lists `{kind}` twice"));
            }
        }
        if !inputs.contains(&InputKind::Text) {
            return Err("must include `text` (every model takes text)".into());
        }
        if let Some(images) = self.images {
            if images != inputs.contains(&InputKind::Image) {
                return Err(format!(
                    "`images: {images}` contradicts `inputs` (images is the alias of `image` in inputs; give one of them)"
                ));
            }
        }
        Ok(InputKind::ALL
            .into_iter()
            .filter(|kind| inputs.contains(kind))
            .collect())
    }
}

impl ModelConfig {
    /// What the adapter needs from this model's configuration.
    pub fn model_options(&self) -> ModelOptions {
        ModelOptions {
            upstream_model: self.upstream_model.clone(),
            max_output_tokens: self.max_output_tokens,
            reasoning: self.reasoning.clone(),
            system_prompt: self.system_prompt.clone(),
            prompt_caching: self.prompt_caching,
        }
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
        let mut config = Self::from_json(&text)?;
        // Directories named in a file are relative to that file, so it works from any working directory.
        let base = path.parent().unwrap_or(Path::new(""));
        for dir in [&mut config.server.npm_dir, &mut config.server.examples_dir]
            .into_iter()
            .flatten()
        {
            if dir.is_relative() {
                *dir = base.join(&*dir);
            }
        }
        Ok(config)
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
        if let Some(v) = get("PATCHBRIDGE_WORKERS") {
            self.server.workers = Some(v.trim().parse().map_err(|_| {
                err(
                    "server.workers (PATCHBRIDGE_WORKERS)",
                    format!("must be a whole number from 1 to {MAX_WORKERS}"),
                )
            })?);
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

#[cfg(test)]
mod tests;
