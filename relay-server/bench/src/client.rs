//! The load generator's HTTP side: one hyper HTTP/1.1 client with a keep-alive pool, and one measured
//! stream request ([`stream_once`]): time to first complete SSE event, time to the end of the body, and a
//! check that every event arrived.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::sse::{SseScan, Wire};

pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// The request a browser sends the relay (`docs/protocol.md` §2); `{model}` is the relay's model id.
pub const RELAY_BODY_TEMPLATE: &str = r#"{"model":"{model}","messages":[{"id":"m1","role":"user","blocks":[{"type":"text","text":"Write a short story."}]}],"modelState":null,"tools":[]}"#;

/// What the relay sends upstream for that request, near enough: what a direct caller sends the provider.
pub const CHAT_BODY: &str = r#"{"model":"bench-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Write a short story."}]}"#;

pub fn client() -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(300))
        .build(connector)
}

/// One way of reaching the fake upstream's stream.
#[derive(Clone)]
pub struct Target {
    pub uri: Uri,
    pub body: Bytes,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub wire: Wire,
}

impl Target {
    /// The upstream itself or nginx in front of it: a Chat Completions request to `{base}{path}`.
    pub fn chat(base: &str, path: &str) -> Result<Target, String> {
        Ok(Target {
            uri: format!("{base}{path}")
                .parse()
                .map_err(|e| format!("{base}{path}: {e}"))?,
            body: Bytes::from_static(CHAT_BODY.as_bytes()),
            headers: vec![(
                hyper::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            wire: Wire::OpenAiChat,
        })
    }

    /// The relay: a neutral request for `model` to `{base}/api/model`, as a same-origin page in development
    /// identity mode sends it.
    pub fn relay(base: &str, model: &str) -> Result<Target, String> {
        let uri: Uri = format!("{base}/api/model")
            .parse()
            .map_err(|e| format!("{base}: {e}"))?;
        let origin =
            HeaderValue::from_str(base.trim_end_matches('/')).map_err(|e| e.to_string())?;
        Ok(Target {
            uri,
            body: Bytes::from(RELAY_BODY_TEMPLATE.replace("{model}", model)),
            headers: vec![
                (
                    hyper::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                ),
                (hyper::header::ORIGIN, origin),
                (
                    HeaderName::from_static("x-patchbridge-user"),
                    HeaderValue::from_static("bench-user"),
                ),
            ],
            wire: Wire::Neutral,
        })
    }
}

/// Timings of one complete, checked stream.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub first_event: Duration,
    pub total: Duration,
}

/// Announces once that a stream has received at least `events` events (used to hold streams mid-response).
pub struct Midway {
    pub events: usize,
    pub reached: Arc<AtomicUsize>,
}

/// Sends one request and reads the whole SSE body; fails on any status but 200 or a stream with missing,
/// extra or error events.
pub async fn stream_once(
    client: &HttpClient,
    target: &Target,
    chunks: usize,
    midway: Option<&Midway>,
) -> Result<Sample, String> {
    let mut request = Request::post(target.uri.clone());
    for (name, value) in &target.headers {
        request = request.header(name, value);
    }
    let request = request
        .body(Full::new(target.body.clone()))
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("{}: {e:?}", target.uri))?;
    let status = response.status();
    let mut body = response.into_body();
    if status != hyper::StatusCode::OK {
        let text = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        return Err(format!(
            "{}: status {status}: {}",
            target.uri,
            String::from_utf8_lossy(&text)
        ));
    }
    let mut scan = SseScan::default();
    let mut first_event = None;
    let mut announced = false;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("{}: body: {e}", target.uri))?;
        let Some(data) = frame.data_ref() else {
            continue;
        };
        scan.feed(data);
        if first_event.is_none() && scan.events > 0 {
            first_event = Some(started.elapsed());
        }
        if let Some(m) = midway {
            if !announced && scan.events >= m.events {
                announced = true;
                m.reached.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let total = started.elapsed();
    scan.check(target.wire, chunks)
        .map_err(|e| format!("{}: {e}", target.uri))?;
    Ok(Sample {
        first_event: first_event.unwrap_or(total),
        total,
    })
}
