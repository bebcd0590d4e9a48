// End to end in Node, the controller's conversation history API against the real relay (SQLite): listing pages
// newest first, renaming (the snapshot is written back unchanged; the open conversation saves on without a
// conflict), deleting (the open one starts over empty; another user's conversation is not found), and
// continuing a conversation's messages in a new conversation without its ModelState.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { relayController } from './support/agent.mjs';
import { textTurn } from './support/openai-chat.mjs';
import { relayWithFakeUpstream } from './support/suite.mjs';

const suite = relayWithFakeUpstream();

describe('conversation history through the relay', () => {
  test('list pages, rename, delete and continue without ModelState', async () => {
    const controller = relayController(suite.relay, { user: 'hana', model: 'openai-e2e' });
    suite.upstream.script(
      textTurn('Answer one.', { reasoning: 'thinking about one' }),
      textTurn('Answer two.'),
      textTurn('Answer three.'),
    );
    const ids = [];
    for (const text of ['first topic', 'second topic', 'third topic']) {
      controller.newConversation();
      assert.equal(await controller.send(text), 'completed');
      ids.push(controller.getState().conversation.id);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }

    // Pages, newest first.
    const page1 = await controller.listConversations({ limit: 2 });
    assert.deepEqual(page1.items.map((c) => c.id), [ids[2], ids[1]]);
    assert.deepEqual(page1.items.map((c) => c.title), ['third topic', 'second topic']);
    assert.equal(typeof page1.items[0].createdAt, 'string');
    assert.equal(typeof page1.nextCursor, 'string');
    const page2 = await controller.listConversations({ limit: 2, cursor: page1.nextCursor });
    assert.deepEqual(page2.items.map((c) => c.id), [ids[0]]);
    assert.equal(page2.nextCursor, null);

    // Rename the open conversation: the stored context is unchanged, the next turn saves without a conflict.
    const open = ids[2];
    const before = await suite.relay.fetchJson('GET', `/conversations/${open}`, { user: 'hana' });
    const renamed = await controller.renameConversation(open, 'Renamed topic');
    assert.deepEqual(renamed, { id: open, title: 'Renamed topic', revision: 2 });
    assert.deepEqual(controller.getState().conversation, renamed);
    const afterRename = await suite.relay.fetchJson('GET', `/conversations/${open}`, { user: 'hana' });
    assert.equal(afterRename.body.conversation.title, 'Renamed topic');
    assert.deepEqual(afterRename.body.context, before.body.context, 'the context is written back unchanged');
    suite.upstream.script(textTurn('Answer four.'));
    assert.equal(await controller.send('and more'), 'completed');
    assert.equal(controller.getState().conversation.revision, 3);
    assert.equal((await suite.relay.fetchJson('GET', `/conversations/${open}`, { user: 'hana' })).body.conversation.title, 'Renamed topic');

    // Rename another conversation; another user cannot rename or delete it.
    assert.equal((await controller.renameConversation(ids[0], 'Oldest')).revision, 2);
    const intruder = relayController(suite.relay, { user: 'ivan', model: 'openai-e2e' });
    await assert.rejects(intruder.renameConversation(ids[0], 'mine now'), (e) => e.code === 'AGENT_RELAY_ERROR' && e.details.relayCode === 'NOT_FOUND' && e.details.status === 404);
    await assert.rejects(intruder.deleteConversation(ids[0]), (e) => e.code === 'AGENT_RELAY_ERROR' && e.details.relayCode === 'NOT_FOUND');
    assert.deepEqual((await intruder.listConversations()).items, []);
    intruder.destroy();

    // Delete the open conversation: the controller starts over empty; the relay no longer has it.
    await controller.deleteConversation(open);
    let state = controller.getState();
    assert.equal(state.conversation, null);
    assert.deepEqual(state.messages, []);
    assert.equal((await suite.relay.fetchJson('GET', `/conversations/${open}`, { user: 'hana' })).status, 404);
    assert.deepEqual((await controller.listConversations()).items.map((c) => c.id), [ids[0], ids[1]]);
    await assert.rejects(controller.deleteConversation(open), (e) => e.code === 'AGENT_RELAY_ERROR' && e.details.status === 404);

    // Continue the first conversation's messages without its ModelState.
    await controller.loadConversation(ids[0]);
    assert.notEqual(controller.getModelState(), null, 'the first answer stored reasoning state');
    const messages = controller.getState().messages;
    controller.newConversation({ keepMessages: true });
    assert.equal(controller.getModelState(), null);
    suite.upstream.script(textTurn('Continued.'));
    assert.equal(await controller.send('continue here'), 'completed');
    state = controller.getState();
    assert.notEqual(state.conversation.id, ids[0]);
    assert.equal(state.conversation.revision, 1);
    const stored = await suite.relay.fetchJson('GET', `/conversations/${state.conversation.id}`, { user: 'hana' });
    assert.deepEqual(stored.body.context.messages.slice(0, messages.length), JSON.parse(JSON.stringify(messages)));
    assert.equal(stored.body.context.messages.length, messages.length + 2);
    assert.equal(stored.body.context.modelState, null, 'the old state did not travel into the new conversation');
    const original = await suite.relay.fetchJson('GET', `/conversations/${ids[0]}`, { user: 'hana' });
    assert.equal(original.body.conversation.revision, 2, 'the original is untouched');
    controller.destroy();
  });

  test('the relay stores and returns pass-through JSON with key order and number text unchanged', async () => {
    const data = '{"z":1,"a":{"y":2,"b":3},"big":12345678901234567890123,"f":1.50}';
    const input = '{"zeta":"last","alpha":{"y":1,"b":2},"n":98765432109876543210}';
    const context = `{"messages":[{"id":"u1","role":"user","blocks":[{"type":"text","text":"hi"}]},`
      + `{"id":"a1","role":"assistant","blocks":[{"type":"tool-call","callId":"c1","name":"t","input":${input}}]},`
      + `{"id":"t1","role":"tool","blocks":[{"type":"tool-result","callId":"c1","content":"ok","isError":false}]}],`
      + `"modelState":{"format":"test/v1","data":${data}}}`;
    const post = async (method, path, body) => {
      const response = await fetch(`${suite.relay.api}${path}`, {
        method, body, headers: { 'x-patchbridge-user': 'kim', origin: suite.relay.url, 'content-type': 'application/json' },
      });
      return { status: response.status, text: await response.text() };
    };
    const created = await post('POST', '/conversations', `{"title":"raw","context":${context}}`);
    assert.equal(created.status, 201, created.text);
    const id = JSON.parse(created.text).conversation.id;
    const read = await post('GET', `/conversations/${id}`);
    assert.ok(read.text.includes(`"context":${context}`), `stored byte for byte: ${read.text}`);
    const duplicate = context.replace('"zeta":"last",', '"zeta":"first","zeta":"last",');
    const refused = await post('PUT', `/conversations/${id}`, `{"expectedRevision":1,"context":${duplicate}}`);
    assert.equal(refused.status, 400, 'a repeated key in tool-call arguments is refused');
    assert.equal(JSON.parse(refused.text).error.code, 'INVALID_REQUEST');
  });
});
