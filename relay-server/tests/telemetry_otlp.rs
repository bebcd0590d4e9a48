//! OpenTelemetry traces received as real OTLP/HTTP: a receiver in the test decodes the protobuf export requests
//! (`opentelemetry-proto`'s prost messages) and the spans of a model call are checked: one GenAI span joining
//! the browser's `traceparent`, its `admission` and upstream `POST` children, the conversation write, the
//! documented attributes, the exporter's headers and resource, the flush at shutdown; prompt text and user ids
//! only when opted in; errors as `error.type`; the CORS preflight allowing `traceparent`.

mod common;

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Request, StatusCode};
use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{
    span::SpanKind, status::StatusCode as SpanStatus, Span,
};
use patchbridge_relay::config::TelemetryConfig;
use patchbridge_relay::router;
use patchbridge_relay::telemetry::Telemetry;
use prost::Message as _;
use serde_json::{json, Value};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// What the receiver got: each export request's headers and decoded body.
type Received = Arc<Mutex<Vec<(HeaderMap, ExportTraceServiceRequest)>>>;

/// An OTLP/HTTP traces endpoint on 127.0.0.1: `POST /v1/traces`, protobuf in, an empty protobuf answer out.
async fn receiver() -> (String, Received) {
    let received: Received = Arc::default();
    let sink = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let sink = sink.clone();
            async move {
                let request =
                    ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf body");
                sink.lock().unwrap().push((headers, request));
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), received)
}

fn chat_stream() -> String {
    let chunk = |body: Value| format!("data: {body}\n\n");
    let mut out = chunk(json!({ "id": "c1", "object": "chat.completion.chunk",
        "choices": [ { "index": 0, "delta": { "role": "assistant", "content": "Hi there" }, "finish_reason": null } ] }));
    out += &chunk(json!({ "id": "c1", "object": "chat.completion.chunk",
        "choices": [ { "index": 0, "delta": {}, "finish_reason": "stop" } ] }));
    out += &chunk(
        json!({ "id": "c1", "object": "chat.completion.chunk", "choices": [],
        "usage": { "prompt_tokens": 21, "completion_tokens": 4, "total_tokens": 25 } }),
    );
    out + "data: [DONE]\n\n"
}

/// A relay with the `chat` model at a fake upstream answering `replies`, exporting to `endpoint`.
async fn traced_relay(
    replies: Vec<Reply>,
    endpoint: &str,
    options: TelemetryConfig,
) -> (Relay, Telemetry, FakeUpstream, TestDb) {
    let (fake, r, db) = relay_with_upstream(
        replies,
        json!({ "server": { "allowedOrigins": ["https://app.example"] } }),
    )
    .await;
    let endpoint = endpoint.to_owned();
    let get = move |name: &str| match name {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(endpoint.clone()),
        "OTEL_EXPORTER_OTLP_HEADERS" => Some("x-otlp-team=core%20ai".to_owned()),
        _ => None,
    };
    let telemetry = Telemetry::from_env(get, &options, std::time::Duration::from_secs(5)).unwrap();
    assert!(telemetry.is_on());
    let state = r.state.clone().with_telemetry(telemetry.clone());
    let r = Relay {
        app: router(state.clone()),
        state,
    };
    (r, telemetry, fake, db)
}

fn with_traceparent(mut request: Request<Body>) -> Request<Body> {
    request.headers_mut().insert(
        "traceparent",
        format!("00-{TRACE_ID}-{PARENT_ID}-01").parse().unwrap(),
    );
    request
}

/// Exports what is queued (the exporter's flush at shutdown) and returns every span received, with the
/// resource attributes of the first export.
async fn flushed(
    telemetry: Telemetry,
    received: &Received,
) -> (Vec<Span>, Vec<KeyValue>, HeaderMap) {
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .unwrap();
    let received = received.lock().unwrap();
    assert!(
        !received.is_empty(),
        "the shutdown flushed the queued spans"
    );
    let mut spans = Vec::new();
    let mut resource = Vec::new();
    for (_, request) in received.iter() {
        for resource_spans in &request.resource_spans {
            if let Some(r) = &resource_spans.resource {
                resource = r.attributes.clone();
            }
            for scope in &resource_spans.scope_spans {
                assert_eq!(scope.scope.as_ref().unwrap().name, "patchbridge-relay");
                spans.extend(scope.spans.iter().cloned());
            }
        }
    }
    (spans, resource, received[0].0.clone())
}

fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

fn text(span: &Span, key: &str) -> String {
    match attr(&span.attributes, key) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        other => panic!("{key} is not a string on {}: {other:?}", span.name),
    }
}

fn int(span: &Span, key: &str) -> i64 {
    match attr(&span.attributes, key) {
        Some(any_value::Value::IntValue(i)) => *i,
        other => panic!("{key} is not an int on {}: {other:?}", span.name),
    }
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_call_is_one_genai_span_joining_the_browsers_trace_with_admission_upstream_and_write_children(
) {
    let (endpoint, received) = receiver().await;
    let (r, telemetry, _fake, _db) = traced_relay(
        vec![Reply::sse(chat_stream())],
        &endpoint,
        TelemetryConfig::default(),
    )
    .await;
    let mut body = first_turn_request("chat");
    body["conversationId"] = json!("conv-7");
    let response = r
        .send(with_traceparent(req(
            "POST",
            "/api/model",
            "alice",
            Some(body),
        )))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let events = events_of(&body_text(response).await);
    assert_eq!(events.last().unwrap()["type"], "message-stop");
    let created = r
        .send(with_traceparent(req(
            "POST",
            "/api/conversations",
            "alice",
            Some(json!({ "title": "t" })),
        )))
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);

    let (spans, resource, headers) = flushed(telemetry, &received).await;
    assert_eq!(headers["content-type"], "application/x-protobuf");
    assert_eq!(
        headers["x-otlp-team"], "core ai",
        "OTEL_EXPORTER_OTLP_HEADERS, decoded"
    );
    assert!(
        matches!(attr(&resource, "service.name"), Some(any_value::Value::StringValue(s)) if s == "patchbridge-relay")
    );

    let call = named(&spans, "chat chat-upstream");
    assert_eq!(
        call.len(),
        1,
        "one span per model call: {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let call = call[0];
    assert_eq!(hex(&call.trace_id), TRACE_ID, "the browser's trace");
    assert_eq!(
        hex(&call.parent_span_id),
        PARENT_ID,
        "the browser's span is the parent"
    );
    assert_eq!(call.kind, SpanKind::Server as i32);
    assert_eq!(text(call, "gen_ai.operation.name"), "chat");
    assert_eq!(text(call, "gen_ai.provider.name"), "openai");
    assert_eq!(text(call, "gen_ai.request.model"), "chat-upstream");
    assert_eq!(text(call, "gen_ai.response.model"), "chat-upstream");
    assert_eq!(text(call, "gen_ai.conversation.id"), "conv-7");
    assert_eq!(text(call, "patchbridge.model.id"), "chat");
    assert_eq!(int(call, "gen_ai.usage.input_tokens"), 21);
    assert_eq!(int(call, "gen_ai.usage.output_tokens"), 4);
    match attr(&call.attributes, "gen_ai.response.finish_reasons") {
        Some(any_value::Value::ArrayValue(a)) => assert_eq!(
            a.values[0].value,
            Some(any_value::Value::StringValue("end-turn".into()))
        ),
        other => panic!("finish reasons: {other:?}"),
    }
    for private in [
        "user.id",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "error.type",
    ] {
        assert!(
            attr(&call.attributes, private).is_none(),
            "{private} is not recorded by default"
        );
    }
    assert_ne!(
        call.status.as_ref().map_or(0, |s| s.code),
        SpanStatus::Error as i32
    );

    let admission = named(&spans, "admission");
    assert_eq!(admission.len(), 1);
    assert_eq!(admission[0].parent_span_id, call.span_id);
    let upstream = named(&spans, "POST");
    assert_eq!(upstream.len(), 1);
    assert_eq!(upstream[0].parent_span_id, call.span_id);
    assert_eq!(upstream[0].kind, SpanKind::Client as i32);
    assert_eq!(int(upstream[0], "http.response.status_code"), 200);
    assert_eq!(text(upstream[0], "server.address"), "127.0.0.1");
    assert!(text(upstream[0], "url.full").ends_with("/chat/completions"));

    let write = named(&spans, "conversation write");
    assert_eq!(write.len(), 1);
    assert_eq!(hex(&write[0].trace_id), TRACE_ID);
    assert_eq!(hex(&write[0].parent_span_id), PARENT_ID);
    assert_eq!(text(write[0], "db.system.name"), "sqlite");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_and_user_ids_only_when_opted_in_and_a_refused_call_carries_its_error_type() {
    let (endpoint, received) = receiver().await;
    let options = TelemetryConfig {
        capture_content: true,
        record_user_ids: true,
    };
    let (r, telemetry, _fake, _db) = traced_relay(
        vec![Reply::status(400), Reply::sse(chat_stream())],
        &endpoint,
        options,
    )
    .await;
    let (status, _) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    let (status, _) = post_model(&r, first_turn_request("chat")).await;
    assert_eq!(status, StatusCode::OK);

    let (spans, _, _) = flushed(telemetry, &received).await;
    let calls = named(&spans, "chat chat-upstream");
    assert_eq!(calls.len(), 2);
    let failed = calls
        .iter()
        .find(|s| attr(&s.attributes, "error.type").is_some())
        .unwrap();
    assert_eq!(text(failed, "error.type"), "UPSTREAM_REJECTED");
    assert_eq!(
        failed.status.as_ref().unwrap().code,
        SpanStatus::Error as i32
    );
    assert_eq!(
        failed.parent_span_id,
        Vec::<u8>::new(),
        "no traceparent: a trace of its own"
    );
    let attempt = spans
        .iter()
        .find(|s| s.name == "POST" && s.parent_span_id == failed.span_id)
        .unwrap();
    assert_eq!(text(attempt, "error.type"), "UPSTREAM_REJECTED");

    let ok = calls
        .iter()
        .find(|s| attr(&s.attributes, "error.type").is_none())
        .unwrap();
    assert_eq!(text(ok, "user.id"), "alice");
    let input: Value = serde_json::from_str(&text(ok, "gen_ai.input.messages")).unwrap();
    assert_eq!(
        input,
        json!([{ "role": "user", "parts": [{ "type": "text", "content": "Please help." }] }])
    );
    let output: Value = serde_json::from_str(&text(ok, "gen_ai.output.messages")).unwrap();
    assert_eq!(
        output,
        json!([{ "role": "assistant", "parts": [{ "type": "text", "content": "Hi there" }],
                 "finish_reason": "end-turn" }])
    );
}

#[tokio::test]
async fn the_cors_preflight_allows_the_traceparent_header() {
    let (_fake, r, _db) = relay_with_upstream(
        vec![],
        json!({ "server": { "allowedOrigins": ["https://app.example"] } }),
    )
    .await;
    let response = r
        .send(
            Request::builder()
                .method("OPTIONS")
                .uri("/api/model")
                .header("host", HOST)
                .header("origin", "https://app.example")
                .header("access-control-request-method", "POST")
                .header(
                    "access-control-request-headers",
                    "content-type,traceparent,tracestate",
                )
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    let allowed = response
        .headers()
        .get("access-control-allow-headers")
        .expect("a preflight answer")
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("traceparent"), "{allowed}");
    assert!(allowed.contains("tracestate"), "{allowed}");
}
