//! JWT identity: `Authorization: Bearer <token>`, verified with exactly one key source: an HS256 secret, an RS256
//! PEM public key, a JWKS file, or a JWKS URL (`jwks_url`: fetched, cached and refreshed), given as such or
//! found by OIDC discovery of the configured `issuer` (`discovery`). Each key verifies only
//! its own algorithm (`keys`). `exp` is required and checked, `nbf` is checked when present, a configured
//! `issuer` / `audience` must be present and match; the user id is the string claim `userIdClaim` (`sub` by
//! default).

use std::path::Path;
use std::sync::Arc;

use axum::http::request::Parts;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use super::jwks_metrics::JwksMetrics;
use super::jwks_url::{JwksSource, JwksUrlSettings, Refetch, RemoteKeys};
use super::keys::KeySet;
use super::{acceptable, AuthenticateFuture, IdentityResolver, ReadyFuture, ResolveFuture};
use super::{Unresolved, UserId};
use crate::config::SecretRef;
use crate::model::client::UpstreamClient;

/// The algorithms any key source can hold; one [`Validation`] is built for each.
const ALGORITHMS: [Algorithm; 10] = [
    Algorithm::HS256,
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Where the verification keys come from.
#[derive(Debug, Clone)]
pub enum KeySource {
    /// Loaded at start-up from the configuration (secret, PEM file, JWKS file).
    Fixed(Arc<KeySet>),
    /// Fetched from a URL when the resolver starts, and kept fresh.
    Url(JwksUrlSettings),
}

/// Verification keys and claim checks, loaded at start-up.
#[derive(Debug, Clone)]
pub struct JwtSettings {
    source: KeySource,
    issuer: Option<String>,
    audience: Option<String>,
    leeway_seconds: u64,
    user_id_claim: String,
}

/// The `jwt` identity configuration, borrowed from the config file's fields.
pub struct JwtConfig<'a> {
    pub hs256_secret: Option<&'a SecretRef>,
    pub rs256_public_key_file: Option<&'a Path>,
    pub jwks_file: Option<&'a Path>,
    /// Already checked (scheme, host) and with its cache bounds: `identity.jwksUrl`, or discovery of
    /// `identity.issuer` when no other key source is given.
    pub jwks_url: Option<JwksUrlSettings>,
    pub issuer: Option<String>,
    pub audience: Option<String>,
    pub leeway_seconds: u64,
    pub user_id_claim: String,
}

impl JwtSettings {
    /// Loads exactly one key source. Errors are `(field, message)`.
    pub fn load(config: JwtConfig<'_>) -> Result<Self, (&'static str, String)> {
        let given = [
            config.hs256_secret.is_some(),
            config.rs256_public_key_file.is_some(),
            config.jwks_file.is_some(),
            config.jwks_url.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err((
                "mode",
                "jwt needs exactly one of hs256Secret, rs256PublicKeyFile, jwksFile, jwksUrl (or issuer alone, for OIDC discovery)"
                    .into(),
            ));
        }
        if config.leeway_seconds > 300 {
            return Err(("leewaySeconds", "must be at most 300".into()));
        }
        if config.user_id_claim.is_empty() || config.user_id_claim.len() > 256 {
            return Err(("userIdClaim", "must be 1..=256 bytes".into()));
        }
        let source = if let Some(secret) = config.hs256_secret {
            let secret = secret.resolve().map_err(|m| ("hs256Secret", m))?;
            if secret.expose().len() < 32 {
                return Err(("hs256Secret", "must be at least 32 bytes".into()));
            }
            KeySource::Fixed(Arc::new(KeySet::single(
                Algorithm::HS256,
                DecodingKey::from_secret(secret.expose().as_bytes()),
            )))
        } else if let Some(path) = config.rs256_public_key_file {
            let pem = std::fs::read(path)
                .map_err(|e| ("rs256PublicKeyFile", format!("{}: {e}", path.display())))?;
            let key = DecodingKey::from_rsa_pem(&pem).map_err(|e| {
                (
                    "rs256PublicKeyFile",
                    format!("not an RSA public key in PEM: {e}"),
                )
            })?;
            KeySource::Fixed(Arc::new(KeySet::single(Algorithm::RS256, key)))
        } else if let Some(path) = config.jwks_file {
            let bytes = std::fs::read(path)
                .map_err(|e| ("jwksFile", format!("{}: {e}", path.display())))?;
            let parsed = KeySet::from_jwks(&bytes).map_err(|m| ("jwksFile", m))?;
            for skipped in &parsed.skipped {
                tracing::warn!(file = %path.display(), key = %crate::logging::escape(skipped), "identity key skipped");
            }
            KeySource::Fixed(Arc::new(parsed.keys))
        } else {
            KeySource::Url(config.jwks_url.expect("one source is given"))
        };
        Ok(JwtSettings {
            source,
            issuer: config.issuer,
            audience: config.audience,
            leeway_seconds: config.leeway_seconds,
            user_id_claim: config.user_id_claim,
        })
    }
}

/// The keys a resolver verifies with right now.
enum Keys {
    Fixed(Arc<KeySet>),
    Remote(Arc<RemoteKeys>),
}

pub struct JwtResolver {
    keys: Keys,
    user_id_claim: String,
    /// One per entry of [`ALGORITHMS`], same order: each accepts exactly its own algorithm.
    validations: Vec<Validation>,
}

impl JwtResolver {
    /// The resolver of `settings`. A JWKS URL is fetched with `http` by a background task started here (so this
    /// runs inside a Tokio runtime), its fetches counted in `metrics`; [`IdentityResolver::ready`] waits for its
    /// first key set.
    pub fn new(settings: JwtSettings, http: &UpstreamClient, metrics: &JwksMetrics) -> Self {
        let validations = ALGORITHMS
            .iter()
            .map(|algorithm| validation(&settings, *algorithm))
            .collect();
        let keys = match settings.source {
            KeySource::Fixed(set) => Keys::Fixed(set),
            KeySource::Url(url) => {
                Keys::Remote(RemoteKeys::start(url, http.clone(), metrics.clone()))
            }
        };
        JwtResolver {
            keys,
            user_id_claim: settings.user_id_claim,
            validations,
        }
    }

    async fn verify(&self, token: &str) -> Result<UserId, Unresolved> {
        // `none` and unknown algorithms fail here: `Algorithm` has no variant for them.
        let header = jsonwebtoken::decode_header(token).map_err(|_| Unresolved::Unauthenticated)?;
        let kid = header.kid.as_deref();
        let remote = match &self.keys {
            Keys::Fixed(set) => return self.verify_with(set, token, kid, header.alg),
            Keys::Remote(remote) => remote,
        };
        let loaded = remote.usable().ok_or(Unresolved::Unavailable)?;
        let Some(kid) = kid.filter(|kid| !loaded.keys.knows(kid)) else {
            return self.verify_with(&loaded.keys, token, kid, header.alg);
        };
        drop(loaded);
        // A `kid` the set does not have: the provider may have rotated its keys since the last fetch.
        let refetch = remote.refetch_for_unknown_kid().await;
        let loaded = remote.usable().ok_or(Unresolved::Unavailable)?;
        if !loaded.keys.knows(kid) {
            tracing::debug!(kid = %crate::logging::escape(kid), ?refetch, "jwt names an unknown key");
            return Err(match refetch {
                Refetch::Fetched(Err(_)) => Unresolved::Unavailable,
                _ => Unresolved::Unauthenticated,
            });
        }
        self.verify_with(&loaded.keys, token, Some(kid), header.alg)
    }

    fn verify_with(
        &self,
        keys: &KeySet,
        token: &str,
        kid: Option<&str>,
        algorithm: Algorithm,
    ) -> Result<UserId, Unresolved> {
        let validation = ALGORITHMS
            .iter()
            .position(|a| *a == algorithm)
            .map(|i| &self.validations[i])
            .ok_or(Unresolved::Unauthenticated)?;
        for candidate in keys.candidates(kid, algorithm) {
            match jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
                token,
                &candidate.key,
                validation,
            ) {
                Ok(data) => {
                    let id = data
                        .claims
                        .get(&self.user_id_claim)
                        .and_then(|v| v.as_str());
                    return id.and_then(acceptable).ok_or(Unresolved::Unauthenticated);
                }
                Err(e) => tracing::debug!(error = %e, "jwt rejected"),
            }
        }
        Err(Unresolved::Unauthenticated)
    }
}

/// The claim checks for tokens of `algorithm` (only that algorithm is accepted).
fn validation(settings: &JwtSettings, algorithm: Algorithm) -> Validation {
    let mut validation = Validation::new(algorithm);
    validation.leeway = settings.leeway_seconds;
    // jsonwebtoken checks `iss`/`aud` only when the token carries them and `nbf` only when asked: a configured
    // issuer or audience must also be present, and a token is not accepted before its `nbf`.
    let mut required = vec!["exp"];
    if settings.user_id_claim == "sub" {
        required.push("sub");
    }
    validation.validate_exp = true;
    validation.validate_nbf = true;
    if let Some(iss) = &settings.issuer {
        validation.set_issuer(&[iss]);
        required.push("iss");
    }
    match &settings.audience {
        Some(aud) => {
            validation.set_audience(&[aud]);
            required.push("aud");
        }
        None => validation.validate_aud = false,
    }
    validation.set_required_spec_claims(&required);
    validation
}

/// The bearer token of a request, if it has exactly that.
fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts
        .headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

impl IdentityResolver for JwtResolver {
    fn resolve<'a>(&'a self, parts: &'a Parts) -> ResolveFuture<'a> {
        Box::pin(async move { self.authenticate(parts).await.ok() })
    }

    fn authenticate<'a>(&'a self, parts: &'a Parts) -> AuthenticateFuture<'a> {
        Box::pin(async move {
            let token = bearer(parts).ok_or(Unresolved::Unauthenticated)?;
            self.verify(token).await
        })
    }

    fn ready(&self) -> ReadyFuture<'_> {
        Box::pin(async move {
            let Keys::Remote(remote) = &self.keys else {
                return Ok(());
            };
            remote.ready().await.map_err(|why| {
                let field = match remote.source() {
                    JwksSource::Url(_) => "jwksUrl",
                    JwksSource::Discovery(_) => "issuer",
                };
                format!(
                    "config error at `identity.{field}`: no key set from {}: {why}",
                    remote.source()
                )
            })
        })
    }

    fn status(&self) -> Result<(), String> {
        match &self.keys {
            Keys::Fixed(_) => Ok(()),
            Keys::Remote(remote) => remote.status(),
        }
    }
}
