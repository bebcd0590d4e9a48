//! The JWKS of `identity.jwksUrl` travels like a model call, on the relay's upstream client: over HTTPS with the
//! client's root certificates (a provider whose certificate is not trusted yields no key set), and through the
//! configured forwarding proxy. Real sockets: a rustls HTTPS server with the test CA (`tests/fixtures/tls/`) and
//! a raw TCP proxy that sees exactly the request head the client wrote.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo};
use patchbridge_relay::identity::jwks_metrics::JwksMetrics;
use patchbridge_relay::identity::jwks_url::{JwksSource, JwksUrlSettings, RemoteKeys};
use patchbridge_relay::model::client::UpstreamClient;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

#[path = "common/peer.rs"]
mod peer;
use peer::one_shot_peer;

const TEST_CA: &[u8] = include_bytes!("fixtures/tls/ca.pem");
const LOCALHOST_CERT: &[u8] = include_bytes!("fixtures/tls/localhost.pem");
const LOCALHOST_KEY: &[u8] = include_bytes!("fixtures/tls/localhost.key");

/// One Ed25519 key (RFC 8037's example public key).
const JWKS: &str = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;

fn client(proxies: Matcher, trust_test_ca: bool) -> UpstreamClient {
    let mut roots = rustls::RootCertStore::empty();
    if trust_test_ca {
        roots
            .add(CertificateDer::from_pem_slice(TEST_CA).unwrap())
            .unwrap();
    }
    UpstreamClient::new(Duration::from_secs(5), proxies, roots).unwrap()
}

fn settings(url: &str) -> JwksUrlSettings {
    JwksUrlSettings {
        source: JwksSource::Url(url.parse().unwrap()),
        min_cache: Duration::from_secs(300),
        max_cache: Duration::from_secs(3600),
        unknown_kid_cooldown: Duration::from_secs(30),
        max_stale: Duration::from_secs(3600),
    }
}

/// An HTTPS JWKS endpoint for `localhost` with the test CA's certificate.
async fn https_jwks() -> u16 {
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![CertificateDer::from_pem_slice(LOCALHOST_CERT).unwrap()],
        PrivateKeyDer::from_pem_slice(LOCALHOST_KEY).unwrap(),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(socket).await else {
                    return;
                };
                let service = hyper::service::service_fn(|_: Request<_>| async {
                    Ok::<_, std::convert::Infallible>(
                        Response::builder()
                            .header("content-type", "application/jwk-set+json")
                            .body(Full::new(Bytes::from_static(JWKS.as_bytes())))
                            .unwrap(),
                    )
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    port
}

#[tokio::test]
async fn the_key_set_comes_over_https_with_the_clients_roots() {
    let port = https_jwks().await;
    let url = format!("https://localhost:{port}/.well-known/jwks.json");
    let trusted = RemoteKeys::start(
        settings(&url),
        client(Matcher::builder().build(), true),
        JwksMetrics::default(),
    );
    trusted.ready().await.expect("fetched over TLS");
    assert_eq!(trusted.usable().expect("a key set").keys.len(), 1);

    // Without the CA among its roots the client refuses the certificate: no key set, and a reason.
    let untrusting = RemoteKeys::start(
        settings(&url),
        client(Matcher::builder().build(), false),
        JwksMetrics::default(),
    );
    let error = untrusting.ready().await.expect_err("untrusted certificate");
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    assert!(untrusting.usable().is_none());
}

#[tokio::test]
async fn the_key_set_is_fetched_through_the_configured_proxy() {
    // A forwarding proxy that answers the JWKS itself and hands the request head to the test.
    let answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{JWKS}",
        JWKS.len()
    );
    let (proxy, head) = one_shot_peer(answer.into_bytes()).await;
    let proxies = Matcher::builder()
        .http(format!("http://127.0.0.1:{proxy}"))
        .build();
    let keys = RemoteKeys::start(
        settings("http://idp.example.invalid/jwks.json"),
        client(proxies, true),
        JwksMetrics::default(),
    );
    keys.ready().await.expect("fetched through the proxy");
    assert_eq!(keys.usable().expect("a key set").keys.len(), 1);
    let head = head.await.unwrap().to_ascii_lowercase();
    assert!(
        head.starts_with("get http://idp.example.invalid/jwks.json http/1.1\r\n"),
        "absolute-form request to the proxy: {head}"
    );
    assert!(head.contains("accept: application/jwk-set+json"), "{head}");
}
