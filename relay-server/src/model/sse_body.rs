//! The SSE response body of `POST {base}/model`: neutral events encoded straight into one buffer, and every
//! event that is ready at the same moment sent as one body frame.
//!
//! Why not `axum::response::Sse`: it builds a `BytesMut` and a body frame per event. Here the events of one
//! poll (all that one upstream chunk produced, often several) are written into one buffer and leave as one
//! frame as soon as the event stream has nothing more ready.
//!
//! On a relay worker (`crate::workers`: one thread, one run queue, the upstream connection's task on the same
//! thread) a batch is held a few scheduler turns longer: the body wakes itself and returns `Pending`, so the
//! upstream connection task moves its next buffered chunk in (hyper's client body holds one chunk at a time).
//! It gathers until [`MAX_IDLE_TURNS`] turns in a row bring nothing, at most [`MAX_GATHER_TURNS`] turns or
//! [`MAX_BATCH_BYTES`]: a burst of chunks leaves in a few writes instead of one per chunk, and a paced
//! stream's chunk waits two turns (microseconds; the other tasks ready on the thread run in them). The first
//! batch (the `message-start`) is never held. Off the workers (a host's multi-threaded runtime) another thread
//! would pick the self-wake up at once and gather nothing, so a ready batch leaves at once there. Figures:
//! `relay-server/bench/README.md`, "Per-core workers".
//!
//! The wire format is `docs/protocol.md` §3: `event: <type>\ndata: <json>\n\n` per event, and a `:` comment
//! every [`KEEP_ALIVE`] while nothing else is sent.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use patchbridge_protocol::StreamEvent;
use tokio::time::{Instant, Sleep};

/// A comment this often while the stream is idle keeps proxies from closing the connection and lets a vanished
/// browser be noticed (the write fails).
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A batch is sent at this size even if more events are ready, so a fast upstream cannot make the relay
/// hold a large buffer (or the browser wait) while it keeps producing.
const MAX_BATCH_BYTES: usize = 16 * 1024;

/// The most scheduler turns one batch is held for on a worker.
const MAX_GATHER_TURNS: u8 = 64;

/// Turns in a row without a new event after which a held batch is sent. Two, not one: hyper's client
/// connection task moves the next buffered chunk in on every second turn of the body (measured with the bench's
/// upstream; one idle turn gathered nothing).
const MAX_IDLE_TURNS: u8 = 2;

/// Bytes reserved before encoding an event: a text delta's event is ~100-200 bytes.
const EVENT_RESERVE: usize = 256;

/// Appends one event in SSE form: `event: <type>\ndata: <compact JSON>\n\n`. Compact JSON has no raw newline
/// (string newlines are escaped), so the data is always one line.
pub fn encode_event(buf: &mut BytesMut, event: &StreamEvent) {
    // Room for a typical event up front: the JSON writer appends in small pieces, and growing an empty
    // buffer piece by piece would reallocate several times per event.
    buf.reserve(EVENT_RESERVE);
    buf.put_slice(b"event: ");
    buf.put_slice(event_type(event).as_bytes());
    buf.put_slice(b"\ndata: ");
    serde_json::to_writer((&mut *buf).writer(), event).expect("stream events always serialise");
    buf.put_slice(b"\n\n");
}

/// The SSE `event:` name of a neutral event (its `type`).
pub fn event_type(event: &StreamEvent) -> &'static str {
    match event {
        StreamEvent::MessageStart { .. } => "message-start",
        StreamEvent::BlockStart { .. } => "block-start",
        StreamEvent::BlockDelta { .. } => "block-delta",
        StreamEvent::BlockStop { .. } => "block-stop",
        StreamEvent::MessageStop { .. } => "message-stop",
        StreamEvent::Error { .. } => "error",
    }
}

/// The body stream: batches of encoded events, keep-alive comments while idle.
pub struct SseBody<S> {
    events: S,
    buf: BytesMut,
    keep_alive: Pin<Box<Sleep>>,
    done: bool,
    /// Hold non-empty batches for more events while each scheduler turn brings some (on a worker).
    gather: bool,
    /// A batch has been sent (the first one is never held).
    sent: bool,
    /// Turns the current batch has been held for.
    turns: u8,
    /// Turns in a row the current batch has been held for without a new event.
    idle_turns: u8,
}

impl<S: Stream<Item = StreamEvent> + Unpin> SseBody<S> {
    pub fn new(events: S) -> Self {
        SseBody {
            events,
            buf: BytesMut::new(),
            keep_alive: Box::pin(tokio::time::sleep(KEEP_ALIVE)),
            done: false,
            gather: crate::workers::current().is_some(),
            sent: false,
            turns: 0,
            idle_turns: 0,
        }
    }

    /// The same body, holding batches for more events (`true`) or never (`false`) wherever it runs.
    pub fn gathering(mut self, gather: bool) -> Self {
        self.gather = gather;
        self
    }

    fn take_batch(&mut self) -> Bytes {
        self.keep_alive.as_mut().reset(Instant::now() + KEEP_ALIVE);
        self.sent = true;
        self.turns = 0;
        self.idle_turns = 0;
        self.buf.split().freeze()
    }
}

/// The response: `text/event-stream`, not cached, and not buffered by reverse proxies (nginx reads
/// `x-accel-buffering`).
impl<S: Stream<Item = StreamEvent> + Unpin + Send + 'static> IntoResponse for SseBody<S> {
    fn into_response(self) -> Response {
        let mut response = Body::from_stream(self).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        response
    }
}

impl<S: Stream<Item = StreamEvent> + Unpin> Stream for SseBody<S> {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        loop {
            match this.events.poll_next_unpin(cx) {
                Poll::Ready(Some(event)) => {
                    encode_event(&mut this.buf, &event);
                    this.idle_turns = 0;
                    if this.buf.len() >= MAX_BATCH_BYTES {
                        return Poll::Ready(Some(Ok(this.take_batch())));
                    }
                }
                Poll::Ready(None) => {
                    this.done = true;
                    if this.buf.is_empty() {
                        return Poll::Ready(None);
                    }
                    return Poll::Ready(Some(Ok(this.take_batch())));
                }
                Poll::Pending if !this.buf.is_empty() => {
                    if this.gather
                        && this.sent
                        && this.idle_turns < MAX_IDLE_TURNS
                        && this.turns < MAX_GATHER_TURNS
                    {
                        this.turns += 1;
                        this.idle_turns += 1;
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    return Poll::Ready(Some(Ok(this.take_batch())));
                }
                Poll::Pending => {
                    if this.keep_alive.as_mut().poll(cx).is_ready() {
                        this.keep_alive.as_mut().reset(Instant::now() + KEEP_ALIVE);
                        return Poll::Ready(Some(Ok(Bytes::from_static(b":\n\n"))));
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;
    use patchbridge_protocol::StopReason;

    fn delta(text: &str) -> StreamEvent {
        StreamEvent::BlockDelta {
            index: 0,
            delta: text.into(),
        }
    }

    #[test]
    fn encodes_event_name_then_one_line_of_json() {
        let mut buf = BytesMut::new();
        encode_event(&mut buf, &delta("a\nb"));
        assert_eq!(
            &buf[..],
            b"event: block-delta\ndata: {\"type\":\"block-delta\",\"index\":0,\"delta\":\"a\\nb\"}\n\n"
        );
    }

    #[tokio::test]
    async fn events_ready_together_leave_in_one_frame() {
        let events = vec![
            delta("a"),
            delta("b"),
            StreamEvent::MessageStop {
                stop_reason: StopReason::EndTurn,
                usage: Default::default(),
                model_state: None,
            },
        ];
        let frames: Vec<Bytes> = SseBody::new(stream::iter(events))
            .map(|frame| frame.unwrap())
            .collect()
            .await;
        assert_eq!(frames.len(), 1, "{frames:?}");
        let text = std::str::from_utf8(&frames[0]).unwrap();
        assert_eq!(text.matches("event: ").count(), 3);
        assert!(text.ends_with("\n\n"));
    }

    #[tokio::test]
    async fn a_batch_is_sent_as_soon_as_nothing_more_is_ready() {
        // A stream that yields one event and then nothing for ever: the event must still go out.
        let mut body = SseBody::new(stream::iter([delta("first")]).chain(stream::pending()));
        let frame = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .expect("the batch is sent without waiting for more events")
            .unwrap()
            .unwrap();
        assert!(std::str::from_utf8(&frame).unwrap().contains("\"first\""));
    }

    #[tokio::test]
    async fn a_fast_stream_is_cut_into_bounded_batches() {
        let events: Vec<StreamEvent> = (0..2_000).map(|_| delta(&"x".repeat(100))).collect();
        let frames: Vec<Bytes> = SseBody::new(stream::iter(events))
            .map(|frame| frame.unwrap())
            .collect()
            .await;
        assert!(frames.len() > 1);
        assert!(frames
            .iter()
            .all(|f| f.len() < MAX_BATCH_BYTES + 200 && f.ends_with(b"\n\n")));
        let total: usize = frames
            .iter()
            .map(|f| std::str::from_utf8(f).unwrap().matches("event: ").count())
            .sum();
        assert_eq!(total, 2_000);
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_stream_sends_keep_alive_comments() {
        let mut body = SseBody::new(stream::pending::<StreamEvent>());
        let started = Instant::now();
        let frame = body.next().await.unwrap().unwrap();
        assert_eq!(&frame[..], b":\n\n");
        assert_eq!(started.elapsed(), KEEP_ALIVE);
        let frame = body.next().await.unwrap().unwrap();
        assert_eq!(&frame[..], b":\n\n");
        assert_eq!(started.elapsed(), KEEP_ALIVE * 2);
    }

    /// Events through a one-slot channel fed by another task of the same runtime, as hyper's client body
    /// delivers upstream chunks: the producer can move the next one in only when the body has taken the last.
    fn one_slot_stream(
        events: Vec<StreamEvent>,
        pause: Option<Duration>,
    ) -> impl Stream<Item = StreamEvent> + Unpin {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        tokio::spawn(async move {
            for event in events {
                if tx.send(event).await.is_err() {
                    return;
                }
                if let Some(pause) = pause {
                    tokio::time::sleep(pause).await;
                }
            }
        });
        Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|event| (event, rx))
        }))
    }

    fn count_events(frame: &Bytes) -> usize {
        std::str::from_utf8(frame)
            .unwrap()
            .matches("event: ")
            .count()
    }

    #[tokio::test]
    async fn on_one_thread_a_burst_after_the_first_batch_leaves_in_one_frame() {
        let events: Vec<StreamEvent> = (0..20).map(|i| delta(&i.to_string())).collect();
        let frames: Vec<Bytes> = SseBody::new(one_slot_stream(events.clone(), None))
            .gathering(true)
            .map(|frame| frame.unwrap())
            .collect()
            .await;
        let counts: Vec<usize> = frames.iter().map(count_events).collect();
        assert_eq!(counts.iter().sum::<usize>(), 20);
        assert_eq!(counts[0], 1, "the first batch is never held: {counts:?}");
        assert!(frames.len() <= 3, "the burst was gathered: {counts:?}");
        // Not gathering, the same burst leaves one event per frame.
        let frames = SseBody::new(one_slot_stream(events, None))
            .gathering(false)
            .collect::<Vec<_>>()
            .await;
        assert_eq!(frames.len(), 20);
    }

    #[tokio::test(start_paused = true)]
    async fn a_paced_stream_is_not_held_for_its_next_event() {
        let events: Vec<StreamEvent> = (0..5).map(|i| delta(&i.to_string())).collect();
        let pause = Duration::from_millis(10);
        let mut body = SseBody::new(one_slot_stream(events, Some(pause))).gathering(true);
        let started = Instant::now();
        for i in 0..5u32 {
            let frame = body.next().await.unwrap().unwrap();
            assert_eq!(count_events(&frame), 1);
            assert_eq!(
                started.elapsed(),
                pause * i,
                "event {i} left when it arrived, not with the next one"
            );
        }
        assert!(body.next().await.is_none());
    }
}
