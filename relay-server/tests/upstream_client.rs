//! The upstream HTTP client over real sockets: the proxy rules (a forwarding proxy for plain HTTP, a `CONNECT`
//! tunnel for HTTPS, `NO_PROXY` bypass) and the fixed cap on a response head. Each peer here is a raw TCP
//! listener, so the test sees exactly the bytes the client wrote.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::client::proxy::matcher::Matcher;
use patchbridge_relay::model::client::{describe, UpstreamClient, READ_BUFFER_BYTES};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// `user:pass` in base64, as a proxy URL's credentials are sent.
const BASIC_USER_PASS: &str = "Basic dXNlcjpwYXNz";

/// A peer that reads one request head, hands it to the test and writes `answer` back.
async fn one_shot_peer(answer: Vec<u8>) -> (u16, oneshot::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
        socket.write_all(&answer).await.unwrap();
        socket.shutdown().await.ok();
    });
    (port, rx)
}

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

fn client(proxies: Matcher) -> UpstreamClient {
    UpstreamClient::new(Duration::from_secs(5), proxies).unwrap()
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
