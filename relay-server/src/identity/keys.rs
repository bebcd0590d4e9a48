//! Verification keys: a set of `(kid, algorithm, key)`, built from a JWKS document (fetched or read from a file),
//! a PEM public key or an HS256 secret.
//!
//! Every key carries exactly one algorithm and is only ever used with it: a token whose header names another
//! algorithm than its key's is refused, so an RSA key can never be used as an HMAC secret (or an RS256 key for
//! PS256). A JWK's algorithm is its `alg`; without one, the algorithm its type implies (RSA → RS256, EC P-256 →
//! ES256, EC P-384 → ES384, Ed25519 → EdDSA). Symmetric (`oct`) keys, encryption keys (`use` other than `sig`)
//! and keys of algorithms the relay cannot verify are skipped, so one odd key does not cost the others.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

/// The most keys taken from one JWKS document (providers publish two or three).
pub const MAX_KEYS: usize = 64;

/// The algorithms a key set may hold, as named in docs and errors.
pub const SUPPORTED: &str = "RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA";

/// One verification key and the one algorithm it verifies.
pub struct VerifyKey {
    /// `None` matches a token with any `kid` (PEM keys, HMAC secrets, JWKs without `kid`).
    pub kid: Option<String>,
    pub algorithm: Algorithm,
    pub key: DecodingKey,
}

/// The keys a resolver verifies with.
#[derive(Default)]
pub struct KeySet {
    keys: Vec<VerifyKey>,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.keys.iter().map(|k| (&k.kid, k.algorithm)))
            .finish()
    }
}

/// A JWKS document read into keys, with what was skipped and why (for the log).
#[derive(Debug)]
pub struct ParsedJwks {
    pub keys: KeySet,
    pub skipped: Vec<String>,
}

impl KeySet {
    /// A set of one key that matches every `kid`.
    pub fn single(algorithm: Algorithm, key: DecodingKey) -> Self {
        KeySet {
            keys: vec![VerifyKey {
                kid: None,
                algorithm,
                key,
            }],
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether some key may be the one a token with this `kid` names (a key without `kid` may be any).
    pub fn knows(&self, kid: &str) -> bool {
        self.keys
            .iter()
            .any(|k| k.kid.as_deref().is_none_or(|own| own == kid))
    }

    /// The keys a token with this header may be verified with: matching `kid` (when both have one) and exactly
    /// the token's algorithm.
    pub fn candidates<'a>(
        &'a self,
        kid: Option<&'a str>,
        algorithm: Algorithm,
    ) -> impl Iterator<Item = &'a VerifyKey> + 'a {
        self.keys.iter().filter(move |k| {
            k.algorithm == algorithm
                && match (k.kid.as_deref(), kid) {
                    (Some(own), Some(wanted)) => own == wanted,
                    _ => true,
                }
        })
    }

    /// Reads a JWKS document (`{"keys": [...]}`). An error means the document itself is unusable; keys that
    /// cannot be used are listed in `skipped`. No usable key at all is an error too.
    pub fn from_jwks(bytes: &[u8]) -> Result<ParsedJwks, String> {
        #[derive(serde::Deserialize)]
        struct Document {
            keys: Vec<serde_json::Value>,
        }
        let document: Document = serde_json::from_slice(bytes)
            .map_err(|e| format!("not a JWKS document ({{\"keys\": [...]}}): {e}"))?;
        let mut keys = Vec::new();
        let mut skipped = Vec::new();
        for (i, value) in document.keys.iter().enumerate() {
            let kid = value.get("kid").and_then(|k| k.as_str()).unwrap_or("");
            if keys.len() == MAX_KEYS {
                skipped.push(format!(
                    "keys[{i}] (kid {kid:?}): more than {MAX_KEYS} keys"
                ));
                continue;
            }
            match verify_key(value) {
                Ok(key) => keys.push(key),
                Err(why) => skipped.push(format!("keys[{i}] (kid {kid:?}): {why}")),
            }
        }
        if keys.is_empty() {
            return Err(format!(
                "no usable signing key ({SUPPORTED}){}",
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!("; skipped {}", skipped.join("; "))
                }
            ));
        }
        Ok(ParsedJwks {
            keys: KeySet { keys },
            skipped,
        })
    }
}

/// One JWK as a verification key, or why it cannot be one.
fn verify_key(value: &serde_json::Value) -> Result<VerifyKey, String> {
    if value.get("kty").and_then(|k| k.as_str()) == Some("oct") {
        return Err("symmetric (oct) keys are never used from a key set".into());
    }
    let jwk: Jwk = serde_json::from_value(value.clone())
        .map_err(|e| format!("not a supported public key: {e}"))?;
    if let Some(key_use) = &jwk.common.public_key_use {
        if *key_use != PublicKeyUse::Signature {
            return Err("not a signing key (`use` is not `sig`)".into());
        }
    }
    let implied = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => Algorithm::ES256,
            EllipticCurve::P384 => Algorithm::ES384,
            _ => return Err("EC keys must be on P-256 or P-384".into()),
        },
        AlgorithmParameters::OctetKeyPair(p) => match p.curve {
            EllipticCurve::Ed25519 => Algorithm::EdDSA,
            _ => return Err("OKP keys must be Ed25519".into()),
        },
        AlgorithmParameters::OctetKey(_) => {
            return Err("symmetric (oct) keys are never used from a key set".into())
        }
    };
    let algorithm = match jwk.common.key_algorithm {
        None => implied,
        Some(named) => {
            let named = signing_algorithm(named)?;
            let fits = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => matches!(
                    named,
                    Algorithm::RS256
                        | Algorithm::RS384
                        | Algorithm::RS512
                        | Algorithm::PS256
                        | Algorithm::PS384
                        | Algorithm::PS512
                ),
                _ => named == implied,
            };
            if !fits {
                return Err(format!(
                    "`alg` {named:?} does not fit the key's type or curve"
                ));
            }
            named
        }
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("bad key material: {e}"))?;
    Ok(VerifyKey {
        kid: jwk.common.key_id,
        algorithm,
        key,
    })
}

/// The asymmetric signing algorithms; everything else (HMAC, encryption algorithms) is refused.
fn signing_algorithm(named: KeyAlgorithm) -> Result<Algorithm, String> {
    Ok(match named {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        other => {
            return Err(format!(
                "`alg` {other:?} is not a supported signing algorithm"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const N: &str = "uwTDZVd6fmkJUiWmob26FsZY5ySs4Fl-hDUuZZi_cNRthHOC6GtFNslWucgHwVMLgJhjKhYtHsc7LydbNgj_WuZXt3jwfTx--PK3jePFJdzvftOdbAgKHgbAmn48nq_rBiRjpb2HzYA2oR8iShchQfkFnuYckW2A-Q8ns6Os3-nwAzgg-AumICzB9WnDBD1wqvWd9EEagpQjzPXJcHk2SH-O1ZkapA8kgxqKEwW45WvPcHOmkCKxhFZ5F8CblzyJdVugG7RnUZpTTG2w6T6NzGEdNok3einWgHuuwyrdDXabXJ6EyZpPe_hBv1htMtBOisq2F1IfH-qQGiGC4Brnjw";
    const X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
    const Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
    const ED_X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";

    fn parse(keys: serde_json::Value) -> Result<ParsedJwks, String> {
        KeySet::from_jwks(json!({ "keys": keys }).to_string().as_bytes())
    }

    #[test]
    fn each_key_gets_its_named_or_implied_algorithm() {
        let parsed = parse(json!([
            { "kty": "RSA", "kid": "r", "n": N, "e": "AQAB" },
            { "kty": "RSA", "kid": "p", "alg": "PS256", "use": "sig", "n": N, "e": "AQAB" },
            { "kty": "EC", "kid": "e", "crv": "P-256", "x": X, "y": Y },
            { "kty": "OKP", "kid": "d", "crv": "Ed25519", "x": ED_X },
        ]))
        .unwrap();
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        let algs: Vec<_> = parsed
            .keys
            .keys
            .iter()
            .map(|k| (k.kid.clone().unwrap(), k.algorithm))
            .collect();
        assert_eq!(
            algs,
            [
                ("r".to_owned(), Algorithm::RS256),
                ("p".to_owned(), Algorithm::PS256),
                ("e".to_owned(), Algorithm::ES256),
                ("d".to_owned(), Algorithm::EdDSA),
            ]
        );
        assert_eq!(
            parsed.keys.candidates(Some("p"), Algorithm::PS256).count(),
            1
        );
        assert_eq!(
            parsed.keys.candidates(Some("p"), Algorithm::RS256).count(),
            0,
            "a PS256 key is not an RS256 key"
        );
        assert_eq!(parsed.keys.candidates(None, Algorithm::RS256).count(), 1);
        assert!(parsed.keys.knows("e"));
        assert!(!parsed.keys.knows("other"));
    }

    #[test]
    fn symmetric_encryption_unknown_and_mismatched_keys_are_skipped() {
        let parsed = parse(json!([
            { "kty": "oct", "kid": "s", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA" },
            { "kty": "RSA", "kid": "enc", "use": "enc", "n": N, "e": "AQAB" },
            { "kty": "RSA", "kid": "hs", "alg": "HS256", "n": N, "e": "AQAB" },
            { "kty": "RSA", "kid": "es", "alg": "ES256", "n": N, "e": "AQAB" },
            { "kty": "EC", "kid": "p384", "alg": "ES256", "crv": "P-384", "x": X, "y": Y },
            { "kty": "EC", "kid": "p521", "crv": "P-521", "x": X, "y": Y },
            { "kty": "RSA", "kid": "es512", "alg": "ES512", "n": N, "e": "AQAB" },
            { "kty": "RSA", "kid": "ok", "n": N, "e": "AQAB" },
        ]))
        .unwrap();
        assert_eq!(parsed.keys.len(), 1);
        assert_eq!(parsed.skipped.len(), 7, "{:?}", parsed.skipped);
        assert!(parsed.keys.knows("ok"));
        assert!(!parsed.keys.knows("s"));
    }

    #[test]
    fn a_document_without_usable_keys_is_an_error() {
        let only_secret = parse(json!([{ "kty": "oct", "k": "c2VjcmV0" }]));
        assert!(only_secret.unwrap_err().contains("no usable signing key"));
        assert!(parse(json!([])).is_err());
        assert!(KeySet::from_jwks(b"{\"keys\": 1}").is_err());
        assert!(KeySet::from_jwks(b"<html>").is_err());
    }

    #[test]
    fn keys_past_the_bound_are_skipped() {
        let many: Vec<_> = (0..MAX_KEYS + 3)
            .map(|i| json!({ "kty": "RSA", "kid": format!("k{i}"), "n": N, "e": "AQAB" }))
            .collect();
        let parsed = parse(serde_json::Value::Array(many)).unwrap();
        assert_eq!(parsed.keys.len(), MAX_KEYS);
        assert_eq!(parsed.skipped.len(), 3);
    }
}
