// `patchbridge-relay demo` as a person who has only the binary runs it: started in an empty temporary folder with
// no configuration and no PATCHBRIDGE_* variables, it makes its data folder there, serves the demo page and the
// package's browser files from the binary itself, and a turn (with a confirmed page tool) completes on it in
// headless Chromium. The conversation is still there after a restart in the same folder.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launchChromium, newPage, waitInPage } from './support/browser.mjs';
import { ROOT, relayBinary } from './support/relay.mjs';
import { logOf, sel, sendInWidget, waitAssistantCount, waitIdle, waitReady } from './support/widget.mjs';

let browser;
let folder;
const running = new Set();

before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'patchbridge-demo-mode-'));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const relay of running) await relay.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** `patchbridge-relay demo --port 0` in `cwd`, with the environment stripped of every PATCHBRIDGE_* variable. */
async function startDemo(cwd) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PATCHBRIDGE_')));
  env.PATCHBRIDGE_LOG = 'warn';
  const child = spawn(relayBinary(), ['demo', '--port', '0'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not start within 20 s\n${stderr}`)), 20_000);
    // Started once it has said where to look (or that the page is not built in).
    const check = () => {
      if (/^open http:\/\/127\.0\.0\.1:\d+\/ /m.test(stdout) || /compiled without the demo page/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', (d) => { stdout += d; check(); });
    child.stderr.on('data', (d) => { stderr += d; check(); });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`demo exited with ${code}\n${stderr}`)); });
  });
  child.removeAllListeners('exit');
  const relay = {
    url: /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)[1],
    stdout,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      running.delete(relay);
    },
  };
  running.add(relay);
  return relay;
}

describe('patchbridge-relay demo, started from an empty folder', () => {
  test('serves the built-in demo page, on which a turn with an approved page tool completes, and keeps it in ./patchbridge-data', async () => {
    assert.deepEqual(readdirSync(folder), []);
    const relay = await startDemo(folder);
    assert.doesNotMatch(relay.stderr(), /compiled without the demo page/, 'the relay under test was built after the package (scripts/test-e2e.sh does this)');
    assert.match(relay.stdout, /^model: scripted demo model \(not AI\)$/m);
    assert.match(relay.stdout, new RegExp(`^data: ${path.join(folder, 'patchbridge-data').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.ok(existsSync(path.join(folder, 'patchbridge-data', 'relay.sqlite3')), 'SQLite file in the data folder');
    assert.deepEqual(readdirSync(folder), ['patchbridge-data'], 'nothing else is written to the folder');

    // The files are the package's current build, served from the binary (the folder has none of them).
    for (const file of ['dist/patchbridge-agent.js', 'pkg/patchbridge_agent_bg.wasm']) {
      const served = Buffer.from(await (await fetch(`${relay.url}/npm/${file}`)).arrayBuffer());
      assert.ok(served.equals(readFileSync(path.join(ROOT, 'npm', file))), `${file} is npm/'s (rebuild the relay after the package)`);
    }

    const page = await newPage(browser);
    const requested = [];
    page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    await page.goto(`${relay.url}/`);
    assert.equal(new URL(page.url()).pathname, '/examples/demo/', '/ opens the demo page');
    await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=banner]').hidden);
    assert.match(await page.textContent(sel.banner), /scripted demo model, not AI/);
    await waitReady(page);
    assert.ok(requested.includes('/npm/pkg/patchbridge_agent_bg.wasm'), 'the wasm the static script loads from ../pkg/');

    await sendInWidget(page, 'hello');
    await waitAssistantCount(page, 1);
    await waitIdle(page);
    assert.match((await logOf(page)).at(-1).text, /^\[Scripted demo, not AI\] Hello!/);

    await sendInWidget(page, 'add todo buy milk');
    await page.waitForSelector(sel.confirmation);
    assert.deepEqual(await page.$$eval('#todos li', (l) => l.length), 0, 'nothing runs before approval');
    await page.click(sel.approve);
    await waitInPage(page, () => document.querySelectorAll('#todos li').length === 1);
    assert.deepEqual(await page.$$eval('#todos li', (l) => l.map((li) => li.textContent)), ['buy milk']);
    await waitIdle(page);
    assert.match((await logOf(page)).at(-1).text, /buy milk/);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision >= 2);
    assert.deepEqual(page.problems, [], 'no console error, failed request or CSP violation');
    await page.context().close();

    // Stopped and started again in the same folder: the demo user's conversation is still there.
    await relay.stop();
    const again = await startDemo(folder);
    const response = await fetch(`${again.url}/api/conversations`, { headers: { 'x-patchbridge-user': 'demo-user' } });
    assert.equal(response.status, 200);
    const { items } = await response.json();
    assert.equal(items.length, 1, 'the conversation saved before the restart');
    await again.stop();
  });
});
