//! The fake upstream: a minimal hyper HTTP/1.1 server speaking OpenAI Chat Completions SSE, as fast as it
//! can, so that what the benchmark measures is the proxy in front of it.
//!
//! Routes (any method; the request body is read completely first, as a real provider does):
//! - `/v1/chat/completions`: the whole stream of [`crate::chunks::chat_stream`], one body frame per event.
//! - `/hold/v1/chat/completions`: the first half of the content chunks, then nothing until
//!   `/control/release` is called, then the rest. Used to hold many streams open mid-response.
//! - `/paced/v1/chat/completions`: the whole stream with `--interval-us` between chunks, as a model generating
//!   tokens sends it (every event is then read and written on its own by a proxy, which back-to-back chunks
//!   hide).
//! - `/control/release`: releases every held stream (answers 204).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::watch;
use tokio::time::Sleep;

type Hold = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A response body replaying the prepared chunks, optionally pausing before chunk `at` until `hold` resolves,
/// optionally waiting `interval` between chunks.
struct ChunkBody {
    chunks: Arc<[Bytes]>,
    next: usize,
    hold: Option<(usize, Hold)>,
    pace: Option<(Duration, Pin<Box<Sleep>>)>,
}

impl ChunkBody {
    fn new(chunks: Arc<[Bytes]>) -> Self {
        ChunkBody {
            chunks,
            next: 0,
            hold: None,
            pace: None,
        }
    }
}

impl Body for ChunkBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if let Some((at, hold)) = &mut this.hold {
            if this.next == *at {
                if hold.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.hold = None;
            }
        }
        if let Some((interval, sleep)) = &mut this.pace {
            if this.next > 0
                && this.next < this.chunks.len()
                && sleep.as_mut().poll(cx).is_pending()
            {
                return Poll::Pending;
            }
            let deadline = tokio::time::Instant::now() + *interval;
            sleep.as_mut().reset(deadline);
        }
        match this.chunks.get(this.next) {
            Some(chunk) => {
                this.next += 1;
                Poll::Ready(Some(Ok(Frame::data(chunk.clone()))))
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.next >= self.chunks.len()
    }
}

enum Reply {
    Stream(ChunkBody),
    Empty,
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Reply::Stream(body) => Pin::new(body).poll_frame(cx),
            Reply::Empty => Pin::new(&mut Empty::<Bytes>::new()).poll_frame(cx),
        }
    }
}

struct Shared {
    chunks: Arc<[Bytes]>,
    /// Content chunks sent before a held stream pauses.
    hold_after: usize,
    /// Pause between chunks on the paced route.
    interval: Duration,
    /// Bumped by `/control/release`; a held stream waits for a generation newer than its own.
    release: watch::Sender<u64>,
}

async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Reply>, Infallible> {
    let path = request.uri().path().to_owned();
    // Read the request like a provider would (and so the connection can be reused).
    let _ = request.into_body().collect().await;
    let sse = |body: ChunkBody| {
        Response::builder()
            .header("content-type", "text/event-stream; charset=utf-8")
            .header("cache-control", "no-cache")
            .body(Reply::Stream(body))
            .expect("static response parts")
    };
    let response = match path.as_str() {
        "/v1/chat/completions" => sse(ChunkBody::new(shared.chunks.clone())),
        "/paced/v1/chat/completions" => sse(ChunkBody {
            pace: Some((
                shared.interval,
                Box::pin(tokio::time::sleep(shared.interval)),
            )),
            ..ChunkBody::new(shared.chunks.clone())
        }),
        "/hold/v1/chat/completions" => {
            let mut rx = shared.release.subscribe();
            let generation = *rx.borrow_and_update();
            let hold: Hold = Box::pin(async move {
                let _ = rx.wait_for(|g| *g > generation).await;
            });
            sse(ChunkBody {
                hold: Some((shared.hold_after, hold)),
                ..ChunkBody::new(shared.chunks.clone())
            })
        }
        "/control/release" => {
            shared.release.send_modify(|g| *g += 1);
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Reply::Empty)
                .expect("static response parts")
        }
        _ => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Reply::Empty)
            .expect("static response parts"),
    };
    Ok(response)
}

/// Serves until the process is killed. Prints `fake-upstream listening on <addr>` once bound.
pub async fn serve(bind: SocketAddr, chunks: usize, interval: Duration) -> Result<(), String> {
    let socket = tokio::net::TcpSocket::new_v4().map_err(|e| e.to_string())?;
    socket.set_reuseaddr(true).map_err(|e| e.to_string())?;
    socket.bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    // A deep backlog: the benchmark opens 1,024 connections at once.
    let listener = socket.listen(4096).map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let shared = Arc::new(Shared {
        chunks: crate::chunks::chat_stream(chunks).into(),
        hold_after: chunks / 2,
        interval,
        release: watch::channel(0).0,
    });
    println!("fake-upstream listening on {addr}");
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            // Out of descriptors and the like: keep serving the connections we have.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| handle(shared.clone(), request));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
