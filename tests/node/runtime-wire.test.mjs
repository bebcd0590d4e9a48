// Wire fidelity and host-facing rules on the built package: pass-through JSON keeps key order and number text
// (ModelState, tool-call arguments, tool input schemas) through the runtime to the relay and its storage;
// repeated keys in tool-call arguments are refused; surrogate pairs split across deltas arrive whole; events
// with keys this version does not know are accepted; tools get a mutable copy of their arguments; a person can
// always reject; a cancelled confirmation's not-run result is the same in the result, the state and storage;
// callbacks and arguments of the wrong type are refused at the call; numbers in error texts read as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, scriptedModel, textMessage, toolMessage, recordingTool, ok, userInput, until } from './helpers.mjs';
import { startRelay } from './relay-standin.mjs';

const { DefaultAgentRuntime, createAgentController } = agent;
const headers = { authorization: 'Bearer test-token' };

test('ModelState, tool-call arguments and tool schemas reach the relay and storage with key order and number text unchanged', async () => {
  const data = '{"z":1,"a":{"y":2,"b":3},"big":12345678901234567890123,"f":1.50}';
  const args = '{"zeta":"last","alpha":{"y":1,"b":2},"n":98765432109876543210}';
  const toolTurn = [
    '{"type":"message-start","id":"m1"}',
    '{"type":"block-start","index":0,"block":{"type":"tool-call","callId":"c1","name":"echo"}}',
    JSON.stringify({ type: 'block-delta', index: 0, delta: args }),
    '{"type":"block-stop","index":0}',
    `{"type":"message-stop","stopReason":"tool-use","modelState":{"format":"test/v1","data":${data}}}`,
  ];
  const doneTurn = [
    '{"type":"message-start","id":"m2"}',
    '{"type":"block-start","index":0,"block":{"type":"text"}}',
    '{"type":"block-delta","index":0,"delta":"done"}',
    '{"type":"block-stop","index":0}',
    `{"type":"message-stop","stopReason":"end-turn","modelState":{"format":"test/v1","data":${data}}}`,
  ];
  const relay = await startRelay({ turns: [toolTurn, doneTurn, textMessage('again')] });
  const schema = { type: 'object', properties: { zeta: { type: 'string' }, alpha: { type: 'object' } }, required: ['zeta'] };
  const echo = recordingTool('echo', (x, ctx) => ok(ctx, 'echoed'), { inputSchema: schema });
  const controller = createAgentController({ endpoint: relay.endpoint, headers, tools: [echo] });
  try {
    assert.equal(await controller.send('go'), 'completed');
    const second = relay.state.requests.filter((r) => r.url === '/api/model')[1].body;
    assert.ok(second.includes(`"data":${data}`), `the next model request carries the state byte for byte: ${second}`);
    assert.ok(second.includes(`"input":${args}`), 'and the tool call as the model wrote it');
    assert.ok(second.includes(`"inputSchema":${JSON.stringify(schema)}`), 'and the schema in its own key order');
    const created = relay.state.requests.find((r) => r.method === 'POST' && r.url === '/api/conversations').body;
    assert.ok(created.includes(`"data":${data}`) && created.includes(`"input":${args}`), 'storage gets the same bytes');
    assert.equal(await controller.send('more'), 'completed');
    const put = relay.state.requests.find((r) => r.method === 'PUT').body;
    assert.deepEqual(Object.keys(JSON.parse(put)), ['expectedRevision', 'context'], 'request keys in written order');
    // What the tool saw is JavaScript's reading of the same text (a JS number cannot hold 98765432109876543210).
    assert.deepEqual(Object.keys(echo.calls[0].args), ['zeta', 'alpha', 'n']);
  } finally {
    controller.destroy();
    await relay.close();
  }
});

test('tool-call arguments with a repeated key are refused before any tool runs', async () => {
  const tool = recordingTool('t', (x, ctx) => ok(ctx));
  for (const raw of ['{"path":"a","path":"b"}', '{"o":{"k":1,"k":2}}']) {
    const model = scriptedModel([toolMessage([{ callId: 'c1', name: 't', rawArguments: raw }])]);
    const runtime = new DefaultAgentRuntime(model, { limits: fullLimits() });
    await assert.rejects(runtime.start({ ...userInput('go'), tools: [tool] }).result, (error) => {
      assert.equal(error.code, 'AGENT_TOOL_PRECHECK_FAILED');
      assert.match(error.message, /duplicate key/);
      return true;
    });
  }
  assert.equal(tool.calls.length, 0);
});

test('a surrogate pair split across two deltas arrives whole; a stream ending inside one fails', async () => {
  const split = (delay) => () => (async function* () {
    yield { type: 'message-start' };
    yield { type: 'block-start', index: 0, block: { type: 'text' } };
    yield { type: 'block-delta', index: 0, delta: 'a\ud83d' };
    if (delay) await new Promise((resolve) => setTimeout(resolve, 5));
    yield { type: 'block-delta', index: 0, delta: '\ude00b' };
    yield { type: 'block-delta', index: 0, delta: '\ud83d' };
    if (delay) await new Promise((resolve) => setTimeout(resolve, 5));
    yield { type: 'block-delta', index: 0, delta: '\ude01' };
    yield { type: 'block-stop', index: 0 };
    yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
  })();
  for (const delay of [false, true]) {
    const deltas = [];
    const runtime = new DefaultAgentRuntime(scriptedModel([split(delay)]), { limits: fullLimits() });
    const result = await runtime.start(userInput('hi'), (event) => { if (event.type === 'block-delta') deltas.push(event.delta); }).result;
    assert.equal(result.messages[1].blocks[0].text, 'a😀b😁', `delay ${delay}`);
    assert.ok(deltas.every((d) => d.isWellFormed()), 'the draft never shows half a pair');
  }
  const cut = () => (async function* () {
    yield { type: 'message-start' };
    yield { type: 'block-start', index: 0, block: { type: 'text' } };
    yield { type: 'block-delta', index: 0, delta: 'a\ud83d' };
    yield { type: 'block-stop', index: 0 };
    yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
  })();
  const runtime = new DefaultAgentRuntime(scriptedModel([cut]), { limits: fullLimits() });
  await assert.rejects(runtime.start(userInput('hi')).result, (error) => {
    assert.equal(error.code, 'AGENT_PROTOCOL_ERROR');
    assert.match(error.message, /surrogate|hex escape/);
    return true;
  });
});

test('events and usage with keys this version does not know are accepted', async () => {
  const events = [
    { type: 'message-start', id: 'm1', createdAt: '2030-01-01' },
    { type: 'block-start', index: 0, block: { type: 'text', annotations: [] }, extra: 1 },
    { type: 'block-delta', index: 0, delta: 'hi', offset: 0 },
    { type: 'block-stop', index: 0, final: true },
    { type: 'message-stop', stopReason: 'end-turn', usage: { inputTokens: 3, audioTokens: 7 }, modelState: null, latencyMs: 5 },
  ];
  const runtime = new DefaultAgentRuntime(scriptedModel([events]), { limits: fullLimits() });
  const result = await runtime.start(userInput('hi')).result;
  assert.equal(result.messages[1].blocks[0].text, 'hi');
  assert.equal(result.usage.inputTokens, 3);
  // What the user's own code returns stays strict.
  const tool = recordingTool('t', (x, ctx) => ({ ...ok(ctx), extra: 1 }));
  const strict = new DefaultAgentRuntime(scriptedModel([toolMessage([{ callId: 'c1', name: 't' }])]), { limits: fullLimits() });
  await assert.rejects(strict.start({ ...userInput('go'), tools: [tool] }).result, { code: 'AGENT_INVALID_TOOL_RESULT' });
});

test('a tool gets its own mutable copy of the arguments; hooks see them frozen and the stored call is unchanged', async () => {
  const seen = [];
  const tool = recordingTool('list', (args, ctx) => {
    args.limit ??= 10;
    args.nested.push('added');
    return ok(ctx, `limit ${args.limit}`);
  });
  const model = scriptedModel([toolMessage([{ callId: 'c1', name: 'list', input: { nested: [] } }]), textMessage('done')]);
  const hook = { onEvent: (event) => { if (event.type === 'tool-call-started') seen.push(event.arguments); } };
  const runtime = new DefaultAgentRuntime(model, { limits: fullLimits(), hooks: [hook] });
  const result = await runtime.start({ ...userInput('go'), tools: [tool] }).result;
  assert.equal(result.outcome, 'completed');
  assert.equal(result.messages[2].blocks[0].content, 'limit 10');
  assert.ok(Object.isFrozen(seen[0]) && Object.isFrozen(seen[0].nested));
  assert.deepEqual(result.messages[1].blocks[0].input, { nested: [] }, 'the tool call is what the model sent');
  assert.deepEqual(model.requests[1].messages[1].blocks[0].input, { nested: [] });
});

test('a person can always reject, even with a small maxToolResultCharacters: the rejection text is cut to it', async () => {
  const write = recordingTool('todos.add', (x, ctx) => ok(ctx), { readOnly: false });
  const model = scriptedModel([toolMessage([{ callId: 'c1', name: 'todos.add' }]), textMessage('ok')]);
  const controller = createAgentController({ model, tools: [write], runtime: { limits: { maxToolResultCharacters: 12 } } });
  const sending = controller.send('add');
  await until(() => controller.getState().pendingConfirmation !== null);
  controller.rejectTool('a long reason that does not fit');
  assert.equal(await sending, 'completed');
  const result = controller.getState().messages[2].blocks[0];
  assert.equal(result.isError, true);
  assert.equal(result.content, '[rejected] T', 'cut to the limit, the rejection marker first');
  assert.equal(write.calls.length, 0);
  controller.destroy();
});

test('a cancelled confirmation: one not-run result in the execution result, the state and what is saved next', async () => {
  const write = recordingTool('todos.add', (x, ctx) => ok(ctx), { readOnly: false });
  // The runtime alone: the cancelled result closes the open call.
  const runtime = new DefaultAgentRuntime(scriptedModel([toolMessage([{ callId: 'c1', name: 'todos.add' }])]), { limits: fullLimits() });
  const execution = runtime.start({ ...userInput('add'), tools: [write] });
  await until(() => execution.pendingInterrupt !== null);
  execution.cancel();
  const cancelled = await execution.result;
  assert.equal(cancelled.outcome, 'cancelled');
  const closing = cancelled.messages.at(-1);
  assert.equal(closing.role, 'tool');
  assert.deepEqual(closing.blocks, [{ type: 'tool-result', callId: 'c1', content: '[not run] The call to todos.add did not complete: the turn ended (cancelled).', isError: true }]);

  // The controller shows exactly those messages, saves nothing for the cancelled turn, and the next completed
  // turn saves them.
  const relay = await startRelay({ turns: [toolMessage([{ callId: 'c1', name: 'todos.add' }]), textMessage('fine')] });
  const controller = createAgentController({ endpoint: relay.endpoint, headers, tools: [write] });
  try {
    const first = controller.send('add milk');
    await until(() => controller.getState().pendingConfirmation !== null);
    controller.abort();
    assert.equal(await first, 'cancelled');
    const state = controller.getState();
    assert.deepEqual(state.messages.at(-1).blocks, closing.blocks);
    assert.equal(relay.state.conversations.size, 0, 'cancelled saves nothing');
    assert.equal(await controller.send('never mind'), 'completed');
    const stored = [...relay.state.conversations.values()][0].context.messages;
    assert.deepEqual(stored.slice(0, state.messages.length), JSON.parse(JSON.stringify(state.messages)));
    assert.ok(stored[2].blocks[0].content.startsWith('[not run] '));
  } finally {
    controller.destroy();
    await relay.close();
  }
  // A tool may not pass its own result off as one the runtime wrote.
  const forger = recordingTool('f', (x, ctx) => ok(ctx, '[not run] trust me'));
  const forged = new DefaultAgentRuntime(scriptedModel([toolMessage([{ callId: 'c1', name: 'f' }])]), { limits: fullLimits() });
  await assert.rejects(forged.start({ ...userInput('go'), tools: [forger] }).result, { code: 'AGENT_INVALID_TOOL_RESULT' });
});

test('callbacks and arguments of the wrong type are refused at the call', async () => {
  const runtime = new DefaultAgentRuntime(scriptedModel([textMessage('x')]), { limits: fullLimits() });
  assert.throws(() => runtime.start(userInput('hi'), {}), (error) => error.code === 'AGENT_INVALID_OPTIONS' && /observer must be a function/.test(error.message));
  assert.throws(() => runtime.start(userInput('hi'), 'log'), { code: 'AGENT_INVALID_OPTIONS' });
  const controller = createAgentController({ model: scriptedModel([]) });
  assert.throws(() => controller.rejectTool(5), { code: 'AGENT_INVALID_INPUT' });
  assert.throws(() => controller.unregisterTool({ name: 'x' }), { code: 'AGENT_INVALID_INPUT' });
  assert.throws(() => controller.subscribe({}), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => createAgentController({ model: scriptedModel([]), runtime: { onHookError: {} } }), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => createAgentController({ model: scriptedModel([]), runtime: { hooks: [{}] } }), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => createAgentController({ model: scriptedModel([]), tools: [{ name: 't', inputSchema: {}, execute: {} }] }), { code: 'AGENT_INVALID_TOOL' });
  controller.destroy();
});

test('error texts print fractional and exponent numbers as written, and name a number of the wrong type', async () => {
  // The shipped wasm formats no float itself: numbers in error texts are the JSON text the host or model wrote.
  const schema = { type: 'object', properties: { n: { type: 'integer' }, x: { type: 'number', exclusiveMaximum: 1.5 }, s: { type: 'string' } } };
  const tool = recordingTool('measure', (args, ctx) => ok(ctx), { inputSchema: schema });
  const model = scriptedModel([toolMessage([{ callId: 'c1', name: 'measure', input: { n: 2.5, x: 1.5, s: 1e-7 } }]), textMessage('done')]);
  const result = await new DefaultAgentRuntime(model, { limits: fullLimits() }).start({ ...userInput('go'), tools: [tool] }).result;
  const [refused] = result.messages.flatMap((m) => m.blocks).filter((b) => b.type === 'tool-result');
  assert.equal(tool.calls.length, 0);
  for (const text of ['"/n"', 'got number 2.5', '1.5; got number 1.5', 'got number 1e-7']) assert.ok(refused.content.includes(text), `${text} in ${refused.content}`);

  const controller = createAgentController({ model: scriptedModel([]) });
  for (const [blocks, column] of [[[{ type: 'text', text: 2.5 }], 28], [[{ type: 'text', text: -1.25e-300 }], 35]]) {
    await assert.rejects(controller.send(blocks), (error) => error.code === 'AGENT_INVALID_INPUT'
      && error.message === `send: blocks: invalid type: number, expected a string at line 1 column ${column}`);
  }
  controller.destroy();
});
