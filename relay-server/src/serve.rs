//! The accept loop: serves a [`Router`] on a TCP listener (HTTP/1.1 and h2c) with the connection-level bounds
//! `axum::serve` does not offer, so slow or idle clients cannot hold the relay's file descriptors:
//! - a header-read timeout (a connection that sends no first byte, or no complete request head, in time is
//!   closed; this also bounds idle HTTP/1 keep-alive connections) and a bounded request head
//!   (`limits.maxHeaderBytes`);
//! - a connection limit: at `limits.maxConnections` the loop stops accepting (new connections wait in the
//!   kernel's listen backlog) and logs that it did;
//! - `accept` failures are logged with their cause (`EMFILE`: out of file descriptors) and retried after a
//!   pause instead of spinning;
//! - a client write timeout ([`WriteTimeout`]): a client that stops reading loses its connection;
//! - graceful shutdown bounded by `limits.shutdownGraceMs`: after it, remaining connections are closed.
//!
//! Given [`Workers`], each accepted connection is served on the least-loaded worker's runtime (the socket
//! moves to that runtime's reactor); without, on the runtime that runs the loop.
//!
//! Every request gets the peer address as `ConnectInfo<SocketAddr>` (the trusted-proxy identity needs it).
//! The request-body timeout lives where bodies are read ([`crate::extract`]).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tower::ServiceExt;

use crate::config::LimitsConfig;
use crate::workers::Workers;
use crate::write_timeout::WriteTimeout;

/// Connection-level bounds, from `limits`.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
    pub max_header_bytes: usize,
    pub shutdown_grace: Duration,
    pub client_write_timeout: Duration,
}

impl ServeOptions {
    pub fn from_limits(limits: &LimitsConfig) -> Self {
        ServeOptions {
            header_read_timeout: Duration::from_millis(limits.header_read_timeout_ms),
            max_connections: usize::try_from(limits.max_connections).unwrap_or(usize::MAX),
            max_header_bytes: usize::try_from(limits.max_header_bytes).unwrap_or(usize::MAX),
            shutdown_grace: Duration::from_millis(limits.shutdown_grace_ms),
            client_write_timeout: Duration::from_millis(limits.client_write_timeout_ms),
        }
    }
}

/// How a `serve` run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Every connection finished within the grace period.
    Drained,
    /// The grace period elapsed; this many connections were closed unfinished.
    GraceElapsed(usize),
}

/// Concurrent HTTP/2 streams per connection (hyper's default is 200; one connection should not be able to
/// open more model streams than a handful of browsers).
const MAX_H2_STREAMS: u32 = 100;
/// Pause after a failed `accept` (EMFILE and friends): retrying at once would spin on the same error.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` until `shutdown` completes, then drains within the grace period. Connections
/// run on `workers` when given (see the module header).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    options: ServeOptions,
    workers: Option<&Workers>,
    shutdown: impl Future<Output = ()>,
) -> Ended {
    let builder = Arc::new(connection_builder(&options));
    let permits = Arc::new(Semaphore::new(options.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    let mut last_emfile_log: Option<tokio::time::Instant> = None;
    loop {
        // Reap finished connection tasks so the set does not grow with the number ever served.
        while connections.try_join_next().is_some() {}
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                tracing::warn!(
                    max_connections = options.max_connections,
                    "connection limit reached: not accepting until a connection closes (limits.maxConnections)"
                );
                tokio::select! {
                    permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
                    _ = &mut shutdown => break,
                }
            }
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut shutdown => break,
        };
        let (tcp, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                drop(permit);
                log_accept_error(&e, &mut last_emfile_log);
                tokio::select! {
                    _ = tokio::time::sleep(ACCEPT_ERROR_PAUSE) => continue,
                    _ = &mut shutdown => break,
                }
            }
        };
        // SSE writes are small and latency-bound: without TCP_NODELAY each event waits for the browser's
        // delayed ACK (Nagle), which the benchmark measured as ~0.3 ms added per chunk.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on an accepted socket");
        }
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(request.map(axum::body::Body::new))
        });
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let first_byte_wait = options.header_read_timeout;
        let write_timeout = options.client_write_timeout;
        let serve_one = move |tcp: tokio::net::TcpStream| async move {
            // Choosing HTTP/1 or HTTP/2 waits for the first bytes with no timeout of its own, and hyper's
            // header-read timer starts only after that: a connection that never sends a byte would be held
            // for ever. It gets the header-read timeout to send its first byte.
            let mut probe = [0u8; 1];
            match tokio::time::timeout(first_byte_wait, tcp.peek(&mut probe)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => {
                    drop(permit);
                    return;
                }
            }
            let io = TokioIo::new(WriteTimeout::new(tcp, write_timeout));
            let connection = builder.serve_connection_with_upgrades(io, service);
            if let Err(e) = watcher.watch(connection.into_owned()).await {
                tracing::debug!(peer = %peer, error = %e, "connection ended with an error");
            }
            drop(permit);
        };
        match workers {
            None => {
                connections.spawn(serve_one(tcp));
            }
            Some(workers) => {
                // The socket leaves this runtime's reactor and joins the worker's (inside the worker).
                let tcp = match tcp.into_std() {
                    Ok(tcp) => tcp,
                    Err(e) => {
                        tracing::warn!(peer = %peer, error = %e, "cannot hand an accepted socket to a worker");
                        continue;
                    }
                };
                let (worker, load) = workers.pick();
                connections.spawn_on(
                    async move {
                        let _load = load;
                        match tokio::net::TcpStream::from_std(tcp) {
                            Ok(tcp) => serve_one(tcp).await,
                            Err(e) => tracing::warn!(peer = %peer, error = %e, "a worker cannot take a socket"),
                        }
                    },
                    &worker,
                );
            }
        }
    }
    drop(listener);
    let open = connections.len();
    if open > 0 {
        tracing::info!(
            connections = open,
            grace_ms = options.shutdown_grace.as_millis() as u64,
            "draining open connections"
        );
    }
    match tokio::time::timeout(options.shutdown_grace, graceful.shutdown()).await {
        Ok(()) => Ended::Drained,
        Err(_) => {
            while connections.try_join_next().is_some() {}
            let left = connections.len();
            tracing::warn!(
                connections = left,
                "shutdown grace period elapsed: closing the remaining connections"
            );
            connections.abort_all();
            while connections.join_next().await.is_some() {}
            Ended::GraceElapsed(left)
        }
    }
}

fn connection_builder(options: &ServeOptions) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout)
        .max_buf_size(options.max_header_bytes.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(options.max_header_bytes).unwrap_or(u32::MAX))
        .max_concurrent_streams(MAX_H2_STREAMS)
        // HTTP/2 has no header-read timeout; pings find dead peers of idle connections instead.
        .keep_alive_interval(Some(Duration::from_secs(20)))
        .keep_alive_timeout(Duration::from_secs(20));
    builder
}

/// Logs a failed `accept` so an operator can tell running out of descriptors from a client that reset early.
/// Out-of-descriptor errors are logged at most once a second (they repeat until a descriptor frees up).
fn log_accept_error(e: &std::io::Error, last_emfile_log: &mut Option<tokio::time::Instant>) {
    match e.raw_os_error() {
        Some(code) if code == libc::EMFILE || code == libc::ENFILE => {
            let now = tokio::time::Instant::now();
            if last_emfile_log.is_none_or(|at| now.duration_since(at) >= Duration::from_secs(1)) {
                *last_emfile_log = Some(now);
                tracing::error!(
                    error = %e,
                    errno = if code == libc::EMFILE { "EMFILE" } else { "ENFILE" },
                    "accept failed: out of file descriptors; lower limits.maxConnections or raise the descriptor limit (ulimit -n)"
                );
            }
        }
        _ => tracing::warn!(error = %e, "accept failed"),
    }
}

/// The address the peer connected from, when the relay serves through [`serve`].
pub fn peer_of(extensions: &axum::http::Extensions) -> Option<SocketAddr> {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// One `GET /worker` on a keep-alive connection; the body is the worker that served it.
    async fn which_worker(tcp: &mut TcpStream) -> String {
        tcp.write_all(b"GET /worker HTTP/1.1\r\nhost: relay\r\n\r\n")
            .await
            .unwrap();
        let mut buf = Vec::new();
        loop {
            let mut chunk = [0u8; 512];
            let n = tcp.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the connection closed early");
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .expect("a content-length")
                    .parse()
                    .unwrap();
                if body.len() >= length {
                    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                    return body.to_string();
                }
            }
        }
    }

    /// A listener on a free port and an app whose `GET /worker` answers the worker that served it.
    async fn worker_app() -> (TcpListener, SocketAddr, Router) {
        let app = Router::new().route(
            "/worker",
            get(|| async { format!("{:?}", crate::workers::current()) }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        (listener, addr, app)
    }

    fn options() -> ServeOptions {
        ServeOptions::from_limits(&LimitsConfig::default())
    }

    #[tokio::test]
    async fn each_connection_stays_on_the_least_loaded_worker_and_shutdown_drains() {
        let workers = Workers::start(2, Duration::from_secs(1)).unwrap();
        let (listener, addr, app) = worker_app().await;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = serve(listener, app, options(), Some(&workers), async {
            let _ = stopped.await;
        });
        let client = async {
            let mut first = TcpStream::connect(addr).await.unwrap();
            let a = which_worker(&mut first).await;
            // `first` stays open, so worker 0 has one connection and the next one goes to worker 1.
            let mut second = TcpStream::connect(addr).await.unwrap();
            let b = which_worker(&mut second).await;
            let a2 = which_worker(&mut first).await;
            let b2 = which_worker(&mut second).await;
            let counted = workers.open_connections();
            drop((first, second));
            stop.send(()).unwrap();
            (a, b, a2, b2, counted)
        };
        let (ended, (a, b, a2, b2, counted)) = tokio::join!(server, client);
        assert_eq!((a.as_str(), b.as_str()), ("Some(0)", "Some(1)"));
        assert_eq!(
            (a2, b2),
            (a, b),
            "a keep-alive connection stays on its worker"
        );
        assert_eq!(counted, vec![1, 1]);
        assert_eq!(ended, Ended::Drained);
        // The connection tasks end on their workers just after the drain; then their counts are released.
        for _ in 0..100 {
            if workers.open_connections() == vec![0, 0] {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(workers.open_connections(), vec![0, 0]);
    }

    #[tokio::test]
    async fn without_workers_connections_run_on_the_callers_runtime() {
        let (listener, addr, app) = worker_app().await;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = serve(listener, app, options(), None, async {
            let _ = stopped.await;
        });
        let client = async {
            let mut tcp = TcpStream::connect(addr).await.unwrap();
            let served = which_worker(&mut tcp).await;
            drop(tcp);
            stop.send(()).unwrap();
            served
        };
        let (ended, served) = tokio::join!(server, client);
        assert_eq!(served, "None");
        assert_eq!(ended, Ended::Drained);
    }
}
