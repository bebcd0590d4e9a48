// MCP Apps' render journey in Firefox ESR and in WebKitGTK (Chromium runs it, with the isolation probe and every
// action, in tests/e2e/widget-apps.test.mjs): the real relay with its sandbox listener (page at 127.0.0.1, sandbox
// at localhost on a port of its own, the relay's strict page policy plus `frame-src <sandbox>`), its MCP
// passthrough to the probe server (tests/e2e/support/apps-servers.mjs), a fake OpenAI Chat upstream. A probe call,
// once approved, shows its view in the card (`data-app="ready"`: the view initialised through the sandbox proxy),
// inside a frame of the sandbox origin; a view that never starts falls back with its note. Read from the page's
// side only (the engines' drivers do not reach into the sandbox's frames).

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { startProbeServer } from '../e2e/support/apps-servers.mjs';
import { textTurn, toolCallTurn } from '../e2e/support/openai-chat.mjs';
import { startFakeUpstream } from '../e2e/support/fake-upstream.mjs';
import { ROOT, startRelay } from '../e2e/support/relay.mjs';
import { launch, selectedEngines } from './support/driver.mjs';
import { sel, sendInWidget, waitConfirmation, waitIdle, waitReady } from './support/widget.mjs';

// One setup in order: the probe server, then the upstream and the relay that names it.
const suite = { probe: null, upstream: null, relay: null };
before(async () => {
  suite.probe = await startProbeServer({ forbiddenUrl: 'http://127.0.0.1:9/' });
  suite.upstream = await startFakeUpstream();
  suite.relay = await startRelay({
    upstream: suite.upstream.url, examplesDir: path.join(ROOT, 'tests', 'e2e', 'pages'), sandbox: true,
    mcp: { servers: [{ name: 'probe', url: suite.probe.url, users: 'all' }] },
  });
});
after(async () => {
  await suite.relay?.stop();
  await suite.upstream?.close();
  await suite.probe?.close();
});

for (const engine of selectedEngines()) {
  describe(`MCP Apps in ${engine}`, () => {
    let browser;
    let page;

    before(async () => {
      browser = await launch(engine);
      page = await browser.openPage(`${suite.relay.url}/examples/apps.html`, { width: 1000, height: 800 });
      await page.waitFor(() => customElements.get('patchbridge-agent') != null, null, 'the element defined');
      await page.evaluate(({ user, api, sandbox }) => {
        const el = document.createElement('patchbridge-agent');
        el.setAttribute('endpoint', '/api');
        el.setAttribute('app-sandbox', sandbox);
        el.headers = { 'x-patchbridge-user': user };
        el.mcpServers = [{ name: 'probe', url: `${api}/mcp/probe`, headers: { 'x-patchbridge-user': user } }];
        document.body.append(el);
        return true;
      }, { user: `${engine}-apps-${Date.now()}`, api: suite.relay.api, sandbox: suite.relay.sandboxUrl });
      await waitReady(page);
      const status = await page.waitFor(() => {
        const li = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=mcp-servers] li');
        return li && li.dataset.status !== 'connecting' ? li.dataset.status : null;
      }, null, 'the probe server settled');
      assert.equal(await page.evaluate(() => typeof document.querySelector('patchbridge-agent').controller.readMcpResource), 'function', 'the runtime has its MCP Apps members');
      assert.equal(status, 'ready', `the probe server lists in ${engine}: ${await page.evaluate(() => JSON.stringify(document.querySelector('patchbridge-agent').controller.getMcpServers()[0].message))}`);
    });
    after(async () => {
      await page?.close().catch(() => {});
      await browser?.close();
    });

    async function run(id, name, answer) {
      suite.upstream.script(toolCallTurn([{ id, name, arguments: {} }]), textTurn(answer));
      await sendInWidget(page, `run ${name}`);
      await waitConfirmation(page);
      await page.click(sel.approve);
      await waitIdle(page);
    }

    test('an approved call shows its view in the card, framed from the sandbox origin', async (t) => {
      await run('call_probe_e', 'mcp__probe__probe', 'Shown.');
      const frame = await page.waitFor((id) => {
        const card = document.querySelector('patchbridge-agent').shadowRoot.querySelector(`[data-call-id=${id}]`);
        const iframe = card?.querySelector('[part~=app-frame]');
        return card?.dataset.app === 'ready' && iframe ? { src: iframe.src, height: iframe.getBoundingClientRect().height } : null;
      }, 'call_probe_e', 'the probe view initialised');
      assert.equal(new URL(frame.src).origin, new URL(suite.relay.sandboxUrl).origin);
      assert.ok(frame.height >= 32, `the frame has a height (${frame.height})`);
    });

    test('a view that never starts falls back to the generic card with its note', async (t) => {
      await run('call_broken_e', 'mcp__probe__broken', 'Broken.');
      const note = await page.waitFor((id) => {
        const card = document.querySelector('patchbridge-agent').shadowRoot.querySelector(`[data-call-id=${id}]`);
        return card?.dataset.app === 'failed' && !card.querySelector('[part~=app-frame]') ? card.querySelector('[part~=app-note]')?.dataset.code ?? null : null;
      }, 'call_broken_e', 'the fallback note');
      assert.equal(note, 'APP_INIT_TIMEOUT');
    });
  });
}
