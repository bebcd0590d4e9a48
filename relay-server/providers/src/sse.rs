//! SSE framing of an upstream body: bytes in, in pieces of any size, complete messages (`event` + `data`) out,
//! by the WHATWG "interpreting an event stream" rules, in time linear in the input.
//!
//! Why our own: the relay used `eventsource-stream`, which re-parses its whole pending buffer char by char on
//! every chunk and copies the rest of the buffer after every line. A line that arrives in many pieces (a long
//! tool-call argument in TLS records, or a hostile upstream's 8 MiB line sent a few bytes at a time) cost time
//! quadratic in its length: seconds of CPU for one response. The crates that avoid that (`sse-stream` among
//! them) reject lines the specification says to ignore (unknown fields, a second `event:`), which compatible
//! servers do send. `tests/sse_framing.rs` checks this framer against `eventsource-stream` on arbitrary input
//! cut at arbitrary points: same messages, same order.
//!
//! What the relay needs and nothing more: `id` and `retry` are read past (a relay never reconnects), and the
//! event type of a message without an `event:` field is `""` (so is an explicit `event: message`, the default
//! type's name, as before).

/// One dispatched SSE message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseMessage {
    /// The `event:` field; `""` when the message had none (or named the default type, `message`).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// The upstream body is not UTF-8 (SSE is UTF-8 by definition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidUtf8;

impl std::fmt::Display for InvalidUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the event stream is not valid UTF-8")
    }
}

impl std::error::Error for InvalidUtf8 {}

const BOM: &[u8] = "\u{feff}".as_bytes();

/// The framing state between chunks.
#[derive(Debug, Default)]
pub struct SseFramer {
    /// Bytes of a line whose end has not arrived yet (only these are ever copied).
    partial: Vec<u8>,
    /// The last line ended with CR: an LF at the start of the next chunk belongs to it (CRLF).
    skip_lf: bool,
    /// A line was seen: a byte order mark is only skipped at the very start of the stream.
    started: bool,
    event: String,
    data: String,
}

impl SseFramer {
    pub fn new() -> Self {
        SseFramer::default()
    }

    /// Reads `chunk` and appends every message it completes to `out`. After an error the framer must not be
    /// used again.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<SseMessage>) -> Result<(), InvalidUtf8> {
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        // `memchr2` scans a machine word or a vector at a time: a byte-by-byte search for the line end was
        // a tenth of the relay's instructions per streamed chunk.
        while let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) {
            if self.partial.is_empty() {
                self.line(&chunk[..end], out)?;
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[..end]);
                let result = self.line(&line, out);
                line.clear();
                self.partial = line;
                result?;
            }
            let cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseMessage>) -> Result<(), InvalidUtf8> {
        let line = if self.started {
            line
        } else {
            self.started = true;
            line.strip_prefix(BOM).unwrap_or(line)
        };
        let line = std::str::from_utf8(line).map_err(|_| InvalidUtf8)?;
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        let (name, value) = match line.split_once(':') {
            // A comment: a line that starts with a colon.
            Some(("", _)) => return Ok(()),
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            "data" => {
                // One allocation of the right size for the usual one-line message (plus its `\n`).
                self.data.reserve(value.len() + 1);
                self.data.push_str(value);
                self.data.push('\n');
            }
            // `id`, `retry` and unknown fields: nothing the relay uses.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseMessage>) {
        if self.data.is_empty() {
            self.event.clear();
            return;
        }
        self.data.pop();
        let mut event = std::mem::take(&mut self.event);
        if event == "message" {
            event.clear();
        }
        out.push(SseMessage {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(pieces: &[&[u8]]) -> Vec<SseMessage> {
        let mut framer = SseFramer::new();
        let mut out = Vec::new();
        for piece in pieces {
            framer.push(piece, &mut out).unwrap();
        }
        out
    }

    fn message(event: &str, data: &str) -> SseMessage {
        SseMessage {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn reads_named_and_unnamed_messages_with_every_line_ending() {
        let out = frame(&[
            b"event: a\r\ndata: 1\r\n\r\ndata:2\rdata: 3\r\r: note\nevent: message\ndata\n\n",
        ]);
        assert_eq!(
            out,
            [message("a", "1"), message("", "2\n3"), message("", "")]
        );
    }

    #[test]
    fn a_crlf_split_between_chunks_ends_one_line() {
        let out = frame(&[b"data: x\r", b"\n", b"\r", b"\n"]);
        assert_eq!(out, [message("", "x")]);
    }

    #[test]
    fn a_message_without_data_is_not_dispatched_and_forgets_its_event() {
        let out = frame(&[b"event: ping\n\ndata: y\n\n"]);
        assert_eq!(out, [message("", "y")]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_only_at_the_start_even_when_split() {
        let out = frame(&[&BOM[..1], &BOM[1..], b"data: a\n\n", BOM, b"data: b\n\n"]);
        assert_eq!(out, [message("", "a")]);
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut out = Vec::new();
        assert_eq!(
            SseFramer::new().push(b"data: \xff\n", &mut out),
            Err(InvalidUtf8)
        );
    }

    #[test]
    fn a_long_line_in_one_byte_pieces_arrives_whole() {
        let mut framer = SseFramer::new();
        let mut out = Vec::new();
        framer.push(b"data: ", &mut out).unwrap();
        for _ in 0..100_000 {
            framer.push(b"x", &mut out).unwrap();
        }
        framer.push(b"\n\n", &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 100_000);
    }
}
