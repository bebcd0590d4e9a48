//! A JS async iterable of stream events as a core [`EventStream`](crate::core::EventStream), batched.
//!
//! The JS `Pump` (npm/adapter.js) drains the iterator ahead of the core into a batch (format and decoding:
//! [`crate::core::batch`]). This stream takes a batch at a time (copied into wasm memory, one promise per batch)
//! and yields one event per `poll_next`, so the core aggregates event by event without a JS round trip per
//! delta.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::{Future, Stream};
use patchbridge_protocol::StreamEvent;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::error;
use super::js;
use crate::core::batch::{Batch, PumpState};
use crate::core::{AgentError, ErrorCode};

/// Core events read from a [`js::Pump`]. Dropping it stops the pump (the iterator's `return()` is called and
/// its late values or exceptions are ignored).
pub struct PumpStream {
    pump: js::Pump,
    batch: Batch,
    waiting: Option<JsFuture>,
    /// Set at the end and after the first error: nothing follows either.
    finished: bool,
    /// The pump reported its end or the iterator's failure: it has stopped by itself, so dropping the stream
    /// needs no `stop()` call.
    settled: bool,
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
        // A new pump has nothing yet (it reads the iterator asynchronously, even a synchronous one), so the
        // stream starts by waiting instead of asking for a batch and the state first.
        let waiting = Some(JsFuture::from(pump.wait()));
        Ok(PumpStream {
            pump,
            batch: Batch::default(),
            waiting,
            finished: false,
            settled: false,
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
            if this.finished {
                return Poll::Ready(None);
            }
            if let Some(event) = this.batch.next_event() {
                this.finished = event.is_err();
                return Poll::Ready(Some(event));
            }
            if let Some(waiting) = this.waiting.as_mut() {
                match Pin::new(waiting).poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(_) => this.waiting = None,
                }
            }
            let numbers = this.pump.take() as usize;
            if numbers > 0 {
                let mut meta = vec![0; numbers];
                this.pump.taken_meta(&mut meta);
                let mut text = vec![0; Batch::utf8_capacity(&meta)];
                let written = this.pump.taken_text(&mut text) as usize;
                text.truncate(written);
                this.batch = Batch::from_utf8(text, meta);
                continue;
            }
            match PumpState::from_u32(this.pump.state()) {
                PumpState::Open => this.waiting = Some(JsFuture::from(this.pump.wait())),
                PumpState::Ended => {
                    this.finished = true;
                    this.settled = true;
                    return Poll::Ready(None);
                }
                PumpState::Failed => {
                    this.finished = true;
                    this.settled = true;
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
        if !self.settled {
            self.pump.stop();
        }
    }
}
