// End to end in Node: the built @patchbridge/agent controller → the real relay binary (SQLite) → a fake OpenAI
// Responses upstream (real streaming events; `store: false`, so encrypted reasoning items live in the
// conversation's ModelState and must go back verbatim).
//
// A tool loop with a confirmation (the reasoning item goes back before its function call, the tool's output as
// function_call_output), a max-tokens turn (`response.incomplete`, max_output_tokens) saved with its ModelState,
// then a reload in a new controller whose next request carries every encrypted reasoning item unchanged.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { pageTool, relayController, textOf, waitForState } from './support/agent.mjs';
import { responseTurn } from './support/openai-responses.mjs';
import { UPSTREAM_KEY } from './support/relay.mjs';
import { relayWithFakeUpstream } from './support/suite.mjs';

const suite = relayWithFakeUpstream({ defaultModel: 'responses-e2e' });

const ENC1 = 'gAAAAABp-e2e-encrypted-reasoning-one==';
const ENC2 = 'gAAAAABp-e2e-encrypted-reasoning-two==';

const reasoningItems = (body) => body.input.filter((item) => item.type === 'reasoning');

describe('OpenAI Responses through the relay: encrypted reasoning survives tool loops and reloads', () => {
  const booking = pageTool('calendar.book', ({ text }) => `Booked: ${text}`);
  let conversationId;
  let firstReasoning;
  let secondReasoning;
  let stored2;

  test('tool loop with a confirmation: reasoning item and function call go back in order', async () => {
    const controller = relayController(suite.relay, { tools: [booking] });
    const turn1 = responseTurn([
      { type: 'reasoning', summary: ['**Booking**', 'The user wants a slot on Friday.'], encrypted: ENC1 },
      { type: 'function_call', callId: 'call_book_1', name: 'calendar_book', arguments: { text: 'Friday 10:00' } },
    ]);
    [firstReasoning] = turn1.outputItems;
    suite.upstream.script(turn1, responseTurn([{ type: 'message', text: 'Booked Friday at 10:00.' }]));
    const sending = controller.send('book me friday at ten');
    const waiting = await waitForState(controller, (s) => s.pendingConfirmation != null, 10_000, 'pendingConfirmation');
    assert.equal(waiting.pendingConfirmation.tool, 'calendar.book');
    assert.deepEqual({ ...waiting.pendingConfirmation.arguments }, { text: 'Friday 10:00' });
    controller.approveTool();
    assert.equal(await sending, 'completed');
    assert.equal(booking.calls.length, 1);

    const [r1, r2] = suite.upstream.requests;
    assert.equal(r1.path, '/v1/responses');
    assert.equal(r1.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.equal(r1.body.store, false);
    assert.deepEqual(r1.body.include, ['reasoning.encrypted_content']);
    assert.deepEqual(r1.body.reasoning, { effort: 'low', summary: 'auto' });
    assert.deepEqual(r1.body.tools.map((t) => t.name), ['calendar_book']);
    // The second call replays the assistant's output: the reasoning item verbatim, then the call and its output.
    const types = r2.body.input.map((i) => i.type);
    assert.deepEqual(types, ['message', 'reasoning', 'function_call', 'function_call_output']);
    assert.deepEqual(r2.body.input[1], firstReasoning);
    assert.equal(r2.body.input[2].call_id, 'call_book_1');
    assert.deepEqual(JSON.parse(r2.body.input[2].arguments), { text: 'Friday 10:00' });
    assert.deepEqual(r2.body.input[3], { type: 'function_call_output', call_id: 'call_book_1', output: 'Booked: Friday 10:00' });

    const state = controller.getState();
    assert.deepEqual(state.messages[1].blocks.map((b) => b.type), ['reasoning', 'reasoning', 'tool-call']);
    assert.deepEqual(state.messages[1].blocks.slice(0, 2).map((b) => b.text), ['**Booking**', 'The user wants a slot on Friday.']);
    assert.ok(!JSON.stringify(state).includes(ENC1), 'encrypted reasoning is ModelState, never display state');
    assert.equal(state.conversation.revision, 1);
    conversationId = state.conversation.id;
    controller.destroy();
  });

  test('max-tokens (response.incomplete) is saved with its ModelState', async () => {
    const controller = relayController(suite.relay, { tools: [booking] });
    await controller.loadConversation(conversationId);
    const turn = responseTurn([
      { type: 'reasoning', summary: ['Listing every slot.'], encrypted: ENC2 },
      { type: 'message', text: 'Free slots: Mon 9:00, Mon 9:30, Mon 1' },
    ], { incomplete: true });
    [secondReasoning] = turn.outputItems;
    suite.upstream.script(turn);
    assert.equal(await controller.send('list all free slots'), 'max-tokens');
    const state = controller.getState();
    assert.equal(state.lastOutcome, 'max-tokens');
    assert.equal(state.conversation.revision, 2);
    assert.equal(textOf(state.messages.at(-1)), 'Free slots: Mon 9:00, Mon 9:30, Mon 1');

    const stored = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(conversationId)}`);
    assert.equal(stored.body.conversation.revision, 2);
    assert.equal(stored.body.context.modelState.format, 'openai-responses/v1');
    const raws = Object.values(stored.body.context.modelState.data.messages).flatMap((e) => e.items).map((p) => p.raw).filter(Boolean);
    assert.deepEqual(raws, [firstReasoning, secondReasoning], 'both reasoning items stored verbatim');
    assert.deepEqual(JSON.parse(JSON.stringify(controller.getModelState())), stored.body.context.modelState);
    stored2 = stored.body;
    controller.destroy();
  });

  test('reload: the next request carries every encrypted reasoning item unchanged', async () => {
    const controller = relayController(suite.relay, { tools: [booking] });
    await controller.loadConversation(conversationId);
    assert.deepEqual(JSON.parse(JSON.stringify(controller.getState().messages)), stored2.context.messages);
    const before = suite.upstream.requests.length;
    suite.upstream.script(responseTurn([{ type: 'message', text: 'Monday 10:00 is free too.' }]));
    assert.equal(await controller.send('anything else?'), 'completed');
    const body = suite.upstream.requests[before].body;
    assert.deepEqual(reasoningItems(body), [firstReasoning, secondReasoning]);
    assert.equal(controller.getState().conversation.revision, 3);
    assert.deepEqual(suite.upstream.unexpected, []);
    controller.destroy();
  });
});
