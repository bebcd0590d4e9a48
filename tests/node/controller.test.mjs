// The controller through the public API: saving by revision (conflicts, corruption), confirmation through
// approveTool/rejectTool, registry snapshots and the inspection source, state snapshots (stable identity,
// coalescing, freezing), busy/destroy, and the relay adapters over real HTTP (headers per request).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, scriptedModel, textMessage, toolMessage, recordingTool, ok, until } from './helpers.mjs';
import { startRelay } from './relay-standin.mjs';

const { createAgentController, AgentError, AgentController } = agent;

function gatedTurn(events, gate) {
  return () => (async function* () {
    const [first, ...rest] = events;
    yield first;
    await gate;
    for (const event of rest) yield event;
  })();
}

test('each turn freezes a registry snapshot; changes mid-turn only affect the next turn', async () => {
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const a = recordingTool('tool.a', (x, ctx) => ok(ctx, 'a ran'));
  const b = recordingTool('tool.b', (x, ctx) => ok(ctx, 'b ran'));
  const model = scriptedModel([
    gatedTurn(toolMessage([{ callId: 'c1', name: 'tool.a' }]), gate),
    textMessage('turn one done'),
    textMessage('turn two done'),
  ]);
  const controller = createAgentController({ model, tools: [a] });
  assert.ok(controller instanceof AgentController);
  const idle = controller.getToolInspectionSource();
  assert.equal(idle.source, 'current-registry');
  assert.deepEqual(idle.snapshot.tools.map((t) => t.name), ['tool.a']);
  const startRevision = idle.snapshot.revision;

  const sending = controller.send('go');
  await until(() => model.requests.length === 1);
  controller.registerTool(b);
  assert.equal(controller.unregisterTool('tool.a'), true);
  const running = controller.getToolInspectionSource();
  assert.equal(running.source, 'current-execution');
  assert.equal(running.snapshot.revision, startRevision);
  assert.deepEqual(running.snapshot.tools.map((t) => t.name), ['tool.a']);
  release();
  assert.equal(await sending, 'completed');
  assert.equal(a.calls.length, 1, 'the frozen routing still reached tool.a after it was unregistered');
  assert.deepEqual(model.requests[0].tools.map((t) => t.name), ['tool.a']);
  assert.deepEqual(model.requests[1].tools.map((t) => t.name), ['tool.a'], 'the same turn keeps its snapshot');

  const after = controller.getToolInspectionSource();
  assert.equal(after.source, 'current-registry');
  assert.ok(after.snapshot.revision > startRevision);
  assert.deepEqual(after.snapshot.tools.map((t) => t.name), ['tool.b']);
  assert.equal(await controller.send('again'), 'completed');
  assert.deepEqual(model.requests[2].tools.map((t) => t.name), ['tool.b']);
  assert.throws(() => controller.registerTool(b), { code: 'AGENT_INVALID_TOOL' });
  assert.throws(() => controller.registerTool({ name: 'x', inputSchema: {} }), { code: 'AGENT_INVALID_TOOL' });
  controller.destroy();
});

test('state: coalesced, frozen snapshots; unchanged messages keep their identity; draft holds the deltas', async () => {
  const deltas = 2000;
  const events = [{ type: 'message-start' }, { type: 'block-start', index: 0, block: { type: 'text' } }];
  for (let i = 0; i < deltas; i += 1) events.push({ type: 'block-delta', index: 0, delta: 'x' });
  events.push({ type: 'block-stop', index: 0 }, { type: 'message-stop', stopReason: 'end-turn', modelState: null });
  const controller = createAgentController({ model: scriptedModel([events, textMessage('second')]) });
  const states = [];
  const unsubscribe = controller.subscribe((state) => states.push(state));
  const initial = controller.getState();
  assert.equal(initial.status, 'idle');
  assert.deepEqual(initial.messages, []);
  assert.ok(Object.isFrozen(initial) && Object.isFrozen(initial.messages));

  assert.equal(await controller.send('hello'), 'completed');
  assert.ok(states.length >= 2, 'subscribers were notified');
  assert.ok(states.length < deltas / 10, `deltas are coalesced (${states.length} notifications for ${deltas} deltas)`);
  for (let i = 1; i < states.length; i += 1) assert.notEqual(states[i], states[i - 1], 'a new object per change');
  const streaming = states.filter((s) => s.draft !== null);
  assert.ok(streaming.length >= 1, 'a draft was visible');
  for (const s of streaming) {
    assert.equal(s.messages, streaming[0].messages, 'messages keep identity while only the draft changes');
    assert.equal(s.messages.length, 1);
    assert.match(s.draft.blocks[0]?.text ?? '', /^x*$/);
  }
  const final = controller.getState();
  assert.equal(final.status, 'idle');
  assert.equal(final.draft, null);
  assert.equal(final.lastOutcome, 'completed');
  assert.equal(final.messages.length, 2);
  assert.equal(final.messages[1].blocks[0].text, 'x'.repeat(deltas));
  assert.ok(Object.isFrozen(final.messages[1].blocks[0]));
  assert.equal(controller.getState(), final, 'getState is stable while nothing changes');
  const userMessage = final.messages[0];

  unsubscribe();
  const count = states.length;
  assert.equal(await controller.send('more'), 'completed');
  assert.equal(states.length, count, 'no notifications after unsubscribe');
  assert.equal(controller.getState().messages[0], userMessage, 'earlier message objects are reused');
  controller.destroy();
});

test('the controller confirms tools through pendingConfirmation, approveTool and rejectTool', async () => {
  const write = recordingTool('write', (x, ctx) => ok(ctx, 'written'), { readOnly: false });
  const model = scriptedModel([
    toolMessage([{ callId: 'c1', name: 'write', input: { v: 1 } }]), textMessage('approved'),
    toolMessage([{ callId: 'c2', name: 'write', input: { v: 2 } }]), textMessage('rejected'),
  ]);
  const controller = createAgentController({ model, tools: [write] });
  assert.throws(() => controller.approveTool(), { code: 'AGENT_NO_PENDING_INTERRUPT' });
  const first = controller.send('one');
  await until(() => controller.getState().pendingConfirmation !== null);
  const state = controller.getState();
  assert.equal(state.status, 'awaiting-confirmation');
  assert.equal(state.pendingConfirmation.tool, 'write');
  assert.deepEqual(state.pendingConfirmation.arguments, { v: 1 });
  assert.equal(typeof state.pendingConfirmation.interruptId, 'string');
  controller.approveTool();
  assert.equal(await first, 'completed');
  assert.equal(write.calls.length, 1);

  const second = controller.send('two');
  await until(() => controller.getState().pendingConfirmation !== null);
  controller.rejectTool('user said no');
  assert.equal(await second, 'completed');
  assert.equal(write.calls.length, 1, 'a rejected tool never runs');
  const toolResult = controller.getState().messages.find((m) => m.role === 'tool' && m.blocks[0].callId === 'c2').blocks[0];
  assert.equal(toolResult.isError, true);
  assert.match(toolResult.content, /user said no|reject/i);
  controller.destroy();
});

test('controller: busy, abort, invalid input and destroy fail with stable codes', async () => {
  const model = scriptedModel([() => (async function* () { yield { type: 'message-start' }; await new Promise(() => {}); })(), textMessage('after abort')]);
  const controller = createAgentController({ model });
  await assert.rejects(controller.send(''), { code: 'AGENT_INVALID_INPUT' });
  await assert.rejects(controller.send([{ type: 'tool-result', callId: 'x', content: '', isError: false }]), { code: 'AGENT_INVALID_INPUT' });
  const running = controller.send('hang');
  assert.equal(controller.getState().status, 'running', 'send switches to running synchronously');
  await assert.rejects(controller.send('again'), { code: 'AGENT_BUSY' });
  assert.throws(() => controller.newConversation(), { code: 'AGENT_BUSY' });
  assert.equal(controller.abort(), true);
  assert.equal(await running, 'cancelled');
  assert.equal(controller.getState().lastOutcome, 'cancelled');
  assert.deepEqual(controller.getState().messages.map((m) => m.role), ['user'], 'cancel keeps only stable messages');
  assert.equal(await controller.send([{ type: 'text', text: 'blocks work too' }]), 'completed');
  controller.destroy();
  assert.equal(controller.getState().status, 'destroyed');
  await assert.rejects(controller.send('x'), (error) => error instanceof AgentError && error.code === 'AGENT_DESTROYED');
  assert.throws(() => controller.registerTool(recordingTool('t', () => {})), { code: 'AGENT_DESTROYED' });
  assert.throws(() => createAgentController({}), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => createAgentController({ model, endpont: '/ai' }), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => createAgentController({ model: 'gpt-x' }), { code: 'AGENT_INVALID_OPTIONS' });
});

test('completed and max-tokens turns are saved as one revision each; cancelled turns are not', async () => {
  const s1 = { format: 'test/v1', data: { n: 1 } };
  const s2 = { format: 'test/v1', data: { n: 2 } };
  const relay = await startRelay({
    turns: [
      textMessage('first answer', { modelState: s1 }),
      textMessage('cut off', { stopReason: 'max-tokens', modelState: s2 }),
    ],
  });
  let headerCalls = 0;
  const controller = createAgentController({
    endpoint: relay.endpoint,
    headers: async () => { headerCalls += 1; return { authorization: 'Bearer test-token' }; },
    model: 'stand-in-model',
  });
  try {
    assert.equal(await controller.send('hello relay'), 'completed');
    let state = controller.getState();
    assert.equal(state.conversation.revision, 1);
    const id = state.conversation.id;
    const stored = relay.state.conversations.get(id);
    assert.deepEqual(stored.context.messages, state.messages, 'messages saved as shown');
    assert.deepEqual(stored.context.modelState, s1, 'modelState saved with them');
    assert.equal(relay.state.modelRequests[0].model, 'stand-in-model');

    assert.equal(await controller.send('go on'), 'max-tokens');
    state = controller.getState();
    assert.equal(state.conversation.revision, 2);
    assert.deepEqual(relay.state.modelRequests[1].modelState, s1, 'the next request carries the last state');
    assert.deepEqual(stored.context.modelState, s2);
    assert.equal(stored.context.messages.length, 4);
    const put = relay.state.requests.filter((r) => r.method === 'PUT');
    assert.equal(put.length, 1);
    assert.equal(JSON.parse(put[0].body).expectedRevision, 1);
    assert.equal(headerCalls, relay.state.requests.length, 'the headers provider runs once per request');

    // The third turn starts a message and holds the stream open: only the abort ends it. (Ending the stream
    // instead raced the abort: a stream that ends without message-stop is a protocol error, not a cancel.)
    relay.state.turns[2] = { hang: [{ type: 'message-start' }, { type: 'block-start', index: 0, block: { type: 'text' } }] };
    const requestsBefore = relay.state.requests.length;
    const cancelled = controller.send('this will be cancelled');
    await until(() => relay.state.modelRequests.length === 3);
    controller.abort();
    assert.equal(await cancelled, 'cancelled');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(relay.state.requests.length, requestsBefore + 1, 'no save after a cancelled turn');
    assert.equal(stored.revision, 2);
  } finally {
    controller.destroy();
    await relay.close();
  }
});

test('a revision conflict is an explicit error and nothing is overwritten; corrupt state never falls back', async () => {
  const relay = await startRelay({ turns: [textMessage('one'), textMessage('two'), textMessage('three')] });
  const headers = { authorization: 'Bearer test-token' };
  const controller = createAgentController({ endpoint: relay.endpoint, headers });
  try {
    assert.equal(await controller.send('first'), 'completed');
    const id = controller.getState().conversation.id;
    const stored = relay.state.conversations.get(id);
    // Another tab saved meanwhile.
    stored.revision = 5;
    const before = JSON.stringify(stored.context);
    await assert.rejects(controller.send('second'), (error) => {
      assert.ok(error instanceof AgentError);
      assert.equal(error.code, 'AGENT_REVISION_CONFLICT');
      assert.deepEqual(error.details, { relayCode: 'REVISION_CONFLICT', status: 409, currentRevision: 5 });
      assert.ok(Object.isFrozen(error.details));
      return true;
    });
    assert.equal(JSON.stringify(stored.context), before, 'the stored conversation was not overwritten');
    assert.equal(controller.getState().error.code, 'AGENT_REVISION_CONFLICT');

    const fresh = createAgentController({ endpoint: relay.endpoint, headers });
    await fresh.loadConversation(id);
    assert.equal(fresh.getState().conversation.revision, 5);
    assert.deepEqual(fresh.getState().messages, stored.context.messages);
    relay.state.corrupt.add(id);
    const other = createAgentController({ endpoint: relay.endpoint, headers, conversationId: id });
    await until(() => other.getState().error !== null);
    assert.equal(other.getState().error.code, 'AGENT_CONVERSATION_CORRUPT');
    assert.deepEqual(other.getState().messages, [], 'no other history is shown in place of a corrupt one');
    assert.equal(other.getState().conversation, null);
    await assert.rejects(fresh.loadConversation('c_missing'), (error) => error.code === 'AGENT_RELAY_ERROR' && error.details.status === 404);
    fresh.destroy();
    other.destroy();
  } finally {
    controller.destroy();
    await relay.close();
  }
});

test('relay model: HTTP errors map to AGENT_RELAY_ERROR with the relay code; SSE events stream into messages', async () => {
  const relay = await startRelay({ turns: [] });
  const controller = createAgentController({ endpoint: `${relay.endpoint}/`, headers: { authorization: 'Bearer test-token' } });
  try {
    relay.state.failModel = [429, 'UPSTREAM_RATE_LIMITED'];
    await assert.rejects(controller.send('hi'), (error) => {
      assert.equal(error.code, 'AGENT_RELAY_ERROR');
      assert.deepEqual(error.details, { relayCode: 'UPSTREAM_RATE_LIMITED', status: 429 });
      return true;
    });
    relay.state.failModel = [503, 'UPSTREAM_UNAVAILABLE', { retryable: true }];
    await assert.rejects(controller.send('hi'), (error) => {
      assert.deepEqual(error.details, { relayCode: 'UPSTREAM_UNAVAILABLE', status: 503, retryable: true },
        'retryable is passed on when the relay says so');
      return true;
    });
    relay.state.failModel = null;
    relay.state.turns.push(null, null, textMessage('streamed "quoted"\nline', { pieces: 5 }));
    assert.equal(await controller.send('again'), 'completed');
    assert.equal(controller.getState().messages.at(-1).blocks[0].text, 'streamed "quoted"\nline');
    relay.state.turns.push([{ type: 'message-start' }, { type: 'error', code: 'UPSTREAM_TIMEOUT', message: 'slow', retryable: true }]);
    await assert.rejects(controller.send('third'), (error) => {
      assert.ok(error instanceof AgentError);
      assert.equal(error.code, 'AGENT_RELAY_ERROR', 'an in-stream error event fails the call');
      assert.deepEqual(error.details, { relayCode: 'UPSTREAM_TIMEOUT', retryable: true },
        'the same details shape as an HTTP error, without status');
      assert.match(error.message, /slow/);
      return true;
    });
    relay.state.turns.push([{ type: 'message-start' }, { type: 'error', code: 'UPSTREAM_REJECTED', message: 'no' }]);
    await assert.rejects(controller.send('fourth'), (error) => {
      assert.deepEqual(error.details, { relayCode: 'UPSTREAM_REJECTED' });
      return true;
    });
  } finally {
    controller.destroy();
    await relay.close();
  }
});
