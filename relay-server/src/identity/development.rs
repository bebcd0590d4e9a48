//! Development identity: the client names its own user (header or query parameter). Anyone can claim any user,
//! so configuration only allows it on a loopback bind, and the relay logs a warning at start and per request.

use axum::http::request::Parts;

use super::{acceptable, IdentityResolver, ResolveFuture};

pub struct DevelopmentResolver {
    header: String,
    query_param: String,
}

impl DevelopmentResolver {
    pub fn new(header: String, query_param: String) -> Self {
        tracing::warn!(
            header = %header,
            query_param = %query_param,
            "DEVELOPMENT IDENTITY: the relay trusts client-supplied user ids; never expose this relay"
        );
        DevelopmentResolver {
            header,
            query_param,
        }
    }

    fn query_user(&self, parts: &Parts) -> Option<String> {
        let query = parts.uri.query()?;
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == self.query_param.as_str())
            .map(|(_, v)| v.into_owned())
    }
}

impl IdentityResolver for DevelopmentResolver {
    fn resolve<'a>(&'a self, parts: &'a Parts) -> ResolveFuture<'a> {
        Box::pin(async move {
            let raw = parts
                .headers
                .get(self.header.as_str())
                .and_then(|v| v.to_str().ok().map(str::to_owned))
                .or_else(|| self.query_user(parts))?;
            let user = acceptable(&raw)?;
            tracing::debug!(user = %user.0, "development identity (client-supplied)");
            Some(user)
        })
    }
}
