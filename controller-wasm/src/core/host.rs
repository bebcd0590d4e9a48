//! Host traits: what the runtime needs from its environment. Implemented in wasm by the bindings (over JS
//! objects, timers, `fetch` and `RegExp`) and natively by test doubles.

use std::cell::Cell;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::stream::LocalBoxStream;
use patchbridge_protocol::{
    ConversationContext, ConversationPage, ConversationSnapshot, StreamEvent,
};
use serde_json::{Map, Value};

use super::abort::AbortSignal;
use super::elicitation::Asker;
use super::error::AgentError;
use super::hooks::HookFailure;
use super::request::CallRequest;

/// A model's event stream: protocol events, or an error that ends the call.
pub type EventStream = LocalBoxStream<'static, Result<StreamEvent, AgentError>>;

/// A tool's raw result: must be exactly `{ toolCallId, content, isError }`; the core validates it.
pub type ToolOutput = LocalBoxFuture<'static, Result<Value, AgentError>>;

/// A model adapter: the relay client or a custom in-page model.
pub trait Model {
    /// Starts one model call. The stream yields the events of `docs/protocol.md` §3; `signal` aborts when
    /// the execution is cancelled, times out or fails.
    fn stream(&self, request: Rc<CallRequest>, signal: AbortSignal) -> EventStream;
}

/// A regular expression the host compiled (a `RegExp` in the page).
pub trait HostRegex {
    /// Whether `text` matches somewhere (JSON Schema's `pattern` is not anchored); `Err` with the host's reason
    /// when matching threw (a page that replaced `RegExp.prototype.exec`, an engine out of stack). A failure is
    /// never read as "no match": the checking caller ends the execution with it.
    fn is_match(&self, text: &str) -> Result<bool, String>;
}

/// The host's ECMAScript regular expressions. JSON Schema defines `pattern` and `patternProperties` as ECMA-262
/// regular expressions, and the runtime always runs beside a JavaScript engine that has exactly those, so the
/// bundle carries no engine of its own. Schemas compile their patterns once, when a tool is registered.
pub trait RegexEngine {
    /// Compiles `source` with the flag `u`; the host's reason when it refuses the pattern.
    fn compile_regex(&self, source: &str) -> Result<Rc<dyn HostRegex>, String>;
}

/// Timers, clock, ids, the fallback error sink and the host's regular expressions.
pub trait Platform: RegexEngine {
    /// Resolves after `ms` milliseconds (the execution deadline uses it).
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()>;
    /// A monotonic clock in milliseconds (timing figures in hook events).
    fn now_ms(&self) -> f64;
    /// Reports a hook failure on the terminal event when no `onHookError` is configured (`console.error`).
    fn console_error(&self, failure: &HookFailure);
    /// A fresh id, unique across page loads, used for executions and for messages the model did not name.
    /// The default (clock + process counter) is deterministic for tests; the bindings should override it with
    /// `crypto.randomUUID()`.
    fn new_id(&self) -> String {
        thread_local!(static COUNTER: Cell<u64> = const { Cell::new(0) });
        let n = COUNTER.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        format!("{:x}{:04x}", self.now_ms() as u64, n)
    }
}

/// What a tool receives besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// The execution's shared abort signal.
    pub signal: AbortSignal,
    /// The id of the tool call being executed.
    pub call_id: String,
    /// Asks the person a question during the call (an elicitation interrupt of this execution).
    pub asker: Asker,
}

/// One tool implementation.
pub trait ToolHandler {
    /// Runs the tool. Returns the RAW result, validated by the core; `Err` (a throw/rejection) ends the
    /// execution — expected business failures should be returned as `isError: true` results instead.
    fn execute(&self, input: Rc<Map<String, Value>>, ctx: ToolContext) -> ToolOutput;
}

/// Where the controller keeps `{ messages, modelState }` by revision (`docs/protocol.md` §6). Every failure is a
/// typed [`AgentError`]; an answer the store cannot vouch for (an unexpected status, a body that does not parse)
/// is a failure, never a success.
pub trait ConversationStore {
    /// One page of the user's conversations, newest first. `limit` 1..=100 (`None`: the store's default);
    /// `cursor` is the previous page's opaque `next_cursor`.
    fn list(
        &self,
        limit: Option<u32>,
        cursor: Option<&str>,
    ) -> LocalBoxFuture<'static, Result<ConversationPage, AgentError>>;
    /// Reads one conversation. Corrupt stored state must fail with `AGENT_CONVERSATION_CORRUPT`.
    fn load(&self, id: &str) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>>;
    /// Creates a conversation holding `ctx` (revision 1).
    fn create(
        &self,
        title: &str,
        ctx: &ConversationContext,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>>;
    /// Replaces the context (and the title, when `title` is given) if the stored revision is
    /// `expected_revision`; otherwise fails with `AGENT_REVISION_CONFLICT` and changes nothing.
    fn save(
        &self,
        id: &str,
        expected_revision: u64,
        title: Option<&str>,
        ctx: &ConversationContext,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>>;
    /// Deletes a conversation. Succeeds only when the store confirmed the deletion.
    fn delete(&self, id: &str) -> LocalBoxFuture<'static, Result<(), AgentError>>;
}
