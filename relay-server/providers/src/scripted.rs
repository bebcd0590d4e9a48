//! The deterministic scripted demo model (placeholder in the first API commit).
use patchbridge_protocol::{ModelRequest, StreamEvent};

/// Answers `request` with a complete neutral event stream. Pure function of the request.
pub fn respond(request: &ModelRequest) -> Vec<StreamEvent> {
    let _ = request;
    vec![StreamEvent::Error { code: "INTERNAL".into(), message: "scripted model not implemented yet".into(), retryable: Some(false) }]
}
