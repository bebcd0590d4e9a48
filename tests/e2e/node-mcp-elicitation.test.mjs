// End to end in Node: an MCP server asks the person during a tool call (elicitation, form mode), through the
// built controller and the real relay: the question is `state.pendingElicitation` (naming the tool and its
// server), answered with `answerElicitation` (accept with content, decline, cancel), and a stop while it waits
// consumes it: the turn ends cancelled, the server sees the cancellation, nothing waits any more.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { agent, waitForState } from './support/agent.mjs';
import { startMcpServer, text } from './support/mcp-server.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { relayWithFakeUpstream } from './support/suite.mjs';

const suite = relayWithFakeUpstream();
const requestedSchema = {
  type: 'object',
  properties: { name: { type: 'string', title: 'Your name' }, age: { type: 'integer', minimum: 0 } },
  required: ['name'],
};
let server;
before(async () => {
  server = await startMcpServer({
    tools: [{
      name: 'greet',
      run: async (_args, extra, mcp) => {
        const answer = await mcp.elicitInput({ message: 'Who are you?', requestedSchema }, { relatedRequestId: extra.requestId });
        return text(answer.action === 'accept' ? `hello ${answer.content.name} (${answer.content.age ?? '?'})` : `no name: ${answer.action}`);
      },
    }],
  });
});
after(async () => { await server?.close(); });

function controller() {
  return agent.createAgentController({
    endpoint: suite.relay.api,
    headers: () => ({ 'x-patchbridge-user': 'eli', origin: suite.relay.url }),
    model: 'openai-e2e',
    mcpServers: [{ name: 'people', url: server.url, readOnly: ['greet'] }],
  });
}

/** Runs one turn whose tool call asks; `answer(c, elicitation)` answers it; resolves with the tool result. */
async function askedTurn(answer, id) {
  const c = controller();
  suite.upstream.script(toolCallTurn([{ id, name: 'mcp__people__greet', arguments: {} }]), textTurn('Done.'));
  const sending = c.send('greet me');
  const { pendingElicitation } = await waitForState(c, (s) => s.pendingElicitation != null, 10_000, 'pendingElicitation');
  answer(c, pendingElicitation);
  assert.equal(await sending, 'completed');
  assert.equal(c.getState().pendingElicitation, null);
  const result = c.getState().messages.find((m) => m.role === 'tool').blocks[0];
  c.destroy();
  return { result, pendingElicitation };
}

describe('MCP elicitation', () => {
  test('the question reaches the state with its schema and server; accepting sends the content to the server', async () => {
    const { result, pendingElicitation: e } = await askedTurn((c) => c.answerElicitation({ action: 'accept', content: { name: 'Ada', age: 36 } }), 'call_greet_1');
    assert.deepEqual({ kind: e.kind, tool: e.tool, callId: e.callId, mode: e.mode, message: e.message, source: e.source },
      { kind: 'elicitation', tool: 'mcp__people__greet', callId: 'call_greet_1', mode: 'form', message: 'Who are you?', source: 'people' });
    assert.deepEqual(JSON.parse(JSON.stringify(e.requestedSchema)), requestedSchema);
    assert.match(e.interruptId, /:elicit:/);
    assert.equal(result.content, 'hello Ada (36)');
  });

  test('decline and cancel reach the server as such', async () => {
    assert.equal((await askedTurn((c) => c.answerElicitation({ action: 'decline' }), 'call_greet_2')).result.content, 'no name: decline');
    assert.equal((await askedTurn((c) => c.answerElicitation('cancel'), 'call_greet_3')).result.content, 'no name: cancel');
  });

  test('an answer of the wrong shape is refused and the question stays', async () => {
    const { result } = await askedTurn((c, e) => {
      assert.throws(() => c.answerElicitation({ action: 'accept', content: { name: { nested: true } } }), (err) => err.code === 'AGENT_INVALID_INPUT');
      assert.throws(() => c.approveTool(), (err) => err.code === 'AGENT_NO_PENDING_INTERRUPT', 'a question is no confirmation');
      assert.equal(c.getState().pendingElicitation.interruptId, e.interruptId);
      c.answerElicitation({ action: 'accept', content: { name: 'Bo' } });
    }, 'call_greet_4');
    assert.equal(result.content, 'hello Bo (?)');
  });

  test('a stop while the question waits consumes it: the turn is cancelled and the server sees the cancellation', async () => {
    const c = controller();
    suite.upstream.script(toolCallTurn([{ id: 'call_greet_5', name: 'mcp__people__greet', arguments: {} }]));
    const sending = c.send('greet me');
    await waitForState(c, (s) => s.pendingElicitation != null, 10_000, 'pendingElicitation');
    c.abort();
    assert.equal(await sending, 'cancelled');
    assert.equal(c.getState().pendingElicitation, null);
    assert.throws(() => c.answerElicitation({ action: 'decline' }), (err) => err.code === 'AGENT_NO_PENDING_INTERRUPT');
    const end = Date.now() + 10_000;
    while (!server.state.cancelled.includes('greet') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.ok(server.state.cancelled.includes('greet'), 'notifications/cancelled reached the server');
    c.destroy();
  });
});
