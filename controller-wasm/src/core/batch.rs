//! Event batches (pure): the format in which a host hands over many stream events in one crossing.
//!
//! The JS `Pump` (`npm/adapter.js`) drains a model's async iterable ahead of the core into a batch: one string
//! holding every payload back to back, plus [`META_FIELDS`] numbers per event (its [`PayloadKind`], the block
//! index of a plain delta, and the payload's length in UTF-16 code units, the unit of JavaScript string
//! lengths). Plain block deltas travel as their raw text; every other event is JSON text parsed strictly by
//! serde, except lines in the canonical delta shape `{"type":"block-delta","index":N,"delta":"…"}`, which a
//! small scanner reads (the relay sends every delta that way). The numbers are named on both sides and a test
//! (`tests/wire_lists.rs`) checks that `adapter.js` declares the same values.

use patchbridge_protocol::StreamEvent;

use super::error::{AgentError, ErrorCode};

/// Numbers per event in a batch's meta array: kind, block index, payload length (UTF-16 units).
pub const META_FIELDS: usize = 3;

/// What a batch payload holds (the first number of its meta triple).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum PayloadKind {
    /// A stream event as JSON text.
    Json = 0,
    /// The raw text of a plain `block-delta`; the block index is the triple's second number.
    BlockDelta = 1,
}

/// What the pump reports once its batch is empty (`Pump.state()` in `adapter.js`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum PumpState {
    /// More events may come: wait for the next batch.
    Open = 0,
    /// The iterable finished normally.
    Ended = 1,
    /// The iterable threw; the thrown value is the stream's error.
    Failed = 2,
}

impl PumpState {
    /// The state for its number; anything unknown counts as failed (the stream then ends with an error).
    pub fn from_u32(value: u32) -> PumpState {
        match value {
            0 => PumpState::Open,
            1 => PumpState::Ended,
            _ => PumpState::Failed,
        }
    }
}

/// One batch being read, event by event.
#[derive(Debug, Default)]
pub struct Batch {
    /// The payloads, back to back, and the read offset (bytes).
    text: String,
    pos: usize,
    /// [`META_FIELDS`] numbers per event, and the index of the next event's first number.
    meta: Vec<u32>,
    next: usize,
}

impl Batch {
    /// A batch of `text` described by `meta`.
    pub fn new(text: String, meta: Vec<u32>) -> Self {
        Batch {
            text,
            pos: 0,
            meta,
            next: 0,
        }
    }

    /// A batch whose text arrives as UTF-8 bytes (written by the host into memory of
    /// [`utf8_capacity`](Self::utf8_capacity) bytes). Bytes that are not UTF-8 leave the text empty, so the
    /// first event with a payload reports the batch as inconsistent.
    pub fn from_utf8(bytes: Vec<u8>, meta: Vec<u32>) -> Self {
        Batch::new(String::from_utf8(bytes).unwrap_or_default(), meta)
    }

    /// Bytes that always hold the UTF-8 form of a batch described by `meta`: 3 per UTF-16 unit (a surrogate pair
    /// is 2 units and 4 bytes; any other unit at most 3 bytes).
    pub fn utf8_capacity(meta: &[u32]) -> usize {
        meta.chunks_exact(META_FIELDS)
            .fold(0usize, |total, triple| {
                total.saturating_add(triple[2] as usize)
            })
            .saturating_mul(3)
    }

    /// The next event, or None when the batch is read. An inconsistent batch (lengths past the text, an unknown
    /// kind) or an invalid event is an `AGENT_PROTOCOL_ERROR`.
    pub fn next_event(&mut self) -> Option<Result<StreamEvent, AgentError>> {
        let triple = self.meta.get(self.next..self.next + META_FIELDS)?;
        let (kind, index, units) = (triple[0], triple[1], triple[2]);
        self.next += META_FIELDS;
        // `get` rather than indexing: the positions are char boundaries by construction, and a checked slice
        // would keep a panic location in the wasm for a case that reads as an inconsistent batch anyway.
        let Some(payload) = self
            .text
            .get(self.pos..)
            .and_then(|rest| rest.get(..utf8_len(rest, units as usize)?))
        else {
            return Some(Err(inconsistent()));
        };
        self.pos += payload.len();
        Some(match kind {
            k if k == PayloadKind::BlockDelta as u32 => Ok(StreamEvent::BlockDelta {
                index,
                delta: payload.to_owned(),
            }),
            k if k == PayloadKind::Json as u32 => parse_event(payload),
            _ => Err(inconsistent()),
        })
    }
}

fn inconsistent() -> AgentError {
    AgentError::new(
        ErrorCode::ProtocolError,
        "model stream batch is inconsistent",
    )
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
            let c = text.get(i..)?.chars().next()?;
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
    // `get` rather than indexing (here and below): each range is checked already, and a checked slice would
    // keep a panic location in the wasm.
    let rest = line.get(DELTA_PREFIX.len()..)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 || (digits > 1 && rest.starts_with('0')) {
        return None;
    }
    let index: u32 = rest.get(..digits)?.parse().ok()?;
    let tail = rest.get(digits..)?;
    let bytes = tail.as_bytes();
    let n = bytes.len();
    if n < DELTA_KEY.len() + 2
        || !starts_with(bytes, DELTA_KEY.as_bytes())
        || bytes[n - 2] != b'"'
        || bytes[n - 1] != b'}'
    {
        return None;
    }
    let text = tail.get(DELTA_KEY.len()..n - 2)?;
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
