// End to end in Node: the runtime members an MCP Apps host needs (ADR-019), through the built controller with
// `mcpServers` against an MCP Apps server built here on the official SDK (tests/e2e/support/apps-server.mjs:
// McpServer + StreamableHTTPServerTransport, tools with `_meta.ui`, `ui://` resources) and a scripted model.
//
// Pinned: a tool's `_meta.ui` as `describeMcpTool(name).ui` (null without it, the legacy key read); an app-only
// tool out of the model's snapshot but callable by its app; `readMcpResource` (ui:// only, the resource's
// `_meta.ui`, a blob decoded, over 2 MiB refused with AGENT_MCP_RESOURCE_TOO_LARGE, a refused read with
// AGENT_MCP_RESOURCE_FAILED, cached per server and URI until the connection is replaced); `getMcpCallResult`
// (the raw CallToolResult of this page session, the last 50, null for a new controller); `callToolFromApp`
// through the runtime's rules (confirmation unless readOnly, approve / reject, invalid arguments refused before
// any confirmation, the deadline, cancellation by its signal and by abort, refused during a turn, turns refused
// during it, nothing of it in the conversation); the same through `createMcpToolSource` for DefaultAgentRuntime.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps';
import { z } from 'zod';

import { agent, waitForState } from './support/agent.mjs';
import { startAppsServer } from './support/apps-server.mjs';
import { say, scriptedModel, toolCalls } from './support/scripted-model.mjs';

const VIEW = 'ui://chart/view.html';
const VIEW_HTML = '<!doctype html><html><body><div id="chart"></div><script>/* the app */</script></body></html>';
const VIEW_META = { csp: { connectDomains: ['https://api.example.com'], resourceDomains: ['https://cdn.example.com'] }, permissions: { clipboardWrite: {} }, prefersBorder: true, domain: 'chart.example', unknownKey: 1 };

/** @type {Awaited<ReturnType<typeof startAppsServer>>} */
let apps;
before(async () => {
  apps = await startAppsServer({
    tools: [
      {
        name: 'show-chart', input: { series: z.string() }, meta: { ui: { resourceUri: VIEW } },
        run: ({ series }) => ({ content: [{ type: 'text', text: `chart of ${series}` }], structuredContent: { series, points: [1, 2, 3] }, _meta: { drawnAt: 'now' } }),
      },
      {
        name: 'chart-refresh', input: { n: z.number() }, meta: { ui: { resourceUri: VIEW, visibility: ['app'] } },
        run: ({ n }) => ({ content: [{ type: 'text', text: `refreshed ${n}` }], structuredContent: { n, points: [n] } }),
      },
      { name: 'ping', meta: { ui: { visibility: ['app'] } }, run: () => ({ content: [{ type: 'text', text: 'pong' }] }) },
      { name: 'model-only', meta: { ui: { resourceUri: VIEW, visibility: ['model'] } }, run: () => ({ content: [{ type: 'text', text: 'model only' }] }) },
      { name: 'legacy', meta: { 'ui/resourceUri': 'ui://legacy/view.html' }, run: () => ({ content: [{ type: 'text', text: 'legacy' }] }) },
      { name: 'plain', run: () => ({ content: [{ type: 'text', text: 'plain' }] }) },
    ],
    resources: [
      { name: 'chart', uri: VIEW, mimeType: RESOURCE_MIME_TYPE, read: () => [{ uri: VIEW, mimeType: RESOURCE_MIME_TYPE, text: VIEW_HTML, _meta: { ui: VIEW_META } }] },
      { name: 'blob', uri: 'ui://blob/view.html', mimeType: RESOURCE_MIME_TYPE, read: () => [{ uri: 'ui://blob/view.html', mimeType: RESOURCE_MIME_TYPE, blob: Buffer.from('<p>blob view ✓</p>').toString('base64') }] },
      { name: 'big', uri: 'ui://big/view.html', mimeType: RESOURCE_MIME_TYPE, read: () => [{ uri: 'ui://big/view.html', mimeType: RESOURCE_MIME_TYPE, text: 'x'.repeat(2 * 1024 * 1024 + 1) }] },
      { name: 'wide', uri: 'ui://wide/view.html', mimeType: RESOURCE_MIME_TYPE, read: () => [{ uri: 'ui://wide/view.html', mimeType: RESOURCE_MIME_TYPE, text: 'é'.repeat(1024 * 1024 + 1) }] },
    ],
  });
});
after(async () => { await apps?.close(); });

function controllerWith(scripted, { readOnly = [], limits } = {}) {
  return agent.createAgentController({
    model: scripted.model,
    mcpServers: [{ name: 'apps', url: apps.url, readOnly }],
    ...(limits ? { runtime: { limits } } : {}),
  });
}
const ready = (controller) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`not ready: ${JSON.stringify(controller.getMcpServers())}`)), 10_000);
  const check = (servers) => { if (servers.every((s) => s.status === 'ready')) { clearTimeout(timer); off(); resolve(servers); return true; } return false; };
  const off = controller.subscribeMcp(check);
  check(controller.getMcpServers());
});
const waitForAppCall = (controller, predicate, ms = 10_000) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => { off(); reject(new Error(`app call state not reached: ${JSON.stringify(controller.getMcpAppCall())}`)); }, ms);
  const check = (call) => { if (predicate(call)) { clearTimeout(timer); off(); resolve(call); return true; } return false; };
  const off = controller.subscribeMcpAppCall(check);
  check(controller.getMcpAppCall());
});
const code = (expected, reason) => (error) => {
  assert.ok(error instanceof agent.AgentError, `an AgentError: ${error}`);
  assert.equal(error.code, expected, error.message);
  if (reason !== undefined) assert.equal(error.details?.reason, reason);
  return true;
};
const plain = (value) => JSON.parse(JSON.stringify(value));

describe('MCP Apps: tool UI metadata and app-only tools', () => {
  test('describeMcpTool(name).ui keeps _meta.ui; an app-only tool is out of the model\'s snapshot', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted);
    const [status] = await ready(controller);
    assert.deepEqual(plain(controller.describeMcpTool('mcp__apps__show-chart').ui), { resourceUri: VIEW, visibility: ['model', 'app'] });
    assert.deepEqual(plain(controller.describeMcpTool('mcp__apps__chart-refresh').ui), { resourceUri: VIEW, visibility: ['app'] });
    assert.deepEqual(plain(controller.describeMcpTool('mcp__apps__legacy').ui), { resourceUri: 'ui://legacy/view.html', visibility: ['model', 'app'] }, 'the legacy "ui/resourceUri" key');
    assert.equal(controller.describeMcpTool('mcp__apps__plain').ui, null);
    assert.ok(Object.isFrozen(controller.describeMcpTool('mcp__apps__show-chart').ui.visibility));
    assert.deepEqual([...status.tools].sort(), ['legacy', 'model-only', 'plain', 'show-chart']);
    assert.deepEqual([...status.appTools].sort(), ['chart-refresh', 'ping']);
    const inspected = controller.getToolInspectionSource().snapshot.tools.map((t) => t.name).sort();
    assert.deepEqual(inspected, ['mcp__apps__legacy', 'mcp__apps__model-only', 'mcp__apps__plain', 'mcp__apps__show-chart']);
    scripted.script(say('Hi.'));
    assert.equal(await controller.send('hello'), 'completed');
    assert.deepEqual(scripted.toolNames(0), inspected, 'the model is offered no app-only tool');
    controller.destroy();
  });
});

describe('MCP Apps: readMcpResource', () => {
  test('reads a ui:// view with its MIME type and the resource\'s _meta.ui; cached per server and URI; a new connection (setMcpServers) reads again', async () => {
    const controller = controllerWith(scriptedModel());
    await ready(controller);
    const reads = apps.state.reads.length;
    const view = await controller.readMcpResource('apps', VIEW);
    assert.deepEqual(plain(view), {
      uri: VIEW, mimeType: 'text/html;profile=mcp-app', text: VIEW_HTML,
      meta: { csp: VIEW_META.csp, permissions: { clipboardWrite: {} }, domain: 'chart.example', prefersBorder: true },
    });
    assert.ok(Object.isFrozen(view) && Object.isFrozen(view.meta.csp.connectDomains));
    const [again, concurrent] = await Promise.all([controller.readMcpResource('apps', VIEW), controller.readMcpResource('apps', VIEW)]);
    assert.equal(again, view);
    assert.equal(concurrent, view);
    assert.equal(apps.state.reads.length - reads, 1, 'one resources/read for three reads');
    // A new connection (the servers set again) reads again.
    controller.setMcpServers([{ name: 'apps', url: apps.url }]);
    assert.equal(controller.getMcpServers()[0].status, 'connecting');
    await ready(controller);
    const fresh = await controller.readMcpResource('apps', VIEW);
    assert.equal(fresh.text, VIEW_HTML);
    assert.equal(apps.state.reads.length - reads, 2, 'the cache went with the connection');
    controller.destroy();
  });

  test('only ui:// URIs; a blob is decoded; over 2 MiB is AGENT_MCP_RESOURCE_TOO_LARGE; a refused or aborted read is AGENT_MCP_RESOURCE_FAILED', async () => {
    const controller = controllerWith(scriptedModel());
    await ready(controller);
    const reads = apps.state.reads.length;
    await assert.rejects(controller.readMcpResource('apps', 'https://example.com/view.html'), code('AGENT_INVALID_INPUT'));
    await assert.rejects(controller.readMcpResource('apps', 'file:///etc/passwd'), code('AGENT_INVALID_INPUT'));
    await assert.rejects(controller.readMcpResource('nope', VIEW), code('AGENT_INVALID_INPUT'));
    assert.equal(apps.state.reads.length, reads, 'nothing was asked of the server');
    assert.equal((await controller.readMcpResource('apps', 'ui://blob/view.html')).text, '<p>blob view ✓</p>');
    await assert.rejects(controller.readMcpResource('apps', 'ui://big/view.html'), (error) => {
      code('AGENT_MCP_RESOURCE_TOO_LARGE')(error);
      assert.deepEqual(plain(error.details), { server: 'apps', uri: 'ui://big/view.html', bytes: 2 * 1024 * 1024 + 1, limit: 2 * 1024 * 1024 });
      return true;
    });
    await assert.rejects(controller.readMcpResource('apps', 'ui://wide/view.html'), (error) => code('AGENT_MCP_RESOURCE_TOO_LARGE')(error) && error.details.bytes === 2 * (1024 * 1024 + 1),
      'counted in UTF-8 bytes, not characters');
    await assert.rejects(controller.readMcpResource('apps', 'ui://missing/view.html'), code('AGENT_MCP_RESOURCE_FAILED', 'refused'));
    const stop = new AbortController();
    stop.abort();
    await assert.rejects(controller.readMcpResource('apps', VIEW, { signal: stop.signal }), code('AGENT_MCP_RESOURCE_FAILED', 'aborted'));
    controller.destroy();
  });
});

describe('MCP Apps: the tool source for DefaultAgentRuntime', () => {
  test('createMcpToolSource leaves app-only tools out of tools(), reads ui:// resources and keeps raw results', async () => {
    const source = await agent.createMcpToolSource([{ name: 'apps', url: apps.url, readOnly: ['show-chart'] }]);
    try {
      const tools = await source.tools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['mcp__apps__legacy', 'mcp__apps__model-only', 'mcp__apps__plain', 'mcp__apps__show-chart']);
      assert.deepEqual(plain(source.describe('mcp__apps__chart-refresh').ui), { resourceUri: VIEW, visibility: ['app'] });
      assert.equal((await source.readResource('apps', VIEW)).text, VIEW_HTML);
      await assert.rejects(source.readResource('apps', 'https://example.com/'), code('AGENT_INVALID_INPUT'));
      const runtime = new agent.DefaultAgentRuntime(scriptedModelFor([{ id: 'call_src', name: 'mcp__apps__show-chart', arguments: { series: 'q3' } }]), { limits: agent.DEFAULT_LIMITS });
      const execution = runtime.start({ messages: [{ id: 'u1', role: 'user', blocks: [{ type: 'text', text: 'chart' }] }], tools });
      assert.equal((await execution.result).outcome, 'completed');
      assert.deepEqual(plain(source.callResult('call_src').structuredContent), { series: 'q3', points: [1, 2, 3] });
    } finally {
      source.close();
    }
  });
});

/** A model for one DefaultAgentRuntime execution: the given tool calls, then a short answer. */
function scriptedModelFor(calls) {
  const scripted = scriptedModel();
  scripted.script(toolCalls(calls), say('Done.'));
  return scripted.model;
}

describe('MCP Apps: getMcpCallResult', () => {
  test('the raw CallToolResult of a model call of this session; the state keeps only the text; a new controller has none', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted, { readOnly: ['show-chart'] });
    await ready(controller);
    scripted.script(toolCalls([{ id: 'call_chart', name: 'mcp__apps__show-chart', arguments: { series: 'sales' } }]), say('Drawn.'));
    assert.equal(await controller.send('draw'), 'completed');
    assert.deepEqual(plain(controller.getMcpCallResult('call_chart')), {
      content: [{ type: 'text', text: 'chart of sales' }], structuredContent: { series: 'sales', points: [1, 2, 3] }, _meta: { drawnAt: 'now' },
    });
    assert.ok(Object.isFrozen(controller.getMcpCallResult('call_chart').structuredContent.points));
    const stored = controller.getState().messages.find((m) => m.role === 'tool').blocks[0];
    assert.deepEqual(plain(stored), { type: 'tool-result', callId: 'call_chart', content: 'chart of sales', isError: false });
    assert.equal(controller.getMcpCallResult('call_unknown'), null);
    const reloaded = controllerWith(scriptedModel());
    await ready(reloaded);
    assert.equal(reloaded.getMcpCallResult('call_chart'), null, 'memory only: nothing after a reload');
    reloaded.destroy();
    controller.destroy();
  });

  test('keeps the last 50 calls', async () => {
    const controller = controllerWith(scriptedModel(), { readOnly: ['ping'] });
    await ready(controller);
    const ids = new Set();
    const off = controller.subscribeMcpAppCall((call) => { if (call) ids.add(call.callId); });
    for (let i = 0; i < 51; i += 1) {
      const result = await controller.callToolFromApp({ server: 'apps', name: 'ping' });
      assert.equal(result.content[0].text, 'pong');
    }
    off();
    const order = [...ids];
    assert.equal(order.length, 51);
    assert.equal(controller.getMcpCallResult(order[0]), null, 'the oldest is dropped');
    for (const id of order.slice(1)) assert.equal(controller.getMcpCallResult(id)?.content[0].text, 'pong');
    controller.destroy();
  });
});

describe('MCP Apps: callToolFromApp goes through the runtime\'s rules', () => {
  test('an app-only tool asks first; approving runs it on the server and resolves with the raw result; nothing enters the conversation', async () => {
    const controller = controllerWith(scriptedModel());
    await ready(controller);
    const calls = apps.state.calls.length;
    const calling = controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 7 } });
    const waiting = await waitForAppCall(controller, (c) => c?.pendingInterrupt != null);
    assert.equal(waiting.pendingInterrupt.kind, 'tool-confirmation');
    assert.equal(waiting.pendingInterrupt.tool, 'mcp__apps__chart-refresh');
    assert.deepEqual(plain(waiting.pendingInterrupt.arguments ?? waiting.arguments), { n: 7 });
    assert.deepEqual([waiting.server, waiting.tool, waiting.readOnly], ['apps', 'chart-refresh', false]);
    assert.match(waiting.callId, /^app_[0-9a-f]{24}$/);
    assert.equal(apps.state.calls.length, calls, 'nothing runs before approval');
    await assert.rejects(controller.send('hi'), code('AGENT_BUSY', 'app-call'), 'no turn while the app call waits');
    controller.respondMcpAppCall({ interruptId: waiting.pendingInterrupt.interruptId, value: true });
    const result = await calling;
    assert.deepEqual(plain(result), { content: [{ type: 'text', text: 'refreshed 7' }], structuredContent: { n: 7, points: [7] } });
    assert.deepEqual(apps.state.calls.slice(calls), [{ tool: 'chart-refresh', args: { n: 7 } }]);
    assert.deepEqual(plain(controller.getMcpCallResult(waiting.callId)), plain(result));
    assert.equal(controller.getMcpAppCall(), null);
    assert.deepEqual(controller.getState().messages, [], 'the app call is not part of the conversation');
    controller.destroy();
  });

  test('rejecting never calls the server; invalid arguments are refused before any confirmation; readOnly runs unasked', async () => {
    const controller = controllerWith(scriptedModel(), { readOnly: ['ping'] });
    await ready(controller);
    const calls = apps.state.calls.length;
    const calling = controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 1 } });
    const waiting = await waitForAppCall(controller, (c) => c?.pendingInterrupt != null);
    controller.respondMcpAppCall({ interruptId: waiting.pendingInterrupt.interruptId, value: { approved: false, reason: 'not now' } });
    const rejected = await calling;
    assert.equal(rejected.isError, true);
    assert.match(rejected.content[0].text, /^\[rejected\] /);
    let asked = 0;
    const off = controller.subscribeMcpAppCall((c) => { if (c?.pendingInterrupt) asked += 1; });
    const invalid = await controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 'seven' } });
    off();
    assert.equal(asked, 0, 'never put to the person');
    assert.equal(invalid.isError, true);
    assert.match(invalid.content[0].text, /^\[invalid arguments\] /);
    const pong = await controller.callToolFromApp({ server: 'apps', name: 'ping', arguments: {} });
    assert.equal(pong.content[0].text, 'pong');
    assert.deepEqual(apps.state.calls.slice(calls).map((c) => c.tool), ['ping'], 'only the read-only call reached the server');
    controller.destroy();
  });

  test('tools apps may not call, unknown ones and bad requests are AGENT_INVALID_INPUT', async () => {
    const controller = controllerWith(scriptedModel());
    await ready(controller);
    await assert.rejects(controller.callToolFromApp({ server: 'apps', name: 'model-only' }), code('AGENT_INVALID_INPUT', 'not-for-app'));
    await assert.rejects(controller.callToolFromApp({ server: 'apps', name: 'nope' }), code('AGENT_INVALID_INPUT', 'unknown-tool'));
    await assert.rejects(controller.callToolFromApp({ server: 'other', name: 'ping' }), code('AGENT_INVALID_INPUT'));
    await assert.rejects(controller.callToolFromApp({ server: 'apps', name: 'ping', arguments: [1] }), code('AGENT_INVALID_INPUT'));
    await assert.rejects(controller.callToolFromApp({ server: 'apps', name: 'ping', extra: 1 }), code('AGENT_INVALID_INPUT'));
    controller.destroy();
  });

  test('during a turn it runs inside the turn: after the model\'s batch, asked in the turn\'s slot, counted, never in the conversation', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted, { limits: { maxToolCalls: 2 } });
    await ready(controller);
    const calls = apps.state.calls.length;
    scripted.script(toolCalls([{ id: 'call_plain', name: 'mcp__apps__plain', arguments: {} }]), say('ok'));
    const turn = controller.send('go');
    await waitForState(controller, (s) => s.pendingConfirmation?.callId === 'call_plain', 5_000, 'the model call asks');
    // Queued while the model's call waits: it runs after that batch, before the next model call.
    const calling = controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 5 } });
    controller.approveTool();
    const waiting = await waitForAppCall(controller, (c) => c?.pendingInterrupt != null);
    const state = controller.getState();
    assert.equal(state.status, 'awaiting-confirmation');
    assert.equal(state.pendingConfirmation.callId, waiting.callId, 'the turn\'s own confirmation slot');
    assert.equal(state.pendingConfirmation.interruptId, waiting.pendingInterrupt.interruptId);
    assert.match(waiting.callId, /^app_[0-9a-f]{24}$/);
    assert.equal(scripted.requests.length, 1, 'the next model call waits for it');
    assert.deepEqual(apps.state.calls.slice(calls).map((c) => c.tool), ['plain']);
    controller.respondMcpAppCall({ interruptId: waiting.pendingInterrupt.interruptId, value: true });
    const result = await calling;
    assert.deepEqual(plain(result), { content: [{ type: 'text', text: 'refreshed 5' }], structuredContent: { n: 5, points: [5] } });
    assert.equal(await turn, 'completed');
    assert.deepEqual(apps.state.calls.slice(calls).map((c) => c.tool), ['plain', 'chart-refresh']);
    const mentioned = (messages) => JSON.stringify(messages).includes(waiting.callId);
    assert.equal(mentioned(scripted.requests[1].messages), false, 'the model never sees it');
    assert.equal(mentioned(controller.getState().messages), false, 'nothing enters the conversation');
    assert.equal(controller.getMcpAppCall(), null);

    // maxToolCalls counts the app's call with the model's: over it, refused with the limit error.
    scripted.script(toolCalls([{ id: 'call_plain2', name: 'mcp__apps__plain', arguments: {} }, { id: 'call_plain3', name: 'mcp__apps__plain', arguments: {} }]), say('ok'));
    const second = controller.send('again');
    await waitForState(controller, (s) => s.pendingConfirmation?.callId === 'call_plain2', 5_000, 'the first model call asks');
    const over = controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 6 } });
    controller.approveTool();
    await waitForState(controller, (s) => s.pendingConfirmation?.callId === 'call_plain3', 5_000, 'the second model call asks');
    controller.approveTool();
    await assert.rejects(over, (error) => code('AGENT_LIMIT_EXCEEDED')(error) && error.limit === 'maxToolCalls');
    assert.equal(await second, 'completed', 'the turn is not affected');

    // abort() ends the turn and the app call in it: not run.
    scripted.script(toolCalls([{ id: 'call_plain4', name: 'mcp__apps__plain', arguments: {} }]), say('ok'));
    const third = controller.send('and again');
    await waitForState(controller, (s) => s.pendingConfirmation?.callId === 'call_plain4', 5_000, 'the model call asks');
    const aborted = controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 7 } });
    assert.equal(controller.abort(), true);
    assert.equal(await third, 'cancelled');
    const notRun = await aborted;
    assert.equal(notRun.isError, true);
    assert.match(notRun.content[0].text, /^\[not run\] .*\(cancelled\)/);
    assert.equal(apps.state.calls.slice(calls).filter((c) => c.tool === 'chart-refresh').length, 1, 'only the approved app call reached the server');
    controller.destroy();
  });

  test('cancelled by its signal and by abort(); bounded by the deadline', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted, { limits: { maxDurationMs: 1_000 } });
    await ready(controller);

    const calls = apps.state.calls.length;
    const card = new AbortController();
    const bySignal = controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 2 }, signal: card.signal });
    await waitForAppCall(controller, (c) => c?.pendingInterrupt != null);
    card.abort();
    const cancelled = await bySignal;
    assert.equal(cancelled.isError, true);
    assert.match(cancelled.content[0].text, /^\[not run\] /);

    const byAbort = controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 3 } });
    await waitForAppCall(controller, (c) => c?.pendingInterrupt != null);
    assert.equal(controller.abort(), true, 'abort() cancels the app call');
    assert.match((await byAbort).content[0].text, /^\[not run\] /);
    assert.equal(controller.getMcpAppCall(), null);

    const started = Date.now();
    await assert.rejects(controller.callToolFromApp({ server: 'apps', name: 'chart-refresh', arguments: { n: 4 } }), code('AGENT_EXECUTION_TIMEOUT'));
    assert.ok(Date.now() - started < 3_000, 'ended at maxDurationMs');
    assert.equal(controller.getMcpAppCall(), null);
    assert.equal(apps.state.calls.length, calls, 'no cancelled or timed-out call reached the server');
    controller.destroy();
  });
});
