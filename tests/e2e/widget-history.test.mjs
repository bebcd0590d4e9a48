// The history panel of <patchbridge-agent> over the relay's conversations, in headless Chromium: paged list,
// open, new, rename, delete with a confirmation and the server's receipt (a failed delete never shows as deleted),
// and switching conversations cancels the running turn.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn } from './support/openai-chat.mjs';
import { artifact, logOf, sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();

const conversationOf = (page) => page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation);

async function turn(page, text, answer) {
  env.upstream.script(textTurn(answer));
  await sendInWidget(page, text);
  await waitInPage(page, (a) => document.querySelector('patchbridge-agent').controller.getState().status === 'idle'
    && document.querySelector('patchbridge-agent').controller.getState().conversation != null
    && document.querySelector('patchbridge-agent').shadowRoot.textContent.includes(a), answer);
}

describe('the history panel', () => {
  test('lists, opens, renames and deletes conversations; a failed delete keeps the row', async () => {
    const user = `hist-${Date.now()}`;
    const page = await newPage(env.browser);
    await page.goto(`${env.relay.url}/examples/widget.html?user=${user}`);
    await waitReady(page);
    await turn(page, 'first topic', 'answer one');
    const first = await conversationOf(page);
    await page.click(sel.newChat);
    await turn(page, 'second topic', 'answer two');
    const second = await conversationOf(page);
    assert.notEqual(first.id, second.id);

    await page.click(sel.history);
    await page.waitForSelector(`${sel.panel} li[data-id="${first.id}"]`);
    const rows = await page.$$eval(`${sel.panel} li`, (l) => l.map((li) => ({ id: li.dataset.id, current: li.getAttribute('aria-current') })));
    assert.deepEqual(rows, [{ id: second.id, current: 'true' }, { id: first.id, current: null }], 'newest first, open one marked');

    // Open the first: its messages replace the second's.
    await page.click(`${sel.panel} li[data-id="${first.id}"] button.open`);
    await waitInPage(page, (id) => document.querySelector('patchbridge-agent').controller.getState().conversation?.id === id, first.id);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log').textContent.includes('answer one'));
    assert.match((await logOf(page)).map((m) => m.text).join(' '), /first topic.*answer one/);
    assert.equal(await page.isHidden(sel.panel), true, 'opening closes the panel');

    // Rename the open one: the list, the header and the relay agree, and the next save does not conflict.
    await page.click(sel.history);
    await page.waitForSelector(`${sel.panel} li[data-id="${first.id}"]`);
    await page.click(`${sel.panel} li[data-id="${first.id}"] button[aria-label^="Rename"]`);
    await page.fill(`${sel.panel} form.rename input`, 'Renamed topic');
    await page.click(`${sel.panel} form.rename button[type=submit]`);
    await waitInPage(page, (id) => document.querySelector('patchbridge-agent').shadowRoot.querySelector(`[part~=history-panel] li[data-id="${id}"]`)?.textContent.includes('Renamed topic'), first.id);
    const stored = await env.relay.fetchJson('GET', `/conversations/${first.id}`, { user });
    assert.equal(stored.body.conversation.title, 'Renamed topic');
    assert.equal(await page.textContent('patchbridge-agent [part~=title]'), 'Renamed topic');
    await page.keyboard.press('Escape');
    await turn(page, 'follow up', 'answer three');
    assert.equal((await conversationOf(page)).revision, stored.body.conversation.revision + 1, 'saved after the rename without a conflict');

    // A delete the server does not confirm: the row stays and says why.
    await page.click(sel.history);
    await page.waitForSelector(`${sel.panel} li[data-id="${second.id}"]`);
    await page.route('**/api/conversations/*', (route) => (route.request().method() === 'DELETE'
      ? route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { code: 'INTERNAL', message: 'boom' } }) })
      : route.continue()));
    await page.click(`${sel.panel} li[data-id="${second.id}"] button[aria-label^="Delete"]`);
    assert.match(await page.textContent(`${sel.panel} .confirm-delete`), /Delete “second topic”\? This cannot be undone\./);
    await page.click(`${sel.panel} [part~=delete-confirm-button]`);
    await waitInPage(page, () => /Not deleted/.test(document.querySelector('patchbridge-agent').shadowRoot.querySelector('.confirm-delete')?.textContent ?? ''));
    assert.equal((await env.relay.fetchJson('GET', `/conversations/${second.id}`, { user })).status, 200, 'still there');
    await artifact(page, 'history-delete-failed');
    page.problems.length = 0; // the scripted 500 is expected

    // Confirmed by the server: the row goes, the relay no longer has it.
    await page.unroute('**/api/conversations/*');
    await page.click(`${sel.panel} .confirm-delete button:not([part~=delete-confirm-button])`);
    await page.click(`${sel.panel} li[data-id="${second.id}"] button[aria-label^="Delete"]`);
    await page.click(`${sel.panel} [part~=delete-confirm-button]`);
    await waitInPage(page, (id) => !document.querySelector('patchbridge-agent').shadowRoot.querySelector(`[part~=history-panel] li[data-id="${id}"]`), second.id);
    assert.equal((await env.relay.fetchJson('GET', `/conversations/${second.id}`, { user })).status, 404);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('switching conversations cancels the running turn', async () => {
    const user = `switch-${Date.now()}`;
    const page = await newPage(env.browser);
    await page.goto(`${env.relay.url}/examples/widget.html?user=${user}`);
    await waitReady(page);
    await turn(page, 'keep me', 'kept');
    const kept = await conversationOf(page);
    await page.click(sel.newChat);
    env.upstream.script(textTurn('slow '.repeat(100), { pieces: 100, delayMs: 100, holdOpen: true }));
    const seen = env.upstream.requests.length;
    await sendInWidget(page, 'long running');
    await env.upstream.waitForRequests(seen + 1);
    await page.click(sel.history);
    await page.click(`${sel.panel} li[data-id="${kept.id}"] button.open`);
    await waitInPage(page, (id) => document.querySelector('patchbridge-agent').controller.getState().conversation?.id === id, kept.id);
    await waitIdle(page);
    const record = env.upstream.requests[seen];
    await record.closed;
    assert.equal(record.disconnected, true);
    assert.deepEqual((await logOf(page)).map((m) => m.role), ['user', 'assistant']);
    assert.match((await logOf(page))[1].text, /kept/);
    await page.context().close();
  });
});
