//! OpenTelemetry traces of model calls, exported over OTLP/HTTP with protobuf bodies. Off unless an endpoint is
//! configured by the standard variables (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, used as is, or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`); `OTEL_EXPORTER_OTLP_HEADERS` / `..._TRACES_HEADERS`,
//! `OTEL_SERVICE_NAME` (default `patchbridge-relay`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and the
//! `OTEL_BSP_*` batch settings are read as the SDK reads them; `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none` keep it off. Spans follow the GenAI semantic conventions v1.37.0.
//!
//! - [`parent`]: the browser's `traceparent`, the parent of the relay's spans.
//! - [`exporter`]: the HTTP client the OTLP exporter sends with (the relay's hyper client, its own runtime).
//! - [`content`]: prompt and completion text as span attributes, only when the operator opts in.
//! - [`model_call`]: one span per model call, with its admission and upstream attempts as children.
//! - [`conversation`]: a span per conversation write.
//! - this file: [`Telemetry`], the tracer and its shutdown.

pub mod content;
pub mod conversation;
pub mod exporter;
pub mod model_call;
pub mod parent;

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;

use crate::config::TelemetryConfig;
use crate::model::client::UpstreamClient;

pub use model_call::ModelCallTrace;
pub use parent::TraceParent;

/// The instrumentation scope of every span.
pub const SCOPE: &str = "patchbridge-relay";
/// The GenAI semantic conventions the attributes follow.
pub const SEMCONV_VERSION: &str = "1.37.0";
/// How long one export may take (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` / `..._TIMEOUT` in ms override it).
const DEFAULT_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The relay's tracing: off (every span call is a no-op), or a tracer exporting over OTLP. Cheap to clone.
#[derive(Clone, Default)]
pub struct Telemetry(Option<Arc<Enabled>>);

pub(crate) struct Enabled {
    provider: SdkTracerProvider,
    pub(crate) tracer: SdkTracer,
    pub(crate) options: TelemetryConfig,
}

/// Why tracing could not be set up (at start-up, before the port opens).
#[derive(Debug, thiserror::Error)]
#[error("telemetry: {0}")]
pub struct TelemetryError(String);

impl Telemetry {
    /// Off.
    pub fn off() -> Self {
        Telemetry(None)
    }

    /// Tracing as the `OTEL_*` variables say (read through `get`), with the relay's own options; off when no
    /// endpoint is configured. The exporter's connections are made like model calls' (`connect_timeout`, the
    /// proxy variables, the Mozilla roots).
    pub fn from_env(
        get: impl Fn(&str) -> Option<String>,
        options: &TelemetryConfig,
        connect_timeout: Duration,
    ) -> Result<Self, TelemetryError> {
        let set = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim() == "none")
        {
            return Ok(Telemetry::off());
        }
        let endpoint = match (
            set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            set("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(traces), _) => traces,
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Ok(Telemetry::off()),
        };
        let protocol =
            set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or(set("OTEL_EXPORTER_OTLP_PROTOCOL"));
        if let Some(p) = protocol.filter(|p| p.trim() != "http/protobuf") {
            return Err(TelemetryError(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL `{p}` is not supported: the relay exports http/protobuf only"
            )));
        }
        let timeout = set("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .or(set("OTEL_EXPORTER_OTLP_TIMEOUT"))
            .map(|ms| {
                ms.trim()
                    .parse::<u64>()
                    .map(Duration::from_millis)
                    .map_err(|_| {
                        TelemetryError(format!(
                            "OTEL_EXPORTER_OTLP_TIMEOUT `{ms}` is not milliseconds"
                        ))
                    })
            })
            .transpose()?
            .unwrap_or(DEFAULT_EXPORT_TIMEOUT);
        let headers = set("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
            .or(set("OTEL_EXPORTER_OTLP_HEADERS"))
            .map(|text| parse_headers(&text))
            .transpose()?
            .unwrap_or_default();
        let http = UpstreamClient::from_env(connect_timeout)
            .map_err(|e| TelemetryError(format!("the exporter's HTTP client: {e}")))?;
        let client = exporter::ExportClient::new(http, timeout)
            .map_err(|e| TelemetryError(format!("the exporter's runtime: {e}")))?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(endpoint.clone())
            .with_timeout(timeout)
            .with_headers(headers)
            .build()
            .map_err(|e| TelemetryError(format!("OTLP exporter for {endpoint}: {e}")))?;
        let resource = match set("OTEL_SERVICE_NAME") {
            // The SDK's detectors read OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
            Some(_) => Resource::builder(),
            None => Resource::builder().with_service_name(SCOPE),
        }
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer_with_scope(
            opentelemetry::InstrumentationScope::builder(SCOPE)
                .with_version(env!("CARGO_PKG_VERSION"))
                .with_schema_url(format!(
                    "https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
                ))
                .build(),
        );
        tracing::info!(%endpoint, "OpenTelemetry traces export over OTLP/HTTP");
        Ok(Telemetry(Some(Arc::new(Enabled {
            provider,
            tracer,
            options: options.clone(),
        }))))
    }

    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    pub(crate) fn enabled(&self) -> Option<&Enabled> {
        self.0.as_deref()
    }

    /// Exports every span still queued and stops the exporter; blocks until the collector answered or the
    /// export timed out, so call it off the async workers (`spawn_blocking`) or after the runtime. Later spans
    /// are dropped.
    pub fn shutdown(&self) {
        if let Some(enabled) = &self.0 {
            if let Err(e) = enabled.provider.shutdown() {
                tracing::warn!(error = %e, "OpenTelemetry export at shutdown failed");
            }
        }
    }
}

/// `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas, values percent-decoded (the W3C
/// Baggage form the OpenTelemetry specification names).
fn parse_headers(text: &str) -> Result<std::collections::HashMap<String, String>, TelemetryError> {
    let mut headers = std::collections::HashMap::new();
    for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (name, value) = pair.split_once('=').ok_or_else(|| {
            TelemetryError(
                "OTEL_EXPORTER_OTLP_HEADERS must be name=value pairs separated by commas".into(),
            )
        })?;
        let value = percent_encoding::percent_decode_str(value.trim())
            .decode_utf8()
            .map_err(|_| {
                TelemetryError("OTEL_EXPORTER_OTLP_HEADERS: a value is not UTF-8".into())
            })?;
        headers.insert(name.trim().to_ascii_lowercase(), value.into_owned());
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn off(vars: &[(&str, &str)]) -> bool {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        let get = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        !Telemetry::from_env(get, &TelemetryConfig::default(), Duration::from_secs(1))
            .unwrap()
            .is_on()
    }

    #[test]
    fn tracing_is_off_unless_an_endpoint_is_configured() {
        assert!(off(&[]));
        assert!(off(&[("OTEL_SERVICE_NAME", "relay")]));
        assert!(off(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")]));
        assert!(off(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SDK_DISABLED", "true")
        ]));
        assert!(off(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_TRACES_EXPORTER", "none")
        ]));
    }

    #[test]
    fn grpc_and_unreadable_settings_are_refused() {
        let with = |k: &'static str, v: &'static str| {
            move |name: &str| match name {
                "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://127.0.0.1:4318".to_owned()),
                n if n == k => Some(v.to_owned()),
                _ => None,
            }
        };
        let options = TelemetryConfig::default();
        let second = Duration::from_secs(1);
        assert!(Telemetry::from_env(
            with("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            &options,
            second
        )
        .is_err());
        assert!(
            Telemetry::from_env(with("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"), &options, second)
                .is_err()
        );
        assert!(Telemetry::from_env(
            with("OTEL_EXPORTER_OTLP_HEADERS", "novalue"),
            &options,
            second
        )
        .is_err());
    }

    #[test]
    fn headers_are_comma_separated_and_percent_decoded() {
        let headers = parse_headers("x-api-key=abc%3D%3D, Team=core ,").unwrap();
        assert_eq!(headers["x-api-key"], "abc==");
        assert_eq!(headers["team"], "core");
        assert_eq!(headers.len(), 2);
    }
}
