// <patchbridge-agent> with remote MCP servers in Chromium, against the real relay, a fake upstream and a real MCP
// server on the official SDK (CORS enabled, as a browser-direct server must be): the MCP client chunk is
// requested only by a page that sets `mcpServers`; each server's status is shown; an MCP tool's confirmation
// names its server and the server's hints (not trusted: it still asks); approving runs it on the server; servers
// set after the element is ready apply too, and an unreachable one is reported as such.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { waitInPage } from './support/browser.mjs';
import { startMcpServer, text } from './support/mcp-server.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();
let server;
before(async () => {
  server = await startMcpServer({
    cors: true,
    tools: [
      { name: 'echo', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, run: ({ text: t }) => text(`echo: ${t}`) },
      { name: 'count', run: () => text('3') },
    ],
  });
});
after(async () => { await server?.close(); });

/** A page with one element; `servers` is set as its mcpServers before it connects (none: the property is not touched). */
async function open(servers) {
  // The relay serves its pages with a policy that allows connections to itself only (PAGE_CSP); a page using a
  // browser-direct MCP server allows that server in its own policy, which tests/e2e/pages/mcp.html states and
  // this context applies instead of the relay's header.
  const context = await env.browser.newContext({ viewport: { width: 1100, height: 760 }, bypassCSP: true });
  const page = await context.newPage();
  const chunks = [];
  page.on('request', (request) => { if (/mcp-client\.js|patchbridge-mcp\.js/.test(request.url())) chunks.push(request.url()); });
  await page.goto(`${env.relay.url}/examples/mcp.html`);
  await page.waitForFunction(() => customElements.get('patchbridge-agent'));
  await page.evaluate(({ list, user }) => {
    const el = document.createElement('patchbridge-agent');
    el.setAttribute('endpoint', '/api');
    el.headers = { 'x-patchbridge-user': user };
    if (list) el.mcpServers = list;
    document.body.append(el);
  }, { list: servers, user: `mcp-${Date.now()}` });
  await waitReady(page);
  return { page, chunks };
}

const statusOf = (page) => page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=mcp-servers] li')]
  .map((li) => `${li.dataset.server}:${li.dataset.status}:${li.textContent}`));

describe('<patchbridge-agent> with MCP servers', () => {
  test('a page without mcpServers never requests the MCP client', async () => {
    const { page, chunks } = await open(null);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
    assert.deepEqual(chunks, []);
    assert.deepEqual(await statusOf(page), []);
    await page.context().close();
  });

  test('servers show their status; an MCP tool asks first, naming its server, and runs on the server once approved', async () => {
    const { page, chunks } = await open([{ name: 'docs', url: server.url }]);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=mcp-servers] li[data-status=ready]') != null);
    assert.equal(chunks.length, 1, 'the chunk is loaded once servers are set');
    assert.deepEqual(await statusOf(page), ['docs:ready:docs ready, 2 tools']);

    const calls = server.state.calls.length;
    env.upstream.script(
      toolCallTurn([{ id: 'call_w_echo', name: 'mcp__docs__echo', arguments: { text: 'from the widget' } }]),
      textTurn('Echoed.'),
    );
    await sendInWidget(page, 'echo something');
    await page.waitForSelector(sel.confirmation);
    const card = await page.textContent(sel.confirmation);
    assert.match(card, /Tool “echo” of the MCP server “docs”/);
    assert.match(card, /The server says: read-only \(not verified\)/);
    assert.equal(server.state.calls.length, calls, 'a readOnlyHint does not skip the confirmation');
    await page.click(sel.approve);
    await waitIdle(page);
    assert.deepEqual(server.state.calls.slice(calls).map((c) => [c.tool, c.args.text]), [['echo', 'from the widget']]);
    const toolMessage = env.upstream.requests.at(-1).body.messages.find((m) => m.role === 'tool');
    assert.equal(toolMessage.content, 'echo: from the widget');

    // Servers set after the element is ready apply as well; an unreachable one says why.
    await page.evaluate(() => {
      const el = document.querySelector('patchbridge-agent');
      el.mcpServers = [...el.mcpServers, { name: 'gone', url: 'http://127.0.0.1:9/mcp' }];
    });
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=mcp-servers] li[data-server=gone][data-status=failed]') != null);
    const status = await statusOf(page);
    assert.ok(status.includes('gone:failed:gone unavailable: could not be reached (network or CORS)'), status.join(' | '));
    await page.context().close();
  });
});
