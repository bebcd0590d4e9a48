// MCP servers as tools of the low-level DefaultAgentRuntime (`createMcpToolSource`), against a real SDK server
// (tests/e2e/support/mcp-server.mjs): the source's tools are what the runtime's validator accepts (a refused
// schema is skipped and reported), every MCP tool raises a confirmation answered through `execution.respond`,
// and a server's question during the call is the execution's `elicitation` interrupt, answered the same way.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { startMcpServer, text } from '../e2e/support/mcp-server.mjs';
import { agent, fullLimits, scriptedModel, textMessage, toolMessage, until, userInput } from './helpers.mjs';

let server;
before(async () => {
  server = await startMcpServer({
    tools: [
      {
        name: 'ask',
        run: async (_args, extra, mcp) => {
          const answer = await mcp.elicitInput({ message: 'Colour?', requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } } }, { relatedRequestId: extra.requestId });
          return text(`${answer.action}:${answer.content?.colour ?? ''}`);
        },
      },
      { name: 'broken', inputSchema: { type: 'object', properties: { x: { $ref: 'https://example.com/x.json' } } }, run: () => text('never') },
    ],
  });
});
after(async () => { await server?.close(); });

describe('createMcpToolSource with DefaultAgentRuntime', () => {
  test('tools are confirmed and their questions answered through execution.respond', async () => {
    const source = await agent.createMcpToolSource([{ name: 'paint', url: server.url }]);
    const tools = await source.tools();
    assert.deepEqual(tools.map((t) => [t.name, t.requireConfirmation]), [['mcp__paint__ask', true]]);
    assert.deepEqual(source.servers()[0].skipped.map((s) => s.tool), ['broken'], 'the refused schema is reported');

    const model = scriptedModel([toolMessage([{ callId: 'c1', name: 'mcp__paint__ask', input: {} }]), textMessage('ok')]);
    const runtime = new agent.DefaultAgentRuntime(model, { limits: fullLimits() });
    const events = [];
    const execution = runtime.start({ ...userInput('paint'), tools }, (event) => events.push(event.type));
    await until(() => execution.pendingInterrupt?.kind === 'tool-confirmation', 5000);
    execution.respond({ interruptId: execution.pendingInterrupt.interruptId, value: true });
    await until(() => execution.pendingInterrupt?.kind === 'elicitation', 5000);
    const question = execution.pendingInterrupt;
    assert.deepEqual([question.tool, question.message, question.source, question.mode], ['mcp__paint__ask', 'Colour?', 'paint', 'form']);
    assert.throws(() => execution.respond({ interruptId: question.interruptId, value: true }), (e) => e.code === 'AGENT_INVALID_INPUT');
    execution.respond({ interruptId: question.interruptId, value: { action: 'accept', content: { colour: 'teal' } } });
    const result = await execution.result;
    assert.equal(result.outcome, 'completed');
    const toolResult = result.messages.find((m) => m.role === 'tool').blocks[0];
    assert.equal(toolResult.content, 'accept:teal');
    assert.ok(events.includes('elicitation') && events.includes('elicitation-resolved'));
    source.close();
  });

  test('a cancel while the server asks ends the wait; the question is gone', async () => {
    const source = await agent.createMcpToolSource([{ name: 'paint', url: server.url, readOnly: ['ask'] }]);
    const model = scriptedModel([toolMessage([{ callId: 'c2', name: 'mcp__paint__ask', input: {} }])]);
    const runtime = new agent.DefaultAgentRuntime(model, { limits: fullLimits() });
    const execution = runtime.start({ ...userInput('paint'), tools: await source.tools() });
    await until(() => execution.pendingInterrupt?.kind === 'elicitation', 5000);
    const id = execution.pendingInterrupt.interruptId;
    assert.equal(execution.cancel(), true);
    assert.equal((await execution.result).outcome, 'cancelled');
    assert.equal(execution.pendingInterrupt, null);
    assert.throws(() => execution.respond({ interruptId: id, value: { action: 'cancel' } }), (e) => e.code === 'AGENT_NO_PENDING_INTERRUPT');
    await until(() => server.state.cancelled.includes('ask'), 5000);
    source.close();
  });
});
