//! A span per conversation write (`PUT` / `POST {base}/conversations`): `conversation write`, kind INTERNAL, a
//! child of the request's `traceparent` (the page's trace), with `gen_ai.conversation.id`, `db.system.name`
//! (`sqlite` or `postgresql`) and `error.type` when the store failed or refused the write (`REVISION_CONFLICT`).

use std::future::Future;

use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer};
use opentelemetry::KeyValue;

use super::{Telemetry, TraceParent};

/// Runs `write` inside the span; `outcome` names the error code of its result, if any.
pub async fn traced<T>(
    telemetry: &Telemetry,
    parent: &TraceParent,
    conversation_id: Option<&str>,
    db_system: &'static str,
    write: impl Future<Output = T>,
    outcome: impl FnOnce(&T) -> Option<&'static str>,
) -> T {
    let Some(enabled) = telemetry.enabled() else {
        return write.await;
    };
    let mut attributes = vec![KeyValue::new("db.system.name", db_system)];
    if let Some(id) = conversation_id {
        attributes.push(KeyValue::new("gen_ai.conversation.id", id.to_owned()));
    }
    let mut span = enabled
        .tracer
        .span_builder("conversation write")
        .with_kind(SpanKind::Internal)
        .with_attributes(attributes)
        .start_with_context(&enabled.tracer, &parent.context());
    let result = write.await;
    if let Some(code) = outcome(&result) {
        span.set_attribute(KeyValue::new("error.type", code));
        span.set_status(Status::error(code));
    }
    span.end();
    result
}
