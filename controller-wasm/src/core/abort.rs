//! The cooperative [`AbortSignal`] shared by one execution's model calls, tools and confirmation wait.
//!
//! Only the core creates and aborts signals (the terminal gate does, after it has closed); hosts observe them.
//! Aborting is advisory: the gate has already stopped publishing, so a host that ignores the signal cannot
//! delay settling.
//!
//! A host that needs its own representation of the signal (the bindings: one JS `AbortController` per
//! execution, so model, interceptors and tools all see the SAME JS `AbortSignal`) caches it on the signal with
//! [`AbortSignal::host_value`]; the cached value lives exactly as long as the signal.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct Inner {
    aborted: Cell<bool>,
    callbacks: RefCell<Vec<Box<dyn FnOnce()>>>,
    wakers: RefCell<Vec<Waker>>,
    /// The host's representation of this signal, created once on first use (see [`AbortSignal::host_value`]).
    host: RefCell<Option<Box<dyn Any>>>,
}

/// A cooperative cancellation signal. Cloning gives the same signal.
#[derive(Clone, Default)]
pub struct AbortSignal {
    inner: Rc<Inner>,
}

impl std::fmt::Debug for AbortSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbortSignal")
            .field("aborted", &self.is_aborted())
            .finish()
    }
}

impl AbortSignal {
    /// Whether the signal has been aborted.
    pub fn is_aborted(&self) -> bool {
        self.inner.aborted.get()
    }

    /// Runs `callback` once when the signal aborts (immediately if it already has).
    pub fn on_abort(&self, callback: Box<dyn FnOnce()>) {
        if self.is_aborted() {
            callback();
        } else {
            self.inner.callbacks.borrow_mut().push(callback);
        }
    }

    /// A future that resolves when the signal aborts.
    pub fn aborted(&self) -> Aborted {
        Aborted {
            signal: self.clone(),
        }
    }

    /// The host's representation of this signal: `create` runs on the first call only (it may register an
    /// [`on_abort`](Self::on_abort) callback); every later call, for any model call, interceptor or tool of the
    /// same execution, returns a clone of the cached value. A host must use one type `T` per signal; a call
    /// with a different type than the cached one creates (and caches) a new value instead.
    pub fn host_value<T: Clone + 'static>(&self, create: impl FnOnce(&AbortSignal) -> T) -> T {
        if let Some(value) = self
            .inner
            .host
            .borrow()
            .as_ref()
            .and_then(|cached| cached.downcast_ref::<T>())
        {
            return value.clone();
        }
        // No borrow is held while `create` runs (it may abort-register or read the signal).
        let value = create(self);
        *self.inner.host.borrow_mut() = Some(Box::new(value.clone()));
        value
    }

    /// Creates a fresh, not-yet-aborted signal. Crate-private: hosts never create or abort signals.
    pub(crate) fn new() -> Self {
        AbortSignal::default()
    }

    /// Aborts once: wakes waiters and runs callbacks (no borrow is held while they run, so a callback may
    /// touch the signal again).
    pub(crate) fn abort(&self) {
        if self.inner.aborted.replace(true) {
            return;
        }
        let wakers = std::mem::take(&mut *self.inner.wakers.borrow_mut());
        for waker in wakers {
            waker.wake();
        }
        loop {
            let next = {
                let mut callbacks = self.inner.callbacks.borrow_mut();
                if callbacks.is_empty() {
                    break;
                }
                callbacks.remove(0)
            };
            next();
        }
    }
}

/// Future returned by [`AbortSignal::aborted`].
pub struct Aborted {
    signal: AbortSignal,
}

impl Future for Aborted {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_aborted() {
            Poll::Ready(())
        } else {
            self.signal
                .inner
                .wakers
                .borrow_mut()
                .push(cx.waker().clone());
            Poll::Pending
        }
    }
}
