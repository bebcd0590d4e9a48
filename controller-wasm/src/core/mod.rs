//! The platform-neutral agent runtime. Single-threaded (`Rc`/`RefCell`); futures are `LocalBoxFuture`s and
//! model streams `LocalBoxStream`s, driven by `spawn_local` in the browser or an executor in native tests.
//!
//! Layout, one concept per file, **in dependency order**: each module uses only modules listed above it, so
//! each can be read knowing only what is above it in this list (`tests/module_layers.rs` fails on any use of a
//! module listed later, which also rules out import cycles).
//! - [`json`] — the one text writer of the runtime's JSON values (built by hand, `ToValue`; writing never
//!   fails silently).
//! - [`error`] — [`AgentError`], [`ErrorCode`] (stable string codes), [`LimitName`].
//! - [`abort`] — [`AbortSignal`], created and aborted only by the core.
//! - [`limits`] — [`Limits`] with validation and JSON parsing (full / partial).
//! - [`attachments`] — attached files (images, documents): types, names, encodings and sizes (pure).
//! - [`messages`] — structural message rules (pure).
//! - [`request`] — [`CallRequest`], a model call's request with the history shared, not copied.
//! - [`batch`] — event batches: many stream events handed over in one crossing, decoded one by one (pure).
//! - [`tool_result`] — tool-result validation (pure).
//! - [`closing`] — the results that close tool calls a cancelled or failed execution left open (pure).
//! - [`draft`] — [`Draft`], the message being streamed, built from block events in one place.
//! - [`aggregate`] — stream validation and draft aggregation (pure).
//! - [`outcome`] — [`Outcome`] and [`ExecutionResult`].
//! - [`interrupt`] — [`Interrupt`], [`InterruptResponse`] (tool confirmation).
//! - [`elicitation`] — [`Elicitation`], [`ElicitationResponse`]: a running tool's question to the person.
//! - [`events`] — [`ExecutionEvent`] and the [`Observer`] that sees them.
//! - [`hooks`] — [`AgentHook`], [`HookEvent`], [`HookContext`], [`HookFailure`].
//! - [`host`] — host traits: [`Model`], [`Platform`] (with the host's ECMAScript [`RegexEngine`]),
//!   [`ToolHandler`], [`ConversationStore`].
//! - [`relay`] — the relay client ([`RelayModel`], [`RelayStore`]) over a host's [`RelayTransport`].
//! - [`pattern`] — [`pattern::Pattern`], a schema pattern compiled by the host's ECMAScript engine.
//! - [`pointer`] — JSON Pointers of schemas and arguments, and the validator's digit reader and writer (pure).
//! - [`formats`] — the string `format`s argument validation checks (pure).
//! - [`schema`] — [`schema::Schema`], a tool's `inputSchema` compiled at registration (unusable ones refused).
//! - [`violations`] — the text of argument violations and of the error result carrying them (pure).
//! - [`arguments`] — tool-call arguments checked against a [`schema::Schema`], and the error result (pure).
//! - [`registry`] — [`ToolRegistry`], [`ToolSpec`], per-turn [`ToolRegistrySnapshot`].
//! - [`precheck`] — the whole-batch tool precheck (pure).
//! - [`intercept`] — [`ModelInterceptor`], [`ToolInterceptor`] and their once-only [`ModelNext`] / [`ToolNext`].
//! - [`options`] — [`RuntimeOptions`] and the parts every execution of a runtime shares.
//! - `state` (private) — the terminal gate, interrupt slot, progress and publication rules of one execution.
//! - `agent_loop` (private) — the loop itself.
//! - `driver` (private) — races the loop against the gate and the deadline.
//! - [`execution`] — [`ExecutionInput`] and the [`AgentExecution`] handle (cancel / respond / result).
//! - [`runtime`] — [`DefaultAgentRuntime`]: starts executions.
//! - [`controller_state`] — [`ControllerState`] and the projection of execution events into it (pure).
//! - [`controller`] — [`Controller`]: turns, persistence, confirmation, registry.

#![warn(missing_docs)]

pub mod abort;
pub mod aggregate;
pub mod arguments;
pub mod attachments;
pub mod batch;
pub mod closing;
pub mod controller;
pub mod controller_state;
pub mod draft;
pub mod elicitation;
pub mod error;
pub mod events;
pub mod execution;
pub mod formats;
pub mod hooks;
pub mod host;
pub mod intercept;
pub mod interrupt;
pub mod json;
pub mod limits;
pub mod messages;
pub mod options;
pub mod outcome;
pub mod pattern;
pub mod pointer;
pub mod precheck;
pub mod registry;
pub mod relay;
pub mod request;
pub mod runtime;
pub mod schema;
pub mod tool_result;
pub mod violations;

mod agent_loop;
mod driver;
mod state;

pub use abort::AbortSignal;
pub use attachments::AttachmentLimits;
pub use controller::{Controller, ControllerOptions, Listener};
pub use controller_state::{
    ControllerState, ConversationInfo, InspectionSource, Status, ToolInspection,
};
pub use draft::{Draft, DraftBlock};
pub use elicitation::{
    Asker, Elicitation, ElicitationAction, ElicitationMode, ElicitationRequest, ElicitationResponse,
};
pub use error::{AgentError, ErrorCode, LimitName};
pub use events::{ExecutionEvent, Observer};
pub use execution::{AgentExecution, ExecutionInput, HostToolCall, ResultFuture};
pub use hooks::{AgentHook, HookContext, HookEvent, HookFailure, OnHookError};
pub use host::{
    ConversationStore, EventStream, HostRegex, Model, Platform, RegexEngine, ToolContext,
    ToolHandler, ToolOutput,
};
pub use intercept::{
    ModelCallContext, ModelInterceptor, ModelNext, ToolInterceptor, ToolInvocation, ToolNext,
};
pub use interrupt::{Interrupt, InterruptKind, InterruptResponse};
pub use limits::Limits;
pub use options::RuntimeOptions;
pub use outcome::{ExecutionResult, Outcome};
pub use registry::{RegisteredTool, ToolRegistry, ToolRegistrySnapshot, ToolSpec};
pub use relay::{HttpAnswer, RelayModel, RelayStore, RelayTransport, StreamAnswer};
pub use request::CallRequest;
pub use runtime::DefaultAgentRuntime;
pub use tool_result::ToolCallResult;

/// The wire types, re-exported so hosts need not depend on the protocol crate directly.
pub use patchbridge_protocol as protocol;
