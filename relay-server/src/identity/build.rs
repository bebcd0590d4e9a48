//! [`from_config`]: the resolver a validated identity configuration names. Apart from `mod.rs`, which holds what
//! every resolver shares (the trait, [`super::UserId`], the id check), so the resolvers can use it without an
//! import circle.

use std::sync::Arc;

use super::development::DevelopmentResolver;
use super::jwks_metrics::JwksMetrics;
use super::jwt::JwtResolver;
use super::proxy::TrustedProxyResolver;
use super::IdentityResolver;
use crate::config::ValidatedIdentity;
use crate::model::client::UpstreamClient;

/// Builds the resolver for a validated identity configuration; a JWKS URL is fetched with `http` (the relay's
/// upstream client), from a task spawned here, so this runs inside a Tokio runtime, and counted in `metrics`.
pub fn from_config(
    identity: &ValidatedIdentity,
    http: &UpstreamClient,
    metrics: &JwksMetrics,
) -> Arc<dyn IdentityResolver> {
    match identity {
        ValidatedIdentity::Development {
            header,
            query_param,
        } => Arc::new(DevelopmentResolver::new(
            header.clone(),
            query_param.clone(),
        )),
        ValidatedIdentity::Jwt(settings) => {
            Arc::new(JwtResolver::new(settings.clone(), http, metrics))
        }
        ValidatedIdentity::TrustedProxy { header, trusted } => {
            Arc::new(TrustedProxyResolver::new(header.clone(), trusted.clone()))
        }
    }
}
