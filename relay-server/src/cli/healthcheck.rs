//! `patchbridge-relay healthcheck [--url URL]`: asks the relay's `/readyz` and exits 0 when it answers 200, 1
//! otherwise. It is the container image's `HEALTHCHECK` (an image `FROM scratch` has no curl or wget). Without
//! `--url` it reads the configuration as the server does (`--config` / `PATCHBRIDGE_CONFIG`, then the
//! `PATCHBRIDGE_*` overrides) and asks the bound port on loopback.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

pub const USAGE: &str = "\
usage: patchbridge-relay healthcheck [--config FILE] [--url URL]
Exits 0 when the relay's /readyz answers 200 within 5 s, else 1 (for container health checks).
  --config FILE  the configuration whose server.bind to ask (default $PATCHBRIDGE_CONFIG; PATCHBRIDGE_BIND applies)
  --url URL      ask this URL instead (http only)";

/// How long one check may take in all.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// `http://ADDR/readyz` for a relay bound to `bind` (a `host:port` socket address). A wildcard bind (`0.0.0.0`,
/// `[::]`) is asked on the loopback address of its family, where every relay bound that way listens too.
pub fn readyz_url(bind: &str) -> Result<String, String> {
    let mut addr: SocketAddr = bind
        .parse()
        .map_err(|e| format!("server.bind `{bind}` is not a socket address: {e}"))?;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        });
    }
    if addr.port() == 0 {
        return Err("server.bind has port 0 (a free port chosen at start): pass --url".into());
    }
    Ok(format!("http://{addr}/readyz"))
}

/// One GET of `url`: `Ok` when it answers 200 within [`TIMEOUT`], else why not.
pub async fn check(url: &str) -> Result<(), String> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("`{url}`: only http:// is supported"));
    }
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    match tokio::time::timeout(TIMEOUT, client.get(uri)).await {
        Err(_) => Err(format!("{url}: no answer within {} s", TIMEOUT.as_secs())),
        Ok(Err(e)) => Err(format!("{url}: {e}")),
        Ok(Ok(response)) if response.status() == hyper::StatusCode::OK => Ok(()),
        Ok(Ok(response)) => Err(format!("{url}: {}", response.status())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_bind_is_asked_on_loopback_of_its_family() {
        assert_eq!(
            readyz_url("0.0.0.0:8787").unwrap(),
            "http://127.0.0.1:8787/readyz"
        );
        assert_eq!(readyz_url("[::]:9000").unwrap(), "http://[::1]:9000/readyz");
        assert_eq!(
            readyz_url("10.1.2.3:80").unwrap(),
            "http://10.1.2.3:80/readyz"
        );
        assert!(readyz_url("127.0.0.1:0").unwrap_err().contains("--url"));
        assert!(readyz_url("localhost:80")
            .unwrap_err()
            .contains("not a socket address"));
    }
}
