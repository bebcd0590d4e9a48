//! Who is calling. Default deny: without a resolver every API answers 401.
//!
//! - [`IdentityResolver`]: the trait hosts implement to plug in their own sessions.
//! - [`development`]: trusts a header or query user id (loopback binds only; logged loudly).
//! - [`jwt`]: `Authorization: Bearer` tokens (HS256 secret, RS256 PEM key or JWKS file), `sub` is the user.
//! - [`proxy`]: a header set by an authenticating reverse proxy.

pub mod development;
pub mod jwt;
pub mod proxy;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::http::request::Parts;

use crate::config::ValidatedIdentity;

/// An authenticated user id. Conversations are scoped to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserId(pub String);

/// The longest user id accepted (ids are stored with every conversation).
pub const MAX_USER_ID_LEN: usize = 256;

/// What [`IdentityResolver::resolve`] returns: boxed so the trait stays object safe (the state holds an
/// `Arc<dyn IdentityResolver>`).
pub type ResolveFuture<'a> = Pin<Box<dyn Future<Output = Option<UserId>> + Send + 'a>>;

/// Resolves the user of a request. `None` (or an id that is empty or too long) means 401.
pub trait IdentityResolver: Send + Sync + 'static {
    fn resolve<'a>(&'a self, parts: &'a Parts) -> ResolveFuture<'a>;
}

/// Builds the resolver for a validated identity configuration.
pub fn from_config(identity: &ValidatedIdentity) -> Arc<dyn IdentityResolver> {
    match identity {
        ValidatedIdentity::Development {
            header,
            query_param,
        } => Arc::new(development::DevelopmentResolver::new(
            header.clone(),
            query_param.clone(),
        )),
        ValidatedIdentity::Jwt(settings) => Arc::new(jwt::JwtResolver::new(settings.clone())),
        ValidatedIdentity::TrustedProxy { header } => {
            Arc::new(proxy::TrustedProxyResolver::new(header.clone()))
        }
    }
}

/// Accepts a user id only when it is non-empty, bounded and free of control characters.
pub(crate) fn acceptable(id: &str) -> Option<UserId> {
    let id = id.trim();
    if id.is_empty() || id.len() > MAX_USER_ID_LEN || id.chars().any(char::is_control) {
        return None;
    }
    Some(UserId(id.to_owned()))
}
