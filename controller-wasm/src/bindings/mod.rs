//! The JavaScript face of the runtime (wasm32 only): adapts JS objects to the core's host traits and exports
//! the API of `@patchbridge/agent`. No agent behaviour is decided here; the core does that.
//!
//! Layout, **in dependency order**: each module uses only modules listed above it (`tests/module_layers.rs`
//! fails on any use of a module listed later, which also rules out import cycles).
//! - [`js`] — imports only: the host adapters of `npm/adapter.js` (Pump, errors, JSON, fetch) and a few globals.
//! - [`error`] — core `AgentError` ⇄ the JS `AgentError` class of `npm/errors.js`.
//! - [`values`] — core data as JSON text / frozen JS values, host values as strict core types, small reads.
//! - [`signal`] — the execution's abort signal as a JS `AbortSignal`.
//! - [`stream`] — a JS async iterable as a core event stream, taken in batches (the hot path).
//! - [`host`] — platform (timers, clock, ids), custom model, tools, hooks, `onHookError`.
//! - [`interceptors`] — model and tool interceptors and their `next` continuations.
//! - [`relay`] — the relay model and conversation store over `fetch` (docs/protocol.md).
//! - [`options`] — reading option objects, tool definitions and execution input.
//! - [`runtime`] — `DefaultAgentRuntime` and `AgentExecution`.
//! - [`snapshot`] — `AgentController`'s deep-frozen state snapshots.
//! - [`controller`] — `createAgentController` and `AgentController` with its state snapshots.

mod controller;
mod error;
mod host;
mod interceptors;
mod js;
mod options;
mod relay;
mod runtime;
mod signal;
mod snapshot;
mod stream;
mod values;

/// The wasm's allocator: talc instead of std's dlmalloc, for its size: −2.8 KiB gzip for ~3% more instructions
/// per tool-loop step and per streamed delta (bench/README.md, "Where the bytes go now"). Page weight is what a person waits
/// for on a slow network; a few percent of a step that takes microseconds is not. Freed blocks are coalesced and
/// reused, so a long page session does not grow memory for work it has finished; like every wasm allocator it
/// never gives pages back to the engine.
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
