//! One GET of an identity document (a JWKS, an OpenID provider's configuration) with the relay's upstream
//! client: the same proxy variables, TLS roots and connect timeout as model calls, redirects never followed, the
//! body bounded, the whole exchange bounded in time; and the URL rule such documents share (https, http only for
//! loopback hosts, no credentials or fragment).

use std::time::Duration;

use axum::http::{header, HeaderMap, Request, Uri};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};

use crate::model::client::{describe, UpstreamClient};

/// The largest identity document accepted (providers' are a few KiB).
pub const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// One fetch, from connecting to the last body byte, takes at most this long.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks a configured URL of an identity document: `https://`, or `http://` to a loopback host (a local
/// provider, tests); no credentials, no fragment.
pub fn checked_url(text: &str) -> Result<Uri, String> {
    let parsed = url::Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
    match parsed.scheme() {
        "https" => {}
        "http" => {
            let loopback = match parsed.host() {
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                Some(url::Host::Domain(d)) => d == "localhost",
                None => false,
            };
            if !loopback {
                return Err("must be https:// (http:// only for loopback hosts)".into());
            }
        }
        other => return Err(format!("scheme `{other}` is not https")),
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("must not contain credentials".into());
    }
    if parsed.fragment().is_some() {
        return Err("must not have a fragment".into());
    }
    Uri::try_from(parsed.as_str()).map_err(|e| format!("not a URL: {e}"))
}

/// GETs `url` accepting `accept`; the answer's headers and body, or why there is none (a non-2xx status, a 3xx
/// included, is a failure).
pub async fn get(
    http: &UpstreamClient,
    url: &Uri,
    accept: &'static str,
) -> Result<(HeaderMap, Bytes), String> {
    let request = Request::get(url.clone())
        .header(header::ACCEPT, accept)
        .header(
            header::USER_AGENT,
            concat!("patchbridge-relay/", env!("CARGO_PKG_VERSION")),
        )
        .body(Full::new(Bytes::new()))
        .map_err(|e| format!("cannot build the request: {e}"))?;
    let answer = async {
        let response = http.send(request).await.map_err(|e| describe(&e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("answered HTTP {status}"));
        }
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_DOCUMENT_BYTES)
            .collect()
            .await
            .map_err(|e| format!("reading the body (at most {MAX_DOCUMENT_BYTES} bytes): {e}"))?
            .to_bytes();
        Ok((parts.headers, body))
    };
    tokio::time::timeout(FETCH_TIMEOUT, answer)
        .await
        .map_err(|_| format!("no complete answer within {} s", FETCH_TIMEOUT.as_secs()))?
}
