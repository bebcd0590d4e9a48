// Custom tool views (generative UI) of <patchbridge-agent>, in headless Chromium against the real relay and a fake
// OpenAI upstream: a page renderer per tool name replaces the generic card and the confirmation card's argument
// list; its DOM lives in the page's light DOM (slotted), so the page's stylesheet styles it; it is called again
// with the live status and the result; a renderer that throws falls back to the generic card, is reported
// (`patchbridge-view-error`) and never breaks the turn; the call's status (Done / Rejected / Failed) stays shown
// and announced beside a page view, live and after a reload.

import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { ROOT } from './support/relay.mjs';
import { artifact, sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();

async function openPage(query = '') {
  const page = await newPage(env.browser);
  await page.setViewportSize({ width: 480, height: 760 });
  await page.goto(`${env.relay.url}/examples/widget.html?user=views-${Date.now()}-${Math.random().toString(36).slice(2, 7)}${query}`);
  await waitReady(page);
  return page;
}

describe('<patchbridge-agent> custom tool views', () => {
  test('a page view replaces the card and the confirmation body, styled by the page, and follows status and result', async () => {
    const page = await openPage();
    await page.evaluate(() => {
      window.viewCalls = [];
      document.querySelector('patchbridge-agent').toolViews = {
        'todos.add': {
          card: ({ name, arguments: args, status, result }) => {
            window.viewCalls.push({ name, status, result: result?.content ?? null });
            const p = document.createElement('p');
            p.className = 'todo-view';
            p.textContent = `${status === 'done' ? 'Added' : 'Adding'} “${args.text}” to your list`;
            return p;
          },
          confirmation: ({ arguments: args }) => {
            const p = document.createElement('p');
            p.className = 'todo-view';
            p.textContent = `Add “${args.text}” to your list?`;
            return p;
          },
        },
      };
    });
    env.upstream.script(toolCallTurn([{ id: 'call_v1', name: 'todos_add', arguments: { text: 'oat milk' } }]), textTurn('Added it.'));
    await sendInWidget(page, 'add oat milk');
    await page.waitForSelector(sel.confirmation);
    const confirmation = await page.evaluate(() => {
      const el = document.querySelector('patchbridge-agent');
      const slot = el.shadowRoot.querySelector('[part~=confirmation] slot');
      const [node] = slot.assignedElements();
      return { text: node?.textContent, color: node && getComputedStyle(node.firstChild).color, facts: el.shadowRoot.querySelectorAll('[part~=confirmation] dl').length };
    });
    assert.deepEqual(confirmation, { text: 'Add “oat milk” to your list?', color: 'rgb(10, 120, 30)', facts: 0 });
    if (process.env.UPDATE_SCREENSHOT === '1') await page.screenshot({ path: path.join(ROOT, 'docs', 'widget-tool-view.png') });
    await artifact(page, 'views-confirmation');
    await page.click(sel.approve);
    await waitIdle(page);
    const card = await page.evaluate(() => {
      const root = document.querySelector('patchbridge-agent').shadowRoot;
      const tool = root.querySelector('[part~=tool-card]');
      const [node] = tool.querySelector('slot').assignedElements();
      return {
        text: node.textContent,
        color: getComputedStyle(node.firstChild).color,
        // Of the generic card only its head stays beside the view, showing the status.
        generic: [...tool.children].filter((c) => c.tagName !== 'SLOT' && c.getClientRects().length).map((c) => c.className),
        status: tool.querySelector('.status').textContent,
      };
    });
    assert.deepEqual(card, { text: 'Added “oat milk” to your list', color: 'rgb(10, 120, 30)', generic: ['head'], status: 'Done' });
    const calls = await page.evaluate(() => window.viewCalls);
    assert.deepEqual(calls.at(-1), { name: 'todos.add', status: 'done', result: 'added oat milk' });
    assert.ok(calls.some((c) => c.status === 'waiting'), `called with the live status (${calls.map((c) => c.status)})`);
    assert.deepEqual(await page.evaluate(() => window.calls), ['oat milk']);
    // After the card's conversation is replaced, its view leaves the page's DOM too.
    await page.click(sel.newChat);
    await waitInPage(page, () => !document.querySelector('patchbridge-agent > [slot]'));
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('a renderer that throws falls back to the generic card and confirmation, is reported, and the turn completes', async () => {
    const page = await openPage();
    await page.evaluate(() => {
      window.viewErrors = [];
      const el = document.querySelector('patchbridge-agent');
      el.addEventListener('patchbridge-view-error', (e) => window.viewErrors.push({ tool: e.detail.tool, view: e.detail.view, message: e.detail.error.message }));
      el.toolViews = { '*': { card: () => { throw new Error('card broke'); }, confirmation: () => { throw new Error('confirmation broke'); } } };
    });
    env.upstream.script(toolCallTurn([{ id: 'call_v2', name: 'todos_add', arguments: { text: 'bread' } }]), textTurn('Done.'));
    await sendInWidget(page, 'add bread');
    await page.waitForSelector(sel.confirmation);
    assert.deepEqual(await page.$$eval(`${sel.confirmation} dl > *`, (l) => l.map((e) => e.textContent)), ['text', 'bread'], 'the generic facts');
    await page.click(sel.approve);
    await waitIdle(page);
    assert.equal(await page.textContent('patchbridge-agent [part~=tool-card] .status'), 'Done', 'the generic card, with its status');
    assert.match(await page.textContent('patchbridge-agent .log'), /Done\./);
    const errors = await page.evaluate(() => window.viewErrors);
    assert.deepEqual(errors.map((e) => `${e.tool}/${e.view}/${e.message}`).sort(), ['todos.add/card/card broke', 'todos.add/confirmation/confirmation broke']);
    assert.deepEqual(await page.evaluate(() => window.calls), ['bread']);
    page.problems = page.problems.filter((p) => !/view of "todos\.add" failed/.test(p)); // reported on the console by design
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('beside a page view a finished, rejected or failed call stays shown and announced as Done, Rejected or Failed, also after a reload', async () => {
    const page = await openPage('&views=status');
    env.upstream.script(
      toolCallTurn([{ id: 'call_s1', name: 'todos_add', arguments: { text: 'oat milk' } }]), textTurn('Added.'),
      toolCallTurn([{ id: 'call_s2', name: 'todos_add', arguments: { text: 'bread' } }]), textTurn('Not added.'),
      toolCallTurn([{ id: 'call_s3', name: 'todos_add', arguments: { text: 'fail' } }]), textTurn('It failed.'),
    );
    for (const [text, answer] of [['oat milk', sel.approve], ['bread', sel.reject], ['fail', sel.approve]]) {
      await sendInWidget(page, `add ${text}`);
      await page.waitForSelector(sel.confirmation);
      await page.click(answer);
      await waitIdle(page);
    }
    const cards = () => page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card]')].map((card) => {
      const status = card.querySelector('.status');
      const rect = status.getBoundingClientRect();
      return {
        view: card.querySelector('slot')?.assignedElements()[0]?.textContent ?? null,
        status: status.textContent,
        role: status.getAttribute('role'),
        shown: rect.width > 0 && rect.height > 0 && getComputedStyle(status).visibility === 'visible',
        // The tool's name is kept for assistive technology, not drawn beside the page's view.
        name: card.querySelector('.name').textContent,
      };
    }));
    const expected = [
      { view: 'done: oat milk', status: 'Done', role: 'status', shown: true, name: 'todos.add' },
      { view: 'rejected: bread', status: 'Rejected', role: 'status', shown: true, name: 'todos.add' },
      { view: 'error: fail', status: 'Failed', role: 'status', shown: true, name: 'todos.add' },
    ];
    assert.deepEqual(await cards(), expected);
    await artifact(page, 'views-statuses');
    assert.deepEqual(await page.evaluate(() => window.calls), ['oat milk', 'fail']);
    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card] slot').length === 3);
    assert.deepEqual(await cards(), expected, 'the same after a reload, from the stored results');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
});
