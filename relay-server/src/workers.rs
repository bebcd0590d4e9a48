//! Per-core workers (`server.workers`, docs/adr/020): threads that each run a single-threaded tokio runtime
//! and serve the connections [`crate::serve`] hands them. A connection's requests, the upstream call each one
//! makes and the events streamed back all run on one thread, so a call's path has no wake-up that crosses
//! threads (a work-stealing runtime moves a call's tasks between threads and pays a futex round trip each
//! time; measured in `relay-server/bench/README.md`).
//!
//! - [`Workers::start`] spawns the threads; dropping [`Workers`] stops them (each runtime drops its tasks) and
//!   joins them.
//! - [`Workers::pick`] chooses the worker with the fewest open connections and returns a [`Load`] that
//!   counts the connection until it is dropped.
//! - [`current`]: which worker the calling thread is, so per-worker resources (the upstream connection pools,
//!   `crate::model::client`) are used by their own worker only.
//!
//! Tasks spawned from a request (`tokio::spawn`) run on that request's worker; the workers live until the
//! process has closed its store, so a task started by a call may run through the shutdown.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

thread_local! {
    static CURRENT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The index of the worker the calling thread is (`0..count`), or `None` off the workers (the main runtime,
/// tests, the telemetry exporter).
pub fn current() -> Option<usize> {
    CURRENT.with(Cell::get)
}

/// The running workers.
pub struct Workers {
    workers: Vec<Worker>,
    /// How long dropping waits for a worker's blocking tasks (`spawn_blocking`) before leaving them.
    stop_grace: Duration,
}

struct Worker {
    handle: Handle,
    open: Arc<AtomicUsize>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// One connection counted on its worker until dropped.
#[derive(Debug)]
pub struct Load(Arc<AtomicUsize>);

impl Drop for Load {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Workers {
    /// Starts `count` worker threads (at least one), named `patchbridge-worker-N`. `stop_grace` bounds how long
    /// dropping the workers waits for each one's blocking tasks.
    pub fn start(count: usize, stop_grace: Duration) -> std::io::Result<Workers> {
        let mut workers = Vec::with_capacity(count.max(1));
        for index in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let handle = runtime.handle().clone();
            let (stop, stopped) = oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name(format!("patchbridge-worker-{index}"))
                .spawn(move || {
                    CURRENT.with(|c| c.set(Some(index)));
                    // Runs the tasks spawned on `handle` until told to stop (or the `Workers` is gone).
                    runtime.block_on(async {
                        let _ = stopped.await;
                    });
                    runtime.shutdown_timeout(stop_grace);
                })?;
            workers.push(Worker {
                handle,
                open: Arc::new(AtomicUsize::new(0)),
                stop: Some(stop),
                thread: Some(thread),
            });
        }
        Ok(Workers {
            workers,
            stop_grace,
        })
    }

    /// How many workers run.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// Never: [`Workers::start`] starts at least one.
    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    /// The worker with the fewest open connections (the lowest index among equals), and the connection's
    /// count on it.
    pub fn pick(&self) -> (Handle, Load) {
        let worker = self
            .workers
            .iter()
            .min_by_key(|w| w.open.load(Ordering::Relaxed))
            .expect("at least one worker");
        worker.open.fetch_add(1, Ordering::Relaxed);
        (worker.handle.clone(), Load(worker.open.clone()))
    }

    /// Open connections per worker, in worker order.
    pub fn open_connections(&self) -> Vec<usize> {
        self.workers
            .iter()
            .map(|w| w.open.load(Ordering::Relaxed))
            .collect()
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            if let Some(stop) = worker.stop.take() {
                let _ = stop.send(());
            }
        }
        for worker in &mut self.workers {
            if let Some(thread) = worker.thread.take() {
                // A worker thread only panics if its runtime does; that was logged by the panic hook.
                let _ = thread.join();
            }
        }
        tracing::debug!(
            workers = self.workers.len(),
            grace_ms = self.stop_grace.as_millis() as u64,
            "workers stopped"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_run_on_their_worker_and_know_its_index() {
        let workers = Workers::start(2, Duration::from_secs(1)).unwrap();
        assert_eq!(workers.len(), 2);
        let (first, _a) = workers.pick();
        let (second, _b) = workers.pick();
        let on = |handle: &Handle| {
            let (tx, rx) = std::sync::mpsc::channel();
            handle.spawn(async move { tx.send(current()).unwrap() });
            rx.recv_timeout(Duration::from_secs(5)).unwrap()
        };
        assert_eq!(on(&first), Some(0));
        assert_eq!(on(&second), Some(1));
        assert_eq!(current(), None, "the test's own thread is no worker");
    }

    #[test]
    fn the_least_loaded_worker_gets_the_next_connection() {
        let workers = Workers::start(3, Duration::from_secs(1)).unwrap();
        let a = workers.pick();
        let b = workers.pick();
        let c = workers.pick();
        assert_eq!(workers.open_connections(), vec![1, 1, 1]);
        drop(b);
        assert_eq!(workers.open_connections(), vec![1, 0, 1]);
        let d = workers.pick();
        assert_eq!(
            workers.open_connections(),
            vec![1, 1, 1],
            "the freed worker is chosen"
        );
        let e = workers.pick();
        assert_eq!(workers.open_connections(), vec![2, 1, 1]);
        drop((a, c, d, e));
        assert_eq!(workers.open_connections(), vec![0, 0, 0]);
    }

    #[test]
    fn dropping_the_workers_stops_their_tasks() {
        let workers = Workers::start(1, Duration::from_secs(1)).unwrap();
        let (handle, _load) = workers.pick();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        // A task that never ends by itself: stopping the worker drops it (and with it the sender).
        handle.spawn(async move {
            let _keep = tx;
            std::future::pending::<()>().await
        });
        drop(workers);
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected),
            "the task was dropped, so the channel closed"
        );
    }
}
