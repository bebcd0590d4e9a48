// The demo page (examples/demo/, <patchbridge-agent> beside the page's todo tools) in Firefox ESR and in WebKitGTK,
// against the real relay binary running its scripted demo model on a fresh SQLite file: the journeys a new user
// takes first, the same file for both engines through the engine-neutral driver (support/driver.mjs).
// Ready; a message and its streamed answer; a tool confirmation approved (the page tool runs) and one rejected
// (it never runs); Stop while a tool waits; a reload restores the conversation from the relay's history, which
// the history panel lists; the Chinese strings and the dark theme. Chromium runs the same journeys and more in tests/e2e/widget-demo.test.mjs.
//
// `PB_ENGINES=firefox` or `PB_ENGINES=webkit` runs one engine; both by default.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { startRelay } from '../e2e/support/relay.mjs';
import { launch, selectedEngines } from './support/driver.mjs';
import {
  sel, sendInWidget, shown, todos, toolStatuses, waitBubbles, waitConfirmation, waitOutcome, waitReady,
} from './support/widget.mjs';

let relay;
before(async () => { relay = await startRelay({ demo: true }); });
after(async () => { await relay?.stop(); });

const controllerState = (page) => page.evaluate(() => {
  const s = document.querySelector('patchbridge-agent').controller.getState();
  return { status: s.status, lastOutcome: s.lastOutcome, conversation: s.conversation && { id: s.conversation.id, revision: s.conversation.revision } };
});

for (const engine of selectedEngines()) {
  describe(`the demo page in ${engine}`, () => {
    let browser;
    let users = 0;
    before(async () => { browser = await launch(engine); });
    after(async () => { await browser?.close(); });

    /** A fresh page (empty storage) for a new demo user; `query` adds demo page parameters (`&lang=zh`). */
    async function openDemo(query = '') {
      users += 1;
      const page = await browser.openPage(`${relay.url}/examples/demo/?user=${engine}-${users}-${Date.now()}${query}`);
      await waitReady(page);
      return page;
    }

    test('ready: the banner says it is a scripted demo, and a message gets its streamed answer', async () => {
      const page = await openDemo();
      await page.waitFor(() => {
        const banner = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=banner]');
        return banner && !banner.hidden && /scripted demo model, not AI/.test(banner.textContent);
      }, null, 'the scripted-demo banner');
      assert.equal(await shown(page, '[part~=send-button]'), true, 'Send is offered when idle');

      await sendInWidget(page, 'hello');
      const log = await waitBubbles(page, 2, /Hello! I am a scripted demo model/);
      assert.deepEqual(log.map((b) => b.role), ['user', 'assistant']);
      assert.equal(log[0].text, 'hello');
      await waitOutcome(page, 'completed', 1);
      assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=input]').value), '',
        'the message box is empty once sent');
      assert.deepEqual(await page.problems(), []);
      await page.close();
    });

    test('approve: the confirmation card names the tool, nothing runs before Approve, then the page tool runs', async () => {
      const page = await openDemo();
      await sendInWidget(page, 'add todo buy milk');
      const card = await waitConfirmation(page);
      assert.match(card, /todos\.add/);
      assert.match(card, /buy milk/);
      assert.deepEqual(await todos(page), [], 'nothing ran before the person decided');
      assert.equal(await shown(page, '[part~=stop-button]'), true, 'Stop is offered while the tool waits');

      await page.click(sel.approve);
      await page.waitFor(() => document.querySelectorAll('#todos li').length === 1, null, 'the page tool to add the todo');
      assert.deepEqual(await todos(page), ['buy milk']);
      await waitOutcome(page, 'completed', 1);
      await waitBubbles(page, 2, /buy milk/);
      assert.equal(await shown(page, '[part~=confirmation]'), false, 'the card is gone once answered');
      assert.deepEqual(await toolStatuses(page), ['Done']);
      assert.deepEqual(await page.problems(), []);
      await page.close();
    });

    test('reject: the page tool never runs and its card says it was rejected', async () => {
      const page = await openDemo();
      await sendInWidget(page, 'add todo walk the dog');
      await waitConfirmation(page);
      await page.click(sel.reject);
      await waitOutcome(page, 'completed', 1);
      await page.waitFor(() => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=confirmation]'), null, 'the card to go');
      assert.deepEqual(await todos(page), []);
      assert.deepEqual(await page.waitFor(() => {
        const s = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card] [role=status]')].map((e) => e.textContent);
        return s.length === 1 && s[0] === 'Rejected' ? s : null;
      }, null, 'the card to read Rejected'), ['Rejected']);
      assert.deepEqual(await page.problems(), []);
      await page.close();
    });

    test('Stop while a tool waits for approval: the turn is cancelled, the card goes, the tool never runs', async () => {
      const page = await openDemo();
      await sendInWidget(page, 'add todo never');
      await waitConfirmation(page);
      await page.click(sel.stop);
      await waitOutcome(page, 'cancelled', 1);
      await page.waitFor(() => {
        const root = document.querySelector('patchbridge-agent').shadowRoot;
        const notice = root.querySelector('[part~=notice]');
        return !root.querySelector('[part~=confirmation]') && notice && !notice.hidden && /Stopped/.test(notice.textContent);
      }, null, 'the card to go and the "Stopped" notice');
      assert.deepEqual(await todos(page), []);
      assert.equal((await controllerState(page)).conversation, null, 'a cancelled first turn stores no conversation');
      assert.equal(await shown(page, '[part~=send-button]'), true, 'Send is back');
      assert.deepEqual(await page.problems(), []);
      await page.close();
    });

    test('reload: the open conversation comes back from the relay with its messages and tool result', async () => {
      const page = await openDemo();
      await sendInWidget(page, 'hello');
      await waitOutcome(page, 'completed', 1);
      await sendInWidget(page, 'add todo buy milk');
      await waitConfirmation(page);
      await page.click(sel.approve);
      await waitOutcome(page, 'completed', 2);
      const before = await waitBubbles(page, 4, /buy milk/);
      const { conversation } = await controllerState(page);
      assert.ok(conversation?.id, 'the conversation was stored');

      await page.reload();
      await waitReady(page);
      const restored = await waitBubbles(page, before.length, /buy milk/);
      assert.deepEqual(restored, before);
      assert.deepEqual((await controllerState(page)).conversation, conversation);
      assert.deepEqual(await toolStatuses(page), ['Done'], 'the tool card is restored with its result');

      // The history panel lists it, marked as the open one.
      await page.click(sel.history);
      assert.match(await page.waitFor((id) => {
        const panel = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=history-panel]');
        const current = panel && !panel.hidden ? panel.querySelector('[aria-current="true"]') : null;
        return current?.closest('[data-id]')?.dataset.id === id ? current.textContent : null;
      }, conversation.id, 'the history panel listing the open conversation'), /hello/);
      assert.deepEqual(await page.problems(), []);
      await page.close();
    });

    test('Chinese strings and the dark theme, and a confirmation approved in Chinese', async () => {
      const page = await openDemo('&lang=zh&theme=dark');
      assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=send-button]').getAttribute('aria-label')), '发送');
      assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=input]').placeholder), '输入你的问题…');
      const look = await page.evaluate(() => {
        const el = document.querySelector('patchbridge-agent');
        return { scheme: el.dataset.scheme, background: getComputedStyle(el).backgroundColor, text: getComputedStyle(el.shadowRoot.querySelector('[part~=input]')).color };
      });
      assert.deepEqual(look, { scheme: 'dark', background: 'rgb(15, 17, 21)', text: 'rgb(229, 231, 235)' });

      await sendInWidget(page, 'add todo 买牛奶');
      const card = await waitConfirmation(page);
      assert.match(card, /允许执行“todos\.add”？/);
      assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=approve-button]').textContent), '批准');
      await page.click(sel.approve);
      await page.waitFor(() => document.querySelectorAll('#todos li').length === 1, null, 'the page tool to add the todo');
      assert.deepEqual(await todos(page), ['买牛奶'], 'text typed in Chinese reaches the page tool intact');
      await waitOutcome(page, 'completed', 1);
      assert.deepEqual(await page.problems(), []);
      await page.close();
    });
  });
}
