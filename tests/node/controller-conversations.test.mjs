// The controller's conversation API on the built package against the relay stand-in over real HTTP:
// listConversations (pages, cursor), renameConversation (GET then PUT with the context unchanged; the open
// conversation keeps a revision its next save can use), deleteConversation (resolves only on 204),
// newConversation({ keepMessages: true }) and the MODEL_STATE_MISMATCH details that lead to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, textMessage, until } from './helpers.mjs';
import { startRelay } from './relay-standin.mjs';

const { createAgentController, AgentError } = agent;
const headers = { authorization: 'Bearer test-token' };

async function withRelay(turns, body) {
  const relay = await startRelay({ turns });
  const controller = createAgentController({ endpoint: relay.endpoint, headers });
  try {
    await body(relay, controller);
  } finally {
    controller.destroy();
    await relay.close();
  }
}

test('listConversations pages through the relay newest first and passes limit and cursor', async () => {
  await withRelay([textMessage('a'), textMessage('b'), textMessage('c')], async (relay, controller) => {
    for (const text of ['one', 'two', 'three']) {
      controller.newConversation();
      assert.equal(await controller.send(text), 'completed');
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const first = await controller.listConversations({ limit: 2 });
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.items[0]));
    assert.deepEqual(first.items.map((c) => c.title), ['three', 'two']);
    assert.deepEqual(Object.keys(first.items[0]).sort(), ['createdAt', 'id', 'revision', 'title', 'updatedAt']);
    assert.equal(typeof first.nextCursor, 'string');
    const second = await controller.listConversations({ limit: 2, cursor: first.nextCursor });
    assert.deepEqual(second.items.map((c) => c.title), ['one']);
    assert.equal(second.nextCursor, null);
    const all = await controller.listConversations();
    assert.equal(all.items.length, 3);
    const gets = relay.state.requests.filter((r) => r.method === 'GET').map((r) => r.url);
    assert.deepEqual(gets, ['/api/conversations?limit=2', `/api/conversations?limit=2&cursor=${first.nextCursor}`, '/api/conversations']);

    await assert.rejects(controller.listConversations({ limit: 0 }), { code: 'AGENT_INVALID_INPUT' });
    await assert.rejects(controller.listConversations({ limit: 2.5 }), { code: 'AGENT_INVALID_INPUT' });
    await assert.rejects(controller.listConversations({ cursor: 5 }), { code: 'AGENT_INVALID_INPUT' });
    await assert.rejects(controller.listConversations({ limt: 5 }), { code: 'AGENT_INVALID_INPUT' });
    await assert.rejects(controller.listConversations('x'), { code: 'AGENT_INVALID_INPUT' });
    relay.state.failNext = [401, 'UNAUTHENTICATED'];
    await assert.rejects(controller.listConversations(), (error) => {
      assert.ok(error instanceof AgentError);
      assert.equal(error.code, 'AGENT_RELAY_ERROR');
      assert.deepEqual(error.details, { relayCode: 'UNAUTHENTICATED', status: 401 });
      return true;
    });
  });
});

test('renameConversation writes the snapshot back unchanged and the open conversation saves on without conflict', async () => {
  const modelState = { format: 'test/v1', data: { z: 1, a: { y: 2, b: 3 } } };
  await withRelay([textMessage('first', { modelState }), textMessage('second')], async (relay, controller) => {
    assert.equal(await controller.send('hello'), 'completed');
    const id = controller.getState().conversation.id;
    const stored = relay.state.conversations.get(id);
    const contextBefore = JSON.stringify(stored.context);
    const states = [];
    controller.subscribe((state) => states.push(state.status));
    const renaming = controller.renameConversation(id, 'My title');
    assert.equal(controller.getState().status, 'saving', 'busy while the rename is written');
    await assert.rejects(controller.send('not now'), { code: 'AGENT_BUSY' });
    const info = await renaming;
    assert.deepEqual(info, { id, title: 'My title', revision: 2 });
    assert.ok(Object.isFrozen(info));
    assert.deepEqual(controller.getState().conversation, info);
    assert.equal(controller.getState().status, 'idle');
    assert.equal(stored.title, 'My title');
    assert.equal(JSON.stringify(stored.context), contextBefore, 'the context is written back unchanged');
    const put = relay.state.requests.filter((r) => r.method === 'PUT').at(-1);
    assert.deepEqual(Object.keys(JSON.parse(put.body)), ['expectedRevision', 'title', 'context']);
    assert.equal(JSON.parse(put.body).expectedRevision, 1);

    assert.equal(await controller.send('more'), 'completed', 'the next save does not conflict');
    assert.deepEqual(controller.getState().conversation, { id, title: 'My title', revision: 3 });
    assert.equal(stored.title, 'My title', 'a turn save keeps the title');

    await assert.rejects(controller.renameConversation(id, 5), { code: 'AGENT_INVALID_INPUT' });
    await assert.rejects(controller.renameConversation('', 'x'), { code: 'AGENT_INVALID_INPUT' });
    await assert.rejects(controller.renameConversation('c_missing', 'x'), (error) => error.code === 'AGENT_RELAY_ERROR' && error.details.relayCode === 'NOT_FOUND');
    relay.state.failNext = [400, 'INVALID_REQUEST'];
    await assert.rejects(controller.renameConversation(id, 'x'), (error) => error.code === 'AGENT_RELAY_ERROR' && error.details.status === 400);
    assert.equal(controller.getState().status, 'idle', 'a failed rename ends the saving status');

    // Changed in another tab: the rename refuses rather than moving this page onto a revision it does not hold.
    stored.revision = 9;
    await assert.rejects(controller.renameConversation(id, 'late'), (error) => error.code === 'AGENT_REVISION_CONFLICT' && error.details.currentRevision === 9);
    assert.equal(stored.title, 'My title');
    assert.equal(controller.getState().conversation.revision, 3);
  });
});

test('renameConversation and deleteConversation of the open conversation are refused while its turn runs', async () => {
  await withRelay([textMessage('first'), textMessage('other'), { hang: [{ type: 'message-start' }] }], async (relay, controller) => {
    assert.equal(await controller.send('one'), 'completed');
    const id = controller.getState().conversation.id;
    const other = createAgentController({ endpoint: relay.endpoint, headers });
    assert.equal(await other.send('elsewhere'), 'completed');
    const otherId = other.getState().conversation.id;
    other.destroy();

    const running = controller.send('two');
    await until(() => relay.state.modelRequests.length === 3);
    assert.equal(controller.getState().status, 'running');
    await assert.rejects(controller.renameConversation(id, 'x'), { code: 'AGENT_BUSY' });
    await assert.rejects(controller.deleteConversation(id), { code: 'AGENT_BUSY' });
    const renamed = await controller.renameConversation(otherId, 'renamed elsewhere');
    assert.equal(renamed.title, 'renamed elsewhere', 'another conversation can be renamed meanwhile');
    assert.equal(controller.getState().status, 'running', 'the turn goes on');
    assert.equal(controller.getState().conversation.id, id);
    controller.abort();
    assert.equal(await running, 'cancelled');
    assert.ok(relay.state.conversations.has(id), 'nothing was deleted');
    assert.equal(relay.state.conversations.get(id).title, 'one');
  });
});

test('deleteConversation resolves only on 204; the open conversation then starts over empty', async () => {
  await withRelay([textMessage('first', { modelState: { format: 'test/v1', data: 1 } }), textMessage('fresh')], async (relay, controller) => {
    assert.equal(await controller.send('hello'), 'completed');
    const id = controller.getState().conversation.id;

    relay.state.deleteStatus = 200;
    await assert.rejects(controller.deleteConversation(id), (error) => {
      assert.equal(error.code, 'AGENT_RELAY_ERROR', 'a 200 is not the relay confirming the delete');
      assert.equal(error.details.status, 200);
      return true;
    });
    relay.state.deleteStatus = null;
    relay.state.failNext = [500, 'INTERNAL'];
    await assert.rejects(controller.deleteConversation(id), (error) => error.code === 'AGENT_RELAY_ERROR' && error.details.relayCode === 'INTERNAL');
    let state = controller.getState();
    assert.equal(state.conversation.id, id, 'a failed delete leaves the state as it was');
    assert.equal(state.messages.length, 2);
    assert.equal(state.status, 'idle');

    const deleting = controller.deleteConversation(id);
    assert.equal(controller.getState().status, 'saving');
    assert.equal(await deleting, undefined);
    state = controller.getState();
    assert.equal(state.status, 'idle');
    assert.equal(state.conversation, null);
    assert.deepEqual(state.messages, []);
    assert.equal(controller.getModelState(), null);
    assert.equal(relay.state.conversations.has(id), false);
    await assert.rejects(controller.deleteConversation(id), (error) => error.code === 'AGENT_RELAY_ERROR' && error.details.status === 404);

    assert.equal(await controller.send('start over'), 'completed');
    assert.equal(relay.state.modelRequests[1].messages.length, 1);
    assert.equal(relay.state.modelRequests[1].modelState, null);
    assert.notEqual(controller.getState().conversation.id, id, 'a new conversation was created');
    await assert.rejects(controller.deleteConversation(42), { code: 'AGENT_INVALID_INPUT' });
  });
});

test('MODEL_STATE_MISMATCH names the message; newConversation({ keepMessages: true }) continues without the state', async () => {
  const modelState = { format: 'test/v1', data: { sig: 'refused' } };
  await withRelay([textMessage('first', { modelState }), null, textMessage('continued')], async (relay, controller) => {
    assert.equal(await controller.send('hello'), 'completed');
    const old = controller.getState().conversation;
    const assistantId = controller.getState().messages[1].id;
    relay.state.failModel = [400, 'MODEL_STATE_MISMATCH', { messageId: assistantId }];
    await assert.rejects(controller.send('next'), (error) => {
      assert.equal(error.code, 'AGENT_RELAY_ERROR');
      assert.deepEqual(error.details, { relayCode: 'MODEL_STATE_MISMATCH', status: 400, messageId: assistantId });
      return true;
    });
    assert.equal(controller.getState().error.details.messageId, assistantId, 'the state error carries it too');
    relay.state.failModel = null;

    assert.throws(() => controller.newConversation({ keepMessages: 'yes' }), { code: 'AGENT_INVALID_INPUT' });
    assert.throws(() => controller.newConversation({ keep: true }), { code: 'AGENT_INVALID_INPUT' });
    const messages = controller.getState().messages;
    controller.newConversation({ keepMessages: true });
    let state = controller.getState();
    assert.equal(state.conversation, null);
    assert.equal(state.error, null);
    assert.deepEqual(state.messages, messages, 'the stable messages stay');
    assert.equal(controller.getModelState(), null);

    assert.equal(await controller.send('go on'), 'completed');
    const request = relay.state.modelRequests.at(-1);
    assert.equal(request.modelState, null, 'the refused state is not sent again');
    assert.deepEqual(request.messages.slice(0, messages.length), JSON.parse(JSON.stringify(messages)));
    state = controller.getState();
    assert.notEqual(state.conversation.id, old.id, 'a new stored conversation');
    assert.equal(state.conversation.revision, 1);
    assert.equal(relay.state.conversations.get(old.id).revision, old.revision, 'the old one is untouched');
  });
});
