//! The upstream HTTP client: hyper's pooled client over rustls (HTTP/1.1, and HTTP/2 where the provider offers
//! it by ALPN), with the proxy rules of the `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` variables.
//!
//! Built on hyper directly rather than a convenience client so that the connection's buffers are ours to size:
//! an open model stream holds its upstream connection for as long as the model writes, and hyper's adaptive
//! read buffer grows on a burst of chunks and never shrinks again. Here it is [`READ_BUFFER_BYTES`] for good.
//! Redirects are never followed (hyper's client has no redirect logic): a 3xx is an upstream rejection, so the
//! body and the API key never travel anywhere but the configured base URL.
//!
//! One connection pool per worker ([`crate::workers`], [`UpstreamClient::with_pools`]): a pooled connection is
//! driven by a task on the worker that opened it, so a call made on another worker would wake that worker at
//! every chunk. A call uses its own worker's pool (the first pool off the workers).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, PROXY_AUTHORIZATION};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper::{Request, Response, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::legacy::Client;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tower_service::Service;

/// What one upstream answer is: its head, and a body streamed as it arrives.
pub type UpstreamResponse = Response<hyper::body::Incoming>;

/// Why an upstream request failed before its response head arrived.
pub type UpstreamError = hyper_util::client::legacy::Error;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The read buffer of each upstream HTTP/1 connection, fixed. It is also the cap on a response head, like
/// nginx's default `proxy_buffer_size` (one page, 4 or 8 KiB); provider heads are 1–2 KiB. A larger head fails
/// the attempt as a transport error, logged as "message head is too large".
pub const READ_BUFFER_BYTES: usize = 8 * 1024;

/// Idle pooled connections are closed after this long (providers close theirs after a minute or two).
const POOL_IDLE: Duration = Duration::from_secs(90);
/// TCP keepalive probes on upstream connections, so a silently dead peer is noticed during a long stream.
const TCP_KEEPALIVE: Duration = Duration::from_secs(15);

type Pool = Client<HttpsConnector<ProxyConnector>, Full<Bytes>>;

/// The pooled upstream client. Cheap to clone (the pools are shared).
#[derive(Clone)]
pub struct UpstreamClient {
    pools: Arc<[Pool]>,
    connector: HttpsConnector<ProxyConnector>,
    proxies: Arc<Matcher>,
}

/// The client could not be set up (at start-up).
#[derive(Debug, thiserror::Error)]
#[error("TLS setup: {0}")]
pub struct ClientSetupError(#[source] rustls::Error);

impl UpstreamClient {
    /// A client with the proxy rules of the process environment (read once, here) that trusts the Mozilla
    /// root certificates (`webpki-roots`).
    pub fn from_env(connect_timeout: Duration) -> Result<Self, ClientSetupError> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        Self::new(connect_timeout, Matcher::from_env(), roots)
    }

    /// A client with the given proxy rules, trusting the given roots (a private CA, or a test's).
    pub fn new(
        connect_timeout: Duration,
        proxies: Matcher,
        roots: rustls::RootCertStore,
    ) -> Result<Self, ClientSetupError> {
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(ClientSetupError)?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let proxies = Arc::new(proxies);
        let mut tcp = HttpConnector::new();
        // hyper-rustls hands `https` URIs to this connector and does the TLS itself.
        tcp.enforce_http(false);
        tcp.set_connect_timeout(Some(connect_timeout));
        tcp.set_nodelay(true);
        tcp.set_keepalive(Some(TCP_KEEPALIVE));
        // ALPN offers h2 and http/1.1 (set by the builder on this configuration).
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(ProxyConnector {
                tcp,
                proxies: proxies.clone(),
            });
        Ok(UpstreamClient {
            pools: Arc::from([pool(connector.clone())]),
            connector,
            proxies,
        })
    }

    /// The same client with `count` connection pools (at least one), one per worker: a call on worker `i`
    /// uses pool `i`.
    pub fn with_pools(self, count: usize) -> Self {
        let pools: Vec<Pool> = (0..count.max(1))
            .map(|_| pool(self.connector.clone()))
            .collect();
        UpstreamClient {
            pools: Arc::from(pools),
            ..self
        }
    }

    /// How many connection pools the client has.
    pub fn pool_count(&self) -> usize {
        self.pools.len()
    }

    /// Sends one request; resolves with the response head. A plain-HTTP request that goes through a proxy
    /// carries the proxy's credentials (a tunnelled one sent them in its `CONNECT`).
    pub async fn send(
        &self,
        mut request: Request<Full<Bytes>>,
    ) -> Result<UpstreamResponse, UpstreamError> {
        if request.uri().scheme_str() == Some("http") {
            if let Some(auth) = self
                .proxies
                .intercept(request.uri())
                .and_then(|proxy| proxy.basic_auth().cloned())
            {
                let mut auth: HeaderValue = auth;
                // A secret: kept out of debug output.
                auth.set_sensitive(true);
                request.headers_mut().insert(PROXY_AUTHORIZATION, auth);
            }
        }
        let pool = crate::workers::current().unwrap_or(0) % self.pools.len();
        self.pools[pool].request(request).await
    }
}

fn pool(connector: HttpsConnector<ProxyConnector>) -> Pool {
    Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(POOL_IDLE)
        .http1_read_buf_exact_size(READ_BUFFER_BYTES)
        .build(connector)
}

/// Every cause of an error, outermost first, joined by `": "` (hyper's own text is only "client error (Connect)").
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The TCP part of a connection: straight to the destination, to a proxy that forwards plain-HTTP requests
/// (which are then sent in absolute form), or through a proxy's `CONNECT` tunnel for HTTPS.
#[derive(Clone)]
struct ProxyConnector {
    tcp: HttpConnector,
    proxies: Arc<Matcher>,
}

impl Service<Uri> for ProxyConnector {
    type Response = ProxiedStream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ProxiedStream, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // `HttpConnector` is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let mut tcp = self.tcp.clone();
        let proxy = self.proxies.intercept(&dst);
        Box::pin(async move {
            let Some(proxy) = proxy else {
                return Ok(ProxiedStream::direct(tcp.call(dst).await?));
            };
            if proxy.uri().scheme_str() != Some("http") {
                return Err(format!(
                    "proxy {}: only http:// proxies are supported",
                    proxy.uri().scheme_str().unwrap_or("without a scheme")
                )
                .into());
            }
            if dst.scheme_str() == Some("https") {
                let mut tunnel = Tunnel::new(proxy.uri().clone(), tcp);
                if let Some(auth) = proxy.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                Ok(ProxiedStream::direct(tunnel.call(dst).await?))
            } else {
                let io = tcp.call(proxy.uri().clone()).await?;
                Ok(ProxiedStream { io, proxied: true })
            }
        })
    }
}

/// A TCP stream that knows whether it leads to a forwarding proxy: hyper's client then writes request targets
/// in absolute form (`POST http://host/path`).
struct ProxiedStream {
    io: TokioIo<TcpStream>,
    proxied: bool,
}

impl ProxiedStream {
    fn direct(io: TokioIo<TcpStream>) -> Self {
        ProxiedStream { io, proxied: false }
    }
}

impl Connection for ProxiedStream {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.proxied)
    }
}

impl Read for ProxiedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl Write for ProxiedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
