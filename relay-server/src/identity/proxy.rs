//! Trusted proxy identity: an authenticating reverse proxy in front of the relay sets a header with the user
//! id. The relay believes that header only from the peers listed in `trustedProxies` (addresses or CIDR
//! ranges); a request from any other peer is unidentified (401), so a client that reaches the relay around the
//! proxy cannot name its own user. The proxy must still strip the header from client requests.

use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use ipnet::IpNet;

use super::{acceptable, IdentityResolver, ResolveFuture};

pub struct TrustedProxyResolver {
    header: String,
    trusted: Vec<IpNet>,
}

impl TrustedProxyResolver {
    pub fn new(header: String, trusted: Vec<IpNet>) -> Self {
        let list: Vec<String> = trusted.iter().map(ToString::to_string).collect();
        tracing::info!(
            header = %header,
            trusted_proxies = %list.join(", "),
            "trusted-proxy identity: the user id header is believed only from these peers"
        );
        TrustedProxyResolver { header, trusted }
    }
}

/// Whether `peer` is one of the trusted proxies. IPv4 peers seen on a dual-stack socket (`::ffff:a.b.c.d`)
/// are compared as IPv4.
pub fn peer_trusted(peer: IpAddr, trusted: &[IpNet]) -> bool {
    let peer = peer.to_canonical();
    trusted.iter().any(|net| net.contains(&peer))
}

/// The user id from the header's value: exactly one copy, no comma (proxies that append instead of replacing
/// join values with `,`, so `"alice, admin"` is two values, not a user), and an acceptable id.
pub fn user_from_values<'a>(
    mut values: impl Iterator<Item = &'a axum::http::HeaderValue>,
) -> Option<super::UserId> {
    let first = values.next()?;
    if values.next().is_some() {
        return None;
    }
    let text = first.to_str().ok()?;
    if text.contains(',') {
        return None;
    }
    acceptable(text)
}

impl IdentityResolver for TrustedProxyResolver {
    fn resolve<'a>(&'a self, parts: &'a Parts) -> ResolveFuture<'a> {
        Box::pin(async move {
            // Without the peer address (a host serving the router without connect info) nothing is trusted.
            let Some(ConnectInfo(peer)) = parts.extensions.get::<ConnectInfo<SocketAddr>>() else {
                tracing::warn!(
                    "trusted-proxy identity: the peer address is unknown; request refused"
                );
                return None;
            };
            if !peer_trusted(peer.ip(), &self.trusted) {
                if parts.headers.contains_key(self.header.as_str()) {
                    tracing::warn!(peer = %peer.ip(), "trusted-proxy identity: user header from an untrusted peer ignored");
                }
                return None;
            }
            user_from_values(parts.headers.get_all(self.header.as_str()).iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn only_listed_peers_are_trusted() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()];
        assert!(peer_trusted("10.1.2.3".parse().unwrap(), &trusted));
        assert!(peer_trusted("::ffff:10.1.2.3".parse().unwrap(), &trusted));
        assert!(peer_trusted("::1".parse().unwrap(), &trusted));
        assert!(!peer_trusted("11.0.0.1".parse().unwrap(), &trusted));
        assert!(!peer_trusted("127.0.0.1".parse().unwrap(), &trusted));
    }

    #[test]
    fn a_comma_list_or_a_repeated_header_is_no_user() {
        let one = [HeaderValue::from_static("alice")];
        assert_eq!(user_from_values(one.iter()).unwrap().0, "alice");
        let list = [HeaderValue::from_static("alice, admin")];
        assert!(user_from_values(list.iter()).is_none());
        let list = [HeaderValue::from_static("alice,admin")];
        assert!(user_from_values(list.iter()).is_none());
        let two = [
            HeaderValue::from_static("alice"),
            HeaderValue::from_static("admin"),
        ];
        assert!(user_from_values(two.iter()).is_none());
        let padded = [HeaderValue::from_static("alice ")];
        assert!(user_from_values(padded.iter()).is_none());
    }
}
