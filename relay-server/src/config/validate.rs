//! Validation of a parsed [`RelayConfig`] into [`Validated`]: every field checked, secrets resolved, JWT keys
//! loaded, adapter options checked by the providers crate. Runs before the database opens and the port binds.

use std::net::SocketAddr;
use std::path::PathBuf;

use patchbridge_providers::{ModelOptions, ProviderKind};

use super::error::{err, ConfigError};
use super::{
    AuthScheme, DatabaseConfig, IdentityConfig, LimitsConfig, ModelConfig, RelayConfig, Secret,
};

/// A model after validation, with its secret resolved.
#[derive(Debug, Clone)]
pub struct ValidatedModel {
    pub config: ModelConfig,
    pub base_url: url::Url,
    pub auth_scheme: AuthScheme,
    pub api_key: Option<Secret>,
    pub options: ModelOptions,
    /// The input kinds the model takes (`capabilities.inputs`, resolved with its `images` alias).
    pub inputs: Vec<patchbridge_protocol::InputKind>,
    /// Where every call of this model goes: the base URL joined with the provider's path, built once here (a
    /// `Uri` clone shares its text).
    pub endpoint: axum::http::Uri,
}

/// Identity settings after validation (keys loaded).
#[derive(Debug, Clone)]
pub enum ValidatedIdentity {
    Development {
        header: String,
        query_param: String,
    },
    Jwt(crate::identity::jwt::JwtSettings),
    TrustedProxy {
        header: String,
        trusted: Vec<ipnet::IpNet>,
    },
}

/// Everything the relay needs, checked.
#[derive(Debug, Clone)]
pub struct Validated {
    pub bind: SocketAddr,
    pub base_path: String,
    pub allowed_origins: Vec<String>,
    pub npm_dir: Option<PathBuf>,
    pub examples_dir: Option<PathBuf>,
    /// `server.workers`, resolved (absent: the CPUs the process may use).
    pub workers: usize,
    pub identity: Option<ValidatedIdentity>,
    pub database: DatabaseConfig,
    pub limits: LimitsConfig,
    pub spending: crate::spending::Policy,
    pub telemetry: super::TelemetryConfig,
    /// The MCP passthrough (`crate::mcp_proxy`).
    pub mcp: crate::mcp_proxy::ValidatedMcp,
    /// The MCP Apps sandbox listener (`crate::sandbox`).
    pub sandbox: Option<crate::sandbox::config::ValidatedSandbox>,
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
                super::origin::origin(origin)
                    .map_err(|m| err(format!("server.allowedOrigins[{i}]"), m))?,
            );
        }
        let workers = match self.server.workers {
            Some(n) if (1..=super::MAX_WORKERS).contains(&n) => n as usize,
            Some(_) => {
                return Err(err(
                    "server.workers",
                    format!("must be from 1 to {}", super::MAX_WORKERS),
                ))
            }
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
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
                jwks_url,
                jwks_min_cache_seconds,
                jwks_max_cache_seconds,
                jwks_unknown_kid_cooldown_seconds,
                jwks_max_stale_seconds,
                issuer,
                audience,
                leeway_seconds,
                user_id_claim,
            }) => {
                use crate::identity::jwks_url::JwksUrlSettings;
                // `issuer` without any key source: the key set is found by OIDC discovery.
                let no_key_source = hs256_secret.is_none()
                    && rs256_public_key_file.is_none()
                    && jwks_file.is_none()
                    && jwks_url.is_none();
                let jwks_url = JwksUrlSettings::from_config(
                    jwks_url.as_deref(),
                    issuer.as_deref().filter(|_| no_key_source),
                    [
                        *jwks_min_cache_seconds,
                        *jwks_max_cache_seconds,
                        *jwks_unknown_kid_cooldown_seconds,
                        *jwks_max_stale_seconds,
                    ],
                )
                .map_err(|(field, m)| err(format!("identity.{field}"), m))?;
                let settings =
                    crate::identity::jwt::JwtSettings::load(crate::identity::jwt::JwtConfig {
                        hs256_secret: hs256_secret.as_ref(),
                        rs256_public_key_file: rs256_public_key_file.as_deref(),
                        jwks_file: jwks_file.as_deref(),
                        jwks_url,
                        issuer: issuer.clone(),
                        audience: audience.clone(),
                        leeway_seconds: *leeway_seconds,
                        user_id_claim: user_id_claim.clone(),
                    })
                    .map_err(|(field, m)| err(format!("identity.{field}"), m))?;
                Some(ValidatedIdentity::Jwt(settings))
            }
            Some(IdentityConfig::TrustedProxy {
                header,
                trusted_proxies,
            }) => {
                check_header_name(header).map_err(|m| err("identity.header", m))?;
                // Absent: a proxy on the same host (the common setup), never the whole internet.
                let listed: Vec<String> = match trusted_proxies {
                    None => DEFAULT_TRUSTED_PROXIES
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                    Some(list) if list.is_empty() => return Err(err(
                        "identity.trustedProxies",
                        "must list at least one address or CIDR range (omit it for loopback only)",
                    )),
                    Some(list) => list.clone(),
                };
                let mut trusted = Vec::new();
                for (i, text) in listed.iter().enumerate() {
                    trusted.push(
                        parse_proxy(text)
                            .map_err(|m| err(format!("identity.trustedProxies[{i}]"), m))?,
                    );
                }
                Some(ValidatedIdentity::TrustedProxy {
                    header: header.to_ascii_lowercase(),
                    trusted,
                })
            }
        };

        let db = &self.database;
        validate_database(db)?;

        let l = &self.limits;
        for (name, value) in [
            ("maxRequestBytes", l.max_request_bytes),
            ("maxConversationBytes", l.max_conversation_bytes),
            ("maxUpstreamResponseBytes", l.max_upstream_response_bytes),
            ("maxEventsPerCall", l.max_events_per_call),
            ("connectTimeoutMs", l.connect_timeout_ms),
            ("firstByteTimeoutMs", l.first_byte_timeout_ms),
            ("idleTimeoutMs", l.idle_timeout_ms),
            ("maxStreamDurationMs", l.max_stream_duration_ms),
            ("headerReadTimeoutMs", l.header_read_timeout_ms),
            ("requestBodyTimeoutMs", l.request_body_timeout_ms),
            ("clientWriteTimeoutMs", l.client_write_timeout_ms),
            ("maxConnections", l.max_connections),
            ("maxHeaderBytes", l.max_header_bytes),
            ("shutdownGraceMs", l.shutdown_grace_ms),
            ("maxConversationsPerUser", l.max_conversations_per_user),
            ("maxStoredBytesPerUser", l.max_stored_bytes_per_user),
            (
                "failoverFirstByteTimeoutMs",
                l.failover_first_byte_timeout_ms,
            ),
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
            ("maxStreamDurationMs", l.max_stream_duration_ms, 86_400_000),
            ("headerReadTimeoutMs", l.header_read_timeout_ms, 600_000),
            ("requestBodyTimeoutMs", l.request_body_timeout_ms, 3_600_000),
            ("clientWriteTimeoutMs", l.client_write_timeout_ms, 3_600_000),
            ("maxConnections", l.max_connections, 1_000_000),
            ("maxHeaderBytes", l.max_header_bytes, 1024 * 1024),
            ("shutdownGraceMs", l.shutdown_grace_ms, 600_000),
            (
                "failoverFirstByteTimeoutMs",
                l.failover_first_byte_timeout_ms,
                3_600_000,
            ),
            (
                "maxConversationsPerUser",
                l.max_conversations_per_user,
                100_000_000,
            ),
            (
                "maxStoredBytesPerUser",
                l.max_stored_bytes_per_user,
                1024 * 1024 * 1024 * 1024,
            ),
        ] {
            if value > max {
                return Err(err(
                    format!("limits.{name}"),
                    format!("must be at most {max}"),
                ));
            }
        }

        // hyper's read buffer cannot be smaller than 8 KiB.
        if l.max_header_bytes < 8192 {
            return Err(err("limits.maxHeaderBytes", "must be at least 8192"));
        }
        if l.max_stored_bytes_per_user < l.max_conversation_bytes {
            return Err(err(
                "limits.maxStoredBytesPerUser",
                "must be at least limits.maxConversationBytes",
            ));
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
            let base_url = url::Url::parse(&m.base_url)
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
            let endpoint =
                axum::http::Uri::try_from(join_url(&base_url, m.provider.path()).as_str())
                    .map_err(|e| err(at("baseUrl"), format!("not a URL: {e}")))?;
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
            let inputs = m
                .capabilities
                .resolved_inputs()
                .map_err(|e| err(at("capabilities.inputs"), e))?;
            models.push(ValidatedModel {
                inputs,
                config: m.clone(),
                base_url,
                auth_scheme,
                api_key,
                options,
                endpoint,
            });
        }
        super::fallbacks::check(&self.models)?;
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

        let spending = self.validate_spending(demo_active)?;
        let mcp = crate::mcp_proxy::config::validate(&self.mcp)?;
        let sandbox = self
            .sandbox
            .as_ref()
            .map(|s| s.validate(bind, &allowed_origins))
            .transpose()?;

        Ok(Validated {
            bind,
            base_path,
            allowed_origins,
            npm_dir: self.server.npm_dir.clone(),
            examples_dir: self.server.examples_dir.clone(),
            workers,
            identity,
            database: db.clone(),
            limits: *l,
            spending,
            telemetry: self.telemetry.clone(),
            mcp,
            sandbox,
            models,
            default_model,
            demo_active,
        })
    }
}

impl RelayConfig {
    /// What `patchbridge-relay usage` reads: the database and the spending limits, checked as [`Self::validate`]
    /// checks them, and nothing else (no API keys are resolved, no identity keys loaded, no directories looked
    /// at).
    pub fn validate_for_usage(
        &self,
    ) -> Result<(DatabaseConfig, crate::spending::Policy), ConfigError> {
        validate_database(&self.database)?;
        let spending = self.validate_spending(self.models.is_empty() && self.demo)?;
        Ok((self.database.clone(), spending))
    }

    /// The spending limits against the configured models (the scripted demo model's id when `demo_active`).
    fn validate_spending(&self, demo_active: bool) -> Result<crate::spending::Policy, ConfigError> {
        let spending_models: Vec<(String, Option<u32>)> = if demo_active {
            vec![(crate::model::registry::SCRIPTED_ID.to_owned(), None)]
        } else {
            self.models
                .iter()
                .map(|m| (m.id.clone(), m.max_output_tokens))
                .collect()
        };
        // A call lasts at most maxStreamDurationMs from its arrival; a minute more covers its admission.
        self.spending.validate(
            &spending_models,
            self.limits.max_stream_duration_ms / 1000 + 60,
        )
    }
}

/// The `database` section: what `patchbridge-relay usage` needs besides the spending limits.
fn validate_database(db: &DatabaseConfig) -> Result<(), ConfigError> {
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
    Ok(())
}

/// `base` (a protocol root like `https://api.openai.com/v1`) joined with the adapter's path.
pub fn join_url(base: &url::Url, path: &str) -> url::Url {
    let mut url = base.clone();
    let joined = format!("{}{}", base.path().trim_end_matches('/'), path);
    url.set_path(&joined);
    url
}

/// The peers a trusted-proxy identity believes when `trustedProxies` is not given: loopback only.
pub const DEFAULT_TRUSTED_PROXIES: [&str; 2] = ["127.0.0.0/8", "::1/128"];

/// An address (`10.0.0.7`, `::1`) or a CIDR range (`10.0.0.0/8`); host bits set in a range are refused
/// because they usually mean a typo in the prefix length.
fn parse_proxy(text: &str) -> Result<ipnet::IpNet, String> {
    if let Ok(ip) = text.parse::<std::net::IpAddr>() {
        return Ok(ipnet::IpNet::from(ip));
    }
    let net: ipnet::IpNet = text
        .parse()
        .map_err(|_| format!("`{text}` is neither an IP address nor a CIDR range"))?;
    if net.trunc() != net {
        return Err(format!(
            "`{text}` has host bits set; did you mean `{}`?",
            net.trunc()
        ));
    }
    Ok(net)
}

fn check_header_name(name: &str) -> Result<(), String> {
    axum::http::HeaderName::from_bytes(name.as_bytes())
        .map(|_| ())
        .map_err(|_| format!("`{name}` is not a header name"))
}
