// Confirmation interrupts, the terminal gate (cancel, deadline, abort) and independent executions through the
// public API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, scriptedModel, textMessage, toolMessage, recordingTool, ok, userInput, until, hangingStream } from './helpers.mjs';

const { DefaultAgentRuntime, AgentError } = agent;

function confirmRun(toolExtra = {}, observerEvents = []) {
  const t = recordingTool('write', (x, ctx) => ok(ctx, 'written'), { readOnly: false, ...toolExtra });
  const m = scriptedModel([toolMessage([{ callId: 'c1', name: 'write', input: { path: '/a' } }]), textMessage('done')]);
  const runtime = new DefaultAgentRuntime(m, { limits: fullLimits() });
  const execution = runtime.start({ ...userInput('go'), tools: [t] }, (e) => observerEvents.push(e));
  return { t, m, execution };
}

test('a non-read-only tool raises a tool-confirmation interrupt; approval runs it', async () => {
  const events = [];
  const { t, execution } = confirmRun({}, events);
  await until(() => execution.pendingInterrupt !== null);
  const pending = execution.pendingInterrupt;
  assert.equal(pending.kind, 'tool-confirmation');
  assert.equal(pending.callId, 'c1');
  assert.equal(pending.tool, 'write');
  assert.deepEqual(pending.arguments, { path: '/a' });
  assert.equal(typeof pending.interruptId, 'string');
  const observed = events.find((e) => e.type === 'interrupt');
  assert.equal(observed.interruptId, pending.interruptId, 'stable id across observer and handle');
  assert.equal(t.calls.length, 0, 'nothing runs before approval');
  execution.respond({ interruptId: pending.interruptId, value: true });
  const result = await execution.result;
  assert.equal(result.outcome, 'completed');
  assert.equal(t.calls.length, 1);
  assert.ok(events.some((e) => e.type === 'interrupt-resolved' && e.approved === true));
});

test('readOnly tools run without confirmation unless requireConfirmation is true', async () => {
  const free = recordingTool('read', (x, ctx) => ok(ctx));
  const m = scriptedModel([toolMessage([{ callId: 'c1', name: 'read' }]), textMessage('ok')]);
  const result = await new DefaultAgentRuntime(m, { limits: fullLimits() }).start({ ...userInput('go'), tools: [free] }).result;
  assert.equal(result.outcome, 'completed');
  const { execution } = confirmRun({ readOnly: true, requireConfirmation: true });
  await until(() => execution.pendingInterrupt !== null);
  execution.cancel();
  assert.equal((await execution.result).outcome, 'cancelled');
});

test('rejection becomes an error tool result the model sees', async () => {
  const { t, m, execution } = confirmRun();
  await until(() => execution.pendingInterrupt !== null);
  execution.respond({ interruptId: execution.pendingInterrupt.interruptId, value: { approved: false, reason: 'not now' } });
  const result = await execution.result;
  assert.equal(t.calls.length, 0);
  const toolResult = result.messages[2].blocks[0];
  assert.equal(toolResult.type, 'tool-result');
  assert.equal(toolResult.callId, 'c1');
  assert.equal(toolResult.isError, true);
  assert.deepEqual(m.requests[1].messages[2].blocks[0], toolResult);
});

test('wrong id, second response and no pending interrupt fail clearly', async () => {
  const { execution } = confirmRun();
  assert.throws(() => execution.respond({ interruptId: 'nope', value: true }), { code: 'AGENT_NO_PENDING_INTERRUPT' });
  await until(() => execution.pendingInterrupt !== null);
  const id = execution.pendingInterrupt.interruptId;
  assert.throws(() => execution.respond({ interruptId: `${id}-x`, value: true }), { code: 'AGENT_INTERRUPT_MISMATCH' });
  assert.throws(() => execution.respond({ interruptId: id, value: 'maybe' }), { code: 'AGENT_INVALID_INPUT' });
  execution.respond({ interruptId: id, value: 'approve' });
  assert.throws(() => execution.respond({ interruptId: id, value: true }), (error) => {
    assert.ok(error instanceof AgentError);
    assert.ok(['AGENT_INTERRUPT_ALREADY_RESOLVED', 'AGENT_NO_PENDING_INTERRUPT'].includes(error.code), error.code);
    return true;
  });
  await execution.result;
});

test('cancel consumes the wait and a late approval never starts the tool', async () => {
  const { t, execution } = confirmRun();
  await until(() => execution.pendingInterrupt !== null);
  const id = execution.pendingInterrupt.interruptId;
  assert.equal(execution.cancel(), true);
  const result = await execution.result;
  assert.equal(result.outcome, 'cancelled');
  assert.throws(() => execution.respond({ interruptId: id, value: true }), AgentError);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(t.calls.length, 0);
  assert.equal(execution.cancel(), false, 'a second cancel decides nothing');
});

test('cancel settles even when the model ignores abort; the shared signal is aborted after the gate', async () => {
  const m = scriptedModel([(request, signal) => hangingStream()]);
  const execution = new DefaultAgentRuntime(m, { limits: fullLimits() }).start(userInput('go'));
  await until(() => m.requests.length === 1);
  assert.equal(m.signals[0].aborted, false);
  execution.cancel();
  const result = await execution.result;
  assert.equal(result.outcome, 'cancelled');
  assert.equal(m.signals[0].aborted, true);
  assert.deepEqual(result.messages.map((x) => x.id), ['u1'], 'nothing of the turn is in the cancelled result');
});

test('cancel while streaming drops the unfinished block; a tool that ignores abort cannot block settling', async () => {
  const m = scriptedModel([async function* () {
    yield { type: 'message-start' };
    yield { type: 'block-start', index: 0, block: { type: 'text' } };
    yield { type: 'block-delta', index: 0, delta: 'half' };
    await new Promise(() => {});
  }]);
  const execution = new DefaultAgentRuntime(m, { limits: fullLimits() }).start(userInput('go'));
  await until(() => m.requests.length === 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  execution.cancel();
  const result = await execution.result;
  assert.equal(result.outcome, 'cancelled');
  assert.ok(!JSON.stringify(result.messages).includes('half'));

  const stuck = recordingTool('stuck', () => new Promise(() => {}));
  const m2 = scriptedModel([toolMessage([{ callId: 'c1', name: 'stuck' }])]);
  const ex2 = new DefaultAgentRuntime(m2, { limits: fullLimits() }).start({ ...userInput('go'), tools: [stuck] });
  await until(() => stuck.calls.length === 1);
  ex2.cancel();
  assert.equal((await ex2.result).outcome, 'cancelled');
  assert.equal(stuck.calls[0].ctx.signal.aborted, true);
});

test('the model, the interceptors and the tools of one execution get the SAME AbortSignal; cancel aborts it', async () => {
  let signalSeenByTool;
  let toolStarted;
  const started = new Promise((resolve) => { toolStarted = resolve; });
  const stuck = recordingTool('stuck', (x, ctx) => {
    signalSeenByTool = ctx.signal;
    toolStarted();
    return new Promise(() => {});
  });
  const interceptorSignals = [];
  const m = scriptedModel([
    toolMessage([{ callId: 'c1', name: 'stuck' }]),
  ]);
  const runtime = new DefaultAgentRuntime(m, {
    limits: fullLimits(),
    modelInterceptors: [{
      async *intercept(request, context, signal, next) {
        interceptorSignals.push(signal);
        yield* next(request, context, signal);
      },
    }],
    toolInterceptors: [{
      intercept(invocation, next) {
        interceptorSignals.push(invocation.signal);
        return next(invocation);
      },
    }],
  });
  const execution = runtime.start({ ...userInput('go'), tools: [stuck] });
  await started;
  const signalSeenByModel = m.signals[0];
  assert.ok(signalSeenByModel instanceof AbortSignal);
  assert.equal(signalSeenByModel, signalSeenByTool, 'signalSeenByModel === signalSeenByTool');
  assert.equal(interceptorSignals.length, 2);
  for (const signal of interceptorSignals) assert.equal(signal, signalSeenByModel);
  assert.equal(signalSeenByTool.aborted, false);
  let abortEvents = 0;
  signalSeenByTool.addEventListener('abort', () => { abortEvents += 1; });
  execution.cancel();
  assert.equal((await execution.result).outcome, 'cancelled');
  assert.equal(signalSeenByModel.aborted, true);
  assert.equal(abortEvents, 1, 'one abort event on the one shared signal');

  // Another execution of the same runtime has its own signal.
  const m2 = scriptedModel([textMessage('hi')]);
  await new DefaultAgentRuntime(m2, { limits: fullLimits() }).start(userInput('again')).result;
  assert.notEqual(m2.signals[0], signalSeenByModel);
  assert.equal(m2.signals[0].aborted, false);
});

test('the deadline rejects with AGENT_EXECUTION_TIMEOUT even for a model that ignores abort', async () => {
  const m = scriptedModel([() => hangingStream()]);
  const started = Date.now();
  const execution = new DefaultAgentRuntime(m, { limits: fullLimits({ maxDurationMs: 40 }) }).start(userInput('go'));
  await assert.rejects(execution.result, (error) => {
    assert.ok(error instanceof AgentError);
    assert.equal(error.code, 'AGENT_EXECUTION_TIMEOUT');
    return true;
  });
  assert.ok(Date.now() - started >= 30);
  assert.equal(m.signals[0].aborted, true);
  assert.equal(execution.cancel(), false, 'cancel after the deadline changes nothing');
});

test('the deadline also covers a pending confirmation', async () => {
  const t = recordingTool('w', (x, ctx) => ok(ctx), { readOnly: false });
  const m = scriptedModel([toolMessage([{ callId: 'c1', name: 'w' }])]);
  const execution = new DefaultAgentRuntime(m, { limits: fullLimits({ maxDurationMs: 40 }) }).start({ ...userInput('go'), tools: [t] });
  await assert.rejects(execution.result, { code: 'AGENT_EXECUTION_TIMEOUT' });
  assert.equal(t.calls.length, 0);
});

test('each start() is independent: own signal, interrupt, budget and result', async () => {
  const t = recordingTool('w', (x, ctx) => ok(ctx), { readOnly: false });
  const turns = [];
  for (let i = 0; i < 2; i += 1) turns.push(toolMessage([{ callId: `c${i}`, name: 'w' }]));
  turns.push(textMessage('second done'));
  const m = scriptedModel(turns);
  const runtime = new DefaultAgentRuntime(m, { limits: fullLimits({ maxToolCalls: 1 }) });
  const a = runtime.start({ ...userInput('a'), tools: [t] });
  const b = runtime.start({ ...userInput('b'), tools: [t] });
  await until(() => a.pendingInterrupt !== null && b.pendingInterrupt !== null);
  assert.notEqual(a.id, b.id);
  assert.notEqual(a.pendingInterrupt.interruptId, b.pendingInterrupt.interruptId);
  assert.throws(() => a.respond({ interruptId: b.pendingInterrupt.interruptId, value: true }), { code: 'AGENT_INTERRUPT_MISMATCH' });
  a.cancel();
  assert.equal((await a.result).outcome, 'cancelled');
  assert.equal(m.signals[0].aborted, true);
  assert.equal(m.signals[1].aborted, false, 'cancelling one execution does not abort another');
  b.respond({ interruptId: b.pendingInterrupt.interruptId, value: true });
  const rb = await b.result;
  assert.equal(rb.outcome, 'completed', 'b has its own tool budget (a used none, b uses its one)');
  assert.equal(rb.messages.at(-1).blocks[0].text, 'second done');
});
