//! Trusted proxy identity: an authenticating reverse proxy in front of the relay sets a header with the user
//! id. The proxy must strip that header from client requests; the relay cannot tell the difference.

use axum::http::request::Parts;

use super::{acceptable, IdentityResolver, ResolveFuture};

pub struct TrustedProxyResolver {
    header: String,
}

impl TrustedProxyResolver {
    pub fn new(header: String) -> Self {
        TrustedProxyResolver { header }
    }
}

impl IdentityResolver for TrustedProxyResolver {
    fn resolve<'a>(&'a self, parts: &'a Parts) -> ResolveFuture<'a> {
        Box::pin(async move {
            let mut values = parts.headers.get_all(self.header.as_str()).iter();
            let first = values.next()?;
            // Two copies of the header mean something upstream appended instead of replacing: refuse.
            if values.next().is_some() {
                return None;
            }
            acceptable(first.to_str().ok()?)
        })
    }
}
