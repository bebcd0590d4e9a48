//! Shared driver of the fuzz targets: an upstream SSE body cut at arbitrary points, framed by the same
//! [`SseFramer`] the relay uses, and fed to a provider [`Decoder`] exactly as
//! `relay-server/src/model/stream.rs` does (unnamed events as `""`, a final blank line at end of body,
//! `finish` at the end, nothing after the decoder is complete).

use patchbridge_protocol::{ModelRequest, StreamEvent};
use patchbridge_providers::sse::SseFramer;
use patchbridge_providers::{Decoder, ProviderKind};

/// The request every decoder run answers: one user message and tools with names that need mapping.
pub fn request() -> ModelRequest {
    serde_json::from_value(serde_json::json!({
        "model": "m",
        "messages": [ { "id": "u1", "role": "user", "blocks": [ { "type": "text", "text": "Please help." } ] } ],
        "modelState": null,
        "tools": [
            { "name": "todo.add", "description": "add", "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } } },
            { "name": "todo_add", "description": "add", "inputSchema": { "type": "object" } },
            { "name": "weather_get", "description": "w", "inputSchema": { "type": "object" } }
        ]
    }))
    .expect("the fuzz request is valid")
}

/// Splits `body` into chunks whose lengths come from `seed` (1..=64 bytes each, xorshift).
pub fn split(body: &[u8], seed: u64) -> Vec<bytes::Bytes> {
    let mut state = seed | 1;
    let mut out = Vec::new();
    let mut at = 0;
    while at < body.len() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = 1 + (state % 64) as usize;
        let end = (at + len).min(body.len());
        out.push(bytes::Bytes::copy_from_slice(&body[at..end]));
        at = end;
    }
    out.push(bytes::Bytes::from_static(b"\n\n"));
    out
}

/// Runs one decoder over `data` (8 bytes of split seed, then the SSE body). Panics are the findings;
/// adapter errors are normal outcomes.
pub fn run_decoder(kind: ProviderKind, data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let seed = u64::from_le_bytes(data[..8].try_into().unwrap());
    let chunks = split(&data[8..], seed);
    let request = request();
    let Ok(mut decoder) = Decoder::new(kind, &request) else {
        return;
    };
    let mut framer = SseFramer::new();
    let mut messages = Vec::new();
    let mut out: Vec<StreamEvent> = Vec::new();
    'body: for chunk in &chunks {
        if framer.push(chunk, &mut messages).is_err() {
            return;
        }
        for message in messages.drain(..) {
            if decoder.feed(&message.event, &message.data, &mut out).is_err() {
                return;
            }
            if decoder.is_complete() {
                break 'body;
            }
        }
    }
    if !decoder.is_complete() {
        let _ = decoder.finish(&mut out);
    }
    // Every event the decoder produced must serialise (the relay writes each one as SSE JSON).
    for event in &out {
        serde_json::to_string(event).expect("neutral events serialise");
    }
}
