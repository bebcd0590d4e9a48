//! The driver: races the agent loop against the terminal gate and the deadline, then publishes the terminal
//! hook event and settles.
//!
//! Poll order each wake-up: gate (cancel wins if already closed) → deadline → loop. When anything decides the
//! outcome the loop future is *dropped* before the terminal event is published, so a model, tool or
//! confirmation that ignores the abort signal can neither delay settling nor publish late (its completion has
//! no one left to deliver to).

use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use futures::future::{poll_fn, LocalBoxFuture};

use super::agent_loop;
use super::error::{AgentError, ErrorCode, LimitName};
use super::outcome::ExecutionResult;
use super::state::{ExecShared, Terminal};

/// The error a deadline produces.
pub(crate) fn deadline_error(max_duration_ms: u64) -> AgentError {
    AgentError {
        code: ErrorCode::ExecutionTimeout,
        message: format!(
            "the execution did not finish within maxDurationMs ({max_duration_ms} ms)"
        ),
        limit: Some(LimitName::MaxDurationMs),
        details: None,
    }
}

pub(crate) async fn drive(
    shared: Rc<ExecShared>,
    deadline: LocalBoxFuture<'static, ()>,
) -> Result<ExecutionResult, AgentError> {
    {
        let mut run = pin!(agent_loop::run(shared.clone()));
        let mut deadline = deadline;
        poll_fn(|cx| {
            if shared.is_closed() {
                return Poll::Ready(());
            }
            if deadline.as_mut().poll(cx).is_ready() {
                shared.close(Terminal::Failed(deadline_error(
                    shared.runtime.options.limits.max_duration_ms,
                )));
                return Poll::Ready(());
            }
            if let Poll::Ready(outcome) = run.as_mut().poll(cx) {
                // If the gate closed meanwhile (re-entrant cancel), `close` is a no-op and the gate's
                // terminal stands.
                shared.close(match outcome {
                    Ok(outcome) => Terminal::Finished(outcome),
                    Err(error) => Terminal::Failed(error),
                });
                return Poll::Ready(());
            }
            if shared.is_closed() {
                return Poll::Ready(());
            }
            shared.register_gate_waker(cx.waker());
            Poll::Pending
        })
        .await;
        // `run` (with any model stream, tool future or confirmation wait it holds) is dropped here.
    }
    shared.publish_terminal();
    shared.settle()
}
