// Hooks and interceptors through the public API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, scriptedModel, textMessage, toolMessage, recordingTool, ok, userInput } from './helpers.mjs';

const { DefaultAgentRuntime, AgentError } = agent;

function runWith(model, runtimeOptions, tools = []) {
  return new DefaultAgentRuntime(model, { limits: fullLimits(), ...runtimeOptions }).start({ ...userInput('go'), tools });
}

test('hooks see stable lifecycle events in order, deep-frozen, without deltas or ModelState', async () => {
  const calls = [];
  const hooks = [
    { onEvent: (event, context) => calls.push(['first', event, context]) },
    { onEvent: (event) => calls.push(['second', event]) },
  ];
  const t = recordingTool('t', (x, ctx) => ok(ctx));
  const secret = { format: 'secret/v1', data: 'MODEL-STATE-SECRET' };
  const model = scriptedModel([
    toolMessage([{ callId: 'c1', name: 't', input: { a: 1 } }], { modelState: secret }),
    textMessage('DELTA-TEXT-ONE', { usage: { inputTokens: 3, outputTokens: 4 }, modelState: secret }),
  ]);
  const result = await runWith(model, { hooks }, [t]).result;
  assert.equal(result.outcome, 'completed');
  const firstTypes = calls.filter((c) => c[0] === 'first').map((c) => c[1].type);
  assert.deepEqual(firstTypes, [
    'execution-started', 'model-call-started', 'model-call-completed', 'tool-call-started', 'tool-call-completed',
    'model-call-started', 'model-call-completed', 'execution-completed',
  ]);
  // Registration order: for each event the first hook runs before the second.
  for (let i = 0; i < calls.length; i += 2) {
    assert.equal(calls[i][0], 'first');
    assert.equal(calls[i + 1][0], 'second');
    assert.equal(calls[i + 1][1], calls[i][1].type === calls[i + 1][1].type ? calls[i + 1][1] : null);
  }
  const text = JSON.stringify(calls.map((c) => c[1]));
  assert.ok(!text.includes('MODEL-STATE-SECRET'), 'no ModelState in hook data');
  assert.ok(!text.includes('block-delta') && !text.includes('DELTA-TEXT-ONE'), 'no token deltas in hook data');
  const completed = calls.find((c) => c[1].type === 'model-call-completed' && c[1].modelCall === 2)[1];
  assert.equal(completed.usage.inputTokens, 3);
  assert.equal(completed.usage.outputTokens, 4);
  assert.equal(typeof completed.timeToFirstTokenMs, 'number');
  assert.equal(typeof completed.outputDurationMs, 'number');
  const started = calls.find((c) => c[1].type === 'tool-call-started')[1];
  assert.ok(Object.isFrozen(started) && Object.isFrozen(started.arguments));
  assert.throws(() => { 'use strict'; started.arguments.a = 2; }, TypeError);
  assert.deepEqual(t.calls[0].args, { a: 1 }, 'hooks cannot change what the tool receives');
  const [, , context] = calls[0];
  assert.equal(typeof context.executionId, 'string');
  assert.equal(typeof context.traceId, 'string');
});

test('a hook throwing on a non-terminal event fails the turn with AGENT_HOOK_FAILED', async () => {
  const t = recordingTool('t', (x, ctx) => ok(ctx));
  const model = scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('never')]);
  const hooks = [{ onEvent: (event) => { if (event.type === 'tool-call-started') throw new Error('audit down'); } }];
  await assert.rejects(runWith(model, { hooks }, [t]).result, (error) => {
    assert.ok(error instanceof AgentError);
    assert.equal(error.code, 'AGENT_HOOK_FAILED');
    return true;
  });
  assert.equal(t.calls.length, 0);
});

test('a hook throwing on the terminal event cannot change the outcome; onHookError gets it; later hooks still see it', async () => {
  const failures = [];
  const seenByLater = [];
  const hooks = [
    { onEvent: (event) => { if (event.type === 'execution-completed') throw new Error('terminal boom'); } },
    { onEvent: (event) => seenByLater.push(event.type) },
  ];
  const result = await runWith(scriptedModel([textMessage('fine')]), { hooks, onHookError: (f) => failures.push(f) }).result;
  assert.equal(result.outcome, 'completed');
  assert.equal(failures.length, 1);
  assert.equal(failures[0].eventType, 'execution-completed');
  assert.equal(failures[0].hookIndex, 0);
  assert.ok(failures[0].error instanceof AgentError);
  assert.match(failures[0].error.message, /terminal boom/);
  assert.equal(seenByLater.at(-1), 'execution-completed');

  const logged = [];
  const original = console.error;
  console.error = (...args) => logged.push(args);
  try {
    const again = await runWith(scriptedModel([textMessage('fine')]), { hooks: [hooks[0]] }).result;
    assert.equal(again.outcome, 'completed');
  } finally {
    console.error = original;
  }
  assert.equal(logged.length, 1, 'without onHookError the failure goes to console.error');
});

// When onHookError itself throws, neither the hook failure nor the diagnostics error may be dropped silently.
test('an onHookError that throws loses nothing: both errors reach console.error, the outcome stands', async () => {
  const seenByLater = [];
  const hooks = [
    { onEvent: (event) => { if (event.type === 'execution-completed') throw new Error('terminal boom'); } },
    { onEvent: (event) => seenByLater.push(event.type) },
  ];
  const logged = [];
  const original = console.error;
  console.error = (...args) => logged.push(args);
  let result;
  try {
    result = await runWith(scriptedModel([textMessage('fine')]), { hooks, onHookError: () => { throw new Error('diagnostics boom'); } }).result;
  } finally {
    console.error = original;
  }
  assert.equal(result.outcome, 'completed');
  assert.equal(seenByLater.at(-1), 'execution-completed');
  const flat = logged.flat();
  assert.ok(flat.some((v) => v instanceof Error && /diagnostics boom/.test(v.message)), 'the onHookError exception is logged');
  assert.ok(flat.some((v) => v?.error instanceof AgentError && /terminal boom/.test(v.error.message)), 'the hook failure is logged');
});

// Hooks observe synchronously: an async onEvent's throw would be a rejected promise nobody sees (the turn going on
// as if the hook had succeeded, and an unhandled rejection in Node). So returning a thenable is a hook failure
// (it fails the turn, or goes to onHookError on the terminal event), and the returned promise is marked handled.
test('a hook returning a promise is a hook failure, never an unhandled rejection', async () => {
  const stray = [];
  const onStray = (error) => stray.push(error);
  process.on('unhandledRejection', onStray);
  try {
    const m = scriptedModel([textMessage('never')]);
    const hooks = [{ onEvent: async (event) => { if (event.type === 'model-call-started') throw new Error('async boom'); } }];
    await assert.rejects(runWith(m, { hooks }).result, (error) => {
      assert.equal(error.code, 'AGENT_HOOK_FAILED');
      assert.match(error.message, /synchronous/);
      return true;
    });
    const failures = [];
    const terminalOnly = [{ onEvent: (event) => (event.type === 'execution-completed' ? Promise.reject(new Error('late')) : undefined) }];
    const result = await runWith(scriptedModel([textMessage('fine')]), { hooks: terminalOnly, onHookError: (f) => failures.push(f) }).result;
    assert.equal(result.outcome, 'completed');
    assert.equal(failures.length, 1);
    assert.equal(failures[0].error.code, 'AGENT_HOOK_FAILED');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(stray, []);
  } finally {
    process.off('unhandledRejection', onStray);
  }
});

// An async onHookError whose promise rejects is logged; an unhandled rejection would be fatal in Node by default.
test('an onHookError returning a rejected promise is logged, never an unhandled rejection', async () => {
  const stray = [];
  const onStray = (error) => stray.push(error);
  process.on('unhandledRejection', onStray);
  const logged = [];
  const original = console.error;
  console.error = (...args) => logged.push(args);
  try {
    const hooks = [{ onEvent: (event) => { if (event.type === 'execution-completed') throw new Error('terminal boom'); } }];
    const result = await runWith(scriptedModel([textMessage('fine')]), { hooks, onHookError: async () => { throw new Error('diagnostics boom'); } }).result;
    assert.equal(result.outcome, 'completed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    console.error = original;
    process.off('unhandledRejection', onStray);
  }
  assert.deepEqual(stray, []);
  assert.ok(logged.flat().some((v) => v instanceof Error && /diagnostics boom/.test(v.message)), 'the rejection is logged');
});

test('cancelled and failed executions end with their own terminal events', async () => {
  const types = [];
  const hooks = [{ onEvent: (event) => types.push(event.type) }];
  const bad = scriptedModel([[{ type: 'message-start' }, { type: 'bogus' }]]);
  await assert.rejects(runWith(bad, { hooks }).result, { code: 'AGENT_PROTOCOL_ERROR' });
  assert.equal(types.at(-1), 'execution-failed');
  types.length = 0;
  const hang = scriptedModel([() => (async function* () { await new Promise(() => {}); })()]);
  const execution = runWith(hang, { hooks });
  await new Promise((resolve) => setTimeout(resolve, 10));
  execution.cancel();
  await execution.result;
  assert.equal(types.at(-1), 'execution-cancelled');
  assert.equal(types.filter((t) => t.startsWith('execution-') && t !== 'execution-started').length, 1);
});

test('a model interceptor wraps the call and may rewrite events; next(request) forwards', async () => {
  const seen = [];
  const modelInterceptors = [{
    async *intercept(request, context, signal, next) {
      seen.push({ messages: request.messages.length, modelCall: context.modelCall, aborted: signal.aborted });
      for await (const event of next(request, context, signal)) {
        yield event.type === 'block-delta' ? { ...event, delta: event.delta.toUpperCase() } : event;
      }
    },
  }];
  const result = await runWith(scriptedModel([textMessage('quiet words')]), { modelInterceptors }).result;
  assert.equal(result.messages[1].blocks[0].text, 'QUIET WORDS');
  assert.deepEqual(seen, [{ messages: 1, modelCall: 1, aborted: false }]);
});

test('calling next twice fails clearly (model and tool interceptors)', async () => {
  const twiceModel = [{
    async *intercept(request, context, signal, next) {
      next(request, context, signal);
      yield* next(request, context, signal);
    },
  }];
  const model = scriptedModel([textMessage('a'), textMessage('b')]);
  await assert.rejects(runWith(model, { modelInterceptors: twiceModel }).result, { code: 'AGENT_NEXT_CALLED_TWICE' });
  assert.equal(model.requests.length, 1, 'the model was called once');

  const t = recordingTool('t', (x, ctx) => ok(ctx));
  const twiceTool = [{
    async intercept(invocation, next) {
      const first = await next(invocation);
      try { await next(invocation); } catch { /* swallowing does not help */ }
      return first;
    },
  }];
  await assert.rejects(runWith(scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('x')]), { toolInterceptors: twiceTool }, [t]).result,
    { code: 'AGENT_NEXT_CALLED_TWICE' });
  assert.equal(t.calls.length, 1, 'the tool ran once');
});

test('a tool interceptor wraps one tool call, may change arguments, and its throw ends the run', async () => {
  const t = recordingTool('t', (args, ctx) => ok(ctx, `got ${args.v}`));
  const invocations = [];
  const toolInterceptors = [{
    async intercept(invocation, next) {
      invocations.push(invocation);
      const result = await next({ ...invocation, arguments: { v: invocation.arguments.v * 10 } });
      return { ...result, content: `${result.content}!` };
    },
  }];
  const model = scriptedModel([toolMessage([{ callId: 'c1', name: 't', input: { v: 4 } }]), textMessage('ok')]);
  const result = await runWith(model, { toolInterceptors }, [t]).result;
  assert.equal(invocations[0].tool, 't');
  assert.equal(invocations[0].callId, 'c1');
  assert.ok(Object.isFrozen(invocations[0].arguments));
  assert.deepEqual(t.calls[0].args, { v: 40 });
  assert.equal(result.messages[2].blocks[0].content, 'got 40!');

  const blocking = [{ intercept: () => { throw new Error('policy: forbidden'); } }];
  const t2 = recordingTool('t', (x, ctx) => ok(ctx));
  await assert.rejects(runWith(scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('x')]), { toolInterceptors: blocking }, [t2]).result,
    (error) => error.code === 'AGENT_INTERCEPTOR_FAILED' && /forbidden/.test(error.message));
  assert.equal(t2.calls.length, 0);
});

test('interceptor options are validated', () => {
  const model = scriptedModel([]);
  assert.throws(() => new DefaultAgentRuntime(model, { limits: fullLimits(), modelInterceptors: [{}] }), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => new DefaultAgentRuntime(model, { limits: fullLimits(), toolInterceptors: {} }), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => new DefaultAgentRuntime(model, { limits: fullLimits(), hooks: [() => {}] }), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => new DefaultAgentRuntime(model, { limits: fullLimits(), onHookError: 'log' }), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => new DefaultAgentRuntime({}, { limits: fullLimits() }), { code: 'AGENT_INVALID_OPTIONS' });
});
