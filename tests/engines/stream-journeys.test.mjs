// The demo page in Firefox ESR and in WebKitGTK against the real relay and a fake OpenAI Chat Completions upstream
// (real SSE wire format, tests/e2e/support/fake-upstream.mjs), for what the scripted demo model cannot show: an
// answer that arrives in pieces is rendered as Markdown while it streams, and Stop in mid-stream cancels the
// provider call (the relay closes the upstream connection) and saves nothing. Same driver as demo-journeys.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { startFakeUpstream } from '../e2e/support/fake-upstream.mjs';
import { textTurn } from '../e2e/support/openai-chat.mjs';
import { ROOT, startRelay } from '../e2e/support/relay.mjs';
import { launch, selectedEngines } from './support/driver.mjs';
import { sel, sendInWidget, waitBubbles, waitOutcome, waitReady } from './support/widget.mjs';

let upstream;
let relay;
before(async () => {
  upstream = await startFakeUpstream();
  relay = await startRelay({ upstream: upstream.url, examplesDir: path.join(ROOT, 'examples') });
});
after(async () => {
  await relay?.stop();
  await upstream?.close();
});

for (const engine of selectedEngines()) {
  describe(`streamed answers in ${engine}`, () => {
    let browser;
    let users = 0;
    before(async () => { browser = await launch(engine); });
    after(async () => { await browser?.close(); });

    async function openDemo() {
      users += 1;
      const page = await browser.openPage(`${relay.url}/examples/demo/?model=openai-e2e&user=${engine}-s${users}-${Date.now()}`);
      await waitReady(page);
      return page;
    }

    test('an answer streamed in pieces is rendered as Markdown and stored', async () => {
      const page = await openDemo();
      upstream.script(textTurn('Some **bold** words and `code`, then a list:\n\n- one\n- two\n', { pieces: 12, delayMs: 20 }));
      await sendInWidget(page, 'show me markdown');
      await waitOutcome(page, 'completed', 1);
      await waitBubbles(page, 2, /two/);
      const rendered = await page.evaluate(() => {
        const bubble = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=bubble-assistant]')].at(-1);
        return { strong: bubble.querySelector('strong')?.textContent, code: bubble.querySelector('code')?.textContent, items: [...bubble.querySelectorAll('li')].map((li) => li.textContent) };
      });
      assert.deepEqual(rendered, { strong: 'bold', code: 'code', items: ['one', 'two'] });
      const state = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation);
      assert.equal(state?.revision, 1, 'the turn was stored as the conversation\'s first revision');
      assert.deepEqual(upstream.unexpected, []);
      assert.deepEqual(await page.problems(), []);
      await page.close();
    });

    test('Stop in mid-stream: the partial answer was shown, the provider call is cancelled, nothing is saved', async () => {
      const page = await openDemo();
      // The upstream sends a few words and then keeps the response open: the turn can only end by Stop.
      upstream.script(textTurn('word '.repeat(40), { pieces: 20, delayMs: 50, holdOpen: true }));
      const seen = upstream.requests.length;
      await sendInWidget(page, 'talk for a while');
      await page.waitFor(() => {
        const s = document.querySelector('patchbridge-agent').controller.getState();
        const bubble = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=bubble-assistant]')].at(-1);
        return s.status !== 'idle' && /word word/.test(bubble?.textContent ?? '');
      }, null, 'part of the answer on screen while the turn runs');
      await page.click(sel.stop);
      await waitOutcome(page, 'cancelled', 1);
      await page.waitFor(() => {
        const notice = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]');
        return notice && !notice.hidden && /Stopped/.test(notice.textContent);
      }, null, 'the "Stopped" notice');
      assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation), null,
        'a cancelled first turn stores no conversation');
      const record = upstream.requests[seen];
      await record.closed;
      assert.equal(record.disconnected, true, 'the relay closed the provider stream');
      assert.deepEqual(upstream.unexpected, []);
      assert.deepEqual(await page.problems(), []);
      await page.close();
    });
  });
}
