// Page tools from the WebMCP draft API join <patchbridge-agent>'s registry as front-end tools, with the
// third-party polyfill @mcp-b/webmcp-polyfill and with Chromium's native implementation
// (--enable-features=WebMCP): a read-only tool (readOnlyHint) runs without asking, any other tool asks first,
// and a tool registered later appears in the registry for the next turn.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import path from 'node:path';

import { launchChromium, newPage, waitInPage } from './support/browser.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { ROOT } from './support/relay.mjs';
import { sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();
// A second Chromium with the native WebMCP implementation switched on.
let nativeBrowser;
before(async () => {
  nativeBrowser = await launchChromium(['--enable-features=WebMCP']);
});
after(async () => { await nativeBrowser?.close(); });

const registryNames = (page) => page.evaluate(() => document.querySelector('patchbridge-agent').controller
  .getToolInspectionSource().snapshot.tools.map((t) => `${t.name}:${t.readOnly ? 'ro' : 'asks'}`).sort());

async function journey(page) {
  await waitReady(page);
  await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getToolInspectionSource().snapshot.tools.length === 2);
  assert.deepEqual(await registryNames(page), ['page.erase:asks', 'page.lookup:ro']);

  // The read-only tool runs without a confirmation; its result reaches the provider.
  env.upstream.script(
    toolCallTurn([{ id: 'call_lookup', name: 'page_lookup', arguments: { word: 'milk' } }]),
    textTurn('There are 3.'),
  );
  const seen = env.upstream.requests.length;
  await sendInWidget(page, 'how many milk items?');
  await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().lastOutcome === 'completed');
  await waitIdle(page);
  assert.equal(await page.$(sel.confirmation), null);
  const sent = env.upstream.requests[seen].body;
  assert.deepEqual(sent.tools.map((t) => t.function.name).sort(), ['page_erase', 'page_lookup']);
  const toolMessage = env.upstream.requests[seen + 1].body.messages.find((m) => m.role === 'tool');
  assert.equal(toolMessage.content, 'found 3 items for milk');

  // The other one asks first, and runs only after Approve.
  env.upstream.script(
    toolCallTurn([{ id: 'call_erase', name: 'page_erase', arguments: { item: 'milk' } }]),
    textTurn('Erased.'),
  );
  await sendInWidget(page, 'erase milk');
  await page.waitForSelector(sel.confirmation);
  assert.deepEqual(await page.evaluate(() => window.erased), []);
  await page.click(sel.approve);
  await waitIdle(page);
  assert.deepEqual(await page.evaluate(() => window.erased), ['milk']);

  // A tool registered later joins the registry (for the next turn).
  await page.evaluate(async () => {
    const context = document.modelContext ?? navigator.modelContext;
    await context.registerTool({
      name: 'page.count', description: 'Count items.', inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true }, execute: async () => '0',
    });
  });
  await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getToolInspectionSource().snapshot.tools.length === 3);
  assert.deepEqual(await registryNames(page), ['page.count:ro', 'page.erase:asks', 'page.lookup:ro']);
}

describe('WebMCP page tools', () => {
  test('with @mcp-b/webmcp-polyfill', async () => {
    const page = await newPage(env.browser);
    await page.addInitScript({ path: path.join(ROOT, 'node_modules', '@mcp-b', 'webmcp-polyfill', 'dist', 'index.iife.js') });
    await page.goto(`${env.relay.url}/examples/webmcp.html?user=poly-${Date.now()}`);
    await journey(page);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test("with Chromium's native WebMCP", async () => {
    const page = await newPage(nativeBrowser);
    await page.goto(`${env.relay.url}/examples/webmcp.html?user=native-${Date.now()}`);
    const native = await page.evaluate(() => typeof document.modelContext?.registerTool === 'function' && typeof document.modelContext?.executeTool === 'function');
    assert.equal(native, true, 'this Chromium exposes document.modelContext natively');
    await journey(page);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
});
