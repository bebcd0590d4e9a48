//! PatchBridge Agent runtime: the agent loop, compiled to WebAssembly for the browser.
//!
//! Layout:
//! - [`core`] — the platform-neutral runtime (messages, stream aggregation, limits, the execution state
//!   machine with its terminal gate, tool registry snapshots, precheck, interrupts, hooks, interceptors and the
//!   controller). It knows nothing of `wasm_bindgen`; it is tested natively with `cargo test`.
//! - `bindings` (wasm32 only) — adapts JavaScript objects to the core's host traits and exports the JS API
//!   (`createAgentController`, `DefaultAgentRuntime`).

pub mod core;

#[cfg(target_arch = "wasm32")]
mod bindings;

// Generates the npm package's TypeScript declarations from the core's types (tests only).
#[cfg(test)]
mod typescript;
