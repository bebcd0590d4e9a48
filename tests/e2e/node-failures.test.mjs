// End to end in Node, the failure paths a user of the controller meets through the real relay: a provider
// rejecting the call (typed error, provider text not echoed, no retry, nothing saved), a provider that fails
// once with 503 (one retry, the turn completes), a provider error in mid-stream (typed error, the partial
// answer never becomes a stable message, nothing saved), and two tabs writing one conversation (the second
// save is a revision conflict; nothing is overwritten).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { messageTurn } from './support/anthropic.mjs';
import { relayController, textOf } from './support/agent.mjs';
import { textTurn } from './support/openai-chat.mjs';
import { relayWithFakeUpstream } from './support/suite.mjs';

const suite = relayWithFakeUpstream();

const listFor = async (user) => (await suite.relay.fetchJson('GET', '/conversations', { user })).body.items;

describe('failures through the relay', () => {
  test('provider rejects the call: typed error, provider text not echoed, no retry, nothing saved', async () => {
    const controller = relayController(suite.relay, { user: 'dana', model: 'openai-e2e' });
    const first = suite.upstream.requests.length;
    suite.upstream.script({
      provider: 'openai-chat', frames: [], status: 401,
      errorBody: { error: { message: 'Incorrect API key provided: sk-leaked-in-error-body', type: 'invalid_request_error' } },
    });
    await assert.rejects(controller.send('hello'), (e) => {
      assert.equal(e.code, 'AGENT_RELAY_ERROR');
      assert.equal(e.details?.relayCode, 'UPSTREAM_REJECTED');
      assert.doesNotMatch(e.message, /sk-leaked|Incorrect API key/);
      return true;
    });
    const state = controller.getState();
    assert.equal(state.error?.code, 'AGENT_RELAY_ERROR');
    assert.equal(state.status, 'idle');
    assert.equal(state.conversation, null);
    assert.equal(suite.upstream.requests.length, first + 1, 'an auth failure is never retried');
    assert.deepEqual(await listFor('dana'), [], 'nothing was saved');
    controller.destroy();
  });

  test('provider answers 503 once: the relay retries once and the turn completes', async () => {
    const controller = relayController(suite.relay, { user: 'erin', model: 'openai-e2e' });
    const first = suite.upstream.requests.length;
    suite.upstream.script(
      { provider: 'openai-chat', frames: [], status: 503, errorBody: { error: { message: 'overloaded' } } },
      textTurn('Second time lucky.'),
    );
    assert.equal(await controller.send('hello'), 'completed');
    assert.equal(suite.upstream.requests.length, first + 2);
    assert.deepEqual(suite.upstream.requests[first + 1].body, suite.upstream.requests[first].body, 'the retry sends the same request');
    assert.equal(textOf(controller.getState().messages.at(-1)), 'Second time lucky.');
    assert.equal(controller.getState().conversation.revision, 1);
    controller.destroy();
  });

  test('provider error in mid-stream: typed error, partial answer dropped, nothing saved', async () => {
    const controller = relayController(suite.relay, { user: 'frank', model: 'anthropic-e2e' });
    const turn = messageTurn([{ type: 'text', text: 'This answer will break off halfway through.', pieces: 4 }]);
    // Keep message_start, ping, the block start and two text deltas; then the provider's error event.
    const cut = turn.frames.slice(0, 5);
    cut.push(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded (internal detail 42)' } })}\n\n`);
    suite.upstream.script({ ...turn, frames: cut });
    await assert.rejects(controller.send('hello'), (e) => {
      assert.equal(e.code, 'AGENT_RELAY_ERROR');
      assert.equal(e.details?.relayCode, 'UPSTREAM_UNAVAILABLE');
      assert.doesNotMatch(e.message, /internal detail 42/);
      return true;
    });
    const state = controller.getState();
    assert.equal(state.draft, null);
    assert.ok(!state.messages.some((m) => m.role === 'assistant'), 'no half-streamed block becomes a stable message');
    assert.deepEqual(await listFor('frank'), [], 'nothing was saved');
    controller.destroy();
  });

  test('two tabs on one conversation: the stale save is a revision conflict and overwrites nothing', async () => {
    const tabA = relayController(suite.relay, { user: 'gina', model: 'openai-e2e' });
    suite.upstream.script(textTurn('First answer.'));
    assert.equal(await tabA.send('first'), 'completed');
    const id = tabA.getState().conversation.id;

    const tabB = relayController(suite.relay, { user: 'gina', model: 'openai-e2e' });
    await tabB.loadConversation(id);
    assert.equal(tabB.getState().conversation.revision, 1);

    suite.upstream.script(textTurn('Answer in tab A.'));
    assert.equal(await tabA.send('from tab A'), 'completed');
    assert.equal(tabA.getState().conversation.revision, 2);

    suite.upstream.script(textTurn('Answer in tab B.'));
    await assert.rejects(tabB.send('from tab B'), (e) => {
      assert.equal(e.code, 'AGENT_REVISION_CONFLICT');
      assert.equal(e.details?.currentRevision, 2);
      return true;
    });
    assert.equal(tabB.getState().error?.code, 'AGENT_REVISION_CONFLICT');

    const stored = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(id)}`, { user: 'gina' });
    assert.equal(stored.body.conversation.revision, 2);
    assert.deepEqual(stored.body.context.messages, JSON.parse(JSON.stringify(tabA.getState().messages)), "tab A's revision is intact");
    assert.ok(!JSON.stringify(stored.body).includes('from tab B'));
    assert.deepEqual(suite.upstream.unexpected, []);
    tabA.destroy();
    tabB.destroy();
  });
});
