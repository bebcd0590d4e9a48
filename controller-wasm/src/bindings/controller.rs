//! `createAgentController(options)` and the `AgentController` class over the core [`Controller`].
//!
//! State snapshots: the core notifies synchronously on every change (every delta); here changes only mark the
//! snapshot stale and schedule one microtask that builds a new deep-frozen state object ([`View`]) and hands it
//! to the subscribers, so a batch of deltas costs one snapshot. `getState()` always returns the current state
//! (built on demand when stale).

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use js_sys::{Function, Promise};
use patchbridge_protocol::write::Object;
use patchbridge_protocol::Block;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::error::to_js;
use super::host::{JsModel, JsPlatform};
use super::js;
use super::options;
use super::relay::FetchTransport;
use super::runtime;
use super::snapshot::View;
use super::values::{from_host, frozen, get, is_missing};
use crate::core::json::to_text;
use crate::core::relay::{RelayModel, RelayStore};
use crate::core::{
    AgentError, AttachmentLimits, Controller, ControllerOptions, ControllerState,
    ConversationStore, DefaultAgentRuntime, ErrorCode, Model, Outcome,
};

const OPTION_KEYS: [&str; 7] = [
    "endpoint",
    "headers",
    "model",
    "tools",
    "conversationId",
    "runtime",
    "attachments",
];

struct Shared {
    core: Controller,
    view: View,
}

impl Shared {
    fn current(&self) -> JsValue {
        if self.view.stale.get() || self.view.snapshot.borrow().is_none() {
            let snapshot = self.view.build(&self.core.state());
            *self.view.snapshot.borrow_mut() = Some(snapshot);
            self.view.stale.set(false);
        }
        self.view.snapshot.borrow().clone().unwrap_or(JsValue::NULL)
    }

    /// Delivers the current snapshot to every subscriber (once per microtask, however many changes happened).
    fn flush(&self) {
        self.view.scheduled.set(false);
        if self.view.listeners.borrow().is_empty() {
            return;
        }
        let state = self.current();
        let listeners: Vec<Function> = self
            .view
            .listeners
            .borrow()
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        for listener in listeners {
            if let Err(thrown) = listener.call1(&JsValue::NULL, &state) {
                let _ = js::console_error2("@patchbridge/agent: a state subscriber threw", &thrown);
            }
        }
    }
}

fn schedule(shared: &Rc<Shared>) {
    shared.view.stale.set(true);
    if shared.view.scheduled.replace(true) {
        return;
    }
    let weak = Rc::downgrade(shared);
    js::queue_microtask(&Closure::once_into_js(move || {
        if let Some(shared) = weak.upgrade() {
            shared.flush();
        }
    }));
}

/// The stateful controller returned by `createAgentController`.
#[wasm_bindgen(js_name = AgentController)]
pub struct JsController {
    shared: Rc<Shared>,
}

/// `createAgentController({ endpoint?, headers?, model?, tools?, conversationId?, runtime? })`.
///
/// `endpoint` selects the relay (model stream at `{endpoint}/model`, conversations at `{endpoint}/conversations`);
/// `model` is either a custom model object `{ stream(request, signal) }` (used instead of the relay's model
/// stream) or, with an endpoint, a relay model id string. Throws `AgentError` on invalid options.
#[wasm_bindgen(js_name = createAgentController)]
pub fn create_agent_controller(options: JsValue) -> Result<JsController, JsValue> {
    build_controller(&options).map_err(|e| to_js(&e))
}

fn build_controller(options: &JsValue) -> Result<JsController, AgentError> {
    let invalid = |m: &str| AgentError::new(ErrorCode::InvalidOptions, m.to_owned());
    if !options.is_object() {
        return Err(invalid(
            "createAgentController expects an options object { endpoint } or { model }",
        ));
    }
    options::check_keys(
        options,
        &OPTION_KEYS,
        "createAgentController",
        ErrorCode::InvalidOptions,
    )?;
    let endpoint = options::opt_string(options, "endpoint", "options", ErrorCode::InvalidOptions)?;
    if endpoint.as_deref().is_some_and(str::is_empty) {
        return Err(invalid("options.endpoint must be a non-empty URL"));
    }
    let headers = get(options, "headers");
    if !is_missing(&headers) && !headers.is_object() && !headers.is_function() {
        return Err(invalid(
            "options.headers must be an object or a function returning one (per request)",
        ));
    }
    let relay = endpoint
        .as_deref()
        .map(|e| Rc::new(FetchTransport::new(e, headers.clone())));
    let raw_model = get(options, "model");
    let relay_model = |id: Option<String>| -> Result<(Rc<dyn Model>, Option<String>), AgentError> {
        match &relay {
            Some(relay) => Ok((Rc::new(RelayModel::new(relay.clone())), id)),
            None => Err(invalid(
                "createAgentController needs options.endpoint (a relay) or options.model (a custom model object)",
            )),
        }
    };
    let (model, model_id) = if let Some(id) = raw_model.as_string() {
        relay_model(Some(id))?
    } else if is_missing(&raw_model) {
        relay_model(None)?
    } else if raw_model.is_object() {
        (
            Rc::new(JsModel::new(raw_model.clone())?) as Rc<dyn Model>,
            None,
        )
    } else {
        return Err(invalid(
            "options.model must be a model object { stream(request, signal) } or a relay model id",
        ));
    };
    let runtime_options =
        options::runtime_options(&get(options, "runtime"), false, "options.runtime")?;
    let raw_attachments = get(options, "attachments");
    let attachments = if is_missing(&raw_attachments) {
        AttachmentLimits::DEFAULT
    } else {
        AttachmentLimits::from_partial_json(&from_host::<serde_json::Value>(
            &raw_attachments,
            "options.attachments",
            ErrorCode::InvalidOptions,
        )?)?
    };
    let runtime = DefaultAgentRuntime::new(model, runtime_options, Rc::new(JsPlatform))?;
    let store: Option<Rc<dyn ConversationStore>> =
        relay.map(|relay| Rc::new(RelayStore::new(relay)) as Rc<dyn ConversationStore>);
    let has_store = store.is_some();
    let core = Controller::new(
        runtime,
        ControllerOptions {
            store,
            model: model_id,
            attachments,
        },
    );

    let tools = get(options, "tools");
    if !is_missing(&tools) {
        let tools = options::array_of(
            &tools,
            "options.tools (an array of tool definitions)",
            ErrorCode::InvalidTool,
        )?;
        for def in tools {
            let (spec, handler) = options::tool(&def)?;
            core.register_tool(spec, handler)?;
        }
    }
    let conversation_id = options::opt_string(
        options,
        "conversationId",
        "options",
        ErrorCode::InvalidOptions,
    )?;
    if conversation_id.is_some() && !has_store {
        return Err(invalid(
            "options.conversationId needs options.endpoint (conversations live in the relay)",
        ));
    }

    let shared = Rc::new(Shared {
        core,
        view: View::default(),
    });
    let weak = Rc::downgrade(&shared);
    shared
        .core
        .subscribe(Box::new(move |_state: &ControllerState| {
            if let Some(shared) = weak.upgrade() {
                schedule(&shared);
            }
        }));
    if let Some(id) = conversation_id {
        // The load's failure is in `state.error` (and `loadConversation` callers get it as a rejection).
        let loading = shared.core.load_conversation(&id);
        wasm_bindgen_futures::spawn_local(async move {
            let _ = loading.await;
        });
    }
    Ok(JsController { shared })
}

fn quiet_promise<F>(future: F) -> Promise
where
    F: std::future::Future<Output = Result<JsValue, JsValue>> + 'static,
{
    js::quiet(&future_to_promise(future))
}

/// A turn's promise: resolves with its outcome (`completed`, `max-tokens`, `cancelled`), rejects with the
/// `AgentError`.
fn turn_promise(turn: LocalBoxFuture<'static, Result<Outcome, AgentError>>) -> Promise {
    quiet_promise(async move {
        match turn.await {
            Ok(outcome) => Ok(JsValue::from_str(outcome.as_str())),
            Err(e) => Err(to_js(&e)),
        }
    })
}

fn rejected(error: &AgentError) -> Promise {
    js::quiet(&Promise::reject(&to_js(error)))
}

fn user_blocks(input: &JsValue) -> Result<Vec<Block>, AgentError> {
    if let Some(text) = input.as_string() {
        return Ok(vec![Block::text(text)]);
    }
    if !js::is_array(input) {
        return Err(AgentError::new(
            ErrorCode::InvalidInput,
            "send expects a string or an array of text, image and document blocks",
        ));
    }
    from_host(input, "send: blocks", ErrorCode::InvalidInput)
}

fn invalid_input(message: String) -> AgentError {
    AgentError::new(ErrorCode::InvalidInput, message)
}

/// A conversation id argument: a non-empty string.
fn conversation_id(id: &JsValue, what: &str) -> Result<String, AgentError> {
    match id.as_string() {
        Some(id) if !id.is_empty() => Ok(id),
        _ => Err(invalid_input(format!(
            "{what} expects a conversation id string"
        ))),
    }
}

/// `{ keepMessages?: boolean }` or nothing.
fn new_conversation_options(options: &JsValue) -> Result<bool, AgentError> {
    if is_missing(options) {
        return Ok(false);
    }
    if !options.is_object() || js::is_array(options) {
        return Err(invalid_input(
            "newConversation expects nothing or an options object { keepMessages }".into(),
        ));
    }
    options::check_keys(
        options,
        &["keepMessages"],
        "newConversation",
        ErrorCode::InvalidInput,
    )?;
    match get(options, "keepMessages") {
        v if v.is_undefined() => Ok(false),
        v => v
            .as_bool()
            .ok_or_else(|| invalid_input("newConversation: keepMessages must be a boolean".into())),
    }
}

/// `{ limit?: 1..=100, cursor?: string }` or nothing.
fn list_options(options: &JsValue) -> Result<(Option<u32>, Option<String>), AgentError> {
    if is_missing(options) {
        return Ok((None, None));
    }
    if !options.is_object() || js::is_array(options) {
        return Err(invalid_input(
            "listConversations expects nothing or an options object { limit, cursor }".into(),
        ));
    }
    options::check_keys(
        options,
        &["limit", "cursor"],
        "listConversations",
        ErrorCode::InvalidInput,
    )?;
    let limit = match get(options, "limit") {
        v if is_missing(&v) => None,
        v => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (1.0..=100.0).contains(&n) => Some(n as u32),
            _ => {
                return Err(invalid_input(
                    "listConversations: limit must be an integer from 1 to 100".into(),
                ))
            }
        },
    };
    let cursor = options::opt_string(
        options,
        "cursor",
        "listConversations",
        ErrorCode::InvalidInput,
    )?;
    Ok((limit, cursor))
}

/// The class's methods, in the order of their operation codes (`CONTROLLER_MEMBERS` in `npm/adapter.js`, which
/// defines each public method on the prototype as a call of `__call` with its index).
const SUBSCRIBE: u32 = 0;
const GET_STATE: u32 = 1;
const SEND: u32 = 2;
const RETRY: u32 = 3;
const REGENERATE: u32 = 4;
const EDIT_LAST_MESSAGE: u32 = 5;
const SET_RUNTIME_OPTIONS: u32 = 6;
const ABORT: u32 = 7;
const APPROVE_TOOL: u32 = 8;
const REJECT_TOOL: u32 = 9;
const REGISTER_TOOL: u32 = 10;
const UNREGISTER_TOOL: u32 = 11;
const GET_TOOL_INSPECTION_SOURCE: u32 = 12;
const LOAD_CONVERSATION: u32 = 13;
const NEW_CONVERSATION: u32 = 14;
const LIST_CONVERSATIONS: u32 = 15;
const RENAME_CONVERSATION: u32 = 16;
const DELETE_CONVERSATION: u32 = 17;
const GET_MODEL_STATE: u32 = 18;
const DESTROY: u32 = 19;
const ANSWER_ELICITATION: u32 = 20;
const CALL_TOOL_IN_TURN: u32 = 21;
const RESPOND: u32 = 22;

#[wasm_bindgen(js_class = AgentController)]
impl JsController {
    /// Every public method in one export: `op` names the method (the constants above), `a` and `b` are its
    /// arguments. One entry instead of twenty keeps the wasm-bindgen shims (argument conversion, the borrow of
    /// `self`, the error return) and their glue to one copy; the methods' bodies are unchanged.
    #[wasm_bindgen(js_name = __call)]
    pub fn call(&self, op: u32, a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
        Ok(match op {
            SUBSCRIBE => self.subscribe(a)?,
            GET_STATE => self.get_state(),
            SEND => self.send(a).into(),
            RETRY => self.retry().into(),
            REGENERATE => self.regenerate().into(),
            EDIT_LAST_MESSAGE => self.edit_last_message(a).into(),
            SET_RUNTIME_OPTIONS => {
                self.set_runtime_options(a)?;
                JsValue::UNDEFINED
            }
            ABORT => self.abort().into(),
            APPROVE_TOOL => {
                self.approve_tool()?;
                JsValue::UNDEFINED
            }
            REJECT_TOOL => {
                self.reject_tool(a)?;
                JsValue::UNDEFINED
            }
            REGISTER_TOOL => self.register_tool(a)?.into(),
            UNREGISTER_TOOL => self.unregister_tool(a)?.into(),
            GET_TOOL_INSPECTION_SOURCE => self.get_tool_inspection_source(),
            LOAD_CONVERSATION => self.load_conversation(a).into(),
            NEW_CONVERSATION => {
                self.new_conversation(a)?;
                JsValue::UNDEFINED
            }
            LIST_CONVERSATIONS => self.list_conversations(a).into(),
            RENAME_CONVERSATION => self.rename_conversation(a, b).into(),
            DELETE_CONVERSATION => self.delete_conversation(a).into(),
            GET_MODEL_STATE => self.get_model_state(),
            DESTROY => {
                self.destroy();
                JsValue::UNDEFINED
            }
            ANSWER_ELICITATION => {
                let value: serde_json::Value = js::try_to_json(&a)
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .ok_or_else(|| {
                        to_js(&AgentError::new(
                            ErrorCode::InvalidInput,
                            "answerElicitation expects { action, content? }",
                        ))
                    })?;
                self.shared
                    .core
                    .answer_elicitation(&value)
                    .map_err(|e| to_js(&e))?;
                JsValue::UNDEFINED
            }
            // An MCP App's call in the running turn (`core::Controller::call_tool_in_turn`).
            CALL_TOOL_IN_TURN => {
                let call = runtime::host_call(&a).map_err(|e| to_js(&e))?;
                runtime::tool_call_promise(self.shared.core.call_tool_in_turn(call)).into()
            }
            RESPOND => {
                let (id, value) = runtime::parse_response(&a).map_err(|e| to_js(&e))?;
                self.shared
                    .core
                    .respond_json(&id, &value)
                    .map_err(|e| to_js(&e))?;
                JsValue::UNDEFINED
            }
            _ => JsValue::UNDEFINED,
        })
    }
}

impl JsController {
    /// Calls `listener(state)` after changes (coalesced per microtask); returns the unsubscribe function.
    fn subscribe(&self, listener: JsValue) -> Result<JsValue, JsValue> {
        let listener: Function = listener.dyn_into().map_err(|_| {
            to_js(&AgentError::new(
                ErrorCode::InvalidOptions,
                "subscribe expects a function",
            ))
        })?;
        let view = &self.shared.view;
        let id = view.next_listener.get();
        view.next_listener.set(id + 1);
        view.listeners.borrow_mut().push((id, listener));
        let weak = Rc::downgrade(&self.shared);
        let unsubscribe = Closure::<dyn FnMut()>::new(move || {
            if let Some(shared) = weak.upgrade() {
                shared
                    .view
                    .listeners
                    .borrow_mut()
                    .retain(|(lid, _)| *lid != id);
            }
        });
        Ok(unsubscribe.into_js_value())
    }

    /// The current state: `{ status, messages, draft, toolResults, pendingConfirmation, lastOutcome, error,
    /// conversation, toolRevision }`, deep-frozen.
    fn get_state(&self) -> JsValue {
        self.shared.current()
    }

    /// Sends a user message (a string, or an array of text, image and document blocks) and runs one turn. Resolves with the
    /// outcome (`completed`, `max-tokens`, `cancelled`); rejects with an `AgentError` (also in `state.error`).
    fn send(&self, input: JsValue) -> Promise {
        let blocks = match user_blocks(&input) {
            Ok(blocks) => blocks,
            Err(e) => return rejected(&e),
        };
        turn_promise(self.shared.core.send(blocks))
    }

    /// Runs the turn again from the stable messages without adding a user message (after a failed turn whose
    /// last stable message is the person's or a tool result). Resolves and rejects like `send`.
    fn retry(&self) -> Promise {
        turn_promise(self.shared.core.retry())
    }

    /// Answers the last user message again: the messages after it are dropped and the turn runs; the rewritten
    /// conversation is saved whole as the next revision. Rejects with `AGENT_BUSY` while a turn runs and with
    /// `AGENT_INVALID_INPUT` when there is no user message. Resolves and rejects like `send`.
    fn regenerate(&self) -> Promise {
        turn_promise(self.shared.core.regenerate())
    }

    /// Replaces the last user message and everything after it with a new user message (`send`'s input shapes)
    /// and runs the turn; saved and refused like `regenerate`.
    fn edit_last_message(&self, input: JsValue) -> Promise {
        let blocks = match user_blocks(&input) {
            Ok(blocks) => blocks,
            Err(e) => return rejected(&e),
        };
        turn_promise(self.shared.core.edit_last_message(blocks))
    }

    /// `setRuntimeOptions({ limits?, hooks?, onHookError?, modelInterceptors?, toolInterceptors? })`: the same
    /// shape as `createAgentController`'s `runtime` (limits a partial override of the defaults). Applies from the
    /// next turn; a running turn keeps its options. Throws `AgentError` on invalid options (nothing changes).
    fn set_runtime_options(&self, runtime: JsValue) -> Result<(), JsValue> {
        let options =
            options::runtime_options(&runtime, false, "runtimeOptions").map_err(|e| to_js(&e))?;
        self.shared
            .core
            .set_runtime_options(options)
            .map_err(|e| to_js(&e))
    }

    /// Cancels the running turn; returns whether one was cancelled.
    fn abort(&self) -> bool {
        self.shared.core.abort()
    }

    /// Approves the pending tool confirmation (throws `AGENT_NO_PENDING_INTERRUPT` when none is pending).
    fn approve_tool(&self) -> Result<(), JsValue> {
        self.shared.core.approve_tool().map_err(|e| to_js(&e))
    }

    /// Rejects the pending tool confirmation; the model sees an error tool result (with `reason`, if given).
    fn reject_tool(&self, reason: JsValue) -> Result<(), JsValue> {
        let reason = if is_missing(&reason) {
            None
        } else {
            Some(reason.as_string().ok_or_else(|| {
                to_js(&invalid_input(
                    "rejectTool(reason?): reason must be a string".into(),
                ))
            })?)
        };
        self.shared.core.reject_tool(reason).map_err(|e| to_js(&e))
    }

    /// Registers a tool for the next turn; returns the registry revision.
    fn register_tool(&self, definition: JsValue) -> Result<f64, JsValue> {
        let (spec, handler) = options::tool(&definition).map_err(|e| to_js(&e))?;
        self.shared
            .core
            .register_tool(spec, handler)
            .map(|r| r as f64)
            .map_err(|e| to_js(&e))
    }

    /// Unregisters a tool by name (next turn); returns whether it existed.
    fn unregister_tool(&self, name: JsValue) -> Result<bool, JsValue> {
        let Some(name) = name.as_string() else {
            return Err(to_js(&invalid_input(
                "unregisterTool(name): name must be a string".into(),
            )));
        };
        self.shared
            .core
            .unregister_tool(&name)
            .map_err(|e| to_js(&e))
    }

    /// `{ source: 'current-execution' | 'current-registry', snapshot: { revision, tools } }`.
    fn get_tool_inspection_source(&self) -> JsValue {
        let inspection = self.shared.core.tool_inspection_source();
        let snapshot = Object::new()
            .put("revision", inspection.snapshot.revision)
            .put("tools", inspection.snapshot.specs_json())
            .done();
        let value = Object::new()
            .put("source", inspection.source.as_str())
            .put("snapshot", snapshot)
            .done();
        js::parse_frozen(&to_text(&value))
    }

    /// Loads a stored conversation (idle only); rejects with `AGENT_CONVERSATION_CORRUPT`, `AGENT_RELAY_ERROR`…
    fn load_conversation(&self, id: JsValue) -> Promise {
        let Some(id) = id.as_string() else {
            return rejected(&AgentError::new(
                ErrorCode::InvalidInput,
                "loadConversation expects a conversation id string",
            ));
        };
        let loading = self.shared.core.load_conversation(&id);
        quiet_promise(async move {
            loading
                .await
                .map(|_| JsValue::UNDEFINED)
                .map_err(|e| to_js(&e))
        })
    }

    /// `newConversation(options?)`: starts a new, unsaved conversation (idle only; saved on the first completed
    /// turn). `{ keepMessages: true }` keeps the stable messages and drops the ModelState.
    fn new_conversation(&self, options: JsValue) -> Result<(), JsValue> {
        let keep_messages = new_conversation_options(&options).map_err(|e| to_js(&e))?;
        self.shared
            .core
            .new_conversation(keep_messages)
            .map_err(|e| to_js(&e))
    }

    /// `listConversations({ limit?, cursor? })` → `{ items: ConversationSummary[], nextCursor }` (frozen).
    fn list_conversations(&self, options: JsValue) -> Promise {
        let (limit, cursor) = match list_options(&options) {
            Ok(parsed) => parsed,
            Err(e) => return rejected(&e),
        };
        let listing = self
            .shared
            .core
            .list_conversations(limit, cursor.as_deref());
        quiet_promise(async move {
            match listing.await {
                Ok(page) => Ok(frozen(&page)),
                Err(e) => Err(to_js(&e)),
            }
        })
    }

    /// `renameConversation(id, title)` → the renamed conversation's `{ id, title, revision }` (frozen).
    fn rename_conversation(&self, id: JsValue, title: JsValue) -> Promise {
        let id = match conversation_id(&id, "renameConversation") {
            Ok(id) => id,
            Err(e) => return rejected(&e),
        };
        let Some(title) = title.as_string() else {
            return rejected(&AgentError::new(
                ErrorCode::InvalidInput,
                "renameConversation expects a title string",
            ));
        };
        let renaming = self.shared.core.rename_conversation(&id, &title);
        quiet_promise(async move {
            match renaming.await {
                Ok(info) => Ok(frozen(&info)),
                Err(e) => Err(to_js(&e)),
            }
        })
    }

    /// `deleteConversation(id)`: resolves (undefined) once the relay confirmed the deletion with `204`.
    fn delete_conversation(&self, id: JsValue) -> Promise {
        let id = match conversation_id(&id, "deleteConversation") {
            Ok(id) => id,
            Err(e) => return rejected(&e),
        };
        let deleting = self.shared.core.delete_conversation(&id);
        quiet_promise(async move {
            deleting
                .await
                .map(|_| JsValue::UNDEFINED)
                .map_err(|e| to_js(&e))
        })
    }

    /// The provider state that goes with the stable messages (for hosts that persist conversations themselves).
    fn get_model_state(&self) -> JsValue {
        frozen(&self.shared.core.model_state())
    }

    /// Cancels any running turn, drops subscribers and makes every later call fail with `AGENT_DESTROYED`.
    fn destroy(&self) {
        self.shared.core.destroy();
        self.shared.view.stale.set(true);
        self.shared.view.listeners.borrow_mut().clear();
    }
}
