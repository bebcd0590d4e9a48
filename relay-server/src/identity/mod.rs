//! Who is calling. Default deny: without a resolver every API answers 401.
//!
//! - [`IdentityResolver`]: the trait hosts implement to plug in their own sessions.
//! - [`development`]: trusts a header or query user id (loopback binds only; logged loudly).
//! - [`jwt`]: `Authorization: Bearer` tokens (HS256 secret, RS256 PEM key, JWKS file or JWKS URL); a claim
//!   (`sub` by default) is the user. [`keys`]: key sets and algorithms; [`fetch`]: one GET of an identity
//!   document; [`discovery`]: the JWKS URL of an OIDC issuer; [`jwks_url`]: the fetched key set;
//!   [`jwks_metrics`]: its fetches as Prometheus series.
//! - [`proxy`]: a header set by an authenticating reverse proxy.

pub mod development;
pub mod discovery;
pub mod fetch;
pub mod jwks_metrics;
pub mod jwks_url;
pub mod jwt;
pub mod keys;
pub mod proxy;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::http::request::Parts;

use crate::config::ValidatedIdentity;
use crate::model::client::UpstreamClient;

/// An authenticated user id. Conversations are scoped to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserId(pub String);

/// The longest user id accepted (ids are stored with every conversation).
pub const MAX_USER_ID_LEN: usize = 256;

/// What [`IdentityResolver::resolve`] returns: boxed so the trait stays object safe (the state holds an
/// `Arc<dyn IdentityResolver>`).
pub type ResolveFuture<'a> = Pin<Box<dyn Future<Output = Option<UserId>> + Send + 'a>>;

/// Why a request has no user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unresolved {
    /// No credentials, or credentials that do not verify: 401 `UNAUTHENTICATED`.
    Unauthenticated,
    /// The identity source cannot verify anyone right now (no current key set): 503 `IDENTITY_UNAVAILABLE`.
    Unavailable,
}

/// What [`IdentityResolver::authenticate`] returns.
pub type AuthenticateFuture<'a> =
    Pin<Box<dyn Future<Output = Result<UserId, Unresolved>> + Send + 'a>>;

/// What [`IdentityResolver::ready`] returns: an error is a start-up configuration problem, in words.
pub type ReadyFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Resolves the user of a request. `None` (or an id that is empty or too long) means 401.
pub trait IdentityResolver: Send + Sync + 'static {
    fn resolve<'a>(&'a self, parts: &'a Parts) -> ResolveFuture<'a>;

    /// Like [`resolve`](Self::resolve), but says when the identity source itself is unavailable rather than the
    /// request unauthenticated. The API guard calls this one; the default maps `None` to `Unauthenticated`.
    fn authenticate<'a>(&'a self, parts: &'a Parts) -> AuthenticateFuture<'a> {
        Box::pin(async move { self.resolve(parts).await.ok_or(Unresolved::Unauthenticated) })
    }

    /// Resolves once the resolver can verify requests (a JWKS URL's first key set has arrived); the relay
    /// waits for it before it listens. The default is ready at once.
    fn ready(&self) -> ReadyFuture<'_> {
        Box::pin(async { Ok(()) })
    }

    /// Whether the resolver can verify requests right now, and if not why in words (`/readyz` answers 503 with
    /// it): a JWKS URL's key set past its stale bound, or not fetched yet. The default is always ready.
    fn status(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Builds the resolver for a validated identity configuration; a JWKS URL is fetched with `http` (the relay's
/// upstream client), from a task spawned here, so this runs inside a Tokio runtime, and counted in `metrics`.
pub fn from_config(
    identity: &ValidatedIdentity,
    http: &UpstreamClient,
    metrics: &jwks_metrics::JwksMetrics,
) -> Arc<dyn IdentityResolver> {
    match identity {
        ValidatedIdentity::Development {
            header,
            query_param,
        } => Arc::new(development::DevelopmentResolver::new(
            header.clone(),
            query_param.clone(),
        )),
        ValidatedIdentity::Jwt(settings) => {
            Arc::new(jwt::JwtResolver::new(settings.clone(), http, metrics))
        }
        ValidatedIdentity::TrustedProxy { header, trusted } => Arc::new(
            proxy::TrustedProxyResolver::new(header.clone(), trusted.clone()),
        ),
    }
}

/// Accepts a user id exactly as the identity source gave it, or refuses it: never normalised, because two
/// spellings that normalise to one id (`" zed"`, `"zed\u{3000}"`) would otherwise reach the same user's
/// conversations. Refused: empty, longer than [`MAX_USER_ID_LEN`] bytes, any control character, any
/// whitespace other than an interior U+0020, and invisible format characters (zero-width and bidi controls,
/// which make two different ids look the same in logs and admin tools).
pub(crate) fn acceptable(id: &str) -> Option<UserId> {
    if id.is_empty() || id.len() > MAX_USER_ID_LEN {
        return None;
    }
    if id.starts_with(' ') || id.ends_with(' ') {
        return None;
    }
    if id
        .chars()
        .any(|c| c.is_control() || (c.is_whitespace() && c != ' ') || is_invisible_format(c))
    {
        return None;
    }
    Some(UserId(id.to_owned()))
}

/// Format characters that render as nothing: zero-width spaces and joiners, bidi marks and overrides, word
/// joiner and invisible operators, the BOM, soft hyphen and the Mongolian vowel separator.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::acceptable;

    #[test]
    fn user_ids_are_exact_strings_or_refused() {
        assert_eq!(acceptable("zed").unwrap().0, "zed");
        assert_eq!(acceptable("Zed Q. Public").unwrap().0, "Zed Q. Public");
        assert_eq!(acceptable("tenant/ü-名前").unwrap().0, "tenant/ü-名前");
        for refused in [
            "",
            " zed",
            "zed ",
            "zed\u{3000}",
            "\u{3000}zed",
            "zed\t",
            "ze\nd",
            "zed\u{a0}",
            "zed\u{200b}",
            "\u{feff}zed",
            "zed\u{202e}",
            "ze\u{2028}d",
            "zed\u{0}",
            "zed\u{85}",
        ] {
            assert!(acceptable(refused).is_none(), "{refused:?}");
        }
        assert!(acceptable(&"a".repeat(super::MAX_USER_ID_LEN)).is_some());
        assert!(acceptable(&"a".repeat(super::MAX_USER_ID_LEN + 1)).is_none());
    }
}
