// Headless Chromium smoke test of the BUILT package: a page served from 127.0.0.1 imports npm/index.js (the wasm is
// fetched, not read from disk), runs a controller tool loop with a scripted in-page model and a confirmation, and
// cancels a DefaultAgentRuntime execution. Driven by playwright-core against Debian's /usr/bin/chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../..', import.meta.url));
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json' };
const served = ['/npm/', '/tests/browser/'];

function serve() {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname));
    if (!served.some((prefix) => path.startsWith(prefix))) { res.writeHead(404).end(); return; }
    try {
      const body = await readFile(join(root, path));
      res.writeHead(200, { 'content-type': types[extname(path)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('headless Chromium: tool loop with confirmation through createAgentController, cancel through DefaultAgentRuntime', async () => {
  const server = await serve();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`); });
    const { port } = server.address();
    await page.goto(`http://127.0.0.1:${port}/tests/browser/smoke.html`);
    await page.waitForFunction(() => window.__smoke !== undefined, null, { timeout: 20_000 });
    const smoke = await page.evaluate(() => window.__smoke);
    assert.equal(smoke.ok, true, smoke.error);
    const r = smoke.result;
    assert.equal(r.outcome, 'completed');
    assert.deepEqual(r.items, ['buy milk'], 'the page tool ran once, after approval');
    assert.ok(r.statuses.includes('awaiting-confirmation'), `statuses: ${r.statuses}`);
    assert.deepEqual(r.roles, ['user', 'assistant', 'tool', 'assistant']);
    assert.deepEqual(r.assistantBlocks, [
      { type: 'text', text: 'Adding it now.' },
      { type: 'tool-call', callId: 'call-1', name: 'page.addItem', input: { text: 'buy milk' } },
    ]);
    assert.deepEqual(r.toolResult, { type: 'tool-result', callId: 'call-1', content: 'added buy milk; aborted=false', isError: false });
    assert.equal(r.finalText, 'Done: the list has one item.');
    assert.equal(r.requests.length, 2);
    assert.deepEqual(r.requests[1], { messages: 3, tools: ['page.addItem'], signalIsAbortSignal: true });
    assert.equal(r.frozen, true);
    assert.equal(r.cancelled, 'cancelled');
    assert.deepEqual(r.limitError, { isAgentError: true, code: 'AGENT_INVALID_LIMITS', limit: 'maxToolCalls' });
    assert.equal(await page.locator('#items li').count(), 1);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    server.close();
  }
});
