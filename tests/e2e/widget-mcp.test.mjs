// <patchbridge-agent> with remote MCP servers in Chromium, against the real relay, a fake upstream and a real MCP
// server on the official SDK (CORS enabled, as a browser-direct server must be): the MCP client chunk is
// requested only by a page that sets `mcpServers`; each server's status is shown; an MCP tool's confirmation
// names its server and the server's hints (not trusted: it still asks); approving runs it on the server; servers
// set after the element is ready apply too, and an unreachable one is reported as such; an MCP tool's card names
// its server, also after a reload; a running call's progress is a bar in its card; Reject never reaches the
// server and Stop cancels a running call there.

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
      {
        name: 'signup',
        run: async (_args, extra, mcp) => {
          const answer = await mcp.elicitInput({
            message: 'Sign up for the newsletter?',
            requestedSchema: {
              type: 'object',
              properties: {
                email: { type: 'string', format: 'email', title: 'Email' },
                topic: { type: 'string', enum: ['news', 'offers'], title: 'Topic' },
                weekly: { type: 'boolean', title: 'Weekly digest' },
              },
              required: ['email'],
            },
          }, { relatedRequestId: extra.requestId });
          return text(JSON.stringify(answer));
        },
      },
    ],
  });
});
after(async () => { await server?.close(); });

const chunkNames = (chunks) => chunks.map((url) => url.split('/').at(-1)).sort();

/** A page with one element; `servers` is set as its mcpServers before it connects (none: the property is not touched). */
async function open(servers, user = `mcp-${Date.now()}`) {
  // The relay serves its pages with a policy that allows connections to itself only (PAGE_CSP); a page using a
  // browser-direct MCP server allows that server in its own policy, which tests/e2e/pages/mcp.html states and
  // this context applies instead of the relay's header.
  const context = await env.browser.newContext({ viewport: { width: 1100, height: 760 }, bypassCSP: true });
  const page = await context.newPage();
  const chunks = [];
  page.on('request', (request) => { if (/mcp-client\.js|patchbridge-mcp\.js|elicitation\.js/.test(request.url())) chunks.push(request.url()); });
  await page.goto(`${env.relay.url}/examples/mcp.html`);
  await mount(page, servers, user);
  return { page, chunks };
}

/** Defines the page's one element: endpoint /api, `user`'s identity header, `servers` as its mcpServers. */
async function mount(page, servers, user) {
  await page.waitForFunction(() => customElements.get('patchbridge-agent'));
  await page.evaluate(({ list, user }) => {
    const el = document.createElement('patchbridge-agent');
    el.setAttribute('endpoint', '/api');
    el.headers = { 'x-patchbridge-user': user };
    if (list) el.mcpServers = list;
    document.body.append(el);
  }, { list: servers, user });
  await waitReady(page);
}

/** Each tool card's [server, name shown, status]. */
const cardsOf = (page) => page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card]')]
  .map((card) => [card.dataset.mcpServer ?? null, card.querySelector('.name').firstChild.textContent, card.querySelector('.status').textContent]));

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
    assert.deepEqual(chunkNames(chunks), ['mcp-client.js'], 'the MCP chunk is loaded once servers are set, the question card not yet');
    assert.deepEqual(await statusOf(page), ['docs:ready:docs ready, 3 tools']);

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

  test('an MCP tool\'s card names its server, live and after a reload (read from the stored call alone)', async () => {
    const user = `mcp-reload-${Date.now()}`;
    const { page } = await open([{ name: 'docs', url: server.url, readOnly: ['count'] }], user);
    // A turn sent while a server is still listing waits for it with the status still idle: wait for the listing.
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=mcp-servers] li[data-status=ready]') != null);
    env.upstream.script(toolCallTurn([{ id: 'call_w_count', name: 'mcp__docs__count', arguments: {} }]), textTurn('Three.'));
    await sendInWidget(page, 'count them');
    await waitIdle(page);
    assert.deepEqual(await cardsOf(page), [['docs', 'count', 'Done']]);
    assert.match(await page.textContent('patchbridge-agent [part~=tool-server]'), /MCP · docs/);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision >= 1);

    // The reloaded page restores the conversation before (and without) any MCP server being listed.
    await page.reload();
    await mount(page, null, user);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card]').length === 1);
    assert.deepEqual(await cardsOf(page), [['docs', 'count', 'Done']]);
    assert.match(await page.textContent('patchbridge-agent [part~=tool-card]'), /3/, 'the stored result');
    await page.context().close();
  });

  test('Reject never calls the server; Stop during a long call cancels it on the server and the card says it did not run', async () => {
    let answered = false;
    const slow = await startMcpServer({
      cors: true,
      tools: [
        { name: 'wipe', run: () => text('wiped') },
        { name: 'crawl', run: (_args, extra) => new Promise((resolve) => { extra.signal.addEventListener('abort', () => resolve(text('aborted'))); setTimeout(() => { answered = true; resolve(text('late answer')); }, 20_000); }) },
      ],
    });
    try {
      const { page } = await open([{ name: 'ops', url: slow.url }]);
      env.upstream.script(toolCallTurn([{ id: 'call_w_wipe', name: 'mcp__ops__wipe', arguments: {} }]), textTurn('Not wiped.'));
      await sendInWidget(page, 'wipe it');
      await page.waitForSelector(sel.confirmation);
      assert.match(await page.textContent(sel.confirmation), /of the MCP server “ops”/);
      await page.click(sel.reject);
      await waitIdle(page);
      assert.deepEqual(slow.state.calls, [], 'a rejected call never reaches the server');
      assert.deepEqual(await cardsOf(page), [['ops', 'wipe', 'Rejected']]);

      env.upstream.script(toolCallTurn([{ id: 'call_w_crawl', name: 'mcp__ops__crawl', arguments: {} }]));
      await sendInWidget(page, 'crawl everything');
      await page.waitForSelector(sel.approve);
      await page.click(sel.approve);
      for (let i = 0; i < 200 && slow.state.calls.length < 1; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.deepEqual(slow.state.calls.map((c) => c.tool), ['crawl'], 'the approved call runs on the server');
      await page.click(sel.stop);
      await waitIdle(page);
      for (let i = 0; i < 200 && !slow.state.cancelled.includes('crawl'); i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.deepEqual(slow.state.cancelled, ['crawl'], 'the server got notifications/cancelled');
      assert.equal(answered, false);
      assert.deepEqual((await cardsOf(page)).at(-1), ['ops', 'crawl', 'Did not run']);
      await page.context().close();
    } finally {
      await slow.close();
    }
  });

  test('a running MCP call\'s progress is a bar in its card, labelled with the server\'s message, gone when the call ends', async () => {
    let release;
    const released = new Promise((resolve) => { release = resolve; });
    const slow = await startMcpServer({
      cors: true,
      tools: [{
        name: 'index',
        run: async (_args, extra) => {
          const token = extra._meta?.progressToken;
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 4, message: 'Indexing page 1 of 4' } });
          await released;
          return text('indexed');
        },
      }],
    });
    try {
      const { page } = await open([{ name: 'search', url: slow.url, readOnly: ['index'] }]);
      env.upstream.script(toolCallTurn([{ id: 'call_w_index', name: 'mcp__search__index', arguments: {} }]), textTurn('Indexed.'));
      await sendInWidget(page, 'index it');
      await page.waitForSelector('patchbridge-agent [part~=tool-progress]');
      const bar = await page.$eval('patchbridge-agent [part~=tool-progress]', (el) => ({ value: el.value, max: el.max, label: el.getAttribute('aria-label'), card: el.closest('[part~=tool-card]').dataset.callId }));
      assert.deepEqual(bar, { value: 1, max: 4, label: 'Indexing page 1 of 4', card: 'call_w_index' });
      release();
      await waitIdle(page);
      assert.equal(await page.$('patchbridge-agent [part~=tool-progress]'), null, 'the bar goes with the call');
      assert.deepEqual(await cardsOf(page), [['search', 'index', 'Done']]);
      await page.context().close();
    } finally {
      release();
      await slow.close();
    }
  });

  test('a server\'s question during a call is a small accessible form; its answer goes back to the server', async () => {
    const { page, chunks } = await open([{ name: 'news', url: server.url, readOnly: ['signup'] }]);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=mcp-servers] li[data-status=ready]') != null);
    env.upstream.script(
      toolCallTurn([{ id: 'call_w_signup', name: 'mcp__news__signup', arguments: {} }]),
      textTurn('Signed up.'),
    );
    await sendInWidget(page, 'sign me up');
    const form = 'patchbridge-agent [part~=elicitation]';
    await page.waitForSelector(form);
    assert.ok(chunkNames(chunks).includes('widget-elicitation.js'), 'the question card loads when a question appears');
    assert.match(await page.textContent(form), /A question from “news”.*Sign up for the newsletter\?/s);
    // Every control has its label; the required email is checked by the browser before anything is sent.
    const labels = await page.evaluate((selector) => {
      const root = document.querySelector('patchbridge-agent').shadowRoot.querySelector(selector.replace('patchbridge-agent ', ''));
      return [...root.querySelectorAll('input, select')].map((c) => [c.type, c.labels?.[0]?.textContent ?? null, c.required]);
    }, form);
    assert.deepEqual(labels, [['email', 'Email *', true], ['select-one', 'Topic', false], ['checkbox', 'Weekly digest', false]]);
    await page.click('patchbridge-agent [part~=elicitation-accept]');
    assert.equal(server.state.calls.filter((c) => c.tool === 'signup').length, 1);
    assert.ok(await page.$(form), 'an invalid form is not sent');
    await page.fill('patchbridge-agent [part~=elicitation] input[type=email]', 'ada@example.com');
    await page.selectOption('patchbridge-agent [part~=elicitation] select', 'offers');
    await page.check('patchbridge-agent [part~=elicitation] input[type=checkbox]');
    await page.click('patchbridge-agent [part~=elicitation-accept]');
    await waitIdle(page);
    assert.equal(await page.$(form), null, 'the card goes once answered');
    const toolMessage = env.upstream.requests.at(-1).body.messages.find((m) => m.role === 'tool');
    assert.deepEqual(JSON.parse(toolMessage.content), { action: 'accept', content: { email: 'ada@example.com', topic: 'offers', weekly: true } });
    await page.context().close();
  });

  test('"Connect <server>" signs in to a server behind the MCP authorization flow in a popup', async () => {
    const secure = await startMcpServer({ cors: true, oauth: true, tools: [{ name: 'whoami', run: () => text('signed in') }] });
    try {
      const callback = `${env.relay.url}/examples/mcp-callback.html`;
      const { page } = await open([{ name: 'vault', url: secure.url, auth: { popup: callback } }]);
      const connect = 'patchbridge-agent [part~=mcp-connect]';
      await page.waitForSelector(connect);
      assert.equal(await page.textContent(connect), 'Connect vault');
      const [popup] = await Promise.all([page.waitForEvent('popup'), page.click(connect)]);
      await popup.waitForEvent('close', { timeout: 10_000 }).catch(() => {});
      await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=mcp-servers] li[data-server=vault][data-status=ready]') != null);
      assert.deepEqual(await statusOf(page), ['vault:ready:vault ready, 1 tool']);
      const stored = await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('patchbridge-mcp:vault:')).sort());
      assert.deepEqual(stored, ['patchbridge-mcp:vault:client', 'patchbridge-mcp:vault:tokens', 'patchbridge-mcp:vault:verifier']);
      const conversation = await page.evaluate(() => JSON.stringify(document.querySelector('patchbridge-agent').controller.getState()));
      const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('patchbridge-mcp:vault:tokens')).access_token);
      assert.ok(!conversation.includes(token), 'the token is never in the conversation');
      await page.context().close();
    } finally {
      await secure.close();
    }
  });
});
