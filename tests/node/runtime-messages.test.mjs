// Messages and ModelState through the public API: message/block shapes and order, deltas only in the draft,
// ModelState passed through verbatim and never shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, scriptedModel, textMessage, toolMessage, recordingTool, ok, userInput, until } from './helpers.mjs';

const { DefaultAgentRuntime, AgentError } = agent;

test('an assistant message keeps reasoning, text and tool-call blocks in produced order', async () => {
  const events = [
    { type: 'message-start', id: 'm-assistant' },
    { type: 'block-start', index: 0, block: { type: 'reasoning' } },
    { type: 'block-delta', index: 0, delta: 'think ' },
    { type: 'block-delta', index: 0, delta: 'first' },
    { type: 'block-stop', index: 0 },
    { type: 'block-start', index: 1, block: { type: 'text' } },
    { type: 'block-delta', index: 1, delta: 'Checking the ' },
    { type: 'block-delta', index: 1, delta: 'device.' },
    { type: 'block-stop', index: 1 },
    { type: 'block-start', index: 2, block: { type: 'tool-call', callId: 'call-7', name: 'local.device_get' } },
    { type: 'block-delta', index: 2, delta: '{"serial":' },
    { type: 'block-delta', index: 2, delta: '"100000000001"}' },
    { type: 'block-stop', index: 2 },
    { type: 'message-stop', stopReason: 'tool-use', modelState: null },
  ];
  const tool = recordingTool('local.device_get', (args, ctx) => ok(ctx, `device ${args.serial}`));
  const model = scriptedModel([events, textMessage('done')]);
  const runtime = new DefaultAgentRuntime(model, { limits: fullLimits() });
  const result = await runtime.start({ ...userInput('look up'), tools: [tool] }).result;

  assert.equal(result.outcome, 'completed');
  const [user, assistant, toolMsg, final] = result.messages;
  assert.equal(user.id, 'u1');
  assert.deepEqual(assistant, {
    id: 'm-assistant',
    role: 'assistant',
    blocks: [
      { type: 'reasoning', text: 'think first' },
      { type: 'text', text: 'Checking the device.' },
      { type: 'tool-call', callId: 'call-7', name: 'local.device_get', input: { serial: '100000000001' } },
    ],
  });
  assert.equal(toolMsg.role, 'tool');
  assert.deepEqual(toolMsg.blocks, [{ type: 'tool-result', callId: 'call-7', content: 'device 100000000001', isError: false }]);
  assert.equal(final.role, 'assistant');
  assert.deepEqual(final.blocks, [{ type: 'text', text: 'done' }]);
  // The tool received the parsed JSON object, and the second model call saw the whole conversation.
  assert.deepEqual(tool.calls[0].args, { serial: '100000000001' });
  assert.equal(tool.calls[0].ctx.callId, 'call-7');
  assert.deepEqual(model.requests[1].messages.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.ok(Object.isFrozen(result.messages[1].blocks[2].input), 'result data is deep-frozen');
});

test('user image blocks (URL and base64) pass through unchanged', async () => {
  const model = scriptedModel([textMessage('nice picture')]);
  const runtime = new DefaultAgentRuntime(model, { limits: fullLimits() });
  const messages = [{
    id: 'u1', role: 'user', blocks: [
      { type: 'text', text: 'what is this?' },
      { type: 'image', source: { type: 'url', url: 'https://example.test/a.png' } },
      { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
    ],
  }];
  const result = await runtime.start({ messages, modelState: null }).result;
  assert.deepEqual(model.requests[0].messages, messages);
  assert.deepEqual(result.messages[0], messages[0]);
});

test('deltas are only in the draft; the stable message appears after block-stop and message-stop', async () => {
  const seen = [];
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const model = scriptedModel([async function* () {
    yield { type: 'message-start', id: 'a1' };
    yield { type: 'block-start', index: 0, block: { type: 'text' } };
    yield { type: 'block-delta', index: 0, delta: 'Hel' };
    yield { type: 'block-delta', index: 0, delta: 'lo' };
    await gate;
    yield { type: 'block-stop', index: 0 };
    yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
  }]);
  const runtime = new DefaultAgentRuntime(model, { limits: fullLimits() });
  const execution = runtime.start(userInput('hi'), (event) => seen.push(event));
  await until(() => seen.filter((e) => e.type === 'block-delta').length === 2);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const typesBefore = seen.map((e) => e.type);
  assert.deepEqual(seen.filter((e) => e.type === 'block-delta').map((e) => e.delta), ['Hel', 'lo']);
  assert.ok(!typesBefore.includes('message-completed'), 'no stable message while the block is open');
  release();
  const result = await execution.result;
  const completed = seen.filter((e) => e.type === 'message-completed');
  assert.equal(completed.length, 1);
  assert.deepEqual(completed[0].message.blocks, [{ type: 'text', text: 'Hello' }]);
  assert.ok(seen.indexOf(completed[0]) > seen.findIndex((e) => e.type === 'block-stop'));
  assert.deepEqual(result.messages[1].blocks, [{ type: 'text', text: 'Hello' }]);
});

test('a tool-call whose arguments are not a JSON object fails the execution (protocol)', async () => {
  const model = scriptedModel([toolMessage([{ callId: 'c1', name: 't', rawArguments: '[1,2]' }])]);
  const tool = recordingTool('t', (a, ctx) => ok(ctx));
  const runtime = new DefaultAgentRuntime(model, { limits: fullLimits() });
  await assert.rejects(runtime.start({ ...userInput('x'), tools: [tool] }).result, (error) => {
    assert.ok(error instanceof AgentError);
    assert.ok(['AGENT_PROTOCOL_ERROR', 'AGENT_TOOL_PRECHECK_FAILED'].includes(error.code), error.code);
    return true;
  });
  assert.equal(tool.calls.length, 0);
});

test('a stream that ends without message-stop, or sends deltas to a closed block, is a protocol error', async () => {
  const truncated = [{ type: 'message-start' }, { type: 'block-start', index: 0, block: { type: 'text' } }, { type: 'block-delta', index: 0, delta: 'x' }];
  const wrongIndex = [{ type: 'message-start' }, { type: 'block-start', index: 0, block: { type: 'text' } }, { type: 'block-delta', index: 1, delta: 'x' }];
  const unknownType = [{ type: 'message-begin' }];
  for (const events of [truncated, wrongIndex, unknownType]) {
    const runtime = new DefaultAgentRuntime(scriptedModel([events]), { limits: fullLimits() });
    await assert.rejects(runtime.start(userInput('x')).result, { name: 'AgentError', code: 'AGENT_PROTOCOL_ERROR' });
  }
});

test('deltas with escapes, quotes, newlines and non-ASCII text aggregate exactly', async () => {
  const pieces = ['a "quoted" ', 'back\\slash ', 'new\nline\t', 'ümlaut 漢字 ', '😀 emoji', '\u0001ctl'];
  const events = [{ type: 'message-start' }, { type: 'block-start', index: 0, block: { type: 'text' } },
    ...pieces.map((delta) => ({ type: 'block-delta', index: 0, delta })),
    { type: 'block-stop', index: 0 }, { type: 'message-stop', stopReason: 'end-turn', modelState: null }];
  const runtime = new DefaultAgentRuntime(scriptedModel([events]), { limits: fullLimits() });
  const result = await runtime.start(userInput('x')).result;
  assert.equal(result.messages[1].blocks[0].text, pieces.join(''));
});

test('ModelState is passed through verbatim, replaced by non-null and cleared by null, never in messages', async () => {
  const s1 = { format: 'test-format/v1', data: { secret: 'sig-1', nested: [1, { deep: true }] } };
  const s2 = { format: 'test-format/v1', data: 'opaque-2' };
  const tool = recordingTool('t', (a, ctx) => ok(ctx));
  const model = scriptedModel([
    toolMessage([{ callId: 'c1', name: 't', input: {} }], { modelState: s1 }),
    toolMessage([{ callId: 'c2', name: 't', input: {} }], { modelState: s2 }),
    textMessage('cleared', { modelState: null }),
  ]);
  const initial = { format: 'test-format/v1', data: { from: 'store' } };
  const runtime = new DefaultAgentRuntime(model, { limits: fullLimits() });
  const result = await runtime.start({ ...userInput('go'), modelState: initial, tools: [tool] }).result;
  assert.deepEqual(model.requests[0].modelState, initial);
  assert.deepEqual(model.requests[1].modelState, s1);
  assert.deepEqual(model.requests[2].modelState, s2);
  assert.equal(result.modelState, null);
  const text = JSON.stringify(result.messages);
  assert.ok(!text.includes('sig-1') && !text.includes('opaque-2') && !text.includes('test-format'));

  const keep = scriptedModel([textMessage('kept', { modelState: s2 })]);
  const kept = await new DefaultAgentRuntime(keep, { limits: fullLimits() }).start({ ...userInput('x'), modelState: initial }).result;
  assert.deepEqual(kept.modelState, s2);
});

test('message-stop without the modelState key is a protocol error (a forgotten key cannot clear state)', async () => {
  const events = [{ type: 'message-start' }, { type: 'block-start', index: 0, block: { type: 'text' } },
    { type: 'block-delta', index: 0, delta: 'x' }, { type: 'block-stop', index: 0 },
    { type: 'message-stop', stopReason: 'end-turn' }];
  const runtime = new DefaultAgentRuntime(scriptedModel([events]), { limits: fullLimits() });
  await assert.rejects(runtime.start(userInput('x')).result, { code: 'AGENT_PROTOCOL_ERROR' });
});

test('the batched delta path stays strict (bad index, bad delta) and exact (surrogates); unknown keys are ignored', async () => {
  const wrap = (delta) => [{ type: 'message-start' }, { type: 'block-start', index: 0, block: { type: 'text' } }, delta,
    { type: 'block-stop', index: 0 }, { type: 'message-stop', stopReason: 'end-turn', modelState: null }];
  for (const bad of [
    { type: 'block-delta', index: -1, delta: 'x' },
    { type: 'block-delta', index: 0.5, delta: 'x' },
    { type: 'block-delta', index: 0, delta: 7 },
    { type: 'block-delta', index: 0 },
  ]) {
    const runtime = new DefaultAgentRuntime(scriptedModel([wrap(bad)]), { limits: fullLimits() });
    await assert.rejects(runtime.start(userInput('x')).result, { code: 'AGENT_PROTOCOL_ERROR' }, JSON.stringify(bad));
  }
  // A key this version does not know is ignored (forward compatibility, docs/protocol.md).
  const extra = new DefaultAgentRuntime(scriptedModel([wrap({ type: 'block-delta', index: 0, delta: 'x', extra: 1 })]), { limits: fullLimits() });
  assert.equal((await extra.start(userInput('x')).result).messages[1].blocks[0].text, 'x');
  // A lone surrogate becomes U+FFFD (what any UTF-8 boundary does); the text around it stays aligned.
  const tricky = ['a\uD800b', '𝄞 clef', 'é'.repeat(3), 'end'];
  const events = [{ type: 'message-start' }, { type: 'block-start', index: 0, block: { type: 'text' } },
    ...tricky.map((delta) => ({ type: 'block-delta', index: 0, delta })),
    { type: 'block-stop', index: 0 }, { type: 'message-stop', stopReason: 'end-turn', modelState: null }];
  const seen = [];
  const runtime = new DefaultAgentRuntime(scriptedModel([events]), { limits: fullLimits() });
  const result = await runtime.start(userInput('x'), (e) => { if (e.type === 'block-delta') seen.push(e.delta); }).result;
  assert.equal(result.messages[1].blocks[0].text, 'a\uFFFDb𝄞 clefééé' + 'end');
  assert.deepEqual(seen, ['a\uFFFDb', '𝄞 clef', 'ééé', 'end']);
});
