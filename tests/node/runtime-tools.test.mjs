// Tools through the public API: how turns end (outcomes, usage), the whole-batch precheck, the result limit and
// deadline isolation, and tool results (isError continues, throws end the run, exact validation, frozen results).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, scriptedModel, textMessage, toolMessage, recordingTool, ok, userInput } from './helpers.mjs';

const { DefaultAgentRuntime, AgentError } = agent;

const run = (model, tools, limits = {}, observer) =>
  new DefaultAgentRuntime(model, { limits: fullLimits(limits) }).start({ ...userInput('go'), tools }, observer);

test('end-turn, stop-sequence and other complete; max-tokens keeps the sealed message', async () => {
  for (const stopReason of ['end-turn', 'stop-sequence', 'other']) {
    const result = await run(scriptedModel([textMessage('hi', { stopReason })]), []).result;
    assert.equal(result.outcome, 'completed', stopReason);
  }
  const state = { format: 'f/v1', data: 1 };
  const result = await run(scriptedModel([textMessage('partial answ', { stopReason: 'max-tokens', modelState: state })]), []).result;
  assert.equal(result.outcome, 'max-tokens');
  assert.deepEqual(result.messages.at(-1).blocks, [{ type: 'text', text: 'partial answ' }]);
  assert.deepEqual(result.modelState, state);
});

test('usage is summed over model calls', async () => {
  const tool = recordingTool('t', (a, ctx) => ok(ctx));
  const m = scriptedModel([
    [...toolMessage([{ callId: 'c', name: 't' }]).slice(0, -1), { type: 'message-stop', stopReason: 'tool-use', modelState: null, usage: { inputTokens: 10, outputTokens: 2 } }],
    textMessage('x', { usage: { inputTokens: 15, outputTokens: 3, reasoningTokens: 1 } }),
  ]);
  const result = await run(m, [tool]).result;
  assert.equal(result.usage.inputTokens, 25);
  assert.equal(result.usage.outputTokens, 5);
  assert.equal(result.usage.reasoningTokens, 1);
});

test('duplicate call ids, unknown tools, bad arguments or a wrong stop reason run zero tools', async () => {
  const cases = [
    ['duplicate call id', toolMessage([{ callId: 'same', name: 'a' }, { callId: 'same', name: 'b' }])],
    ['tool not in snapshot', toolMessage([{ callId: 'c1', name: 'a' }, { callId: 'c2', name: 'missing' }])],
    ['arguments not a complete object', toolMessage([{ callId: 'c1', name: 'a' }, { callId: 'c2', name: 'b', rawArguments: '{"x":' }])],
    ['arguments an array', toolMessage([{ callId: 'c1', name: 'a' }, { callId: 'c2', name: 'b', rawArguments: '[]' }])],
    ['tool calls with end-turn', toolMessage([{ callId: 'c1', name: 'a' }], { stopReason: 'end-turn' })],
  ];
  for (const [label, events] of cases) {
    const a = recordingTool('a', (x, ctx) => ok(ctx));
    const b = recordingTool('b', (x, ctx) => ok(ctx));
    await assert.rejects(run(scriptedModel([events]), [a, b]).result, (error) => {
      assert.ok(error instanceof AgentError, label);
      assert.ok(['AGENT_TOOL_PRECHECK_FAILED', 'AGENT_PROTOCOL_ERROR'].includes(error.code), `${label}: ${error.code}`);
      return true;
    });
    assert.equal(a.calls.length + b.calls.length, 0, `${label}: zero tools executed`);
  }
});

test('the call budget is checked for the whole batch before any tool runs', async () => {
  const a = recordingTool('a', (x, ctx) => ok(ctx));
  const events = toolMessage([{ callId: 'c1', name: 'a' }, { callId: 'c2', name: 'a' }, { callId: 'c3', name: 'a' }]);
  await assert.rejects(run(scriptedModel([events]), [a], { maxToolCalls: 2 }).result, { limit: 'maxToolCalls' });
  assert.equal(a.calls.length, 0);
});

test('a tool result over maxToolResultCharacters is not published and no further model call happens', async () => {
  const seen = [];
  const big = recordingTool('big', (x, ctx) => ok(ctx, 'y'.repeat(11)));
  const m = scriptedModel([toolMessage([{ callId: 'c1', name: 'big' }]), textMessage('never')]);
  await assert.rejects(run(m, [big], { maxToolResultCharacters: 10 }, (e) => seen.push(e)).result,
    { code: 'AGENT_LIMIT_EXCEEDED', limit: 'maxToolResultCharacters' });
  assert.equal(big.calls.length, 1);
  assert.equal(m.requests.length, 1, 'no model call after the oversized result');
  assert.equal(seen.filter((e) => e.type === 'tool-result').length, 0, 'the result was not published');
  const exact = recordingTool('big', (x, ctx) => ok(ctx, 'y'.repeat(10)));
  const fine = await run(scriptedModel([toolMessage([{ callId: 'c1', name: 'big' }]), textMessage('ok')]), [exact], { maxToolResultCharacters: 10 }).result;
  assert.equal(fine.outcome, 'completed');
});

test('the deadline while a tool runs rejects with AGENT_EXECUTION_TIMEOUT and isolates the late result', async () => {
  const seen = [];
  let finishLate;
  let toolSignal;
  const slow = recordingTool('slow', (x, ctx) => {
    toolSignal = ctx.signal;
    return new Promise((resolve, reject) => { finishLate = () => { resolve(ok(ctx, 'late')); reject(new Error('late')); }; });
  });
  const m = scriptedModel([toolMessage([{ callId: 'c1', name: 'slow' }]), textMessage('never')]);
  const execution = run(m, [slow], { maxDurationMs: 50 }, (e) => seen.push(e));
  await assert.rejects(execution.result, { code: 'AGENT_EXECUTION_TIMEOUT' });
  assert.equal(toolSignal.aborted, true, 'the tool signal was aborted after the gate closed');
  finishLate();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(m.requests.length, 1);
  assert.equal(seen.filter((e) => e.type === 'tool-result').length, 0, 'the late completion never reached the observer');
});

test('isError results go back to the model and the loop continues', async () => {
  const t = recordingTool('t', (x, ctx) => ok(ctx, 'device offline', true));
  const m = scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('sorry')]);
  const result = await run(m, [t]).result;
  assert.equal(result.outcome, 'completed');
  assert.deepEqual(result.messages[2].blocks, [{ type: 'tool-result', callId: 'c1', content: 'device offline', isError: true }]);
  assert.deepEqual(m.requests[1].messages[2].blocks[0], { type: 'tool-result', callId: 'c1', content: 'device offline', isError: true });
});

test('a throwing or rejecting tool ends the execution with AGENT_TOOL_FAILED', async () => {
  for (const impl of [() => { throw new Error('boom'); }, async () => { throw new TypeError('async boom'); }]) {
    const t = recordingTool('t', impl);
    const m = scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('never')]);
    await assert.rejects(run(m, [t]).result, (error) => {
      assert.equal(error.code, 'AGENT_TOOL_FAILED');
      assert.match(error.message, /boom/);
      return true;
    });
    assert.equal(m.requests.length, 1);
  }
});

test('a tool may answer with a plain value, a promise or any thenable; a thenable that rejects ends the execution', async () => {
  const answers = [
    ['plain', (ctx) => ok(ctx, 'plain')],
    ['promise', (ctx) => Promise.resolve(ok(ctx, 'promise'))],
    ['thenable', (ctx) => ({ then(resolve) { setTimeout(() => resolve(ok(ctx, 'thenable')), 1); } })],
  ];
  for (const [expected, answer] of answers) {
    const t = recordingTool('t', (x, ctx) => answer(ctx));
    const m = scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('ok')]);
    const result = await run(m, [t]).result;
    assert.equal(result.messages[2].blocks[0].content, expected);
  }
  const bad = recordingTool('t', () => ({ then(resolve, reject) { reject(new Error('thenable boom')); } }));
  const m = scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('never')]);
  await assert.rejects(run(m, [bad]).result, (error) => error.code === 'AGENT_TOOL_FAILED' && /thenable boom/.test(error.message));
  assert.equal(m.requests.length, 1);
});

test('results must be exactly { toolCallId, content, isError } for the call', async () => {
  const bad = [
    (ctx) => ({ toolCallId: 'other', content: 'x', isError: false }),
    (ctx) => ({ toolCallId: null, content: 'x', isError: false }),
    (ctx) => ({ toolCallId: ctx.callId, content: 5, isError: false }),
    (ctx) => ({ toolCallId: ctx.callId, content: 'x', isError: 'no' }),
    (ctx) => ({ toolCallId: ctx.callId, content: 'x', isError: false, extra: 1 }),
    (ctx) => ({ toolCallId: ctx.callId, content: 'x', isError: false, extra: undefined }),
    (ctx) => ({ toolCallId: ctx.callId, content: 'x' }),
    (ctx) => 'just a string',
    (ctx) => undefined,
  ];
  for (const make of bad) {
    const t = recordingTool('t', (x, ctx) => make(ctx));
    const m = scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('never')]);
    await assert.rejects(run(m, [t]).result, { code: 'AGENT_INVALID_TOOL_RESULT' }, make.toString());
    assert.equal(m.requests.length, 1);
  }
});

// The contract requires exactly string / string / boolean fields. JSON.stringify would unbox String/Boolean
// objects, call toJSON (a Date becomes an ISO string) and skip symbol-keyed and non-enumerable properties, so the
// result is read member by member instead and loosely typed or hidden extra fields are refused.
test('loosely typed results and hidden extra fields are not accepted as ToolCallResult', async () => {
  const bad = {
    dateContent: (ctx) => ({ toolCallId: ctx.callId, content: new Date(0), isError: false }),
    boxedContent: (ctx) => ({ toolCallId: ctx.callId, content: new String('x'), isError: false }),
    boxedId: (ctx) => ({ toolCallId: new String(ctx.callId), content: 'x', isError: false }),
    boxedIsError: (ctx) => ({ toolCallId: ctx.callId, content: 'x', isError: new Boolean(false) }),
    toJsonResult: (ctx) => ({ toJSON: () => ({ toolCallId: ctx.callId, content: 'x', isError: false }) }),
    toJsonContent: (ctx) => ({ toolCallId: ctx.callId, content: { toJSON: () => 'x' }, isError: false }),
    symbolExtra: (ctx) => ({ toolCallId: ctx.callId, content: 'x', isError: false, [Symbol('extra')]: 1 }),
    hiddenExtra: (ctx) => Object.defineProperty({ toolCallId: ctx.callId, content: 'x', isError: false }, 'extra', { value: 1 }),
  };
  for (const [name, make] of Object.entries(bad)) {
    const seen = [];
    const t = recordingTool('t', (x, ctx) => make(ctx));
    const m = scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('never')]);
    await assert.rejects(run(m, [t], {}, (e) => seen.push(e.type)).result, { code: 'AGENT_INVALID_TOOL_RESULT' }, name);
    assert.equal(m.requests.length, 1, name);
    assert.ok(!seen.includes('tool-result'), name);
  }
  // Exactly the three own fields of the right primitive types stay valid, whatever the object's class.
  class Result { constructor(id) { this.toolCallId = id; this.content = 'fine'; this.isError = false; } }
  const t = recordingTool('t', (x, ctx) => new Result(ctx.callId));
  const result = await run(scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('ok')]), [t]).result;
  assert.equal(result.outcome, 'completed');
});

test('tool-result events carry frozen results', async () => {
  const seen = [];
  const t = recordingTool('t', (x, ctx) => ok(ctx, 'fine'));
  await run(scriptedModel([toolMessage([{ callId: 'c1', name: 't' }]), textMessage('ok')]), [t], {}, (e) => seen.push(e)).result;
  const event = seen.find((e) => e.type === 'tool-result');
  assert.deepEqual(event.result, { toolCallId: 'c1', content: 'fine', isError: false });
  assert.ok(Object.isFrozen(event.result) && Object.isFrozen(event));
  assert.throws(() => { 'use strict'; event.result.content = 'changed'; }, TypeError);
});

test('late exceptions of a tool or model after the gate closed reach nothing (no hook, no unhandled rejection)', async () => {
  const stray = [];
  const onStray = (error) => stray.push(error);
  process.on('unhandledRejection', onStray);
  process.on('uncaughtException', onStray);
  try {
    const hookTypes = [];
    const slow = recordingTool('slow', () => new Promise((_, reject) => setTimeout(() => reject(new Error('late boom')), 60)));
    const m = scriptedModel([toolMessage([{ callId: 'c1', name: 'slow' }]), textMessage('never')]);
    const execution = new DefaultAgentRuntime(m, { limits: fullLimits({ maxDurationMs: 20 }), hooks: [{ onEvent: (e) => hookTypes.push(e.type) }] })
      .start({ ...userInput('go'), tools: [slow] });
    await assert.rejects(execution.result, { code: 'AGENT_EXECUTION_TIMEOUT' });
    const lateModel = scriptedModel([() => (async function* () {
      yield { type: 'message-start' };
      await new Promise((resolve) => setTimeout(resolve, 40));
      throw new Error('late model boom');
    })()]);
    const cancelled = new DefaultAgentRuntime(lateModel, { limits: fullLimits() }).start(userInput('go'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    cancelled.cancel();
    assert.equal((await cancelled.result).outcome, 'cancelled');
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(hookTypes.at(-1), 'execution-failed', 'nothing after the terminal event');
    assert.equal(hookTypes.filter((t) => t.startsWith('tool-call-completed')).length, 0);
    assert.deepEqual(stray, []);
  } finally {
    process.off('unhandledRejection', onStray);
    process.off('uncaughtException', onStray);
  }
});
