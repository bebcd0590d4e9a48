// End to end in Node, one conversation over several turns: the built @patchbridge/agent controller → the real
// relay binary (SQLite) → a fake Anthropic Messages upstream (real SSE events, extended thinking with
// signatures, input_json_delta tool input).
//
// 1. a tool loop with a confirmation (approve) — revision 1; the thinking block and its signature go back to
//    the provider verbatim inside the same tool loop;
// 2. a max-tokens turn — saved as revision 2 with its ModelState;
// 3. a cancel in mid-stream — nothing saved, the upstream sees the disconnect;
// 4. a reload: a NEW controller loading the same conversation id restores exactly revision 2 (messages and
//    ModelState: the next upstream request carries every earlier thinking block with its signature), and its
//    next turn is saved as revision 3.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { messageTurn } from './support/anthropic.mjs';
import { pageTool, relayController, textOf, waitForState } from './support/agent.mjs';
import { UPSTREAM_KEY } from './support/relay.mjs';
import { disconnectSeen, relayWithFakeUpstream } from './support/suite.mjs';

const suite = relayWithFakeUpstream({ defaultModel: 'anthropic-e2e' });

const SIG1 = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds-signature-one';
const SIG2 = 'EqQBCgIYAhIMx8V1a2Fv0jkd93hdGgxQe2lW-signature-two';

const todos = [];
const addTodo = pageTool('todos.add', ({ text }) => {
  todos.push(text);
  return `Added "${text}" (${todos.length} item(s)).`;
});

/** Thinking blocks (with signatures) the upstream received, in order. */
const thinkingSent = (body) => body.messages
  .filter((m) => m.role === 'assistant')
  .flatMap((m) => m.content.filter((c) => c.type === 'thinking'));

describe('one Anthropic conversation: tool loop, max-tokens, cancel, reload', () => {
  let controller;
  let conversationId;
  let savedAtRevision2;

  test('tool loop with a confirmation; thinking and its signature go back within the loop', async () => {
    controller = relayController(suite.relay, { tools: [addTodo] });
    suite.upstream.script(
      messageTurn([
        { type: 'thinking', thinking: 'The user wants a todo added; use todos_add.', signature: SIG1 },
        { type: 'text', text: 'I will add it.' },
        { type: 'tool_use', id: 'toolu_01A', name: 'todos_add', input: { text: 'buy milk' } },
      ]),
      messageTurn([{ type: 'text', text: 'Done: "buy milk" is on your list.' }]),
    );
    const sending = controller.send('add a todo: buy milk');
    const waiting = await waitForState(controller, (s) => s.pendingConfirmation != null, 10_000, 'pendingConfirmation');
    assert.equal(waiting.pendingConfirmation.tool, 'todos.add');
    assert.deepEqual({ ...waiting.pendingConfirmation.arguments }, { text: 'buy milk' });
    assert.equal(addTodo.calls.length, 0);
    controller.approveTool();
    assert.equal(await sending, 'completed');
    assert.deepEqual(todos, ['buy milk']);

    const [r1, r2] = suite.upstream.requests;
    assert.equal(r1.path, '/v1/messages');
    assert.equal(r1.headers['x-api-key'], UPSTREAM_KEY);
    assert.equal(r1.headers['anthropic-version'], '2023-06-01');
    assert.equal(r1.headers.authorization, undefined);
    assert.equal(r1.body.model, 'claude-sonnet-4-5');
    assert.deepEqual(r1.body.thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.deepEqual(r1.body.tools.map((t) => t.name), ['todos_add']);
    // Second call: the assistant turn replayed with its signed thinking first, then the tool result.
    const assistant = r2.body.messages.find((m) => m.role === 'assistant');
    assert.deepEqual(assistant.content.map((c) => c.type), ['thinking', 'text', 'tool_use']);
    assert.equal(assistant.content[0].signature, SIG1);
    assert.equal(assistant.content[0].thinking, 'The user wants a todo added; use todos_add.');
    assert.deepEqual(assistant.content[2].input, { text: 'buy milk' });
    const results = r2.body.messages.at(-1);
    assert.equal(results.role, 'user');
    assert.deepEqual(results.content.map((c) => [c.type, c.tool_use_id, c.is_error ?? false]), [['tool_result', 'toolu_01A', false]]);
    assert.match(JSON.stringify(results.content[0].content), /Added \\"buy milk\\"/);

    const state = controller.getState();
    assert.deepEqual(state.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    assert.deepEqual(state.messages[1].blocks.map((b) => b.type), ['reasoning', 'text', 'tool-call']);
    assert.equal(state.conversation.revision, 1);
    conversationId = state.conversation.id;
    assert.ok(!JSON.stringify(state).includes(SIG1), 'the signature is ModelState, never display state');
  });

  test('max-tokens turn: kept, saved as revision 2 with its ModelState', async () => {
    suite.upstream.script(messageTurn([
      { type: 'thinking', thinking: 'A long list is wanted; start listing.', signature: SIG2 },
      { type: 'text', text: 'Here are fifty ideas: 1. walk 2. read 3.' },
    ], { stopReason: 'max_tokens' }));
    assert.equal(await controller.send('give me fifty ideas'), 'max-tokens');
    const state = controller.getState();
    assert.equal(state.lastOutcome, 'max-tokens');
    assert.equal(state.conversation.revision, 2);
    const last = state.messages.at(-1);
    assert.equal(textOf(last), 'Here are fifty ideas: 1. walk 2. read 3.');

    const stored = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(conversationId)}`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.conversation.revision, 2);
    assert.deepEqual(stored.body.context.messages, JSON.parse(JSON.stringify(state.messages)));
    const modelState = stored.body.context.modelState;
    assert.equal(modelState.format, 'anthropic-messages/v1');
    const entries = modelState.data.messages;
    // Both signed assistant messages have their thinking stored verbatim, keyed by message id.
    const signatures = Object.values(entries).flatMap((e) => e.content).map((p) => p.raw?.signature).filter(Boolean);
    assert.deepEqual(signatures.sort(), [SIG1, SIG2].sort());
    assert.ok(entries[last.id], 'the max-tokens message has its own ModelState entry');
    assert.deepEqual(JSON.parse(JSON.stringify(controller.getModelState())), modelState);
    savedAtRevision2 = stored.body;
  });

  test('cancel in mid-stream: nothing saved, the upstream sees the disconnect', async () => {
    suite.upstream.script(messageTurn([
      { type: 'text', text: 'Streaming a very slow answer that will be stopped before it ends, piece by piece.', pieces: 30 },
    ], { delayMs: 150, holdOpen: true }));
    const sending = controller.send('tell me slowly');
    await waitForState(controller, (s) => (s.draft?.blocks?.[0]?.text ?? '').length > 0, 10_000, 'draft text');
    const record = suite.upstream.requests.at(-1);
    controller.abort();
    assert.equal(await sending, 'cancelled');
    assert.equal(controller.getState().lastOutcome, 'cancelled');
    await disconnectSeen(record);
    assert.equal(record.disconnected, true);
    const stored = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(conversationId)}`);
    assert.equal(stored.body.conversation.revision, 2);
    assert.deepEqual(stored.body, savedAtRevision2, 'the stored conversation is unchanged');
    controller.destroy();
  });

  test('reload: a new controller restores exactly the last complete turn, ModelState included', async () => {
    const reloaded = relayController(suite.relay, { tools: [addTodo] });
    await reloaded.loadConversation(conversationId);
    const state = reloaded.getState();
    assert.equal(state.status, 'idle');
    assert.equal(state.conversation.id, conversationId);
    assert.equal(state.conversation.revision, 2);
    assert.deepEqual(JSON.parse(JSON.stringify(state.messages)), savedAtRevision2.context.messages);
    assert.ok(!state.messages.some((m) => /slow/.test(textOf(m))), 'the cancelled turn is not part of the history');
    assert.deepEqual(JSON.parse(JSON.stringify(reloaded.getModelState())), savedAtRevision2.context.modelState,
      'the ModelState of revision 2 is restored with its messages');

    // Another user cannot load it.
    const stranger = relayController(suite.relay, { user: 'mallory' });
    await assert.rejects(stranger.loadConversation(conversationId), (e) => e.code === 'AGENT_RELAY_ERROR' && e.details?.status === 404);
    stranger.destroy();

    // The restored ModelState goes upstream with the next turn: every signed thinking block, verbatim.
    const before = suite.upstream.requests.length;
    suite.upstream.script(messageTurn([{ type: 'text', text: 'Welcome back. 4. cook 5. paint' }]));
    assert.equal(await reloaded.send('continue the list'), 'completed');
    const body = suite.upstream.requests[before].body;
    assert.deepEqual(thinkingSent(body).map((t) => t.signature), [SIG1, SIG2]);
    assert.equal(body.messages.filter((m) => m.role === 'user').at(-1).content.at(-1).text, 'continue the list');
    assert.ok(!JSON.stringify(body.messages).includes('tell me slowly'), 'the cancelled user message was never stored');

    const after = reloaded.getState();
    assert.equal(after.conversation.revision, 3);
    const stored = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(conversationId)}`);
    assert.equal(stored.body.conversation.revision, 3);
    assert.deepEqual(stored.body.context.messages.slice(0, savedAtRevision2.context.messages.length), savedAtRevision2.context.messages);
    // The `conversationId` option loads the same way at construction.
    const third = relayController(suite.relay, { conversationId });
    const loaded = await waitForState(third, (s) => s.conversation?.revision === 3 && s.status === 'idle', 10_000, 'revision 3 loaded');
    assert.deepEqual(JSON.parse(JSON.stringify(loaded.messages)), stored.body.context.messages);
    assert.deepEqual(JSON.parse(JSON.stringify(third.getModelState())), stored.body.context.modelState);
    third.destroy();
    assert.deepEqual(suite.upstream.unexpected, []);
    reloaded.destroy();
  });
});
