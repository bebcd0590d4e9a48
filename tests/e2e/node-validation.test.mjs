// End to end in Node: argument validation with a real provider wire format. The built controller → the real
// relay binary → a fake OpenAI Chat Completions upstream whose model first sends a call with a wrong argument
// type: the runtime refuses it before any confirmation, the upstream's next request carries the
// `[invalid arguments]` tool result, and the model's repaired call is confirmed and runs. The relay refuses a
// tool-call input holding a number no browser can hold (`1e400`) with 400 INVALID_REQUEST, and keeps a big
// integer's digits.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { pageTool, relayController, waitForState } from './support/agent.mjs';
import { startFakeUpstream } from './support/fake-upstream.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { startRelay } from './support/relay.mjs';

let upstream;
let relay;

before(async () => {
  upstream = await startFakeUpstream();
  relay = await startRelay({ upstream: upstream.url });
});

after(async () => {
  await relay?.stop();
  await upstream?.close();
});

describe('tool arguments checked against inputSchema through the relay', () => {
  test('an invalid call from the upstream model is refused without confirmation and repaired in the next step', async () => {
    const notes = [];
    const save = pageTool('notes.save', ({ text }) => {
      notes.push(text);
      return `Saved: ${text}`;
    });
    const controller = relayController(relay, { model: 'openai-e2e', tools: [save] });
    const first = upstream.requests.length;
    upstream.script(
      toolCallTurn([{ id: 'call_bad', name: 'notes_save', arguments: { text: 42 } }]),
      toolCallTurn([{ id: 'call_good', name: 'notes_save', arguments: { text: 'buy milk' } }]),
      textTurn('Saved.'),
    );
    const sending = controller.send('save a note: buy milk');
    const waiting = await waitForState(controller, (s) => s.pendingConfirmation != null, 10_000, 'pendingConfirmation');
    assert.equal(waiting.pendingConfirmation.callId, 'call_good', 'the first confirmation is for the repaired call');
    assert.equal(save.calls.length, 0);

    // The upstream's second request answered the bad call with the runtime's error result.
    const r2 = upstream.requests[first + 1].body;
    const toolMessages = r2.messages.filter((m) => m.role === 'tool');
    assert.equal(toolMessages.length, 1);
    assert.equal(toolMessages[0].tool_call_id, 'call_bad');
    // (Chat Completions has no error flag: the adapter marks error results with "Error: ".)
    assert.equal(toolMessages[0].content,
      'Error: [invalid arguments] The call to notes.save was not run: its arguments do not match the tool\'s inputSchema. Correct them and call the tool again.\n'
      + '- "/text": expected type string; got number 42');

    controller.approveTool();
    assert.equal(await sending, 'completed');
    assert.deepEqual(notes, ['buy milk']);
    const state = controller.getState();
    assert.deepEqual(state.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    // Saved with the refused call and its result: the next turn's model sees what happened.
    const stored = await relay.fetchJson('GET', `/conversations/${encodeURIComponent(state.conversation.id)}`);
    assert.deepEqual(stored.body.context.messages, JSON.parse(JSON.stringify(state.messages)));
    assert.deepEqual(upstream.unexpected, []);
    controller.destroy();
  });

  test('the relay refuses a tool-call input with a number beyond a double and keeps big integers', async () => {
    const context = (number) => `{"context":{"messages":[`
      + '{"id":"u1","role":"user","blocks":[{"type":"text","text":"hi"}]},'
      + `{"id":"a1","role":"assistant","blocks":[{"type":"tool-call","callId":"c1","name":"t","input":{"n":${number}}}]},`
      + '{"id":"t1","role":"tool","blocks":[{"type":"tool-result","callId":"c1","content":"ok","isError":false}]}'
      + '],"modelState":null}}';
    const post = (body) => fetch(`${relay.api}/conversations`, {
      method: 'POST',
      headers: { 'x-patchbridge-user': 'alice', origin: relay.url, 'content-type': 'application/json' },
      body,
    });
    const refused = await post(context('1e400'));
    assert.equal(refused.status, 400);
    const error = await refused.json();
    assert.equal(error.error.code, 'INVALID_REQUEST');
    assert.match(error.error.message, /outside the range of a double/);

    const kept = await post(context('123456789012345678901234567890'));
    assert.equal(kept.status, 201);
    const { id } = (await kept.json()).conversation;
    const raw = await (await fetch(`${relay.api}/conversations/${encodeURIComponent(id)}`, {
      headers: { 'x-patchbridge-user': 'alice', origin: relay.url },
    })).text();
    assert.ok(raw.includes('"input":{"n":123456789012345678901234567890}'), raw);
  });
});
