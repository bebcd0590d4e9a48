//! OpenID Connect discovery: `identity.issuer` without a key source finds the key set through the issuer's
//! `{issuer}/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4; a trailing `/` of the issuer
//! is dropped before the suffix). The document's `issuer` must be exactly the configured one (§4.3: otherwise
//! the document speaks for another issuer and its keys must not be used), and its `jwks_uri` must pass the same
//! rule as `identity.jwksUrl` (https, http only for loopback hosts).

use axum::http::Uri;

use super::fetch;
use crate::model::client::UpstreamClient;

/// Where an issuer's configuration is.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// As configured; the `iss` of tokens and the document's `issuer` must equal it.
    pub issuer: String,
    /// `{issuer}/.well-known/openid-configuration`.
    pub document: Uri,
}

impl Discovery {
    /// Checks the issuer as a URL (https, no query or fragment) and builds its configuration's URL.
    pub fn from_issuer(issuer: &str) -> Result<Self, String> {
        fetch::checked_url(issuer)?;
        if issuer.contains('?') {
            return Err("must not have a query (OpenID Connect issuers are https URLs with no query or fragment)".into());
        }
        let document = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        Ok(Discovery {
            issuer: issuer.to_owned(),
            document: fetch::checked_url(&document)?,
        })
    }

    /// Fetches the configuration and returns its checked `jwks_uri`.
    pub async fn jwks_uri(&self, http: &UpstreamClient) -> Result<Uri, String> {
        let (_, body) = fetch::get(http, &self.document, "application/json").await?;
        jwks_uri_of(&body, &self.issuer)
    }
}

/// The `jwks_uri` of a provider configuration document, after the issuer check.
pub fn jwks_uri_of(document: &[u8], issuer: &str) -> Result<Uri, String> {
    #[derive(serde::Deserialize)]
    struct Configuration {
        issuer: Option<String>,
        jwks_uri: Option<String>,
    }
    let configuration: Configuration = serde_json::from_slice(document)
        .map_err(|e| format!("not an OpenID provider configuration (a JSON object): {e}"))?;
    match configuration.issuer {
        Some(named) if named == issuer => {}
        Some(named) => {
            return Err(format!(
                "the configuration names issuer {:?}, not {issuer:?}",
                crate::logging::escape(&named)
            ))
        }
        None => return Err("the configuration has no `issuer`".into()),
    }
    let jwks_uri = configuration
        .jwks_uri
        .ok_or("the configuration has no `jwks_uri`")?;
    fetch::checked_url(&jwks_uri).map_err(|e| format!("its `jwks_uri` {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_url_drops_a_trailing_slash_of_the_issuer() {
        let d = Discovery::from_issuer("https://id.example.com/tenant/").unwrap();
        assert_eq!(
            d.document.to_string(),
            "https://id.example.com/tenant/.well-known/openid-configuration"
        );
        assert_eq!(d.issuer, "https://id.example.com/tenant/");
        assert!(Discovery::from_issuer("http://id.example.com").is_err());
        assert!(Discovery::from_issuer("https://id.example.com/?tenant=1").is_err());
        assert!(Discovery::from_issuer("https://id.example.com/#x").is_err());
        assert!(Discovery::from_issuer("http://127.0.0.1:9/").is_ok());
    }

    #[test]
    fn the_issuer_must_match_exactly_and_jwks_uri_must_be_https() {
        let issuer = "https://id.example.com";
        let ok = br#"{"issuer":"https://id.example.com","jwks_uri":"https://id.example.com/keys"}"#;
        assert_eq!(
            jwks_uri_of(ok, issuer).unwrap().to_string(),
            "https://id.example.com/keys"
        );
        let slash =
            br#"{"issuer":"https://id.example.com/","jwks_uri":"https://id.example.com/keys"}"#;
        assert!(jwks_uri_of(slash, issuer)
            .unwrap_err()
            .contains("names issuer"));
        let other = br#"{"issuer":"https://evil.example","jwks_uri":"https://evil.example/keys"}"#;
        assert!(jwks_uri_of(other, issuer).is_err());
        let plain =
            br#"{"issuer":"https://id.example.com","jwks_uri":"http://id.example.com/keys"}"#;
        assert!(jwks_uri_of(plain, issuer).unwrap_err().contains("jwks_uri"));
        assert!(jwks_uri_of(br#"{"issuer":"https://id.example.com"}"#, issuer).is_err());
        assert!(jwks_uri_of(b"[]", issuer).is_err());
    }
}
