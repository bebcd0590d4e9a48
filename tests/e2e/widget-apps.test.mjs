// MCP Apps in <patchbridge-agent> (docs/adr/018, docs/adr/019), in Chromium against the real relay with its sandbox
// listener (the page at 127.0.0.1, the sandbox proxy at localhost on a port of its own), the relay's MCP
// passthrough to two real MCP Apps servers (@modelcontextprotocol/server-basic-vanillajs from npm, and a probe
// built here on @modelcontextprotocol/ext-apps's app side: support/apps-servers.mjs) and a scripted model (the
// fake upstream). The page has no policy of its own: the relay's strict page policy plus `frame-src <sandbox>`.
//
// A page that meets no app loads no app code; a tool's view renders in its card once the call is approved, and
// shows the result; the probe cannot reach the page's document, cookies or storage, and a fetch its policy
// forbids fails; its tool call asks in the card and runs only when approved; its message waits in the composer;
// its link asks first; during a turn its tool call joins the turn and is asked in its card; a view that never starts falls back to the generic card with a note and an event; after a
// reload the view gets the stored text only; views that flood or grow without end are stopped; another
// conversation tears the views down.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launchChromium, waitInPage } from './support/browser.mjs';
import { startBasicAppServer, startProbeServer } from './support/apps-servers.mjs';
import { startFakeUpstream } from './support/fake-upstream.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { ROOT, startRelay } from './support/relay.mjs';
import { artifact, sel, sendInWidget, waitIdle, waitReady } from './support/widget.mjs';

const env = { upstream: null, relay: null, browser: null, basic: null, probe: null };
before(async () => {
  env.basic = await startBasicAppServer();
  // The probe's forbidden fetch: a real server that would answer (a `no-cors` fetch fails only by policy).
  env.probe = await startProbeServer({ forbiddenUrl: env.basic.url });
  env.upstream = await startFakeUpstream();
  env.relay = await startRelay({
    upstream: env.upstream.url,
    examplesDir: path.join(ROOT, 'tests', 'e2e', 'pages'),
    sandbox: true,
    mcp: { servers: [{ name: 'time', url: env.basic.url, users: 'all' }, { name: 'probe', url: env.probe.url, users: 'all' }] },
  });
  env.browser = await launchChromium();
});
after(async () => {
  await env.browser?.close();
  await env.relay?.stop();
  await env.upstream?.close();
  await env.probe?.close();
  await env.basic?.close();
});

const W = 'patchbridge-agent';
const appParts = {
  frame: `${W} [part~=app-frame]`,
  ask: `${W} [part~=app-ask]`,
  yes: `${W} [part~=app-ask-yes]`,
  no: `${W} [part~=app-ask-no]`,
  note: `${W} [part~=app-note]`,
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The page with one element for `user` (the same user after a reload reopens the same conversation), the MCP
 * servers through the relay, the sandbox URL; the page's own secrets are set first, for the probe to look for.
 */
async function open(user, context = null, mcpApps = undefined) {
  context ??= await env.browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (error) => page.problems.push(`pageerror: ${error.message}`));
  page.chunks = [];
  page.on('request', (request) => { if (/widget-apps\.js/.test(request.url())) page.chunks.push(request.url()); });
  await page.goto(`${env.relay.url}/examples/apps.html`);
  await page.waitForFunction(() => customElements.get('patchbridge-agent'));
  await page.evaluate(({ user, api, sandbox, mcpApps }) => {
    document.cookie = 'pb-secret=page-cookie';
    localStorage.setItem('pb-secret', 'page-storage');
    window.appErrors = [];
    const el = document.createElement('patchbridge-agent');
    el.setAttribute('endpoint', '/api');
    el.setAttribute('app-sandbox', sandbox);
    el.headers = { 'x-patchbridge-user': user };
    el.mcpServers = ['time', 'probe'].map((name) => ({ name, url: `${api}/mcp/${name}`, headers: { 'x-patchbridge-user': user } }));
    el.addEventListener('patchbridge-app-error', (event) => window.appErrors.push(event.detail));
    if (mcpApps !== undefined) el.mcpApps = mcpApps;
    document.body.append(el);
  }, { user, api: env.relay.api, sandbox: env.relay.sandboxUrl, mcpApps });
  await waitReady(page);
  // Both servers settle (the probe must be ready; see the get-time test for the other).
  await waitInPage(page, () => {
    const items = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=mcp-servers] li')];
    return items.length === 2 && items.every((li) => li.dataset.status !== 'connecting') && items.some((li) => li.dataset.server === 'probe' && li.dataset.status === 'ready');
  }, undefined, 20_000);
  return page;
}

/** The first app frame (a `srcdoc` document inside the sandbox proxy) whose `selector` text passes `accept`. */
async function appFrame(page, selector, accept, ms = 15_000) {
  const end = Date.now() + ms;
  let seen = '';
  while (Date.now() < end) {
    for (const frame of page.frames()) {
      if (frame.url() !== 'about:srcdoc') continue;
      const text = await frame.textContent(selector, { timeout: 200 }).catch(() => null);
      if (text === null) continue;
      seen = text;
      if (accept(text)) return frame;
    }
    await sleep(100);
  }
  throw new Error(`no app frame with ${selector} as wanted within ${ms} ms (last seen: ${seen.slice(0, 300)})\n${page.problems.join('\n')}`);
}

const reportOf = async (frame) => JSON.parse(await frame.textContent('#report'));

async function runTool(page, id, name, args, answer) {
  env.upstream.script(toolCallTurn([{ id, name, arguments: args }]), textTurn(answer));
  await sendInWidget(page, `run ${name}`);
  await page.waitForSelector(sel.confirmation);
  await page.click(sel.approve);
  await waitIdle(page);
}

describe('<patchbridge-agent> with MCP Apps', () => {
  const user = `apps-${Date.now()}`;
  let page;

  test('a page whose tools show no view loads no app code', async (t) => {
    page = await open(user);
    assert.equal(await page.evaluate(() => typeof document.querySelector('patchbridge-agent').controller.readMcpResource), 'function', 'the runtime has its MCP Apps members');
    env.upstream.script(textTurn('Nothing to show.'));
    await sendInWidget(page, 'hello');
    await waitIdle(page);
    assert.deepEqual(page.chunks, []);
    // App-only tools are callable by their view, never offered to the model.
    const tools = (env.upstream.requests.at(-1).body.tools ?? []).map((t) => t.function?.name ?? t.name);
    assert.ok(tools.includes('mcp__probe__probe'), tools.join(', '));
    assert.ok(!tools.includes('mcp__probe__probe-action'), tools.join(', '));
  });

  test('the probe view renders in its card with the result, and reaches nothing of the page', async (t) => {
    await runTool(page, 'call_probe_1', 'mcp__probe__probe', { topic: 'isolation' }, 'Shown.');
    const frame = await appFrame(page, '#report', (t) => t.includes('"connected":true') && t.includes('"result"') && t.includes('"fetch"'));
    assert.equal(page.chunks.length, 1, 'the app host loads once an app card appears');
    const report = await reportOf(frame);
    assert.deepEqual(report.input, { topic: 'isolation' });
    assert.deepEqual(report.result.content, [{ type: 'text', text: 'probe result for isolation' }]);
    assert.deepEqual(report.result.structuredContent, { topic: 'isolation', answer: 42 }, 'live: the server\'s whole result');
    // Isolation: an opaque origin inside a frame of another origin.
    assert.match(report.parentDocument, /^blocked: SecurityError/);
    assert.match(report.topDocument, /^blocked: SecurityError/);
    assert.match(report.cookie, /^blocked: SecurityError/);
    assert.match(report.localStorage, /^blocked: SecurityError/);
    assert.equal(report.origin, 'null');
    assert.match(report.fetch, /^blocked: TypeError/);
    assert.ok(report.violations?.some((v) => v.startsWith('connect-src')), JSON.stringify(report.violations));
    // What this host declares, and nothing more.
    assert.deepEqual(Object.keys(report.capabilities).sort(), ['message', 'openLinks', 'sandbox', 'serverTools']);
    assert.equal(report.context.displayMode, 'inline');
    assert.equal(report.context.theme, 'light');
    // The proxy frame is the sandbox origin's, not the page's.
    const proxy = await page.$eval(appParts.frame, (f) => f.src);
    assert.equal(new URL(proxy).origin, new URL(env.relay.sandboxUrl).origin);
    assert.notEqual(new URL(proxy).origin, new URL(env.relay.url).origin);
  });

  test('the view\'s tool call asks in the card and runs only once approved', async (t) => {
    const frame = await appFrame(page, '#report', (t) => t.includes('"connected":true'));
    const before = env.probe.calls.length;
    await frame.click('#call');
    await page.waitForSelector(appParts.ask);
    assert.match(await page.textContent(appParts.ask), /The view asks to run probe-action \(probe\)/);
    await sleep(200);
    assert.equal(env.probe.calls.length, before, 'nothing runs before the person says yes');
    await page.click(appParts.yes);
    await appFrame(page, '#report', (t) => t.includes('"call"'));
    const report = await reportOf(frame);
    assert.deepEqual(report.call.content, [{ type: 'text', text: 'action ran with 7' }]);
    assert.deepEqual(env.probe.calls.slice(before), [['probe-action', { n: 7 }]]);
  });

  test('the view\'s message waits in the composer; its link asks first', async (t) => {
    const frame = await appFrame(page, '#report', (t) => t.includes('"connected":true'));
    const requests = env.upstream.requests.length;
    await frame.click('#message');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('textarea[part~=input]').value === 'A message from the probe');
    await sleep(300);
    assert.equal(env.upstream.requests.length, requests, 'never sent by itself');
    await frame.click('#link');
    await page.waitForSelector(appParts.ask);
    assert.match(await page.textContent(appParts.ask), /The view asks to open https:\/\/example\.com\/from-the-probe/);
    await page.click(appParts.no);
    await appFrame(page, '#report', (t) => t.includes('"link"'));
    assert.deepEqual((await reportOf(frame)).link, { isError: true });
    await page.fill(sel.input, '');
  });

  test('during a turn the view\'s tool call joins the turn: asked in the card, run once approved, the turn unaffected', async (t) => {
    const frame = await appFrame(page, '#report', (text) => text.includes('"connected":true'));
    const before = env.probe.calls.length;
    const requests = env.upstream.requests.length;
    env.upstream.script(textTurn('A slow answer.', { firstDelayMs: 2500 }));
    await sendInWidget(page, 'take your time');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().status !== 'idle');
    await frame.click('#call');
    // Taken once the model's message is complete, before the turn ends; asked in the app's card only.
    await page.waitForSelector(appParts.ask, { timeout: 10_000 });
    assert.match(await page.textContent(appParts.ask), /The view asks to run probe-action \(probe\)/);
    const state = await page.evaluate(() => {
      const s = document.querySelector('patchbridge-agent').controller.getState();
      return { status: s.status, callId: s.pendingConfirmation?.callId ?? null };
    });
    assert.equal(state.status, 'awaiting-confirmation', 'the turn waits for the app call\'s answer');
    assert.match(state.callId, /^app_[0-9a-f]{24}$/);
    assert.equal(await page.$(sel.confirmation), null, 'the dock leaves it to the card');
    assert.equal(env.probe.calls.length, before, 'nothing runs before the person says yes');
    await page.click(appParts.yes);
    await appFrame(page, '#report', (text) => text.includes('action ran with 7'));
    assert.deepEqual(env.probe.calls.slice(before), [['probe-action', { n: 7 }]], 'run on the real MCP server');
    await waitIdle(page);
    const after = await page.evaluate(() => {
      const s = document.querySelector('patchbridge-agent').controller.getState();
      return { outcome: s.lastOutcome, error: s.error?.code ?? null, messages: JSON.stringify(s.messages) };
    });
    assert.deepEqual([after.outcome, after.error], ['completed', null]);
    assert.ok(after.messages.includes('A slow answer.'));
    assert.ok(!after.messages.includes(state.callId), 'the app call is not part of the conversation');
    assert.equal(env.upstream.requests.length, requests + 1, 'no model call was added for it');
    assert.equal(await page.$(`${W} [part~=tool-card][data-call-id^=app_]`), null, 'no card in the transcript');
  });

  test('server-basic-vanillajs: get-time renders its view with the time; its button asks first', async (t) => {
    // get-time declares an outputSchema: an MCP client whose validator needs `eval` cannot list it under the
    // strict page policy (the package's client is eval-free; this fails if that ever changes).
    const time = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getMcpServers().find((s) => s.name === 'time'));
    assert.equal(time.status, 'ready', `the time server lists under the strict policy: ${time.reason}: ${time.message}`);
    await runTool(page, 'call_time_1', 'mcp__time__get-time', {}, 'Here is the time.');
    const frame = await appFrame(page, '#server-time', (t) => /^\d{4}-\d\d-\d\dT/.test(t.trim()));
    const first = (await frame.textContent('#server-time')).trim();
    await artifact(page, 'widget-mcp-app');
    await frame.click('#get-time-btn');
    await page.waitForSelector(appParts.ask);
    assert.match(await page.textContent(appParts.ask), /The view asks to run get-time \(time\)/);
    await page.click(appParts.yes);
    await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=app-ask]'));
    await appFrame(page, '#server-time', (t) => /^\d{4}-/.test(t.trim()) && t.trim() !== first, 10_000);
    await frame.click('#send-message-btn');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('textarea[part~=input]').value === 'This is message text.');
    await page.fill(sel.input, '');
  });

  test('a view that never starts falls back to the generic card with a note and an event', async (t) => {
    await runTool(page, 'call_broken_1', 'mcp__probe__broken', {}, 'It broke.');
    await page.waitForSelector(`${appParts.note}[data-code=APP_INIT_TIMEOUT]`, { timeout: 15_000 });
    const card = `${W} [part~=tool-card][data-call-id=call_broken_1]`;
    assert.match(await page.textContent(`${card} [part~=app-note]`), /not shown \(APP_INIT_TIMEOUT\)/);
    assert.equal(await page.$(`${card} [part~=app-frame]`), null, 'its frame is gone');
    assert.match(await page.textContent(card), /broken tool result/);
    const errors = await page.evaluate(() => window.appErrors);
    assert.deepEqual(errors.map((e) => [e.code, e.server, e.tool, e.callId]), [['APP_INIT_TIMEOUT', 'probe', 'broken', 'call_broken_1']]);
  });

  test('a view that floods the host, or grows without end, is stopped the same way', async (t) => {
    await runTool(page, 'call_flood_1', 'mcp__probe__flood', {}, 'Flooded.');
    await page.waitForSelector(`${W} [data-call-id=call_flood_1] [part~=app-note][data-code=APP_FLOOD]`);
    await runTool(page, 'call_grow_1', 'mcp__probe__grow', {}, 'Grown.');
    await page.waitForSelector(`${W} [data-call-id=call_grow_1] [part~=app-note][data-code=APP_RUNAWAY_SIZE]`);
    for (const id of ['call_flood_1', 'call_grow_1']) {
      assert.equal(await page.$(`${W} [data-call-id=${id}] [part~=app-frame]`), null, `${id}: its frame is gone`);
    }
    const codes = (await page.evaluate(() => window.appErrors)).map((e) => `${e.tool}:${e.code}`);
    assert.deepEqual(codes.slice(-2), ['flood:APP_FLOOD', 'grow:APP_RUNAWAY_SIZE']);
    // The turn and the page went on: the element is idle and answers the next message.
    env.upstream.script(textTurn('Still here.'));
    await sendInWidget(page, 'still there?');
    await waitIdle(page);
    assert.match(await page.textContent(`${W} .log`), /Still here\./);
  });

  test('after a reload the view gets the stored text only; another conversation tears the views down', async (t) => {
    const context = page.context();
    await page.close();
    page = await open(user, context);
    // Frames mount as their cards come near the viewport: bring the first one there.
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[data-call-id=call_probe_1]') != null, undefined, 20_000);
    await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[data-call-id=call_probe_1]').scrollIntoView());
    const frame = await appFrame(page, '#report', (t) => t.includes('"connected":true') && t.includes('"result"'), 20_000);
    const report = await reportOf(frame);
    assert.deepEqual(report.result.content, [{ type: 'text', text: 'probe result for isolation' }]);
    assert.equal(report.result.structuredContent, undefined, 'a stored result keeps its text only');
    assert.ok(await page.$(appParts.frame));
    await page.click(sel.newChat);
    await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=app-frame]'));
    assert.equal(page.frames().filter((f) => f.url() === 'about:srcdoc').length, 0);
    await context.close();
  });

  test('mcpApps names the servers whose views show: the others keep the generic card and load nothing', async (t) => {
    const other = await open(`apps-off-${Date.now()}`, null, ['time']);
    await runTool(other, 'call_probe_off', 'mcp__probe__probe', { topic: 'off' }, 'Generic.');
    const card = `${W} [part~=tool-card][data-call-id=call_probe_off]`;
    await other.waitForSelector(card);
    await sleep(500);
    assert.equal(await other.$(`${card} [part~=app-frame]`), null);
    assert.match(await other.textContent(card), /probe result for off/);
    assert.deepEqual(other.chunks, [], 'no app host for a page whose cards show no view');
    await other.context().close();
  });

  test('a sandbox on the page\'s own origin is refused: the generic card, a note, an event', async (t) => {
    const other = await open(`apps-same-${Date.now()}`);
    await other.evaluate((url) => { document.querySelector('patchbridge-agent').appSandbox = url; }, `${env.relay.url}/examples/apps.html`);
    await runTool(other, 'call_probe_same', 'mcp__probe__probe', { topic: 'same origin' }, 'Refused.');
    await other.waitForSelector(`${W} [data-call-id=call_probe_same] [part~=app-note][data-code=APP_SANDBOX_SAME_ORIGIN]`);
    assert.equal(await other.$(`${W} [part~=app-frame]`), null);
    assert.deepEqual((await other.evaluate(() => window.appErrors)).map((e) => e.code), ['APP_SANDBOX_SAME_ORIGIN']);
    await other.context().close();
  });
});
