//! What reaches the log is escaped and bounded. Messages and fields can carry request text (a serde error
//! quoting a field name, a client's `x-request-id`) and upstream text; written raw in the human format, a
//! newline in them forges a whole log line and a 60 KB header value bloats every line of its request.
//!
//! - [`escape`]: control characters (newlines above all), Unicode line separators and bidi controls become
//!   visible escapes, and text past [`MAX_FIELD_CHARS`] is cut with a note of how much was dropped.
//! - [`init`]: the subscriber of the `patchbridge-relay` binary (human format with escaping field formatter,
//!   or JSON lines, which escape by construction and whose fields the relay bounds where it logs them).
//! - [`request_id_is_acceptable`] / [`drop_unacceptable_request_id`]: a client's `x-request-id` is kept only
//!   when it is 1..=128 visible ASCII characters; otherwise it is replaced by a fresh id.

use std::borrow::Cow;
use std::fmt::Write as _;

use axum::extract::Request;
use axum::http::HeaderValue;
use tracing_subscriber::field::MakeExt;

/// Longest field value written to the log, in characters.
pub const MAX_FIELD_CHARS: usize = 4096;
/// Longest client-supplied request id kept.
pub const MAX_REQUEST_ID_LEN: usize = 128;
/// The request id header: set on every request (a client's acceptable id, else a new UUID), answered, logged
/// and sent upstream.
pub(crate) const REQUEST_ID: axum::http::HeaderName =
    axum::http::HeaderName::from_static("x-request-id");

/// Escapes what could break or spoof a log line and bounds the length.
pub fn escape(text: &str) -> Cow<'_, str> {
    let needs_escape = text.chars().any(needs_escaping);
    let too_long = text.len() > MAX_FIELD_CHARS && text.chars().nth(MAX_FIELD_CHARS).is_some();
    if !needs_escape && !too_long {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(MAX_FIELD_CHARS * 2) + 32);
    for (written, (at, c)) in text.char_indices().enumerate() {
        if written == MAX_FIELD_CHARS {
            let _ = write!(out, "…[{} more bytes]", text.len() - at);
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escaping(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn needs_escaping(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The field formatter of the human format: `name=value` pairs (the message bare), every value escaped.
pub fn human_fields(
) -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + Send + Sync + 'static {
    tracing_subscriber::fmt::format::debug_fn(
        |writer: &mut tracing_subscriber::fmt::format::Writer<'_>,
         field: &tracing::field::Field,
         value: &dyn std::fmt::Debug| {
            if field.name().starts_with("log.") {
                return Ok(());
            }
            with_field_text(value, |text| {
                if field.name() == "message" {
                    write!(writer, "{}", escape(text))
                } else {
                    write!(writer, "{}={}", field.name(), escape(text))
                }
            })
        },
    )
    .delimited(" ")
}

/// A field buffer that grew past this is dropped after use rather than kept by the thread.
const FIELD_BUFFER_KEEP_BYTES: usize = 16 * 1024;

thread_local! {
    /// The `Debug` text of the field being written, reused: a fresh `String` per field was a third of the
    /// allocations of the log lines of a model call.
    static FIELD_TEXT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Calls `write` with `value`'s `Debug` text, formatted into the thread's reusable buffer (or a fresh one when
/// that is in use: a `Debug` implementation that logs).
fn with_field_text<R>(value: &dyn std::fmt::Debug, write: impl FnOnce(&str) -> R) -> R {
    FIELD_TEXT.with(|cell| match cell.try_borrow_mut() {
        Ok(mut text) => {
            text.clear();
            let _ = write!(text, "{value:?}");
            let result = write(&text);
            if text.capacity() > FIELD_BUFFER_KEEP_BYTES {
                *text = String::new();
            }
            result
        }
        Err(_) => write(&format!("{value:?}")),
    })
}

/// Installs the binary's subscriber: `filter` is a tracing filter; `json` selects JSON lines.
pub fn init(filter: tracing_subscriber::EnvFilter, json: bool) {
    // Colours only for a person at a terminal: a file or a pipe (systemd, a container runtime) would store the
    // escape codes in every line (and writing them costs formatting time on every line).
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.fmt_fields(human_fields()).init();
    }
}

/// Whether a client's `x-request-id` may be kept: 1..=128 visible ASCII characters.
pub fn request_id_is_acceptable(value: &HeaderValue) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_REQUEST_ID_LEN
        && bytes.iter().all(|b| (0x21..=0x7e).contains(b))
}

/// Removes a client `x-request-id` that is not acceptable (or given more than once), so the request-id
/// layer behind this one assigns a fresh id.
pub async fn drop_unacceptable_request_id(mut request: Request) -> Request {
    let headers = request.headers_mut();
    let mut values = headers.get_all(&REQUEST_ID).iter();
    let keep = match (values.next(), values.next()) {
        (None, _) => true,
        (Some(one), None) => request_id_is_acceptable(one),
        (Some(_), Some(_)) => false,
    };
    if !keep {
        headers.remove(&REQUEST_ID);
        tracing::debug!("client x-request-id refused (not 1..=128 visible ASCII characters); a fresh id is used");
    }
    request
}

/// A log writer that keeps what it is given, for tests of log output (`with_writer(move || log.clone())`).
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct CapturedLog(pub(crate) std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

#[cfg(test)]
impl std::io::Write for CapturedLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_and_controls_are_escaped() {
        assert_eq!(escape("plain text"), "plain text");
        assert_eq!(
            escape("a\nb\rc\td\u{1b}[31me\u{2028}f\u{202e}g"),
            "a\\nb\\rc\\td\\u{1b}[31me\\u{2028}f\\u{202e}g"
        );
    }

    #[test]
    fn long_values_are_cut_with_the_dropped_size() {
        let long = "x".repeat(60_000);
        let out = escape(&long);
        assert!(out.len() < MAX_FIELD_CHARS + 40, "{}", out.len());
        assert!(out.ends_with(&format!("…[{} more bytes]", 60_000 - MAX_FIELD_CHARS)));
    }

    /// A request text carrying a forged log line stays inside the one line of the event that logs it.
    #[test]
    fn request_text_cannot_forge_a_log_line_in_the_human_format() {
        let buffer = CapturedLog::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .fmt_fields(human_fields())
            .finish();
        let forged = "bad field\n2026-01-01T00:00:00.000000Z ERROR patchbridge_relay: FORGED-LINE";
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("request", request_id = %forged);
            let _entered = span.enter();
            tracing::info!(reason = %forged, detail = forged, "request rejected");
            tracing::info!("{forged}");
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.lines().all(|l| !l.starts_with("2026-01-01")), "{text}");
        assert!(text.contains("bad field\\n2026"), "{text}");
    }

    #[tokio::test]
    async fn only_short_visible_ascii_request_ids_are_kept() {
        let ok = HeaderValue::from_static("abc-123_XYZ:42");
        assert!(request_id_is_acceptable(&ok));
        for bad in ["", "has space", "tab\tid"] {
            let value = HeaderValue::from_str(bad).unwrap();
            assert!(!request_id_is_acceptable(&value), "{bad:?}");
        }
        let long = HeaderValue::from_str(&"a".repeat(MAX_REQUEST_ID_LEN + 1)).unwrap();
        assert!(!request_id_is_acceptable(&long));
        let max = HeaderValue::from_str(&"a".repeat(MAX_REQUEST_ID_LEN)).unwrap();
        assert!(request_id_is_acceptable(&max));
        let obs = HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap();
        assert!(!request_id_is_acceptable(&obs));

        let request = axum::http::Request::builder()
            .header("x-request-id", "a".repeat(60_000))
            .body(axum::body::Body::empty())
            .unwrap();
        let request = drop_unacceptable_request_id(request).await;
        assert!(request.headers().get("x-request-id").is_none());
        let request = axum::http::Request::builder()
            .header("x-request-id", "one")
            .header("x-request-id", "two")
            .body(axum::body::Body::empty())
            .unwrap();
        let request = drop_unacceptable_request_id(request).await;
        assert!(request.headers().get("x-request-id").is_none());
    }
}
