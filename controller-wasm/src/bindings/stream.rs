//! A JS async iterable of stream events as a core [`EventStream`], batched.
//!
//! The JS `Pump` (npm/adapter.js) drains the iterator ahead of the core into a batch: one string holding every
//! payload back to back, plus three numbers per event (kind, block index, length in UTF-16 units). This stream
//! takes a batch at a time (one string crossing, one promise per batch) and yields one event per `poll_next`, so
//! the core aggregates event by event without a JS round trip per delta. Plain block deltas arrive as their raw
//! text (kind 1); every other event is JSON text (kind 0) parsed strictly by serde, except relay lines in the
//! canonical delta shape `{"type":"block-delta","index":N,"delta":"…"}`, which a small scanner reads.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::{Future, Stream};
use patchbridge_protocol::StreamEvent;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::error;
use super::js;
use crate::core::{AgentError, ErrorCode};

/// Core events read from a [`js::Pump`]. Dropping it stops the pump (the iterator's `return()` is called and
/// its late values or exceptions are ignored).
pub struct PumpStream {
    pump: js::Pump,
    /// The current batch's payloads, back to back, and the read offset (bytes).
    batch: String,
    pos: usize,
    /// `[kind, index, utf16_len]` per event of the current batch, and the next event.
    meta: Vec<u32>,
    next: usize,
    waiting: Option<JsFuture>,
    finished: bool,
    thrown_code: ErrorCode,
    what: &'static str,
}

impl PumpStream {
    /// Wraps `iterable` (a custom model's return value or an interceptor's generator). `raw` when it yields JSON
    /// text (the relay's SSE payloads). Values thrown by the iterator become `thrown_code` errors.
    pub fn new(
        iterable: &JsValue,
        raw: bool,
        thrown_code: ErrorCode,
        what: &'static str,
    ) -> Result<Self, AgentError> {
        let pump =
            js::Pump::new(iterable, raw).map_err(|e| error::from_js(&e, thrown_code, what))?;
        Ok(PumpStream {
            pump,
            batch: String::new(),
            pos: 0,
            meta: Vec::new(),
            next: 0,
            waiting: None,
            finished: false,
            thrown_code,
            what,
        })
    }
}

impl Stream for PumpStream {
    type Item = Result<StreamEvent, AgentError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.next + 3 <= this.meta.len() {
                let (kind, index, units) = (
                    this.meta[this.next],
                    this.meta[this.next + 1],
                    this.meta[this.next + 2],
                );
                this.next += 3;
                let rest = &this.batch[this.pos..];
                let Some(len) = utf8_len(rest, units as usize) else {
                    this.finished = true;
                    return Poll::Ready(Some(Err(AgentError::new(
                        ErrorCode::ProtocolError,
                        "model stream batch is inconsistent",
                    ))));
                };
                let payload = &rest[..len];
                this.pos += len;
                let event = if kind == 1 {
                    Ok(StreamEvent::BlockDelta {
                        index,
                        delta: payload.to_owned(),
                    })
                } else {
                    parse_event(payload)
                };
                return Poll::Ready(Some(event));
            }
            if this.finished {
                return Poll::Ready(None);
            }
            if let Some(waiting) = this.waiting.as_mut() {
                match Pin::new(waiting).poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(_) => this.waiting = None,
                }
            }
            if let Some(batch) = this.pump.take() {
                this.batch = batch;
                this.pos = 0;
                this.meta = this.pump.taken_meta().to_vec();
                this.next = 0;
                continue;
            }
            match this.pump.state() {
                0 => this.waiting = Some(JsFuture::from(this.pump.wait())),
                1 => {
                    this.finished = true;
                    return Poll::Ready(None);
                }
                _ => {
                    this.finished = true;
                    let thrown = this.pump.failure();
                    return Poll::Ready(Some(Err(error::from_js(
                        &thrown,
                        this.thrown_code,
                        this.what,
                    ))));
                }
            }
        }
    }
}

impl Drop for PumpStream {
    fn drop(&mut self) {
        self.pump.stop();
    }
}

/// Byte length of the prefix of `text` that is `units` UTF-16 code units long (JS string lengths count those),
/// or None when `text` is shorter. ASCII is the fast path.
fn utf8_len(text: &str, units: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut i, mut u) = (0, 0);
    while u < units {
        let b = *bytes.get(i)?;
        if b < 0x80 {
            i += 1;
            u += 1;
        } else {
            let c = text[i..].chars().next()?;
            i += c.len_utf8();
            u += c.len_utf16();
        }
    }
    (u == units).then_some(i)
}

/// One JSON payload as a stream event; malformed or unknown shapes are protocol errors.
pub fn parse_event(line: &str) -> Result<StreamEvent, AgentError> {
    if let Some(event) = fast_delta(line) {
        return Ok(event);
    }
    serde_json::from_str::<StreamEvent>(line).map_err(|e| {
        let mut message = String::from("invalid model stream event: ");
        message.push_str(&e.to_string());
        AgentError::new(ErrorCode::ProtocolError, message)
    })
}

const DELTA_PREFIX: &str = "{\"type\":\"block-delta\",\"index\":";
const DELTA_KEY: &str = ",\"delta\":\"";

/// The canonical `block-delta` line without escapes, or None (the caller falls back to serde).
fn fast_delta(line: &str) -> Option<StreamEvent> {
    if !starts_with(line.as_bytes(), DELTA_PREFIX.as_bytes()) {
        return None;
    }
    let rest = &line[DELTA_PREFIX.len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 || (digits > 1 && rest.as_bytes()[0] == b'0') {
        return None;
    }
    let index: u32 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    let bytes = tail.as_bytes();
    let n = bytes.len();
    if n < DELTA_KEY.len() + 2
        || !starts_with(bytes, DELTA_KEY.as_bytes())
        || bytes[n - 2] != b'"'
        || bytes[n - 1] != b'}'
    {
        return None;
    }
    let text = &tail[DELTA_KEY.len()..tail.len() - 2];
    // A backslash or quote means escapes (or another shape), a control character invalid JSON: serde decides.
    if text.bytes().any(|b| b == b'\\' || b == b'"' || b < 0x20) {
        return None;
    }
    Some(StreamEvent::BlockDelta {
        index,
        delta: text.to_owned(),
    })
}

/// A plain byte loop: `str::strip_prefix` lowers to a `memcmp` call that profiles as the single most expensive
/// step of the delta path in the size-optimised build.
#[inline]
fn starts_with(haystack: &[u8], needle: &[u8]) -> bool {
    if haystack.len() < needle.len() {
        return false;
    }
    let mut i = 0;
    while i < needle.len() {
        if haystack[i] != needle[i] {
            return false;
        }
        i += 1;
    }
    true
}
