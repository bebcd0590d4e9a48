//! The agent loop: model call → seal → precheck → stable message → tools (with confirmation) → model call …
//! until a stop reason ends it. Before each model call and before it ends, the loop runs the tool calls the host
//! queued meanwhile (`AgentExecution::call_tool`) as one-call batches outside the messages. Every await is
//! followed by a gate check, so once the gate is closed the loop neither starts a tool nor publishes anything;
//! the driver drops it at its next poll anyway.

use std::rc::Rc;

use futures::future::FutureExt;
use futures::stream::StreamExt;
use patchbridge_protocol::write::Object;
use patchbridge_protocol::{Block, Message, Role, StopReason, StreamEvent};

use super::abort::AbortSignal;
use super::aggregate::{Accepted, Aggregator, SealedMessage};
use super::arguments::invalid_arguments_text;
use super::elicitation::{Asker, ElicitationRequest, ElicitationResponse};
use super::error::{AgentError, ErrorCode, LimitName};
use super::events::ExecutionEvent;
use super::hooks::HookEvent;
use super::host::{EventStream, ToolContext, ToolHandler, ToolOutput};
use super::intercept::{
    next_called_twice, ModelCallContext, ModelNext, Poison, ToolInvocation, ToolNext,
};
use super::interrupt::InterruptResponse;
use super::options::RuntimeParts;
use super::outcome::Outcome;
use super::precheck::{precheck, tool_budget, Budget, CheckedCall};
use super::request::CallRequest;
use super::state::{gate_closed, ExecShared};
use super::tool_result::{validate_tool_result, ToolCallResult, REJECTED_PREFIX};

/// Runs the loop to its natural end (`Ok`) or a failure (`Err`). When the gate closes first, whatever this
/// returns is ignored.
pub(crate) async fn run(sh: Rc<ExecShared>) -> Result<Outcome, AgentError> {
    let message_count = sh.progress.borrow().messages.len();
    sh.hook(HookEvent::ExecutionStarted {
        tool_revision: sh.tools.revision,
        message_count,
    })?;
    let limits = sh.runtime.options.limits;
    let mut finished = None;
    loop {
        sh.check_open()?;
        run_host_calls(&sh).await?;
        if let Some(outcome) = finished {
            return Ok(outcome);
        }
        let model_call = {
            let mut progress = sh.progress.borrow_mut();
            if progress.model_calls >= limits.max_model_calls {
                return Err(AgentError::limit_exceeded(
                    LimitName::MaxModelCalls,
                    format!(
                        "another model call would exceed maxModelCalls ({})",
                        limits.max_model_calls
                    ),
                ));
            }
            progress.model_calls += 1;
            progress.model_calls
        };
        sh.hook(HookEvent::ModelCallStarted { model_call })?;
        let request = Rc::new(build_request(&sh));
        let call = call_model(&sh, request, model_call).await?;
        let SealedCall {
            sealed,
            time_to_first_token_ms,
            output_duration_ms,
        } = call;
        let stop_reason = sealed.stop_reason;
        let usage = sealed.usage;
        let output_characters = sealed.output_characters;
        let model_state = sealed.model_state.clone().map(Rc::new);
        let budget = {
            let progress = sh.progress.borrow();
            Budget {
                model_calls: progress.model_calls,
                tool_calls: progress.tool_calls,
            }
        };
        let (message, calls) = precheck(sealed, &sh.tools, budget, &limits)?;
        sh.check_open()?;
        let message = Rc::new(message);
        {
            let mut progress = sh.progress.borrow_mut();
            progress.usage.add(&usage);
            progress.model_state = model_state;
            progress.messages.push(message.clone());
        }
        sh.emit(&ExecutionEvent::MessageCompleted(&message));
        sh.hook_with(|| HookEvent::ModelCallCompleted {
            model_call,
            message_id: message.id.clone(),
            stop_reason,
            usage,
            time_to_first_token_ms,
            output_duration_ms,
            output_characters,
        })?;
        match stop_reason {
            StopReason::ToolUse => {
                run_batch(&sh, calls, false).await?;
            }
            StopReason::PauseTurn => {}
            // The host's calls queued meanwhile still run (above) before the loop ends.
            StopReason::MaxTokens => finished = Some(Outcome::MaxTokens),
            StopReason::EndTurn
            | StopReason::StopSequence
            | StopReason::Refusal
            | StopReason::Other => finished = Some(Outcome::Completed),
        }
    }
}

/// The next call's request shares the history and definitions (reference counts, no deep copy).
fn build_request(sh: &ExecShared) -> CallRequest {
    let progress = sh.progress.borrow();
    CallRequest {
        model: sh.model.clone(),
        messages: progress.messages.as_slice().into(),
        model_state: progress.model_state.clone(),
        tools: sh.definitions.clone(),
        conversation_id: sh.conversation_id.clone(),
    }
}

struct SealedCall {
    sealed: SealedMessage,
    time_to_first_token_ms: Option<f64>,
    output_duration_ms: f64,
}

/// Builds the interceptor chain for one model call: interceptor `index` gets a `next` leading to `index + 1`;
/// past the last one is the model itself.
fn model_chain(
    runtime: Rc<RuntimeParts>,
    index: usize,
    request: Rc<CallRequest>,
    ctx: ModelCallContext,
    signal: AbortSignal,
    poison: Poison,
) -> EventStream {
    let Some(interceptor) = runtime.options.model_interceptors.get(index).cloned() else {
        return runtime
            .model
            .stream_traced(request, signal, &ctx.trace_id, ctx.model_call);
    };
    let next_runtime = runtime.clone();
    let next_poison = poison.clone();
    let next = ModelNext::new(
        Box::new(move |request, ctx, signal| {
            model_chain(next_runtime, index + 1, request, ctx, signal, next_poison)
        }),
        poison,
    );
    interceptor.intercept(request, ctx, signal, next)
}

async fn call_model(
    sh: &Rc<ExecShared>,
    request: Rc<CallRequest>,
    model_call: u64,
) -> Result<SealedCall, AgentError> {
    let platform = sh.runtime.platform.clone();
    // The timings only feed the ModelCallCompleted hook event: without hooks the clock is not read (each read is
    // a JS call in the browser, three per model call).
    let timed = !sh.runtime.options.hooks.is_empty();
    let now = || if timed { platform.now_ms() } else { 0.0 };
    let started = now();
    let poison = Poison::default();
    let ctx = ModelCallContext {
        execution_id: sh.id.clone(),
        trace_id: sh.trace_id.clone(),
        model_call,
    };
    let mut stream = model_chain(
        sh.runtime.clone(),
        0,
        request,
        ctx,
        sh.signal.clone(),
        poison.clone(),
    );
    let mut aggregator = Aggregator::new(
        format!("msg_{}", platform.new_id()),
        sh.runtime.options.limits.max_model_output_characters,
    );
    let mut first_delta: Option<f64> = None;
    loop {
        let item = stream.next().await;
        sh.check_open()?;
        if poison.is_set() {
            return Err(next_called_twice());
        }
        let Some(item) = item else { break };
        let event = item?;
        match aggregator.accept(&event)? {
            Accepted::MessageStarted => {
                let id = aggregator.id().unwrap_or_default();
                // Ids are unique within a conversation (ModelState entries and tool results are keyed by them);
                // a reused id would leave a history that the next start rejects and a reload calls corrupt.
                if sh.progress.borrow().messages.iter().any(|m| m.id == id) {
                    return Err(AgentError::new(
                        ErrorCode::ProtocolError,
                        format!("message-start id {id:?} is already used by a message of the conversation"),
                    ));
                }
                sh.emit(&ExecutionEvent::MessageStarted { id, model_call });
            }
            Accepted::Block => {
                if first_delta.is_none() && matches!(event, StreamEvent::BlockDelta { .. }) {
                    first_delta = Some(now());
                }
                sh.emit(&ExecutionEvent::Stream(&event));
            }
            Accepted::MessageStopped => {
                let stopped = now();
                // Nothing may follow message-stop. Look once without waiting (a stream that simply stays open
                // must not hold the loop), then release the stream.
                if let Some(Some(_)) = stream.next().now_or_never() {
                    return Err(AgentError::new(
                        ErrorCode::ProtocolError,
                        "event after message-stop",
                    ));
                }
                drop(stream);
                if poison.is_set() {
                    return Err(next_called_twice());
                }
                let sealed = aggregator.seal()?;
                return Ok(SealedCall {
                    sealed,
                    time_to_first_token_ms: first_delta.map(|t| (t - started).max(0.0)),
                    output_duration_ms: first_delta.map(|t| (stopped - t).max(0.0)).unwrap_or(0.0),
                });
            }
        }
    }
    // The stream ended without message-stop: `seal` reports the protocol violation.
    aggregator
        .seal()
        .map(|_| unreachable!("seal succeeds only after message-stop"))
}

/// The error result's content when `call`'s arguments do not match its tool's schema (`None` when they do, or
/// when the tool is not checked). When the host's `RegExp` threw on one of the arguments' strings the check has no
/// answer: the execution ends with `AGENT_TOOL_FAILED` (the tool's own schema failed), never "no match".
fn refused_arguments(
    call: &CheckedCall,
    max_characters: u64,
) -> Result<Option<String>, AgentError> {
    let Some(schema) = call.tool.schema.as_ref() else {
        return Ok(None);
    };
    let (listed, total) = schema.check(&call.input).map_err(|failure| {
        let name = &call.tool.spec.name;
        AgentError::new(
            ErrorCode::ToolFailed,
            format!(
                "tool {name:?} was not run: the page's RegExp threw while matching its inputSchema pattern {:?} \
                 against the arguments of call {:?}: {}",
                failure.pattern, call.call_id, failure.reason
            ),
        )
        .with_details(
            Object::new()
                .put("callId", call.call_id.as_str())
                .put("tool", name.as_str())
                .put("pattern", failure.pattern.as_str())
                .done(),
        )
    })?;
    Ok((total > 0)
        .then(|| invalid_arguments_text(&call.tool.spec.name, &listed, total, max_characters)))
}

/// Runs the host's queued calls, oldest first (and those queued while one runs), each as a one-call `host`
/// batch after the `maxToolCalls` check. A call's error (over the limit, a tool that throws) answers that call
/// and leaves the execution running; a hook's fails the execution, as everywhere.
async fn run_host_calls(sh: &Rc<ExecShared>) -> Result<(), AgentError> {
    while let Some((call, reply)) = sh.take_host_call() {
        let used = sh.progress.borrow().tool_calls;
        let answer = match tool_budget(1, used, &sh.runtime.options.limits) {
            Ok(()) => run_batch(sh, vec![call], true)
                .await
                .and_then(|result| result.ok_or_else(gate_closed)),
            Err(error) => Err(error),
        };
        sh.check_open()?;
        match answer {
            Err(error) if error.code == ErrorCode::HookFailed => return Err(error),
            answer => {
                let _ = reply.send(answer);
            }
        }
    }
    Ok(())
}

/// Runs one prechecked batch in call order, then makes the tool message stable. Every call's arguments are
/// checked first: a call that does not match its tool's schema is neither confirmed nor run, and answered with
/// the runtime's `[invalid arguments]` error result so that the model can correct it. A `host` batch (one call
/// of `AgentExecution::call_tool`) publishes nothing and makes no message: its result is returned.
async fn run_batch(
    sh: &Rc<ExecShared>,
    calls: Vec<CheckedCall>,
    host: bool,
) -> Result<Option<ToolCallResult>, AgentError> {
    sh.progress.borrow_mut().tool_calls += calls.len() as u64;
    let max_characters = sh.runtime.options.limits.max_tool_result_characters;
    let refusals = calls
        .iter()
        .map(|call| refused_arguments(call, max_characters))
        .collect::<Result<Vec<Option<String>>, AgentError>>()?;
    let mut blocks = Vec::with_capacity(calls.len());
    for (call, refusal) in calls.into_iter().zip(refusals) {
        sh.check_open()?;
        let mut rejected = false;
        let invalid_arguments = refusal.is_some();
        let result = if let Some(content) = refusal {
            ToolCallResult {
                tool_call_id: call.call_id.clone(),
                content,
                is_error: true,
            }
        } else if call.tool.spec.needs_confirmation() {
            match confirm(sh, &call).await? {
                InterruptResponse::Approve => run_tool(sh, &call).await?,
                InterruptResponse::Reject { reason } => {
                    rejected = true;
                    ToolCallResult {
                        tool_call_id: call.call_id.clone(),
                        content: rejection_text(
                            &call.tool.spec.name,
                            reason.as_deref(),
                            sh.runtime.options.limits.max_tool_result_characters,
                        ),
                        is_error: true,
                    }
                }
            }
        } else {
            run_tool(sh, &call).await?
        };
        sh.check_open()?;
        if !host {
            sh.progress.borrow_mut().published.push(result.clone());
            sh.emit(&ExecutionEvent::ToolResult {
                call_id: &result.tool_call_id,
                content: &result.content,
                is_error: result.is_error,
            });
        }
        sh.hook_with(|| HookEvent::ToolCallCompleted {
            call_id: call.call_id.clone(),
            tool: call.tool.spec.name.clone(),
            is_error: result.is_error,
            content_characters: result.content.chars().count() as u64,
            rejected,
            invalid_arguments,
        })?;
        if host {
            return Ok(Some(result));
        }
        blocks.push(Block::ToolResult {
            call_id: result.tool_call_id,
            content: result.content,
            is_error: result.is_error,
        });
    }
    let message = Message {
        id: format!("msg_{}", sh.runtime.platform.new_id()),
        role: Role::Tool,
        blocks,
    };
    let message = Rc::new(message);
    // The observer or a hook may have cancelled while the last result was published.
    sh.check_open()?;
    {
        let mut progress = sh.progress.borrow_mut();
        progress.messages.push(message.clone());
        progress.published.clear();
    }
    sh.emit(&ExecutionEvent::MessageCompleted(&message));
    Ok(None)
}

/// The error result the model sees when the user rejects a call, cut to `max` characters: a person can always
/// reject, whatever `maxToolResultCharacters` is (the reason is what gets cut; a limit below the fixed text cuts
/// that too). It starts with [`REJECTED_PREFIX`], which tools may not use, so a reader of the stored conversation
/// can tell a rejection from a failure.
pub(crate) fn rejection_text(tool: &str, reason: Option<&str>, max: u64) -> String {
    let text = match reason {
        Some(reason) if !reason.is_empty() => {
            format!("{REJECTED_PREFIX}The user rejected the call to {tool}. Reason: {reason}")
        }
        _ => format!("{REJECTED_PREFIX}The user rejected the call to {tool}."),
    };
    match text
        .char_indices()
        .nth(usize::try_from(max).unwrap_or(usize::MAX))
    {
        // `get`: `cut` is a char boundary, and a checked slice would keep a panic location in the wasm.
        Some((cut, _)) => text.get(..cut).unwrap_or(&text).to_owned(),
        None => text,
    }
}

async fn confirm(sh: &Rc<ExecShared>, call: &CheckedCall) -> Result<InterruptResponse, AgentError> {
    let (interrupt, receiver) = sh.open_interrupt(&call.call_id, &call.tool.spec.name, &call.input);
    sh.emit(&ExecutionEvent::Interrupt(&interrupt));
    sh.hook_with(|| HookEvent::ConfirmationRequested {
        interrupt_id: interrupt.interrupt_id.clone(),
        call_id: call.call_id.clone(),
        tool: call.tool.spec.name.clone(),
        arguments: (*call.input).clone(),
    })?;
    // A dropped sender means the gate consumed the wait (cancel / deadline / failure).
    let response = receiver.await.map_err(|_| gate_closed())?;
    // A late approval never starts the tool.
    sh.check_open()?;
    let approved = response.is_approve();
    sh.emit(&ExecutionEvent::InterruptResolved {
        interrupt_id: &interrupt.interrupt_id,
        call_id: &call.call_id,
        approved,
    });
    sh.hook_with(|| HookEvent::ConfirmationResolved {
        interrupt_id: interrupt.interrupt_id.clone(),
        call_id: call.call_id.clone(),
        approved,
    })?;
    Ok(response)
}

/// The tool context's way to ask the person during `call` (bound weakly: a tool that keeps its context past
/// the execution only meets a refusal).
fn asker_for(sh: &Rc<ExecShared>, call: &CheckedCall) -> Asker {
    let weak = Rc::downgrade(sh);
    let call_id: Rc<str> = Rc::from(call.call_id.as_str());
    let tool: Rc<str> = Rc::from(call.tool.spec.name.as_str());
    Asker::new(move |request| {
        let weak = weak.clone();
        let (call_id, tool) = (call_id.clone(), tool.clone());
        async move {
            let sh = weak.upgrade().ok_or_else(ended)?;
            elicit(&sh, &call_id, &tool, request).await
        }
        .boxed_local()
    })
}

/// Why a question gets no answer: the execution ended (cancel, deadline, failure) before the person answered.
fn ended() -> AgentError {
    AgentError::new(
        ErrorCode::InvalidInput,
        "elicit: the execution ended before the question was answered",
    )
}

/// One elicitation: raised in the execution's interrupt slot, published, awaited. Cancellation, the deadline
/// and failures consume it through the gate exactly as they consume a confirmation, and a late answer is never
/// delivered to the tool.
async fn elicit(
    sh: &Rc<ExecShared>,
    call_id: &str,
    tool: &str,
    request: ElicitationRequest,
) -> Result<ElicitationResponse, AgentError> {
    let (elicitation, receiver) = sh.open_elicitation(call_id, tool, request)?;
    sh.emit(&ExecutionEvent::Elicitation(&elicitation));
    let response = receiver.await.map_err(|_| ended())?;
    if sh.is_closed() {
        return Err(ended());
    }
    sh.emit(&ExecutionEvent::ElicitationResolved {
        interrupt_id: &elicitation.interrupt_id,
        call_id,
        action: response.action(),
    });
    Ok(response)
}

/// Builds the interceptor chain for one tool call; past the last interceptor is the snapshot's handler,
/// which always receives the original call id.
fn tool_chain(
    runtime: Rc<RuntimeParts>,
    index: usize,
    invocation: ToolInvocation,
    handler: Rc<dyn ToolHandler>,
    call_id: Rc<str>,
    poison: Poison,
    asker: Asker,
) -> ToolOutput {
    let Some(interceptor) = runtime.options.tool_interceptors.get(index).cloned() else {
        let ctx = ToolContext {
            signal: invocation.signal.clone(),
            call_id: call_id.to_string(),
            asker,
        };
        return handler.execute(invocation.arguments, ctx);
    };
    let next_runtime = runtime.clone();
    let next_poison = poison.clone();
    let next = ToolNext::new(
        Box::new(move |invocation| {
            tool_chain(
                next_runtime,
                index + 1,
                invocation,
                handler,
                call_id,
                next_poison,
                asker,
            )
        }),
        poison,
    );
    interceptor.intercept(invocation, next)
}

async fn run_tool(sh: &Rc<ExecShared>, call: &CheckedCall) -> Result<ToolCallResult, AgentError> {
    sh.hook_with(|| HookEvent::ToolCallStarted {
        call_id: call.call_id.clone(),
        tool: call.tool.spec.name.clone(),
        arguments: (*call.input).clone(),
    })?;
    sh.check_open()?;
    let poison = Poison::default();
    let invocation = ToolInvocation {
        call_id: call.call_id.clone(),
        tool: call.tool.spec.name.clone(),
        arguments: call.input.clone(),
        signal: sh.signal.clone(),
        execution_id: sh.id.clone(),
    };
    let output = tool_chain(
        sh.runtime.clone(),
        0,
        invocation,
        call.tool.handler.clone(),
        Rc::from(call.call_id.as_str()),
        poison.clone(),
        asker_for(sh, call),
    )
    .await;
    sh.check_open()?;
    if poison.is_set() {
        return Err(next_called_twice());
    }
    validate_tool_result(
        output?,
        &call.call_id,
        sh.runtime.options.limits.max_tool_result_characters,
    )
}
