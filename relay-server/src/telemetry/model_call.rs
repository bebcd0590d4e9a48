//! One span per model call, in the GenAI semantic conventions v1.37.0: `chat {gen_ai.request.model}`, kind
//! SERVER (the relay serves the browser's request; its parent is the browser's `traceparent`), with
//! `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.request.max_tokens`,
//! `gen_ai.conversation.id`, and when the call ends `gen_ai.response.model`, `gen_ai.response.finish_reasons`,
//! `gen_ai.usage.input_tokens` / `output_tokens`, or `error.type` (the relay's error code; `cancelled` when
//! the stream was dropped before it ended) with an error status. Children: `admission` (the spending limits) and
//! one `POST` CLIENT span per upstream attempt (HTTP conventions: `http.request.method`, `server.address`,
//! `server.port`, `url.full`, `http.response.status_code`, `error.type`). `user.id` only with
//! `telemetry.recordUserIds`; text only with `telemetry.captureContent` ([`super::content`]).
//!
//! With tracing off every method is a branch on `None`.

use std::borrow::Cow;
use std::future::Future;

use axum::http::Uri;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use patchbridge_protocol::{ModelRequest, StreamEvent};
use patchbridge_providers::ProviderKind;

use super::content::{self, Output};
use super::{Enabled, Telemetry, TraceParent};
use crate::error::RelayError;

/// `gen_ai.provider.name` of a provider format (an OpenAI-compatible server is reported as `openai`: the relay
/// cannot tell whose server it is); `None`: the scripted demo model.
pub fn provider_name(kind: Option<ProviderKind>) -> &'static str {
    match kind {
        Some(ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses) => "openai",
        Some(ProviderKind::AnthropicMessages) => "anthropic",
        None => "patchbridge.scripted",
    }
}

/// What the call span says about a call before it starts.
pub struct CallInfo<'a> {
    /// The relay's model id (`patchbridge.model.id`).
    pub model_id: &'a str,
    /// `None`: the scripted demo model.
    pub provider: Option<ProviderKind>,
    /// The provider's model name (`gen_ai.request.model`).
    pub upstream_model: &'a str,
    pub max_tokens: Option<u32>,
    pub user: &'a str,
    pub request: &'a ModelRequest,
}

/// The span of one model call; ends when dropped (with the response stream).
pub struct ModelCallTrace(Option<Box<Call>>);

struct Call {
    cx: Context,
    tracer: opentelemetry_sdk::trace::SdkTracer,
    response_model: String,
    /// Gathered only when content is captured.
    output: Option<Output>,
    /// Some event reached the browser.
    streamed: bool,
    /// The call ended (message-stop, an error).
    ended: bool,
}

impl ModelCallTrace {
    /// No span (tracing off).
    pub fn off() -> Self {
        ModelCallTrace(None)
    }

    pub fn start(telemetry: &Telemetry, parent: &TraceParent, info: CallInfo<'_>) -> Self {
        let Some(enabled) = telemetry.enabled() else {
            return ModelCallTrace(None);
        };
        let Enabled {
            tracer, options, ..
        } = enabled;
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", provider_name(info.provider)),
            KeyValue::new("gen_ai.request.model", info.upstream_model.to_owned()),
            KeyValue::new("patchbridge.model.id", info.model_id.to_owned()),
        ];
        if let Some(kind) = info.provider {
            attributes.push(KeyValue::new("patchbridge.provider.format", kind.as_str()));
        }
        if let Some(max) = info.max_tokens {
            attributes.push(KeyValue::new("gen_ai.request.max_tokens", i64::from(max)));
        }
        if let Some(id) = &info.request.conversation_id {
            attributes.push(KeyValue::new("gen_ai.conversation.id", id.clone()));
        }
        if options.record_user_ids {
            attributes.push(KeyValue::new("user.id", info.user.to_owned()));
        }
        if options.capture_content {
            attributes.push(KeyValue::new(
                "gen_ai.input.messages",
                content::input_messages(&info.request.messages),
            ));
        }
        let span = tracer
            .span_builder(format!("chat {}", info.upstream_model))
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent.context());
        ModelCallTrace(Some(Box::new(Call {
            cx: parent.context().with_span(span),
            tracer: tracer.clone(),
            response_model: info.upstream_model.to_owned(),
            output: options.capture_content.then(Output::default),
            streamed: false,
            ended: false,
        })))
    }

    /// Runs the spending admission inside an `admission` child span; a refusal is the call's error too.
    pub async fn admission<T>(
        &mut self,
        admit: impl Future<Output = Result<T, RelayError>>,
    ) -> Result<T, RelayError> {
        let Some(call) = &mut self.0 else {
            return admit.await;
        };
        let mut span = call.tracer.start_with_context("admission", &call.cx);
        let result = admit.await;
        if let Err(error) = &result {
            span.set_attribute(KeyValue::new("error.type", error.code().as_str()));
            span.set_status(Status::error(error.code().as_str()));
            call.failed(error.code().as_str());
        }
        span.end();
        result
    }

    /// A CLIENT span for one upstream attempt at `endpoint` (number `attempt`, from 1); it ends when the
    /// returned value is told the outcome or dropped.
    pub fn attempt(&self, endpoint: &Uri, attempt: u32) -> AttemptSpan {
        let Some(call) = &self.0 else {
            return AttemptSpan(None);
        };
        let mut attributes = vec![
            KeyValue::new("http.request.method", "POST"),
            KeyValue::new("url.full", endpoint.to_string()),
        ];
        if let Some(host) = endpoint.host() {
            attributes.push(KeyValue::new("server.address", host.to_owned()));
        }
        let port = endpoint.port_u16().unwrap_or(match endpoint.scheme_str() {
            Some("http") => 80,
            _ => 443,
        });
        attributes.push(KeyValue::new("server.port", i64::from(port)));
        if attempt > 1 {
            attributes.push(KeyValue::new(
                "http.request.resend_count",
                i64::from(attempt - 1),
            ));
        }
        let span = call
            .tracer
            .span_builder("POST")
            .with_kind(SpanKind::Client)
            .with_attributes(attributes)
            .start_with_context(&call.tracer, &call.cx);
        AttemptSpan(Some(span))
    }

    /// Notes what a streamed event says: usage and finish reason at `message-stop`, the code of an `error`.
    pub fn observe(&mut self, event: &StreamEvent) {
        let Some(call) = &mut self.0 else { return };
        call.streamed = true;
        if let Some(output) = &mut call.output {
            output.observe(event);
        }
        match event {
            StreamEvent::MessageStop {
                stop_reason, usage, ..
            } => {
                let span = call.cx.span();
                let reasons = Array::String(vec![StringValue::from(stop_reason.as_str())]);
                span.set_attribute(KeyValue::new(
                    "gen_ai.response.finish_reasons",
                    Value::Array(reasons),
                ));
                span.set_attribute(KeyValue::new(
                    "gen_ai.response.model",
                    call.response_model.clone(),
                ));
                span.set_attribute(KeyValue::new(
                    "gen_ai.usage.input_tokens",
                    usage.input_tokens as i64,
                ));
                span.set_attribute(KeyValue::new(
                    "gen_ai.usage.output_tokens",
                    usage.output_tokens as i64,
                ));
                if let Some(output) = &call.output {
                    span.set_attribute(KeyValue::new(
                        "gen_ai.output.messages",
                        output.finish(*stop_reason),
                    ));
                }
                call.ended = true;
            }
            StreamEvent::Error { code, .. } => call.failed(code),
            _ => {}
        }
    }

    /// The call failed before any event streamed.
    pub fn fail(&mut self, error: &RelayError) {
        if let Some(call) = &mut self.0 {
            call.failed(error.code().as_str());
        }
    }
}

impl Call {
    fn failed(&mut self, code: &str) {
        let span = self.cx.span();
        span.set_attribute(KeyValue::new("error.type", code.to_owned()));
        span.set_status(Status::error(code.to_owned()));
        self.ended = true;
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if !self.ended {
            // Dropped before it ended: the browser hung up mid-stream, or the handler gave up early.
            let code: Cow<'static, str> = if self.streamed {
                "cancelled".into()
            } else {
                "_OTHER".into()
            };
            self.failed(&code);
        }
        self.cx.span().end();
    }
}

/// The span of one upstream attempt.
pub struct AttemptSpan(Option<opentelemetry_sdk::trace::Span>);

impl AttemptSpan {
    /// The provider answered with this status (a non-2xx one is the attempt's error).
    pub fn answered(mut self, status: u16) {
        if let Some(span) = &mut self.0 {
            span.set_attribute(KeyValue::new(
                "http.response.status_code",
                i64::from(status),
            ));
            if status >= 400 {
                span.set_attribute(KeyValue::new("error.type", status.to_string()));
                span.set_status(Status::error(status.to_string()));
            }
        }
    }

    /// The attempt failed with this error (`error.type` is its code; the status too when the provider sent one).
    pub fn failed(mut self, error: &RelayError, status: Option<u16>) {
        if let Some(span) = &mut self.0 {
            if let Some(status) = status {
                span.set_attribute(KeyValue::new(
                    "http.response.status_code",
                    i64::from(status),
                ));
            }
            span.set_attribute(KeyValue::new("error.type", error.code().as_str()));
            span.set_status(Status::error(error.code().as_str()));
        }
    }
}

impl Drop for AttemptSpan {
    fn drop(&mut self) {
        if let Some(span) = &mut self.0 {
            span.end();
        }
    }
}
