// Every call from the runtime into page code (tools, the schema's RegExp, hooks, onHookError, console.error,
// state subscribers, the headers provider, fetch, option getters) is caught at the boundary: a throw becomes what
// the contract says (AGENT_TOOL_FAILED for a tool, a typed failure for a RegExp, AGENT_HOOK_FAILED for a hook …)
// and never unwinds through the wasm, so the SAME controller runs a normal next turn afterwards (a throw that
// unwound would leave the controller's borrowed state behind, and every later call would trap).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, scriptedModel, textMessage, toolMessage, recordingTool, ok } from './helpers.mjs';
import { startRelay } from './relay-standin.mjs';

const { createAgentController, AgentError } = agent;

/** An Error whose `message` and `name` getters throw: reading the thrown value throws too. */
function unreadableError() {
  const error = new Error('never read');
  for (const key of ['message', 'name']) {
    Object.defineProperty(error, key, { get() { throw new Error(`${key} getter threw`); } });
  }
  return error;
}

/** A Proxy whose every trap throws (`instanceof`, property reads, `String()`). */
function hostileProxy() {
  const trap = () => { throw new Error('trap threw'); };
  return new Proxy({}, { get: trap, getPrototypeOf: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
}

/** Runs one normal turn on `controller` (the model's next turn is a text answer) and checks it completed. */
async function normalTurn(controller, model, text = 'still fine') {
  model.turns.push(textMessage(text));
  assert.equal(await controller.send('and now?'), 'completed');
  assert.equal(controller.getState().messages.at(-1).blocks[0].text, text);
  assert.equal(controller.getState().error, null);
}

/** A scripted model whose turns can be appended while the controller lives. */
function openModel() {
  const turns = [];
  const model = scriptedModel(turns);
  model.turns = turns;
  return model;
}

test('a tool that throws, even a value that cannot be read, ends the turn as AGENT_TOOL_FAILED; the next turn runs', async () => {
  const model = openModel();
  const thrown = [new Error('tool down'), unreadableError(), hostileProxy(), 'a string'];
  let i = 0;
  const tool = recordingTool('t', () => { throw thrown[i]; });
  const controller = createAgentController({ model, tools: [tool] });
  for (i = 0; i < thrown.length; i += 1) {
    model.turns.push(toolMessage([{ callId: `c${i}`, name: 't' }]));
    await assert.rejects(controller.send(`go ${i}`), (error) => {
      assert.ok(error instanceof AgentError);
      assert.equal(error.code, 'AGENT_TOOL_FAILED', `thrown value ${i}`);
      return true;
    });
    // Never turned into an error result the model would see: the failed turn saved no tool result of the tool's.
    assert.equal(controller.getState().error.code, 'AGENT_TOOL_FAILED');
    await normalTurn(controller, model);
  }
  assert.equal(tool.calls.length, thrown.length);
  controller.destroy();
});

test('a tool returning a promise whose constructor getter throws fails as AGENT_TOOL_FAILED; the next turn runs', async () => {
  const model = openModel();
  const tool = recordingTool('t', (args, ctx) => {
    const promise = Promise.resolve(ok(ctx));
    Object.defineProperty(promise, 'constructor', { get() { throw new Error('constructor getter threw'); } });
    return promise;
  });
  const controller = createAgentController({ model, tools: [tool] });
  model.turns.push(toolMessage([{ callId: 'c1', name: 't' }]));
  await assert.rejects(controller.send('go'), (error) => {
    assert.equal(error.code, 'AGENT_TOOL_FAILED');
    assert.match(error.message, /constructor getter threw/);
    return true;
  });
  await normalTurn(controller, model);
  controller.destroy();
});

test('a RegExp that throws while matching is a typed failure, never "no match"; the next turn checks patterns again', async () => {
  const model = openModel();
  const tool = recordingTool('todos.add', (args, ctx) => ok(ctx, `added ${args.text}`), {
    inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^[a-z ]+$' } }, required: ['text'] },
  });
  const controller = createAgentController({ model, tools: [tool] });
  const exec = RegExp.prototype.exec;
  // The page replaces RegExp.prototype.exec (which RegExp.prototype.test calls) with one that throws on our pattern.
  RegExp.prototype.exec = function (text) {
    if (this.source === '^[a-z ]+$') throw new RangeError('regex engine out of stack');
    return exec.call(this, text);
  };
  try {
    model.turns.push(toolMessage([{ callId: 'c1', name: 'todos.add', input: { text: 'buy milk' } }]));
    await assert.rejects(controller.send('add buy milk'), (error) => {
      assert.ok(error instanceof AgentError);
      assert.equal(error.code, 'AGENT_TOOL_FAILED');
      assert.match(error.message, /RangeError: regex engine out of stack/);
      assert.deepEqual(error.details, { callId: 'c1', tool: 'todos.add', pattern: '^[a-z ]+$' });
      return true;
    });
  } finally {
    RegExp.prototype.exec = exec;
  }
  assert.equal(tool.calls.length, 0, 'the tool did not run on an unchecked call');
  // The same controller: a mismatch is still reported to the model, and a match runs the tool.
  model.turns.push(
    toolMessage([{ callId: 'c2', name: 'todos.add', input: { text: 'BUY MILK' } }]),
    toolMessage([{ callId: 'c3', name: 'todos.add', input: { text: 'buy milk' } }]),
    textMessage('done'),
  );
  assert.equal(await controller.send('again'), 'completed');
  const results = controller.getState().messages.flatMap((m) => m.blocks).filter((b) => b.type === 'tool-result');
  assert.match(results.find((b) => b.callId === 'c2').content, /^\[invalid arguments\]/);
  assert.equal(results.find((b) => b.callId === 'c3').content, 'added buy milk');
  assert.equal(tool.calls.length, 1);
  controller.destroy();
});

test('hooks, onHookError, console.error and subscribers that throw hostile values leave the controller usable', async (t) => {
  const model = openModel();
  let mode = 'none';
  const hooks = [{
    onEvent(event) {
      if (mode === 'model-call' && event.type === 'model-call-started') throw hostileProxy();
      if (mode === 'terminal' && event.type === 'execution-completed') throw unreadableError();
    },
  }];
  const onHookError = () => { throw hostileProxy(); };
  const controller = createAgentController({ model, runtime: { hooks, onHookError } });
  t.mock.method(console, 'error', () => { throw new Error('console.error replaced by the page, and it throws'); });
  const unsubscribe = controller.subscribe(() => { throw hostileProxy(); });

  mode = 'model-call';
  await assert.rejects(controller.send('go'), (error) => {
    assert.equal(error.code, 'AGENT_HOOK_FAILED', 'a hook throwing on a non-terminal event fails the turn');
    return true;
  });
  mode = 'terminal';
  model.turns.push(textMessage('the outcome stands'));
  assert.equal(await controller.send('go'), 'completed', 'a terminal hook cannot change the outcome');
  mode = 'none';
  await new Promise((resolve) => setImmediate(resolve)); // the subscriber's coalesced snapshot runs (and throws)
  await normalTurn(controller, model);
  unsubscribe();
  controller.destroy();
});

test('options whose getters or traps throw are refused with a stable code; the same controller keeps working', async () => {
  const model = openModel();
  const controller = createAgentController({ model });
  const tools = [recordingTool('a', (args, ctx) => ok(ctx))];
  Object.defineProperty(tools, 0, { get() { throw new Error('element getter threw'); } });
  assert.throws(() => createAgentController({ model, tools }), (error) => {
    assert.equal(error.code, 'AGENT_INVALID_TOOL');
    assert.match(error.message, /element getter threw/);
    return true;
  });
  assert.throws(() => controller.setRuntimeOptions(new Proxy({}, { ownKeys() { throw new Error('ownKeys threw'); } })),
    (error) => {
      assert.equal(error.code, 'AGENT_INVALID_OPTIONS');
      assert.match(error.message, /ownKeys threw/);
      return true;
    });
  assert.throws(() => controller.registerTool({ get name() { throw new Error('name getter threw'); } }),
    (error) => error instanceof AgentError);
  // A revoked Proxy throws from Array.isArray and Object.keys alike.
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  await assert.rejects(controller.send(revoked.proxy), (error) => error.code === 'AGENT_INVALID_INPUT');
  assert.throws(() => controller.setRuntimeOptions(revoked.proxy), (error) => error.code === 'AGENT_INVALID_OPTIONS');
  await normalTurn(controller, model);
  controller.destroy();
});

test('a headers provider or fetch that throws fails the request typed; the same controller runs the next turn', async () => {
  const relay = await startRelay({ turns: [] });
  let headersMode = 'ok';
  const headers = () => {
    if (headersMode === 'throw') throw unreadableError();
    if (headersMode === 'reject') return Promise.reject(hostileProxy());
    return { authorization: 'Bearer test-token' };
  };
  const controller = createAgentController({ endpoint: `${relay.endpoint}/`, headers });
  const realFetch = globalThis.fetch;
  try {
    for (headersMode of ['throw', 'reject']) {
      await assert.rejects(controller.send('hi'), (error) => {
        assert.ok(error instanceof AgentError, headersMode);
        assert.equal(error.code, 'AGENT_RELAY_ERROR');
        return true;
      });
      // Storage goes through the same provider: listing conversations fails typed as well.
      await assert.rejects(controller.listConversations(), (error) => error instanceof AgentError);
    }
    headersMode = 'ok';
    globalThis.fetch = () => { throw new TypeError('fetch replaced by the page, and it throws'); };
    await assert.rejects(controller.send('hi'), (error) => {
      assert.equal(error.code, 'AGENT_RELAY_ERROR');
      assert.match(error.message, /fetch replaced/);
      return true;
    });
    globalThis.fetch = realFetch;
    relay.state.turns.push(textMessage('over the relay'));
    assert.equal(await controller.send('and now?'), 'completed');
    assert.equal(controller.getState().messages.at(-1).blocks[0].text, 'over the relay');
    assert.ok(Array.isArray((await controller.listConversations()).items), "storage works again");
  } finally {
    globalThis.fetch = realFetch;
    controller.destroy();
    await relay.close();
  }
});
