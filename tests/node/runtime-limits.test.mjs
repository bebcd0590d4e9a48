// Limits through the public API: validation at construction, partial override in the controller, explicit
// failures when one is exceeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, scriptedModel, textMessage, toolMessage, recordingTool, ok, userInput } from './helpers.mjs';

const { DefaultAgentRuntime, createAgentController, DEFAULT_LIMITS, AgentError } = agent;
const model = scriptedModel([]);

function rejectsLimits(options, limit) {
  assert.throws(() => new DefaultAgentRuntime(model, options), (error) => {
    assert.ok(error instanceof AgentError, 'an AgentError');
    assert.equal(error.code, 'AGENT_INVALID_LIMITS');
    assert.equal(error.limit, limit);
    return true;
  });
}

test('DEFAULT_LIMITS are the factory defaults and frozen', () => {
  assert.deepEqual({ ...DEFAULT_LIMITS }, {
    maxModelCalls: 16, maxToolCalls: 32, maxDurationMs: 300000,
    maxModelOutputCharacters: 100000, maxToolResultCharacters: 100000,
  });
  assert.ok(Object.isFrozen(DEFAULT_LIMITS));
});

test('DefaultAgentRuntime requires all five limits and merges no defaults', () => {
  const runtime = new DefaultAgentRuntime(model, { limits: fullLimits({ maxModelCalls: 3 }) });
  assert.equal(runtime.limits.maxModelCalls, 3);
  for (const key of Object.keys(fullLimits())) {
    const limits = fullLimits();
    delete limits[key];
    rejectsLimits({ limits }, key);
  }
  assert.throws(() => new DefaultAgentRuntime(model, {}), { code: 'AGENT_INVALID_LIMITS' });
  assert.throws(() => new DefaultAgentRuntime(model, undefined), { code: 'AGENT_INVALID_LIMITS' });
});

test('limits must be safe positive integers, maxDurationMs <= 2147483647', () => {
  for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity, '5', null, true]) {
    rejectsLimits({ limits: fullLimits({ maxToolCalls: bad }) }, 'maxToolCalls');
  }
  rejectsLimits({ limits: fullLimits({ maxDurationMs: 2147483648 }) }, 'maxDurationMs');
  const max = new DefaultAgentRuntime(model, { limits: fullLimits({ maxDurationMs: 2147483647, maxModelOutputCharacters: Number.MAX_SAFE_INTEGER }) });
  assert.equal(max.limits.maxDurationMs, 2147483647);
  assert.equal(max.limits.maxModelOutputCharacters, Number.MAX_SAFE_INTEGER);
});

// Limits are read member by member: JSON.stringify would unbox Number objects and call toJSON, letting a
// `new Number(5)` or an object with toJSON pass as a safe positive integer.
test('boxed numbers and toJSON objects are not safe positive integers', () => {
  for (const bad of [new Number(5), { toJSON: () => 5 }, new Date(5000)]) {
    rejectsLimits({ limits: fullLimits({ maxToolCalls: bad }) }, 'maxToolCalls');
    assert.throws(() => createAgentController({ model, runtime: { limits: { maxToolCalls: bad } } }), { code: 'AGENT_INVALID_LIMITS', limit: 'maxToolCalls' });
  }
  assert.throws(() => new DefaultAgentRuntime(model, { limits: { toJSON: () => fullLimits() } }), { code: 'AGENT_INVALID_LIMITS' });
});

test('unknown limit keys and unknown runtime options are errors', () => {
  assert.throws(() => new DefaultAgentRuntime(model, { limits: { ...fullLimits(), maxModelCall: 3 } }), (error) => {
    assert.equal(error.code, 'AGENT_INVALID_LIMITS');
    assert.match(error.message, /maxModelCall/);
    return true;
  });
  assert.throws(() => new DefaultAgentRuntime(model, { limits: fullLimits(), hook: [] }), { code: 'AGENT_INVALID_OPTIONS' });
});

test('the controller takes a partial override and validates it the same way', () => {
  const controller = createAgentController({ model, runtime: { limits: { maxModelCalls: 8, maxDurationMs: 120000 } } });
  controller.destroy();
  assert.throws(() => createAgentController({ model, runtime: { limits: { maxModelCalls: 0 } } }), { code: 'AGENT_INVALID_LIMITS', limit: 'maxModelCalls' });
  assert.throws(() => createAgentController({ model, runtime: { limits: { maxTokens: 5 } } }), { code: 'AGENT_INVALID_LIMITS' });
});

test('maxModelCalls is enforced without a partial answer', async () => {
  const tool = recordingTool('t', (a, ctx) => ok(ctx));
  const loop = () => toolMessage([{ callId: `c${Math.random()}`, name: 't', input: {} }]);
  const m = scriptedModel([loop(), loop(), loop(), loop()]);
  const runtime = new DefaultAgentRuntime(m, { limits: fullLimits({ maxModelCalls: 2 }) });
  await assert.rejects(runtime.start({ ...userInput('go'), tools: [tool] }).result, { code: 'AGENT_LIMIT_EXCEEDED', limit: 'maxModelCalls' });
  assert.equal(m.requests.length, 2, 'no third model call');
});

test('maxToolCalls counts accepted calls cumulatively across batches', async () => {
  const tool = recordingTool('t', (a, ctx) => ok(ctx));
  const m = scriptedModel([
    toolMessage([{ callId: 'a', name: 't' }, { callId: 'b', name: 't' }]),
    toolMessage([{ callId: 'c', name: 't' }, { callId: 'd', name: 't' }]),
  ]);
  const runtime = new DefaultAgentRuntime(m, { limits: fullLimits({ maxToolCalls: 3 }) });
  await assert.rejects(runtime.start({ ...userInput('go'), tools: [tool] }).result, (error) => {
    assert.equal(error.limit, 'maxToolCalls');
    assert.ok(['AGENT_LIMIT_EXCEEDED', 'AGENT_TOOL_PRECHECK_FAILED'].includes(error.code), error.code);
    return true;
  });
  assert.deepEqual(tool.calls.map((c) => c.ctx.callId), ['a', 'b'], 'the second batch ran no tool at all');
});

test('maxModelOutputCharacters counts text + shown reasoning + tool arguments of one call', async () => {
  // 4 reasoning + 3 text + 7 argument characters = 14.
  const events = [
    { type: 'message-start' },
    { type: 'block-start', index: 0, block: { type: 'reasoning' } }, { type: 'block-delta', index: 0, delta: 'hmm.' }, { type: 'block-stop', index: 0 },
    { type: 'block-start', index: 1, block: { type: 'text' } }, { type: 'block-delta', index: 1, delta: 'abc' }, { type: 'block-stop', index: 1 },
    { type: 'block-start', index: 2, block: { type: 'tool-call', callId: 'c', name: 't' } }, { type: 'block-delta', index: 2, delta: '{"a":1}' }, { type: 'block-stop', index: 2 },
    { type: 'message-stop', stopReason: 'tool-use', modelState: null },
  ];
  const tool = recordingTool('t', (a, ctx) => ok(ctx));
  const atLimit = new DefaultAgentRuntime(scriptedModel([events, textMessage('ok')]), { limits: fullLimits({ maxModelOutputCharacters: 14 }) });
  assert.equal((await atLimit.start({ ...userInput('x'), tools: [tool] }).result).outcome, 'completed');
  const over = new DefaultAgentRuntime(scriptedModel([events]), { limits: fullLimits({ maxModelOutputCharacters: 13 }) });
  await assert.rejects(over.start({ ...userInput('x'), tools: [tool] }).result, { code: 'AGENT_LIMIT_EXCEEDED', limit: 'maxModelOutputCharacters' });
  assert.equal(tool.calls.length, 1, 'only the run within the limit executed the tool');
});

test('exceeding maxModelOutputCharacters mid-stream fails without truncating into a message', async () => {
  const seen = [];
  const m = scriptedModel([textMessage('x'.repeat(50), { pieces: 10 })]);
  const runtime = new DefaultAgentRuntime(m, { limits: fullLimits({ maxModelOutputCharacters: 20 }) });
  await assert.rejects(runtime.start(userInput('x'), (e) => seen.push(e)).result, { code: 'AGENT_LIMIT_EXCEEDED' });
  assert.equal(seen.filter((e) => e.type === 'message-completed').length, 0);
});
