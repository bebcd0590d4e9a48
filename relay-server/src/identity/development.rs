//! Development identity: the client names its own user (header or query parameter). Anyone can claim any user,
//! so configuration only allows it on a loopback bind, and the relay logs a warning at start and per request.
//! A loopback bind alone is not enough: with DNS rebinding a page on any site reaches `127.0.0.1` under its
//! own host name (its requests are then even same-origin), so the request's `Host` must be loopback too.

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
            if !loopback_host(parts) {
                tracing::info!(
                    "development identity refused: the request's Host is not a loopback name"
                );
                return None;
            }
            let raw = match parts
                .headers
                .get(self.header.as_str())
                .and_then(|v| v.to_str().ok())
            {
                Some(header) => std::borrow::Cow::Borrowed(header),
                None => std::borrow::Cow::Owned(self.query_user(parts)?),
            };
            let user = acceptable(&raw)?;
            tracing::debug!(user = %user.0, "development identity (client-supplied)");
            Some(user)
        })
    }
}

/// Whether the request names a loopback host (`localhost`, `*.localhost`, `127.0.0.0/8`, `[::1]`), from
/// `Host` or (HTTP/2) the URI authority. No host at all is refused: browsers always send one.
fn loopback_host(parts: &Parts) -> bool {
    let authority = match parts.headers.get(axum::http::header::HOST) {
        Some(value) => match value.to_str() {
            Ok(text) => text,
            Err(_) => return false,
        },
        None => match parts.uri.authority() {
            Some(authority) => authority.as_str(),
            None => return false,
        },
    };
    is_loopback_authority(authority)
}

/// Pure: `host[:port]` names a loopback address.
pub fn is_loopback_authority(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, tail)) if tail.is_empty() || tail.starts_with(':') => ip,
            _ => return false,
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
            Some(_) => return false,
            None => authority,
        }
    };
    // Compared in any case without a lowercased copy; the address parser reads hex digits in either case, so
    // the address needs none either.
    const SUFFIX: &[u8] = b".localhost";
    let name = host.as_bytes();
    if host.eq_ignore_ascii_case("localhost")
        || name
            .len()
            .checked_sub(SUFFIX.len())
            .is_some_and(|at| name[at..].eq_ignore_ascii_case(SUFFIX))
    {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .map(|ip| ip.is_loopback())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::is_loopback_authority;

    #[test]
    fn loopback_authorities() {
        for yes in [
            "localhost",
            "localhost:1",
            "a.localhost",
            "127.0.0.1:8787",
            "127.9.9.9",
            "[::1]",
            "[::1]:80",
            "LocalHost:8787",
            "A.LOCALHOST",
            ".localhost",
            "[0:0:0:0:0:0:0:1]",
        ] {
            assert!(is_loopback_authority(yes), "{yes}");
        }
        for no in [
            "evil.example",
            "127.0.0.1.evil",
            "localhost.evil",
            "[::2]:80",
            "[::1]x",
            "::1",
            "10.0.0.1:80",
            "localhost:x",
            "",
            "localhostx",
            "xlocalhost",
            "é.localhos",
            "[::1:aB]",
        ] {
            assert!(!is_loopback_authority(no), "{no}");
        }
    }
}
