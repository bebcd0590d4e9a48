//! The upstream HTTP client over real sockets: the proxy rules (a forwarding proxy for plain HTTP, a `CONNECT`
//! tunnel for HTTPS, `NO_PROXY` bypass), TLS with HTTP/2 by ALPN (directly and through a tunnel), the fixed
//! cap on a response head, and one connection pool per worker. The plain peers are raw TCP listeners, so the
//! test sees exactly the bytes the client wrote; the TLS upstream is hyper's server behind rustls, with a test CA (`tests/fixtures/tls/`).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, Response, Version};
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo};
use patchbridge_relay::model::client::{describe, UpstreamClient, READ_BUFFER_BYTES};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

#[path = "common/peer.rs"]
mod peer;
use peer::one_shot_peer;

/// `user:pass` in base64, as a proxy URL's credentials are sent.
const BASIC_USER_PASS: &str = "Basic dXNlcjpwYXNz";

fn ok_answer(extra_headers: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n{extra_headers}\r\nok")
        .into_bytes()
}

fn post(uri: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(Method::POST)
        .uri(uri)
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap()
}

const TEST_CA: &[u8] = include_bytes!("fixtures/tls/ca.pem");
const LOCALHOST_CERT: &[u8] = include_bytes!("fixtures/tls/localhost.pem");
const LOCALHOST_KEY: &[u8] = include_bytes!("fixtures/tls/localhost.key");

/// A client trusting only the test CA.
fn client(proxies: Matcher) -> UpstreamClient {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(TEST_CA).unwrap())
        .unwrap();
    UpstreamClient::new(Duration::from_secs(5), proxies, roots).unwrap()
}

/// An HTTPS upstream for `localhost` (HTTP/2 and HTTP/1.1 by ALPN) answering every request with a short event
/// stream; each request's HTTP version and path reach the test.
async fn tls_upstream() -> (u16, mpsc::UnboundedReceiver<(Version, String)>) {
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
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
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (seen, requests) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            let (acceptor, seen) = (acceptor.clone(), seen.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(socket).await else {
                    return;
                };
                let service = hyper::service::service_fn(move |request: Request<_>| {
                    let _ = seen.send((request.version(), request.uri().path().to_owned()));
                    async {
                        Ok::<_, std::convert::Infallible>(
                            Response::builder()
                                .header("content-type", "text/event-stream")
                                .body(Full::new(Bytes::from_static(b"data: {}\n\n")))
                                .unwrap(),
                        )
                    }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (port, requests)
}

/// A `CONNECT` proxy: tunnels every connection to where it asks, and hands each `CONNECT` line to the test.
async fn tunnelling_proxy() -> (u16, mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (seen, lines) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if socket.read(&mut byte).await.unwrap() == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8(head).unwrap();
                let line = head.lines().next().unwrap().to_owned();
                let target = line.split(' ').nth(1).unwrap().to_owned();
                let _ = seen.send(line);
                let mut upstream = TcpStream::connect(target.replace("localhost", "127.0.0.1"))
                    .await
                    .unwrap();
                socket
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
                    .unwrap();
                let _ = tokio::io::copy_bidirectional(&mut socket, &mut upstream).await;
            });
        }
    });
    (port, lines)
}

#[tokio::test]
async fn plain_http_goes_to_the_proxy_in_absolute_form_with_its_credentials() {
    let (proxy, head) = one_shot_peer(ok_answer("")).await;
    let proxies = Matcher::builder()
        .http(format!("http://user:pass@127.0.0.1:{proxy}"))
        .build();
    let response = client(proxies)
        .send(post("http://models.example.invalid/v1/chat/completions"))
        .await
        .expect("the proxy answers");
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"ok");

    let head = head.await.unwrap();
    assert!(
        head.starts_with("POST http://models.example.invalid/v1/chat/completions HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase().contains(&format!(
            "proxy-authorization: {}",
            BASIC_USER_PASS.to_ascii_lowercase()
        )),
        "{head}"
    );
}

#[tokio::test]
async fn https_goes_through_a_connect_tunnel_carrying_the_credentials() {
    // The proxy refuses the tunnel: what matters is what the client asked it for, and that the attempt fails.
    let (proxy, head) =
        one_shot_peer(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n".to_vec()).await;
    let proxies = Matcher::builder()
        .https(format!("http://user:pass@127.0.0.1:{proxy}"))
        .build();
    let error = client(proxies)
        .send(post("https://api.example.invalid/v1/messages"))
        .await
        .expect_err("the tunnel was refused");
    assert!(error.is_connect(), "{}", describe(&error));

    let head = head.await.unwrap();
    assert!(
        head.starts_with("CONNECT api.example.invalid:443 HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(
        head.contains(&format!("Proxy-Authorization: {BASIC_USER_PASS}")),
        "{head}"
    );
    // Nothing of the request itself (its path, its body) went to the proxy.
    assert!(!head.contains("/v1/messages"), "{head}");
}

#[tokio::test]
async fn hosts_in_no_proxy_are_reached_directly() {
    let (upstream, head) = one_shot_peer(ok_answer("")).await;
    // A proxy nobody listens on: using it would fail the call.
    let dead = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_port = dead.local_addr().unwrap().port();
    drop(dead);
    let proxies = Matcher::builder()
        .all(format!("http://127.0.0.1:{dead_port}"))
        .no("127.0.0.1")
        .build();
    let response = client(proxies)
        .send(post(&format!(
            "http://127.0.0.1:{upstream}/v1/chat/completions"
        )))
        .await
        .expect("reached directly");
    assert_eq!(response.status(), 200);
    let head = head.await.unwrap();
    assert!(
        head.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(
        !head.to_ascii_lowercase().contains("proxy-authorization"),
        "{head}"
    );
}

/// The read buffer is fixed, and it caps a response head: a provider-sized head (a few KiB of rate-limit and
/// tracing headers) passes, one larger than the buffer fails the attempt with hyper's own words for it.
#[tokio::test]
async fn a_response_head_is_capped_by_the_read_buffer() {
    let header = |bytes: usize| format!("x-filler: {}\r\n", "a".repeat(bytes));

    let (upstream, _) = one_shot_peer(ok_answer(&header(READ_BUFFER_BYTES - 2048))).await;
    let response = client(Matcher::builder().build())
        .send(post(&format!("http://127.0.0.1:{upstream}/")))
        .await
        .expect("a head within the buffer");
    assert_eq!(response.status(), 200);

    let (upstream, _) = one_shot_peer(ok_answer(&header(READ_BUFFER_BYTES + 1024))).await;
    let error = client(Matcher::builder().build())
        .send(post(&format!("http://127.0.0.1:{upstream}/")))
        .await
        .expect_err("a head larger than the buffer");
    assert!(
        describe(&error).contains("too large"),
        "{}",
        describe(&error)
    );
}

/// The fixed buffer bounds only the head: a body chunk many times its size (a long tool-call argument in one
/// event) streams through whole, in pieces.
#[tokio::test]
async fn a_body_chunk_larger_than_the_read_buffer_streams_through_whole() {
    let event = format!("data: {}\n\n", "x".repeat(12 * READ_BUFFER_BYTES));
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{:x}\r\n",
        event.len()
    )
    .into_bytes();
    answer.extend_from_slice(event.as_bytes());
    answer.extend_from_slice(b"\r\n0\r\n\r\n");
    let (upstream, _) = one_shot_peer(answer).await;
    let response = client(Matcher::builder().build())
        .send(post(&format!("http://127.0.0.1:{upstream}/")))
        .await
        .unwrap_or_else(|e| panic!("{}", describe(&e)));
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body.len(), event.len());
    assert_eq!(&body[..], event.as_bytes());
}

#[tokio::test]
async fn https_upstreams_are_verified_and_speak_http2_when_they_offer_it() {
    let (port, mut requests) = tls_upstream().await;
    let client = client(Matcher::builder().build());
    for _ in 0..2 {
        let response = client
            .send(post(&format!("https://localhost:{port}/v1/messages")))
            .await
            .unwrap_or_else(|e| panic!("{}", describe(&e)));
        assert_eq!(response.version(), Version::HTTP_2);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"data: {}\n\n");
    }
    assert_eq!(
        requests.recv().await.unwrap(),
        (Version::HTTP_2, "/v1/messages".to_owned())
    );

    // A certificate the client does not trust (the name is right, the issuer unknown) fails the attempt.
    let strict = UpstreamClient::new(
        Duration::from_secs(5),
        Matcher::builder().build(),
        rustls::RootCertStore::empty(),
    )
    .unwrap();
    let error = strict
        .send(post(&format!("https://localhost:{port}/v1/messages")))
        .await
        .expect_err("an untrusted certificate");
    assert!(error.is_connect(), "{}", describe(&error));
    assert!(
        describe(&error)
            .to_ascii_lowercase()
            .contains("certificate"),
        "{}",
        describe(&error)
    );
}

#[tokio::test]
async fn https_through_a_connect_tunnel_reaches_the_upstream_with_its_own_name() {
    let (upstream, mut requests) = tls_upstream().await;
    let (proxy, mut connects) = tunnelling_proxy().await;
    let proxies = Matcher::builder()
        .https(format!("http://127.0.0.1:{proxy}"))
        .build();
    let response = client(proxies)
        .send(post(&format!("https://localhost:{upstream}/v1/responses")))
        .await
        .unwrap_or_else(|e| panic!("{}", describe(&e)));
    assert_eq!(response.status(), 200);
    assert_eq!(response.version(), Version::HTTP_2);
    // The proxy saw only where to connect; TLS (verified for `localhost`) ran end to end inside the tunnel.
    assert_eq!(
        connects.recv().await.unwrap(),
        format!("CONNECT localhost:{upstream} HTTP/1.1")
    );
    assert_eq!(
        requests.recv().await.unwrap(),
        (Version::HTTP_2, "/v1/responses".to_owned())
    );
}

/// A plain HTTP/1.1 upstream that keeps connections alive and answers every request `ok`; counts the
/// connections it accepted.
async fn keep_alive_upstream() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(|_req| async {
                    Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from_static(
                        b"ok",
                    ))))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    (port, accepted)
}

#[tokio::test]
async fn each_worker_calls_through_its_own_connection_pool() {
    use patchbridge_relay::workers::Workers;
    let (port, accepted) = keep_alive_upstream().await;
    let client = client(Matcher::builder().build()).with_pools(2);
    assert_eq!(client.pool_count(), 2);
    let workers = Workers::start(2, Duration::from_secs(1)).unwrap();
    let (first, _a) = workers.pick();
    let (second, _b) = workers.pick();
    let call_on = |worker: &tokio::runtime::Handle| {
        let client = client.clone();
        let uri = format!("http://127.0.0.1:{port}/v1/chat/completions");
        worker.spawn(async move {
            let response = client.send(post(&uri)).await.unwrap();
            response.into_body().collect().await.unwrap().to_bytes()
        })
    };
    assert_eq!(call_on(&first).await.unwrap(), "ok");
    assert_eq!(call_on(&first).await.unwrap(), "ok");
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "calls on one worker reuse its pooled connection"
    );
    assert_eq!(call_on(&second).await.unwrap(), "ok");
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "the other worker opens a connection in its own pool, not the first worker's idle one"
    );
    assert_eq!(call_on(&first).await.unwrap(), "ok");
    assert_eq!(call_on(&second).await.unwrap(), "ok");
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
}
