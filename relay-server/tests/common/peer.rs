//! A raw TCP peer for the upstream-client tests: reads one request head, hands it to the test and writes a
//! canned answer back. It stands in for a forwarding proxy or an upstream where the test needs the exact bytes
//! the client sent. Included by path (`#[path = "common/peer.rs"]`) so the transport tests do not pull in the
//! relay harness of `common/mod.rs`.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// A peer on 127.0.0.1 that reads one request head, hands it to the test and writes `answer` back.
pub async fn one_shot_peer(answer: Vec<u8>) -> (u16, oneshot::Receiver<String>) {
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
