//! The HTTP client the OTLP exporter sends its protobuf bodies with: the relay's own hyper client
//! ([`UpstreamClient`]: rustls with the Mozilla roots, the proxy variables) driven by a runtime of its own, one
//! worker thread named `otlp-export`. The SDK's batch span processor exports from a plain thread of its own; with
//! a runtime of their own, exports never wait for (or block) the relay's request workers, and a flush at
//! shutdown works after the relay's runtime has stopped serving. Responses are read up to [`MAX_RESPONSE_BYTES`]
//! (a collector answers a few bytes); the whole exchange is bounded by the export timeout.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

use crate::model::client::UpstreamClient;

/// The largest collector answer read.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;

pub struct ExportClient {
    http: UpstreamClient,
    runtime: tokio::runtime::Runtime,
    timeout: Duration,
}

impl fmt::Debug for ExportClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExportClient")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ExportClient {
    /// A client over `http` (its own pool: the collector is not a model provider) with its own runtime.
    pub fn new(http: UpstreamClient, timeout: Duration) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("otlp-export")
            .enable_all()
            .build()?;
        Ok(ExportClient {
            http,
            runtime,
            timeout,
        })
    }
}

#[async_trait::async_trait]
impl HttpClient for ExportClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let http = self.http.clone();
        let timeout = self.timeout;
        let exchange = async move {
            let (parts, body) = request.into_parts();
            let response = http
                .send(hyper::Request::from_parts(parts, Full::new(body)))
                .await?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, MAX_RESPONSE_BYTES)
                .collect()
                .await?
                .to_bytes();
            Ok::<_, HttpError>(Response::from_parts(parts, body))
        };
        // Awaiting the task's handle works from any executor (the SDK's export thread blocks on this future).
        let task = self
            .runtime
            .spawn(async move { tokio::time::timeout(timeout, exchange).await });
        match task.await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(format!("no answer within {} ms", timeout.as_millis()).into()),
            Err(e) => Err(Box::new(e)),
        }
    }
}
