//! Incremental SSE scanning for the load generator: counts events as bytes arrive (frames split events and
//! lines anywhere) and remembers just enough to check a stream was complete and correct. Pure, no I/O.
//!
//! Two wires are read: the upstream's Chat Completions stream (direct and through nginx) and the relay's
//! neutral stream (`docs/protocol.md` §3: `event: <type>` + `data: <json>`).

/// Which stream format a target answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI Chat Completions chunks ending with `data: [DONE]`.
    OpenAiChat,
    /// The relay's neutral events.
    Neutral,
}

/// What the last complete event was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Last {
    #[default]
    Nothing,
    /// `data: [DONE]`.
    Done,
    /// `message-stop` with `"stopReason":"end-turn"`.
    EndTurn,
    /// A neutral `error` event.
    Error,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Name {
    #[default]
    None,
    BlockDelta,
    MessageStop,
    Error,
    Other,
}

/// Counts events of one response body fed in arbitrary pieces.
#[derive(Debug, Default)]
pub struct SseScan {
    /// An incomplete line carried over to the next piece.
    partial: Vec<u8>,
    name: Name,
    has_data: bool,
    data_done: bool,
    data_content: bool,
    data_end_turn: bool,
    /// Complete events (those with at least one `data:` line; comments and keep-alives are not events).
    pub events: usize,
    /// Token-carrying events: neutral `block-delta`, or Chat chunks with `"content":"`.
    pub deltas: usize,
    pub errors: usize,
    pub last: Last,
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

impl SseScan {
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(pos) = bytes.iter().position(|&b| b == b'\n') {
            let (line, rest) = bytes.split_at(pos);
            bytes = &rest[1..];
            if self.partial.is_empty() {
                self.line(line);
            } else {
                let mut joined = std::mem::take(&mut self.partial);
                joined.extend_from_slice(line);
                self.line(&joined);
                joined.clear();
                self.partial = joined;
            }
        }
        self.partial.extend_from_slice(bytes);
    }

    fn line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            self.dispatch();
        } else if let Some(data) = line.strip_prefix(b"data:") {
            let data = data.strip_prefix(b" ").unwrap_or(data);
            self.has_data = true;
            self.data_done |= data == b"[DONE]";
            self.data_content |= contains(data, br#""content":""#);
            self.data_end_turn |= contains(data, br#""stopReason":"end-turn""#);
        } else if let Some(name) = line.strip_prefix(b"event:") {
            self.name = match name.strip_prefix(b" ").unwrap_or(name) {
                b"block-delta" => Name::BlockDelta,
                b"message-stop" => Name::MessageStop,
                b"error" => Name::Error,
                _ => Name::Other,
            };
        }
    }

    fn dispatch(&mut self) {
        if self.has_data {
            self.events += 1;
            if self.name == Name::BlockDelta || (self.name == Name::None && self.data_content) {
                self.deltas += 1;
            }
            if self.name == Name::Error {
                self.errors += 1;
            }
            self.last = match self.name {
                Name::None if self.data_done => Last::Done,
                Name::MessageStop if self.data_end_turn => Last::EndTurn,
                Name::Error => Last::Error,
                _ => Last::Other,
            };
        }
        self.name = Name::None;
        self.has_data = false;
        self.data_done = false;
        self.data_content = false;
        self.data_end_turn = false;
    }

    /// Checks a finished body: every token arrived, and the stream ended the way its wire says it must.
    pub fn check(&self, wire: Wire, n: usize) -> Result<(), String> {
        let (events, last) = match wire {
            Wire::OpenAiChat => (crate::chunks::upstream_events(n), Last::Done),
            Wire::Neutral => (crate::chunks::relay_events(n), Last::EndTurn),
        };
        if self.events != events
            || self.deltas != n
            || self.last != last
            || self.errors != 0
            || !self.partial.is_empty()
        {
            return Err(format!(
                "broken stream: {} events ({} token deltas, {} errors, last {:?}, {} bytes unterminated); expected {events} events with {n} deltas ending {last:?}",
                self.events,
                self.deltas,
                self.errors,
                self.last,
                self.partial.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunks::chat_stream;

    const NEUTRAL: &str = "event: message-start\ndata: {\"type\":\"message-start\",\"id\":\"m\"}\n\n\
        event: block-start\ndata: {\"type\":\"block-start\",\"index\":0,\"block\":{\"type\":\"text\"}}\n\n\
        : keep-alive\n\n\
        event: block-delta\ndata: {\"type\":\"block-delta\",\"index\":0,\"delta\":\"tok \"}\n\n\
        event: block-delta\r\ndata: {\"type\":\"block-delta\",\"index\":0,\"delta\":\"tok \"}\r\n\r\n\
        event: block-stop\ndata: {\"type\":\"block-stop\",\"index\":0}\n\n\
        event: message-stop\ndata: {\"type\":\"message-stop\",\"stopReason\":\"end-turn\",\"modelState\":null}\n\n";

    #[test]
    fn neutral_stream_split_at_every_byte_counts_the_same() {
        let bytes = NEUTRAL.as_bytes();
        for cut in 0..bytes.len() {
            let mut scan = SseScan::default();
            scan.feed(&bytes[..cut]);
            scan.feed(&bytes[cut..]);
            assert_eq!(scan.check(Wire::Neutral, 2), Ok(()), "cut at {cut}");
        }
    }

    #[test]
    fn chat_stream_is_complete_only_with_done() {
        let mut scan = SseScan::default();
        let stream = chat_stream(5);
        for chunk in &stream[..stream.len() - 1] {
            scan.feed(chunk);
        }
        assert!(scan.check(Wire::OpenAiChat, 5).is_err(), "no [DONE] yet");
        scan.feed(stream.last().unwrap());
        assert_eq!(scan.check(Wire::OpenAiChat, 5), Ok(()));
        assert_eq!(scan.deltas, 5);
    }

    #[test]
    fn an_error_event_or_a_missing_token_is_reported() {
        let mut scan = SseScan::default();
        scan.feed(
            NEUTRAL
                .replace("event: block-stop", "event: error")
                .as_bytes(),
        );
        assert!(scan.check(Wire::Neutral, 2).is_err());
        let mut scan = SseScan::default();
        scan.feed(NEUTRAL.as_bytes());
        assert!(scan.check(Wire::Neutral, 3).is_err());
    }
}
