//! JWT identity: `Authorization: Bearer <token>`, verified with an HS256 secret, an RS256 PEM public key or a
//! JWKS file (keys picked by `kid`). `exp` is required and checked, `nbf` is checked when present, a configured
//! `issuer` / `audience` must be present and match; `sub` is the user.

use std::path::Path;
use std::sync::Arc;

use axum::http::request::Parts;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use super::{acceptable, IdentityResolver, ResolveFuture, UserId};
use crate::config::SecretRef;

/// Verification keys and claim checks, loaded at start-up.
#[derive(Clone)]
pub struct JwtSettings {
    algorithm: Algorithm,
    /// `(kid, key)`; a key without kid matches any token.
    keys: Arc<Vec<(Option<String>, DecodingKey)>>,
    issuer: Option<String>,
    audience: Option<String>,
    leeway_seconds: u64,
}

impl std::fmt::Debug for JwtSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtSettings")
            .field("algorithm", &self.algorithm)
            .field("keys", &self.keys.len())
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish()
    }
}

impl JwtSettings {
    /// Loads exactly one key source. Errors are `(field, message)`.
    pub fn load(
        hs256_secret: Option<&SecretRef>,
        rs256_public_key_file: Option<&Path>,
        jwks_file: Option<&Path>,
        issuer: Option<String>,
        audience: Option<String>,
        leeway_seconds: u64,
    ) -> Result<Self, (&'static str, String)> {
        let given = [
            hs256_secret.is_some(),
            rs256_public_key_file.is_some(),
            jwks_file.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err((
                "mode",
                "jwt needs exactly one of hs256Secret, rs256PublicKeyFile, jwksFile".into(),
            ));
        }
        if leeway_seconds > 300 {
            return Err(("leewaySeconds", "must be at most 300".into()));
        }
        let (algorithm, keys) = if let Some(secret) = hs256_secret {
            let secret = secret.resolve().map_err(|m| ("hs256Secret", m))?;
            if secret.expose().len() < 32 {
                return Err(("hs256Secret", "must be at least 32 bytes".into()));
            }
            (
                Algorithm::HS256,
                vec![(None, DecodingKey::from_secret(secret.expose().as_bytes()))],
            )
        } else if let Some(path) = rs256_public_key_file {
            let pem = std::fs::read(path)
                .map_err(|e| ("rs256PublicKeyFile", format!("{}: {e}", path.display())))?;
            let key = DecodingKey::from_rsa_pem(&pem).map_err(|e| {
                (
                    "rs256PublicKeyFile",
                    format!("not an RSA public key in PEM: {e}"),
                )
            })?;
            (Algorithm::RS256, vec![(None, key)])
        } else {
            let path = jwks_file.expect("one source is given");
            let text = std::fs::read_to_string(path)
                .map_err(|e| ("jwksFile", format!("{}: {e}", path.display())))?;
            let set: jsonwebtoken::jwk::JwkSet = serde_json::from_str(&text)
                .map_err(|e| ("jwksFile", format!("not a JWKS document: {e}")))?;
            let mut keys = Vec::new();
            for jwk in &set.keys {
                if !matches!(
                    jwk.algorithm,
                    jsonwebtoken::jwk::AlgorithmParameters::RSA(_)
                ) {
                    continue;
                }
                let key = DecodingKey::from_jwk(jwk)
                    .map_err(|e| ("jwksFile", format!("bad key: {e}")))?;
                keys.push((jwk.common.key_id.clone(), key));
            }
            if keys.is_empty() {
                return Err(("jwksFile", "contains no RSA key".into()));
            }
            (Algorithm::RS256, keys)
        };
        Ok(JwtSettings {
            algorithm,
            keys: Arc::new(keys),
            issuer,
            audience,
            leeway_seconds,
        })
    }
}

#[derive(serde::Deserialize)]
struct Claims {
    sub: String,
}

pub struct JwtResolver {
    settings: JwtSettings,
    validation: Validation,
}

impl JwtResolver {
    pub fn new(settings: JwtSettings) -> Self {
        let mut validation = Validation::new(settings.algorithm);
        validation.leeway = settings.leeway_seconds;
        // jsonwebtoken checks `iss`/`aud` only when the token carries them and `nbf` only when asked: a
        // configured issuer or audience must also be present, and a token is not accepted before its `nbf`.
        let mut required = vec!["exp", "sub"];
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
        JwtResolver {
            settings,
            validation,
        }
    }

    fn verify(&self, token: &str) -> Option<UserId> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        if header.alg != self.settings.algorithm {
            return None;
        }
        let candidates = self
            .settings
            .keys
            .iter()
            .filter(|(kid, _)| kid.is_none() || header.kid.is_none() || *kid == header.kid);
        for (_, key) in candidates {
            match jsonwebtoken::decode::<Claims>(token, key, &self.validation) {
                Ok(data) => return acceptable(&data.claims.sub),
                Err(e) => tracing::debug!(error = %e, "jwt rejected"),
            }
        }
        None
    }
}

impl IdentityResolver for JwtResolver {
    fn resolve<'a>(&'a self, parts: &'a Parts) -> ResolveFuture<'a> {
        Box::pin(async move {
            let value = parts
                .headers
                .get(axum::http::header::AUTHORIZATION)?
                .to_str()
                .ok()?;
            let (scheme, token) = value.split_once(' ')?;
            if !scheme.eq_ignore_ascii_case("bearer") {
                return None;
            }
            self.verify(token.trim())
        })
    }
}
