//! Test doubles for the core's host traits: a manual clock platform (deterministic deadlines, no sleeping),
//! a scripted model (event lists, hangs that honour or ignore abort, errors, externally released steps),
//! closure tools, recording hooks, an in-memory conversation store, and event builders.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures::executor::LocalPool;
use futures::future::{FutureExt, LocalBoxFuture};
use futures::stream::Stream;
use futures::task::LocalSpawnExt;
use patchbridge_agent::core::protocol::{
    Block, BlockKind, ConversationContext, ConversationPage, ConversationSnapshot,
    ConversationSummary, Message, ModelRequest, ModelState, Role, StopReason, StreamEvent, Usage,
};
use patchbridge_agent::core::*;
use serde_json::{json, Map, Value};

// ---------------------------------------------------------------- latch

/// A one-shot "release" switch a test opens to let a hanging double proceed.
#[derive(Clone, Default)]
pub struct Latch(Rc<RefCell<(bool, Vec<Waker>)>>);

impl Latch {
    pub fn new() -> Self {
        Latch::default()
    }
    pub fn open(&self) {
        let wakers = {
            let mut inner = self.0.borrow_mut();
            inner.0 = true;
            std::mem::take(&mut inner.1)
        };
        for w in wakers {
            w.wake();
        }
    }
    pub fn is_open(&self) -> bool {
        self.0.borrow().0
    }
    pub fn wait(&self) -> LatchWait {
        LatchWait(self.clone())
    }
}

pub struct LatchWait(Latch);

impl Future for LatchWait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut inner = (self.0).0.borrow_mut();
        if inner.0 {
            Poll::Ready(())
        } else {
            inner.1.push(cx.waker().clone());
            Poll::Pending
        }
    }
}

// ---------------------------------------------------------------- platform

struct Timer {
    due: f64,
    latch: Latch,
}

/// A platform with a manual clock: `sleep` resolves only when the test advances time past its due time.
#[derive(Default)]
pub struct ManualPlatform {
    now: Cell<f64>,
    timers: RefCell<Vec<Timer>>,
    pub console_errors: RefCell<Vec<HookFailure>>,
    ids: Cell<u64>,
}

impl ManualPlatform {
    pub fn new() -> Rc<Self> {
        Rc::new(ManualPlatform::default())
    }
    /// Moves the clock forward and fires every timer that became due.
    pub fn advance(&self, ms: f64) {
        self.now.set(self.now.get() + ms);
        let now = self.now.get();
        let due: Vec<Latch> = {
            let mut timers = self.timers.borrow_mut();
            let (fire, keep): (Vec<Timer>, Vec<Timer>) =
                timers.drain(..).partition(|t| t.due <= now);
            *timers = keep;
            fire.into_iter().map(|t| t.latch).collect()
        };
        for latch in due {
            latch.open();
        }
    }
}

impl Platform for ManualPlatform {
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()> {
        let latch = Latch::new();
        self.timers.borrow_mut().push(Timer {
            due: self.now.get() + ms as f64,
            latch: latch.clone(),
        });
        latch.wait().boxed_local()
    }
    fn now_ms(&self) -> f64 {
        self.now.get()
    }
    fn console_error(&self, failure: &HookFailure) {
        self.console_errors.borrow_mut().push(failure.clone());
    }
    fn new_id(&self) -> String {
        self.ids.set(self.ids.get() + 1);
        format!("id{}", self.ids.get())
    }
}

impl RegexEngine for ManualPlatform {
    fn compile_regex(&self, source: &str) -> Result<Rc<dyn HostRegex>, String> {
        EcmaRegexes.compile_regex(source)
    }
}

// ---------------------------------------------------------------- regular expressions

/// The host's ECMAScript `RegExp` natively: `regress`, an ECMAScript regex engine, with the flag `u` (the page
/// has the real one; the wasm bundle carries none).
pub struct EcmaRegexes;

struct EcmaRegex(regress::Regex);

impl HostRegex for EcmaRegex {
    fn is_match(&self, text: &str) -> Result<bool, String> {
        Ok(self.0.find(text).is_some())
    }
}

impl RegexEngine for EcmaRegexes {
    fn compile_regex(&self, source: &str) -> Result<Rc<dyn HostRegex>, String> {
        regress::Regex::with_flags(source, "u")
            .map(|regex| Rc::new(EcmaRegex(regex)) as Rc<dyn HostRegex>)
            .map_err(|e| e.to_string())
    }
}

/// An empty registry whose schemas' patterns compile with [`EcmaRegexes`].
pub fn registry() -> ToolRegistry {
    ToolRegistry::new(Rc::new(EcmaRegexes))
}

// ---------------------------------------------------------------- model

/// One step of a scripted model call.
#[derive(Clone)]
pub enum Step {
    /// Yield this event.
    Event(StreamEvent),
    /// Yield this error.
    Fail(AgentError),
    /// Pend until the signal aborts, then yield an error (a well-behaved model).
    HangUntilAbort,
    /// Pend forever, ignoring abort.
    HangForever,
    /// Pend until the latch opens (ignores abort), then continue with the next steps.
    WaitFor(Latch),
    /// Advance the manual clock by this many ms (models time spent streaming).
    Advance(Rc<ManualPlatform>, f64),
}

/// A model whose calls follow scripts in order. Records every request and signal it was given.
#[derive(Default)]
pub struct ScriptedModel {
    scripts: RefCell<VecDeque<Vec<Step>>>,
    pub requests: RefCell<Vec<Rc<ModelRequest>>>,
    pub signals: RefCell<Vec<AbortSignal>>,
    /// Stream items actually pulled by the runtime, per call.
    pub pulled: Rc<Cell<usize>>,
}

impl ScriptedModel {
    pub fn new(scripts: Vec<Vec<Step>>) -> Rc<Self> {
        Rc::new(ScriptedModel {
            scripts: RefCell::new(scripts.into()),
            ..ScriptedModel::default()
        })
    }
    pub fn calls(&self) -> usize {
        self.requests.borrow().len()
    }
}

struct ScriptStream {
    steps: VecDeque<Step>,
    signal: AbortSignal,
    waiting: Option<Pin<Box<dyn Future<Output = ()>>>>,
    pulled: Rc<Cell<usize>>,
}

impl Stream for ScriptStream {
    type Item = Result<StreamEvent, AgentError>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(waiting) = self.waiting.as_mut() {
                match waiting.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(()) => self.waiting = None,
                }
            }
            let Some(step) = self.steps.pop_front() else {
                return Poll::Ready(None);
            };
            match step {
                Step::Event(event) => {
                    self.pulled.set(self.pulled.get() + 1);
                    return Poll::Ready(Some(Ok(event)));
                }
                Step::Fail(error) => return Poll::Ready(Some(Err(error))),
                Step::HangUntilAbort => {
                    let signal = self.signal.clone();
                    self.steps.push_front(Step::Fail(AgentError::new(
                        ErrorCode::ModelFailed,
                        "aborted",
                    )));
                    self.waiting = Some(Box::pin(signal.aborted()));
                }
                Step::HangForever => {
                    self.steps.push_front(Step::HangForever);
                    self.waiting = Some(Box::pin(futures::future::pending()));
                }
                Step::WaitFor(latch) => self.waiting = Some(Box::pin(latch.wait())),
                Step::Advance(platform, ms) => platform.advance(ms),
            }
        }
    }
}

impl Model for ScriptedModel {
    fn stream(&self, request: Rc<CallRequest>, signal: AbortSignal) -> EventStream {
        // Recorded as the protocol value (a deep copy) so tests compare plain messages.
        self.requests
            .borrow_mut()
            .push(Rc::new(request.to_request()));
        self.signals.borrow_mut().push(signal.clone());
        let steps = self.scripts.borrow_mut().pop_front().unwrap_or_else(|| {
            vec![Step::Fail(AgentError::new(
                ErrorCode::ModelFailed,
                "test model: no script left for this call",
            ))]
        });
        Box::pin(ScriptStream {
            steps: steps.into(),
            signal,
            waiting: None,
            pulled: self.pulled.clone(),
        })
    }
}

// ---------------------------------------------------------------- event builders

pub fn ev(e: StreamEvent) -> Step {
    Step::Event(e)
}

pub fn start(id: &str) -> Step {
    ev(StreamEvent::MessageStart {
        id: Some(id.to_string()),
        model: None,
    })
}

pub fn block_start(index: u32, block: BlockKind) -> Step {
    ev(StreamEvent::BlockStart { index, block })
}

pub fn delta(index: u32, text: &str) -> Step {
    ev(StreamEvent::BlockDelta {
        index,
        delta: text.to_string(),
    })
}

pub fn block_stop(index: u32) -> Step {
    ev(StreamEvent::block_stop(index))
}

pub fn stop(reason: StopReason) -> Step {
    stop_with(reason, Usage::default(), None)
}

pub fn stop_with(reason: StopReason, usage: Usage, model_state: Option<ModelState>) -> Step {
    ev(StreamEvent::MessageStop {
        stop_reason: reason,
        usage,
        model_state,
    })
}

/// A complete text message.
pub fn text_reply(id: &str, text: &str, reason: StopReason) -> Vec<Step> {
    vec![
        start(id),
        block_start(0, BlockKind::Text),
        delta(0, text),
        block_stop(0),
        stop(reason),
    ]
}

/// A complete message with one tool call per `(call_id, tool, raw_args)`, stopping with tool-use.
pub fn tool_calls(id: &str, calls: &[(&str, &str, &str)]) -> Vec<Step> {
    let mut steps = vec![start(id)];
    for (i, (call_id, tool, args)) in calls.iter().enumerate() {
        let i = i as u32;
        steps.push(block_start(
            i,
            BlockKind::ToolCall {
                call_id: call_id.to_string(),
                name: tool.to_string(),
            },
        ));
        steps.push(delta(i, args));
        steps.push(block_stop(i));
    }
    steps.push(stop(StopReason::ToolUse));
    steps
}

pub fn user(text: &str) -> Message {
    Message {
        id: format!("u-{text}"),
        role: Role::User,
        blocks: vec![Block::text(text.to_string())],
    }
}

// ---------------------------------------------------------------- tools

type ToolFn = dyn Fn(Rc<Map<String, Value>>, ToolContext) -> ToolOutput;

/// A tool backed by a closure; counts executions.
pub struct FnTool {
    f: Box<ToolFn>,
    pub runs: Rc<Cell<usize>>,
}

impl ToolHandler for FnTool {
    fn execute(&self, input: Rc<Map<String, Value>>, ctx: ToolContext) -> ToolOutput {
        self.runs.set(self.runs.get() + 1);
        (self.f)(input, ctx)
    }
}

pub fn fn_tool(
    f: impl Fn(Rc<Map<String, Value>>, ToolContext) -> ToolOutput + 'static,
) -> (Rc<FnTool>, Rc<Cell<usize>>) {
    let runs = Rc::new(Cell::new(0));
    (
        Rc::new(FnTool {
            f: Box::new(f),
            runs: runs.clone(),
        }),
        runs,
    )
}

pub fn ok_result(call_id: &str, content: &str) -> Value {
    json!({ "toolCallId": call_id, "content": content, "isError": false })
}

/// A tool that answers `content` immediately.
pub fn echo_tool(content: &'static str) -> (Rc<FnTool>, Rc<Cell<usize>>) {
    fn_tool(move |_, ctx| {
        futures::future::ready(Ok(ok_result(&ctx.call_id, content))).boxed_local()
    })
}

pub fn spec(name: &str, read_only: bool, require_confirmation: bool) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: format!("{name} tool"),
        input_schema: json!({ "type": "object" }),
        read_only,
        require_confirmation,
        validate_input: true,
    }
}

/// A snapshot of read-only tools (no confirmation) from `(name, handler)` pairs.
pub fn snapshot(tools: Vec<(ToolSpec, Rc<dyn ToolHandler>)>) -> Rc<ToolRegistrySnapshot> {
    let mut registry = registry();
    for (spec, handler) in tools {
        registry.register(spec, handler).unwrap();
    }
    registry.snapshot()
}

// ---------------------------------------------------------------- hooks

/// Records every event (type + JSON) and can be told to fail on one event type.
pub struct RecordingHook {
    pub name: &'static str,
    pub log: Rc<RefCell<Vec<(String, String, Value)>>>,
    pub fail_on: Option<&'static str>,
}

impl AgentHook for RecordingHook {
    fn on_event(&self, event: &HookEvent, _ctx: &HookContext) -> Result<(), AgentError> {
        self.log.borrow_mut().push((
            self.name.to_string(),
            event.type_name().to_string(),
            event.to_json(),
        ));
        if self.fail_on == Some(event.type_name()) {
            return Err(AgentError::new(
                ErrorCode::HookFailed,
                format!("{} refuses {}", self.name, event.type_name()),
            ));
        }
        Ok(())
    }
}

pub type HookLog = Rc<RefCell<Vec<(String, String, Value)>>>;

pub fn hook(name: &'static str, log: &HookLog, fail_on: Option<&'static str>) -> Rc<dyn AgentHook> {
    Rc::new(RecordingHook {
        name,
        log: log.clone(),
        fail_on,
    })
}

pub fn hook_types(log: &HookLog) -> Vec<String> {
    log.borrow().iter().map(|(_, t, _)| t.clone()).collect()
}

// ---------------------------------------------------------------- runtime harness

pub fn limits() -> Limits {
    Limits::DEFAULT
}

pub fn runtime_with(
    model: Rc<dyn Model>,
    options: RuntimeOptions,
    platform: Rc<ManualPlatform>,
) -> DefaultAgentRuntime {
    DefaultAgentRuntime::new(model, options, platform).expect("valid options")
}

pub fn runtime(model: Rc<dyn Model>, platform: Rc<ManualPlatform>) -> DefaultAgentRuntime {
    runtime_with(model, RuntimeOptions::new(limits()), platform)
}

/// Observer events recorded as `(type, json)`.
pub type EventLog = Rc<RefCell<Vec<(String, Value)>>>;

pub fn recorder() -> (EventLog, Observer) {
    let log: EventLog = Rc::default();
    let sink = log.clone();
    (
        log,
        Box::new(move |event: &ExecutionEvent<'_>| {
            sink.borrow_mut()
                .push((event.type_name().to_string(), event.to_json()))
        }),
    )
}

pub fn event_types(log: &EventLog) -> Vec<String> {
    log.borrow().iter().map(|(t, _)| t.clone()).collect()
}

/// Spawns the execution's driver on a local pool and runs until nothing can progress.
pub struct Harness {
    pub pool: LocalPool,
}

impl Harness {
    pub fn new() -> Self {
        Harness {
            pool: LocalPool::new(),
        }
    }
    pub fn spawn(&mut self, execution: &AgentExecution) {
        self.pool.spawner().spawn_local(execution.driver()).unwrap();
    }
    pub fn spawn_fut(&mut self, fut: impl Future<Output = ()> + 'static) {
        self.pool.spawner().spawn_local(fut).unwrap();
    }
    pub fn stall(&mut self) {
        self.pool.run_until_stalled();
    }
}

/// The settled value, if the execution has settled (polls the shared result once).
pub fn peek(execution: &AgentExecution) -> Option<Result<ExecutionResult, AgentError>> {
    execution.result().now_or_never()
}

/// Starts and runs to completion on a fresh pool (for executions that must settle without outside help).
pub fn run_to_end(
    runtime: &DefaultAgentRuntime,
    input: ExecutionInput,
) -> (Result<ExecutionResult, AgentError>, EventLog) {
    let (log, observer) = recorder();
    let execution = runtime.start(input, observer).expect("valid input");
    let mut pool = LocalPool::new();
    let result = pool.run_until(execution.result());
    (result, log)
}

pub fn input(messages: Vec<Message>, tools: Rc<ToolRegistrySnapshot>) -> ExecutionInput {
    ExecutionInput::new(messages, tools)
}

pub fn no_tools() -> Rc<ToolRegistrySnapshot> {
    Rc::new(ToolRegistrySnapshot::default())
}

pub fn code_of(result: &Result<ExecutionResult, AgentError>) -> &'static str {
    match result {
        Ok(r) => r.outcome.as_str(),
        Err(e) => e.code.as_str(),
    }
}

// ---------------------------------------------------------------- conversation store

/// An in-memory store with revisions; can be switched to return a corrupt error or a stale revision.
#[derive(Default)]
pub struct MemoryStore {
    pub conversations: RefCell<Vec<(ConversationSummary, ConversationContext)>>,
    pub saves: Cell<usize>,
    pub creates: Cell<usize>,
    pub corrupt: RefCell<Vec<String>>,
    pub deletes: Cell<usize>,
    /// The error the next store call fails with (then cleared).
    pub fail_next: RefCell<Option<AgentError>>,
    /// While closed, `delete` and `save` wait (to observe the controller mid-request).
    pub gate: RefCell<Option<Latch>>,
}

impl MemoryStore {
    pub fn new() -> Rc<Self> {
        Rc::new(MemoryStore::default())
    }
    fn find(&self, id: &str) -> Option<(ConversationSummary, ConversationContext)> {
        self.conversations
            .borrow()
            .iter()
            .find(|(s, _)| s.id == id)
            .cloned()
    }
    /// Simulates another tab saving: bumps the stored revision.
    pub fn bump_elsewhere(&self, id: &str) {
        for (summary, _) in self.conversations.borrow_mut().iter_mut() {
            if summary.id == id {
                summary.revision += 1;
            }
        }
    }
}

impl MemoryStore {
    fn take_failure(&self) -> Option<AgentError> {
        self.fail_next.borrow_mut().take()
    }
    fn gated<T: 'static>(
        &self,
        value: Result<T, AgentError>,
    ) -> LocalBoxFuture<'static, Result<T, AgentError>> {
        match self.gate.borrow().clone() {
            Some(latch) => async move {
                latch.wait().await;
                value
            }
            .boxed_local(),
            None => futures::future::ready(value).boxed_local(),
        }
    }
}

impl ConversationStore for MemoryStore {
    fn list(
        &self,
        limit: Option<u32>,
        cursor: Option<&str>,
    ) -> LocalBoxFuture<'static, Result<ConversationPage, AgentError>> {
        if let Some(error) = self.take_failure() {
            return futures::future::ready(Err(error)).boxed_local();
        }
        // Newest first = reverse creation order here; the cursor is the index to continue from.
        let all: Vec<ConversationSummary> = self
            .conversations
            .borrow()
            .iter()
            .rev()
            .map(|(s, _)| s.clone())
            .collect();
        let start: usize = cursor.map(|c| c.parse().unwrap()).unwrap_or(0);
        let limit = limit.unwrap_or(20) as usize;
        let items: Vec<ConversationSummary> = all.iter().skip(start).take(limit).cloned().collect();
        let next_cursor = (start + limit < all.len()).then(|| (start + limit).to_string());
        futures::future::ready(Ok(ConversationPage { items, next_cursor })).boxed_local()
    }
    fn delete(&self, id: &str) -> LocalBoxFuture<'static, Result<(), AgentError>> {
        if let Some(error) = self.take_failure() {
            return self.gated(Err(error));
        }
        let mut conversations = self.conversations.borrow_mut();
        let before = conversations.len();
        conversations.retain(|(s, _)| s.id != id);
        let result = if conversations.len() == before {
            Err(AgentError::new(ErrorCode::RelayError, "NOT_FOUND"))
        } else {
            self.deletes.set(self.deletes.get() + 1);
            Ok(())
        };
        drop(conversations);
        self.gated(result)
    }
    fn load(&self, id: &str) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        let result = if self.corrupt.borrow().iter().any(|c| c == id) {
            Err(AgentError::new(
                ErrorCode::ConversationCorrupt,
                "stored context does not parse",
            ))
        } else {
            self.find(id)
                .map(|(conversation, context)| ConversationSnapshot {
                    conversation,
                    context,
                })
                .ok_or_else(|| AgentError::new(ErrorCode::RelayError, "NOT_FOUND"))
        };
        futures::future::ready(result).boxed_local()
    }
    fn create(
        &self,
        title: &str,
        ctx: &ConversationContext,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        self.creates.set(self.creates.get() + 1);
        let summary = ConversationSummary {
            id: format!("c{}", self.conversations.borrow().len() + 1),
            title: title.to_string(),
            revision: 1,
            created_at: "2026-01-01T00:00:00Z".into(),
            updated_at: "2026-01-01T00:00:00Z".into(),
        };
        self.conversations
            .borrow_mut()
            .push((summary.clone(), ctx.clone()));
        futures::future::ready(Ok(ConversationSnapshot {
            conversation: summary,
            context: ctx.clone(),
        }))
        .boxed_local()
    }
    fn save(
        &self,
        id: &str,
        expected_revision: u64,
        title: Option<&str>,
        ctx: &ConversationContext,
    ) -> LocalBoxFuture<'static, Result<ConversationSnapshot, AgentError>> {
        if let Some(error) = self.take_failure() {
            return self.gated(Err(error));
        }
        let mut conversations = self.conversations.borrow_mut();
        let result = match conversations.iter_mut().find(|(s, _)| s.id == id) {
            None => Err(AgentError::new(ErrorCode::RelayError, "NOT_FOUND")),
            Some((summary, _)) if summary.revision != expected_revision => Err(AgentError::new(
                ErrorCode::RevisionConflict,
                format!(
                    "stale revision {expected_revision}, current {}",
                    summary.revision
                ),
            )),
            Some((summary, context)) => {
                self.saves.set(self.saves.get() + 1);
                summary.revision += 1;
                if let Some(title) = title {
                    summary.title = title.to_string();
                }
                *context = ctx.clone();
                Ok(ConversationSnapshot {
                    conversation: summary.clone(),
                    context: ctx.clone(),
                })
            }
        };
        drop(conversations);
        self.gated(result)
    }
}

// ---------------------------------------------------------------- controller harness

/// A controller over a scripted model and a `MemoryStore`, with every published state recorded and the last
/// `send` outcome kept (shared by the controller and conversation tests).
pub struct Setup {
    pub controller: Controller,
    pub model: Rc<ScriptedModel>,
    pub store: Rc<MemoryStore>,
    pub harness: Harness,
    pub states: Rc<RefCell<Vec<ControllerState>>>,
    pub outcome: Rc<RefCell<Option<Result<Outcome, AgentError>>>>,
}

pub fn setup(scripts: Vec<Vec<Step>>) -> Setup {
    let model = ScriptedModel::new(scripts);
    let rt = runtime(model.clone(), ManualPlatform::new());
    let store = MemoryStore::new();
    let controller = Controller::new(
        rt,
        ControllerOptions {
            store: Some(store.clone()),
            model: None,
            attachments: Default::default(),
        },
    );
    let states: Rc<RefCell<Vec<ControllerState>>> = Rc::default();
    let sink = states.clone();
    controller.subscribe(Box::new(move |s| sink.borrow_mut().push(s.clone())));
    Setup {
        controller,
        model,
        store,
        harness: Harness::new(),
        states,
        outcome: Rc::default(),
    }
}

impl Setup {
    pub fn send(&mut self, text: &str) {
        let fut = self.controller.send_text(text);
        let slot = self.outcome.clone();
        self.harness.spawn_fut(async move {
            *slot.borrow_mut() = Some(fut.await);
        });
        self.harness.stall();
    }
    pub fn outcome(&self) -> Option<Result<Outcome, AgentError>> {
        self.outcome.borrow().clone()
    }
    pub fn run<T: 'static>(&mut self, fut: LocalBoxFuture<'static, T>) -> T {
        self.harness.pool.run_until(fut)
    }
    /// Spawns `fut` and returns the slot its result lands in.
    pub fn spawn<T: 'static>(&mut self, fut: LocalBoxFuture<'static, T>) -> Rc<RefCell<Option<T>>> {
        let slot: Rc<RefCell<Option<T>>> = Rc::default();
        let sink = slot.clone();
        self.harness.spawn_fut(async move {
            *sink.borrow_mut() = Some(fut.await);
        });
        self.harness.stall();
        slot
    }
    /// Puts a stored conversation (one user message titled `title`) into the store directly.
    pub fn seed(&self, id: &str, title: &str, revision: u64) {
        self.store.conversations.borrow_mut().push((
            ConversationSummary {
                id: id.into(),
                title: title.into(),
                revision,
                created_at: String::new(),
                updated_at: String::new(),
            },
            ConversationContext {
                messages: vec![user(title)],
                model_state: None,
            },
        ));
    }
}

/// Replaces a script's final message-stop with one that carries ModelState `{ format: "t/v1", data }`.
pub fn with_state(mut steps: Vec<Step>, data: impl Into<Value>) -> Vec<Step> {
    let reason = match steps.pop() {
        Some(Step::Event(StreamEvent::MessageStop { stop_reason, .. })) => stop_reason,
        _ => panic!("script must end with message-stop"),
    };
    steps.push(stop_with(
        reason,
        Usage::default(),
        Some(ModelState {
            format: "t/v1".into(),
            data: data.into(),
        }),
    ));
    steps
}
