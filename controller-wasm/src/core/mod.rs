//! The platform-neutral agent runtime. Single-threaded (`Rc`/`RefCell`); futures are `LocalBoxFuture`s and
//! model streams `LocalBoxStream`s, driven by `spawn_local` in the browser or an executor in native tests.
//!
//! Layout (one concept per file):
//! - [`error`] — [`AgentError`], [`ErrorCode`] (stable string codes), [`LimitName`].
//! - [`limits`] — [`Limits`] with validation and JSON parsing (full / partial).
//! - [`abort`] — [`AbortSignal`], created and aborted only by the core.
//! - [`request`] — [`CallRequest`], a model call's request with the history shared, not copied.
//! - [`host`] — host traits: [`Model`], [`Platform`], [`ToolHandler`], [`ConversationStore`].
//! - [`registry`] — [`ToolRegistry`], [`ToolSpec`], per-turn [`ToolRegistrySnapshot`].
//! - [`hooks`] — [`AgentHook`], [`HookEvent`], [`HookContext`], [`HookFailure`].
//! - [`intercept`] — [`ModelInterceptor`], [`ToolInterceptor`] and their once-only [`ModelNext`] / [`ToolNext`].
//! - [`messages`] — structural message rules (pure).
//! - [`aggregate`] — stream validation and draft aggregation (pure).
//! - [`precheck`] — the whole-batch tool precheck (pure).
//! - [`tool_result`] — tool-result validation (pure).
//! - [`closing`] — the results that close tool calls a cancelled or failed execution left open (pure).
//! - [`execution`] — [`AgentExecution`], [`ExecutionInput`], [`ExecutionResult`], [`Outcome`], observer events,
//!   interrupts.
//! - [`runtime`] — [`DefaultAgentRuntime`], [`RuntimeOptions`].
//! - [`controller`] — [`Controller`]: turns, persistence, confirmation, registry.
//! - [`controller_state`] — [`ControllerState`] and the projection of execution events into it (pure).
//! - `state` (private) — the terminal gate, interrupt slot, progress and publication rules of one execution.
//! - `driver` (private) — races the loop against the gate and the deadline.
//! - `agent_loop` (private) — the loop itself.

#![warn(missing_docs)]

pub mod abort;
pub mod aggregate;
pub mod closing;
pub mod controller;
pub mod controller_state;
pub mod error;
pub mod execution;
pub mod hooks;
pub mod host;
pub mod intercept;
pub mod limits;
pub mod messages;
pub mod precheck;
pub mod registry;
pub mod request;
pub mod runtime;
pub mod tool_result;

mod agent_loop;
mod driver;
mod state;

pub use abort::AbortSignal;
pub use controller::{
    Controller, ControllerOptions, ControllerState, ConversationInfo, Draft, InspectionSource,
    Listener, Status, ToolInspection,
};
pub use error::{AgentError, ErrorCode, LimitName};
pub use execution::{
    AgentExecution, ExecutionEvent, ExecutionInput, ExecutionResult, Interrupt, InterruptKind,
    InterruptResponse, Observer, Outcome, ResultFuture,
};
pub use hooks::{AgentHook, HookContext, HookEvent, HookFailure, OnHookError};
pub use host::{
    ConversationStore, EventStream, Model, Platform, ToolContext, ToolHandler, ToolOutput,
};
pub use intercept::{
    ModelCallContext, ModelInterceptor, ModelNext, ToolInterceptor, ToolInvocation, ToolNext,
};
pub use limits::Limits;
pub use registry::{RegisteredTool, ToolRegistry, ToolRegistrySnapshot, ToolSpec};
pub use request::CallRequest;
pub use runtime::{DefaultAgentRuntime, RuntimeOptions};
pub use tool_result::ToolCallResult;

/// The wire types, re-exported so hosts need not depend on the protocol crate directly.
pub use patchbridge_protocol as protocol;
