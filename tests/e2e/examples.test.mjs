// End to end in headless Chromium: the example pages under examples/ as a person opens them from the relay
// (scripted demo model, development identity). Each page must load with no console error and no
// Content-Security-Policy violation (the hand-written pages carry the strict policy the widget documents, and an
// injected inline script and style prove that policy is in force), then do what its README promises:
//   no-build      the static script chats with the demo model; a page tool asks first and runs on Approve
//   headless      a UI of its own on createAgentController: a turn, a confirmation, the conversation list
//   custom-model  a model object of the page streams its answer and asks for a page tool (no relay traffic)
//   vite-app      built here with Vite; the element loads its wasm from the bundle's assets and answers
//   mcp-server    the example's own MCP server (node examples/mcp-server/server.mjs) through the relay's passthrough
//                 of its relay.json: an MCP tool asks first, naming its server, and runs on the server on Approve

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

import { launchChromium, newPage, waitInPage } from './support/browser.mjs';
import { ROOT, startRelay } from './support/relay.mjs';

const run = promisify(execFile);

/** The policy the hand-written examples declare (examples/no-build/README.md explains each directive). */
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob: https:; connect-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'";

let relay;
let browser;

before(async () => {
  relay = await startRelay({ demo: true });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await relay?.stop();
});

/**
 * Opens an example with CSP violations, element events and every requested URL recorded (the init script runs
 * before the page's own scripts and is not subject to the page's policy).
 */
async function openExample(examplePath, on = relay) {
  const page = await newPage(browser);
  page.requested = [];
  page.on('request', (request) => page.requested.push(request.url()));
  await page.addInitScript(() => {
    globalThis.__cspViolations = [];
    globalThis.__outcomes = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      globalThis.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
    document.addEventListener('patchbridge-outcome', (e) => globalThis.__outcomes.push(e.detail.outcome));
  });
  await page.goto(`${on.url}${examplePath}`);
  return page;
}

/**
 * The page ran cleanly (no console error, no CSP violation), declares the documented policy, and that policy is
 * really enforced: an inline script and an inline style injected afterwards are refused (the positive control
 * that makes "no violation" mean something). Call it last: the refusals are console errors themselves.
 */
async function assertCleanUnderCsp(page) {
  assert.deepEqual(page.problems, []);
  assert.deepEqual(await page.evaluate(() => globalThis.__cspViolations), []);
  assert.equal(await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content'), CSP);
  const control = await page.evaluate(async () => {
    const script = document.createElement('script');
    script.textContent = 'globalThis.__inlineScriptRan = true;';
    document.head.append(script);
    const style = document.createElement('style');
    style.textContent = 'body { outline: 3px solid red; }';
    document.head.append(style);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return {
      scriptRan: globalThis.__inlineScriptRan === true,
      styleApplied: getComputedStyle(document.body).outlineStyle === 'solid',
      // The page's own policy and the relay's header policy each report a violation: compare the kinds.
      violations: [...new Set(globalThis.__cspViolations.map((v) => v.split(' ')[0]))].sort(),
    };
  });
  assert.deepEqual(control, { scriptRan: false, styleApplied: false, violations: ['script-src-elem', 'style-src-elem'] });
}

// ---- helpers for <patchbridge-agent> (open shadow root: Playwright's CSS selectors pierce it) -------------------

/** Waits for the element's controller; a runtime that failed to load (its notice shows why) fails at once. */
async function whenElementReady(page) {
  const handle = await waitInPage(page, () => {
    const agent = document.querySelector('patchbridge-agent');
    if (agent?.controller) return 'ready';
    const notice = agent?.shadowRoot?.querySelector('[part~=notice]');
    return notice && !notice.hidden ? `notice: ${notice.textContent}` : null;
  });
  const result = await handle.jsonValue();
  const violations = await page.evaluate(() => globalThis.__cspViolations);
  assert.equal(result, 'ready', `the element did not start; CSP violations: ${JSON.stringify(violations)}`);
}

async function sendToWidget(page, text) {
  await page.fill('patchbridge-agent textarea[part~=input]', text);
  await page.click('patchbridge-agent [part~=send-button]');
}

/** Waits until the element is idle with `n` stable assistant messages; returns their texts. */
async function waitForAssistantMessages(page, n) {
  await waitInPage(page, (count) => {
    const agent = document.querySelector('patchbridge-agent');
    const stable = agent.shadowRoot.querySelectorAll('.msg.assistant:not(.draft)');
    return stable.length === count && agent.controller?.getState().status === 'idle';
  }, n);
  return page.locator('patchbridge-agent .msg.assistant:not(.draft)').allTextContents();
}

const toolStatuses = (page) => page.locator('patchbridge-agent [part~=tool-card] .status').allTextContents();

// ---- the examples --------------------------------------------------------------------------------------------

describe('example pages served by the relay', () => {
  test('index page links every example', async () => {
    const page = await openExample('/examples/');
    const links = await page.$$eval('main a[href]', (as) => as.map((a) => a.getAttribute('href')));
    assert.deepEqual(links.sort(), ['custom-model/', 'demo/', 'headless/', 'jwt-identity/', 'mcp-server/', 'no-build/', 'vite-app/dist/'].sort());
    // vite-app/dist/ exists once built (the Vite test below builds and opens it).
    for (const href of links.filter((h) => h !== 'vite-app/dist/')) {
      const response = await page.request.get(new URL(href, page.url()).href);
      assert.equal(response.status(), 200, href);
    }
    await assertCleanUnderCsp(page);
    await page.context().close();
  });

  test('no-build page: the static script under a strict CSP chats with the demo model, and a page tool runs only after Approve', async () => {
    const page = await openExample('/examples/no-build/');
    await whenElementReady(page);
    // The runtime came from the static script's own folder.
    assert.ok(page.requested.some((u) => u.endsWith('/npm/pkg/patchbridge_agent_bg.wasm')), 'dist/patchbridge-agent.js loaded the package\'s one wasm from ../pkg/');
    await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=banner]').hidden);
    assert.match(await page.textContent('patchbridge-agent [part~=banner]'), /scripted demo model, not AI/);

    await sendToWidget(page, 'hello');
    let answers = await waitForAssistantMessages(page, 1);
    assert.match(answers[0], /^\[Scripted demo, not AI\] Hello!/);
    assert.match(answers[0], /shopping\.add/, 'the model was given the page tool');

    await sendToWidget(page, 'add milk');
    await page.waitForSelector('patchbridge-agent [part~=approve-button]');
    assert.match(await page.textContent('patchbridge-agent [part~=confirmation]'), /shopping\.add[\s\S]*milk/);
    assert.deepEqual(await toolStatuses(page), ['Waiting for your approval']);
    assert.equal(await page.$$eval('#items li', (l) => l.length), 0, 'nothing runs before approval');

    await page.click('patchbridge-agent [part~=approve-button]');
    await waitInPage(page, () => document.querySelectorAll('#items li').length === 1);
    assert.deepEqual(await page.$$eval('#items li', (l) => l.map((li) => li.textContent)), ['milk']);
    answers = await waitForAssistantMessages(page, 3);
    assert.match(answers[2], /shopping\.add/);
    assert.match(answers[2], /Added "milk"/, 'the model saw the tool result');
    assert.deepEqual(await toolStatuses(page), ['Done']);
    assert.equal(await page.isHidden('#empty'), true);

    // The turn was saved on the relay for the page's user.
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision >= 2);
    const saved = await relay.fetchJson('GET', '/conversations', { user: 'no-build-user' });
    assert.equal(saved.body.items.length, 1);

    assert.deepEqual(await page.evaluate(() => globalThis.__outcomes), ['completed', 'completed']);
    await assertCleanUnderCsp(page);
    await page.context().close();
  });

  test('mcp-server page: the tools of the example\'s MCP server, through the relay\'s passthrough, ask first and run on the server', async () => {
    // The example's server, on a free port, and a relay with the example's relay.json `mcp` section (its URL
    // pointed at that port).
    const server = spawn(process.execPath, [path.join(ROOT, 'examples/mcp-server/server.mjs')], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
    const url = await new Promise((resolve, reject) => {
      let out = '';
      server.stdout.on('data', (d) => { out += d; const m = /listening on (http:\/\/\S+)/.exec(out); if (m) resolve(m[1]); });
      server.on('exit', (code) => reject(new Error(`the example server exited with ${code}`)));
    });
    const example = JSON.parse(readFileSync(path.join(ROOT, 'examples/mcp-server/relay.json'), 'utf8'));
    assert.equal(example.mcp.servers[0].url, 'http://127.0.0.1:8788/mcp', 'the README\'s port');
    const mcp = { ...example.mcp, servers: example.mcp.servers.map((s) => ({ ...s, url })) };
    const mcpRelay = await startRelay({ demo: true, mcp });
    try {
      const page = await openExample('/examples/mcp-server/', mcpRelay);
      await whenElementReady(page);
      await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getMcpServers?.()[0]?.status === 'ready');

      await sendToWidget(page, 'add note buy milk');
      await page.waitForSelector('patchbridge-agent [part~=approve-button]');
      assert.match(await page.textContent('patchbridge-agent [part~=confirmation]'), /notes[\s\S]*buy milk/);
      await page.click('patchbridge-agent [part~=approve-button]');
      let answers = await waitForAssistantMessages(page, 2);
      assert.match(answers.at(-1), /Added note 1: .*buy milk/, 'the model saw the server\'s result');

      // list_notes is read-only by the page's word: it runs without asking.
      await sendToWidget(page, 'list notes');
      answers = await waitForAssistantMessages(page, 4);
      assert.match(answers.at(-1), /1\. .*buy milk/);
      assert.deepEqual(await toolStatuses(page), ['Done', 'Done']);
      assert.ok(page.requested.some((u) => u.endsWith('/api/mcp/notes')), 'the page spoke to the server through the relay');
      // The SDK's client cancels the (empty) body of the 202 that answers each notification it POSTs, which
      // Chromium reports as an aborted request: that one is expected, any other failure is not.
      const aborted = /^request failed: POST \S+\/api\/mcp\/notes \(net::ERR_ABORTED\)$/;
      assert.ok(page.problems.filter((p) => aborted.test(p)).length <= 1, page.problems.join('\n'));
      page.problems.splice(0, Infinity, ...page.problems.filter((p) => !aborted.test(p)));
      await assertCleanUnderCsp(page);
      await page.context().close();
    } finally {
      server.kill();
      await mcpRelay.stop();
    }
  });

  test('headless page: its own UI on createAgentController completes a turn and a confirmation, lists and deletes the conversation, stops a waiting turn', async () => {
    const page = await openExample('/examples/headless/');
    await waitInPage(page, () => document.getElementById('status').textContent === 'idle');
    assert.ok(page.requested.some((u) => u.endsWith('/npm/pkg/patchbridge_agent_bg.wasm')), 'wasm loaded by npm/index.js');
    assert.equal(await page.locator('patchbridge-agent').count(), 0, 'no widget on this page');

    await page.fill('#input', 'hello');
    await page.click('#send');
    await waitInPage(page, () => document.querySelectorAll('#messages li.assistant').length === 1 && document.getElementById('status').textContent === 'idle');
    assert.match(await page.textContent('#messages li.assistant'), /^\[Scripted demo, not AI\] Hello!.*todos\.add/s);

    await page.fill('#input', 'add todo buy milk');
    await page.click('#send');
    await waitInPage(page, () => !document.getElementById('confirm').hidden);
    assert.equal(await page.textContent('#status'), 'awaiting-confirmation');
    assert.equal(await page.textContent('#confirm-tool'), 'todos.add');
    assert.deepEqual(JSON.parse(await page.textContent('#confirm-args')), { text: 'buy milk' });
    assert.equal(await page.isEnabled('#stop'), true);
    assert.equal(await page.isDisabled('#send'), true);
    assert.equal(await page.$$eval('#todos li', (l) => l.length), 0);

    await page.click('#approve');
    await waitInPage(page, () => document.querySelectorAll('#messages li.assistant').length === 3 && document.getElementById('status').textContent === 'idle');
    assert.deepEqual(await page.$$eval('#todos li', (l) => l.map((li) => li.textContent)), ['buy milk']);
    assert.equal(await page.isHidden('#confirm'), true);
    assert.deepEqual(await page.$$eval('#messages > li', (l) => l.map((li) => li.className)),
      ['msg user', 'msg assistant', 'msg user', 'msg assistant', 'msg tool', 'msg assistant']);
    assert.equal(await page.textContent('#messages li.tool'), 'Added "buy milk".');
    assert.match(await page.$$eval('#messages li.assistant', (l) => l.at(-1).textContent), /buy milk/);

    // The saved conversation appears in the list; deleting it removes it on the relay and starts a new one.
    await waitInPage(page, () => document.querySelectorAll('#conversations li').length === 1);
    assert.equal(await page.textContent('#conv-source'), 'Listed with controller.listConversations().');
    const listed = await relay.fetchJson('GET', '/conversations', { user: 'headless-user' });
    assert.equal(listed.body.items.length, 1);
    assert.equal(await page.getAttribute('#conversations li .open', 'title'), listed.body.items[0].id);
    await page.click('#conversations li .delete');
    await waitInPage(page, () => document.querySelectorAll('#conversations li').length === 0
      && document.getElementById('conv-status').textContent === 'No saved conversations yet.');
    assert.deepEqual((await relay.fetchJson('GET', '/conversations', { user: 'headless-user' })).body.items, []);
    assert.equal(await page.$$eval('#messages > li', (l) => l.length), 0, 'the deleted open conversation was replaced by a new one');

    // Stop while a tool waits for approval: the turn is cancelled, the tool never runs, nothing is saved.
    await page.fill('#input', 'add todo walk the dog');
    await page.click('#send');
    await waitInPage(page, () => !document.getElementById('confirm').hidden);
    await page.click('#stop');
    await waitInPage(page, () => document.getElementById('status').textContent === 'idle');
    assert.equal(await page.textContent('#notice'), 'Stopped. Nothing of that turn was saved.');
    assert.equal(await page.isHidden('#confirm'), true);
    assert.deepEqual(await page.$$eval('#todos li', (l) => l.map((li) => li.textContent)), ['buy milk']);
    assert.deepEqual((await relay.fetchJson('GET', '/conversations', { user: 'headless-user' })).body.items, []);

    await assertCleanUnderCsp(page);
    await page.context().close();
  });

  test('custom-model page: a model object of the page streams its answer and its tool asks for confirmation, with no relay traffic', async () => {
    const page = await openExample('/examples/custom-model/');
    await whenElementReady(page);
    assert.equal(await page.isHidden('patchbridge-agent [part~=banner]'), true, 'not the relay demo');

    const expected = 'You said: “hello there”. I am an echo model running in this page, not AI. Say “stamp gold” to see a tool.';
    await sendToWidget(page, 'hello there');
    // While streaming, the draft holds a growing, still incomplete prefix of the answer.
    const partial = await (await waitInPage(page, (full) => {
      const draft = document.querySelector('patchbridge-agent').shadowRoot.querySelector('.msg.assistant.draft');
      const text = draft?.textContent ?? '';
      return text.length > 0 && text.length < full.length ? text : null;
    }, expected)).jsonValue();
    let answers = await waitForAssistantMessages(page, 1);
    assert.equal(answers[0], expected);
    assert.ok(expected.startsWith(partial.replace(/\s+$/, '')) && partial.length < expected.length, `streamed prefix: ${JSON.stringify(partial)}`);

    await sendToWidget(page, 'stamp gold');
    await page.waitForSelector('patchbridge-agent [part~=approve-button]');
    assert.match(await page.textContent('patchbridge-agent [part~=confirmation]'), /stamps\.add[\s\S]*gold/);
    assert.deepEqual(await toolStatuses(page), ['Waiting for your approval']);
    assert.equal(await page.$$eval('#stamps li', (l) => l.length), 0);

    await page.click('patchbridge-agent [part~=approve-button]');
    answers = await waitForAssistantMessages(page, 3);
    assert.deepEqual(await page.$$eval('#stamps li', (l) => l.map((li) => li.textContent)), ['gold']);
    assert.equal(answers[2], 'Done: the tool answered “stamp “gold” is on the page”. (Echo model in this page, not AI.)');
    assert.deepEqual(await toolStatuses(page), ['Done']);
    assert.deepEqual(await page.evaluate(() => globalThis.__outcomes), ['completed', 'completed']);
    // No endpoint: nothing saved, no conversation, no request to a relay API.
    assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation), null);
    assert.deepEqual(page.requested.filter((u) => u.includes('/api/')), []);

    await assertCleanUnderCsp(page);
    await page.context().close();
  });

  test('vite app: built with Vite from this repository, the element loads its wasm from the bundle and answers', async (t) => {
    const app = path.join(ROOT, 'examples', 'vite-app');
    const started = Date.now();
    if (!existsSync(path.join(app, 'node_modules', 'vite', 'package.json')) || !existsSync(path.join(app, 'node_modules', '@patchbridge', 'agent'))) {
      // `npm install`, not `npm ci`: vite 8.4.0 names an optional dependency the registry does not serve
      // (napi-windows-process-start-time, 404), so the lockfile cannot list it and `npm ci` refuses the lockfile as
      // out of sync; `npm install` skips the missing optional package and otherwise follows the lockfile.
      await run('npm', ['install', '--no-audit', '--no-fund'], { cwd: app, timeout: 100_000 });
      t.diagnostic(`npm install: ${Date.now() - started} ms`);
    }
    const buildStarted = Date.now();
    const build = await run('npx', ['--no-install', 'vite', 'build'], { cwd: app, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } });
    t.diagnostic(`vite build: ${Date.now() - buildStarted} ms`);
    const output = `${build.stdout}\n${build.stderr}`;
    // Any warning (an externalised Node built-in, a duplicate key in the glue, …) is a regression of the
    // package's bundler-friendliness.
    const warnings = output.split('\n').filter((line) => /warn|externalized|\[plugin|duplicate/i.test(line));
    assert.deepEqual(warnings, [], output);

    const assets = readdirSync(path.join(app, 'dist', 'assets'));
    const wasm = assets.filter((f) => f.endsWith('.wasm'));
    assert.equal(wasm.length, 1, `one wasm asset: ${assets.join(', ')}`);
    const size = (f) => statSync(path.join(app, 'dist', 'assets', f)).size;
    const jsBytes = assets.filter((f) => f.endsWith('.js')).reduce((sum, f) => sum + size(f), 0);
    t.diagnostic(`bundle: ${assets.filter((f) => f.endsWith('.js')).length} JS files ${jsBytes} bytes, wasm ${size(wasm[0])} bytes`);
    assert.equal(size(wasm[0]), statSync(path.join(ROOT, 'npm', 'pkg', 'patchbridge_agent_bg.wasm')).size);
    assert.match(readFileSync(path.join(app, 'dist', 'index.html'), 'utf8'), /src="\.\/assets\/index-[\w-]+\.js"/, 'relative asset URLs');

    // The relay serves the build from the examples directory, same origin as its /api.
    const page = await openExample('/examples/vite-app/dist/');
    await whenElementReady(page);
    const wasmRequests = page.requested.filter((u) => u.endsWith('.wasm'));
    assert.deepEqual(wasmRequests, [`${relay.url}/examples/vite-app/dist/assets/${wasm[0]}`], 'the wasm came from the bundle, once');
    assert.deepEqual(page.requested.filter((u) => u.includes('/npm/')), [], 'nothing loaded from the unbundled package');
    assert.match(await page.textContent('#limits'), /^Model calls per turn: 8 here \(package default \d+\)\.$/);

    await sendToWidget(page, 'hello');
    const answers = await waitForAssistantMessages(page, 1);
    assert.match(answers[0], /^\[Scripted demo, not AI\] Hello!.*notes\.add, notes\.list/s);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
});
