// The demo page (examples/demo/, <patchbridge-agent> as a side panel) in headless Chromium against the real relay
// running its scripted demo model: what a new user does first. The banner says it is not AI; a tool that changes
// the page asks for approval (card focused, the page's own view of the call, nothing run before Approve); Reject leaves the
// page alone; a reload shows the conversation again and the history panel lists it; Chinese strings, dark
// theme and a 320 px wide window (a file attached through the static script's chunk); at 320 × 568 with a confirmation open Approve and Reject are on screen and the
// message log keeps some room, and the card shows what it asks; `?theme=dark` darkens the page too; a rejection reads as one in the page's own view; an axe-core scan. With UPDATE_SCREENSHOT=1 the README's pictures are refreshed.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { ROOT } from './support/relay.mjs';
import { relayAndBrowser } from './support/suite.mjs';
import { artifact, logOf, sel, sendInWidget, waitAssistantCount, waitIdle, waitReady } from './support/widget.mjs';

const env = relayAndBrowser({ demo: true });

const shadow = (page, fn, arg) => page.evaluate(fn, arg);
const todos = (page) => page.$$eval('#todos li', (l) => l.map((li) => li.textContent));

async function axeScan(page) {
  // Evaluated through the debugging protocol, not as an inline <script>: the relay's CSP refuses inline scripts.
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
  const result = await page.evaluate(async () => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('the demo page with <patchbridge-agent> on the scripted demo model', () => {
  test('banner, approve and reject a page tool, reload restores the conversation, history lists it', async () => {
    const page = await newPage(env.browser);
    await page.goto(`${env.relay.url}/examples/demo/?user=dana`);
    // The shell paints before the runtime is ready; the banner appears once the relay says previewOnly.
    await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=banner]').hidden);
    assert.match(await page.textContent(sel.banner), /scripted demo model, not AI/);
    await waitReady(page);

    await sendInWidget(page, 'hello');
    await waitAssistantCount(page, 1);
    await waitIdle(page);
    assert.match((await logOf(page)).at(-1).text, /Scripted demo, not AI/);

    await sendInWidget(page, 'add todo buy milk');
    await page.waitForSelector(sel.confirmation);
    // The card names the tool, shows the argument as a readable fact, has focus, and nothing ran yet.
    assert.match(await page.textContent(`${sel.confirmation} h3`), /todos\.add/);
    // The demo page shows the call its own way (a custom tool view, slotted from the page's light DOM).
    assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot
      .querySelector('[part~=confirmation] slot').assignedElements()[0]?.textContent), 'Add “buy milk” to your todo list?');
    assert.equal(await shadow(page, () => document.querySelector('patchbridge-agent').shadowRoot.activeElement?.getAttribute('part')), 'confirmation');
    assert.deepEqual(await todos(page), []);
    assert.equal(await page.isVisible(sel.stop), true, 'Stop is offered while the tool waits');
    assert.equal(await page.textContent(`patchbridge-agent [part~=tool-card] .status`), 'Waiting for your approval');
    if (process.env.UPDATE_SCREENSHOT === '1') await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshot.png') });
    await artifact(page, 'demo-confirmation');
    assert.deepEqual(await axeScan(page), [], 'no serious or critical accessibility violation with the card open');

    // Keyboard: Tab from the focused card reaches the raw-JSON toggle, Reject, then Approve; Enter approves.
    for (let i = 0; i < 3; i += 1) await page.keyboard.press('Tab');
    assert.equal(await shadow(page, () => document.querySelector('patchbridge-agent').shadowRoot.activeElement?.getAttribute('part')), 'approve-button');
    await page.keyboard.press('Enter');
    await waitInPage(page, () => document.querySelectorAll('#todos li').length === 1);
    assert.deepEqual(await todos(page), ['buy milk']);
    await waitIdle(page);
    assert.equal(await page.$(sel.confirmation), null, 'the card is gone once answered');
    assert.equal(await page.textContent(`patchbridge-agent [part~=tool-card] .status`), 'Done');
    assert.equal(await page.textContent('patchbridge-agent > [slot^="pb-view-"]'), 'Added “buy milk” to the list');
    assert.match((await logOf(page)).at(-1).text, /buy milk/);
    assert.doesNotMatch((await logOf(page)).at(-1).text, /Scripted demo, not AI/, 'the banner says it; the first answer once');

    // Reject: the tool never runs, its card says so, the model reports the error.
    await sendInWidget(page, 'add todo walk the dog');
    await page.waitForSelector(sel.confirmation);
    await page.click(sel.reject);
    await waitIdle(page);
    assert.deepEqual(await todos(page), ['buy milk']);
    const statuses = await page.$$eval(`patchbridge-agent [part~=tool-card] .status`, (l) => l.map((e) => e.textContent));
    assert.deepEqual(statuses, ['Done', 'Rejected']);
    assert.match((await logOf(page)).at(-1).text, /todos\.add reported an error/);
    const before = await logOf(page);
    const conversationId = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation.id);

    // Reload: the last complete turn of the open conversation is back.
    await page.reload();
    await waitReady(page);
    await waitInPage(page, (n) => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg:not(.tool)').length === n, before.length);
    assert.deepEqual(await logOf(page), before);
    assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation.id), conversationId);
    const restoredStatuses = await page.$$eval(`patchbridge-agent [part~=tool-card] .status`, (l) => l.map((e) => e.textContent));
    assert.deepEqual(restoredStatuses, ['Done', 'Rejected'], 'after a reload a rejection still reads as one (the stored result is marked)');

    // The history panel lists it, marked as the open one.
    await page.click(sel.history);
    await page.waitForSelector(`${sel.panel} li[data-id="${conversationId}"]`);
    assert.equal(await page.getAttribute(`${sel.panel} li[data-id="${conversationId}"]`, 'aria-current'), 'true');
    assert.match(await page.textContent(`${sel.panel} li[data-id="${conversationId}"]`), /hello/);
    await artifact(page, 'demo-history');
    assert.deepEqual(await axeScan(page), [], 'no serious or critical accessibility violation with the history open');
    await page.keyboard.press('Escape');
    assert.equal(await page.isHidden(sel.panel), true);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('at 320 × 568 with a confirmation open, Approve and Reject are on screen and the message log keeps some room', async () => {
    const context = await env.browser.newContext({ viewport: { width: 320, height: 568 }, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${env.relay.url}/examples/demo/?user=phone-${Date.now()}`);
    await waitReady(page);
    await sendInWidget(page, 'add todo buy milk');
    await page.waitForSelector(sel.confirmation);
    await artifact(page, 'demo-320x568-confirmation');
    const layout = await page.evaluate(() => {
      const root = document.querySelector('patchbridge-agent').shadowRoot;
      const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, height: r.height }; };
      return {
        height: innerHeight,
        approve: box(root.querySelector('[part~=approve-button]')),
        reject: box(root.querySelector('[part~=reject-button]')),
        input: box(root.querySelector('textarea')),
        log: box(root.querySelector('.scroller')),
        body: box(root.querySelector('[part~=confirmation-body]')),
        view: box(document.querySelector('patchbridge-agent > [slot=pb-confirm-view]')),
      };
    });
    for (const name of ['approve', 'reject', 'input']) {
      assert.ok(layout[name].top >= 0 && layout[name].bottom <= layout.height, `${name} is on screen (${layout[name].top}..${layout[name].bottom} of ${layout.height})`);
    }
    assert.ok(layout.log.height >= 72, `the message log keeps some room (${layout.log.height} px)`);
    assert.ok(layout.view.top >= layout.body.top && layout.view.bottom <= layout.body.bottom + 0.5, `what is asked shows in the card (${layout.view.top}..${layout.view.bottom}, body ${layout.body.top}..${layout.body.bottom})`);
    // Reject as it is shown (no scrolling first): the page's own view reads it as a rejection, in its own colour.
    await page.click(sel.reject);
    await waitIdle(page);
    const view = await page.evaluate(() => {
      const node = document.querySelector('patchbridge-agent > [slot^="pb-view-"] .todo-view');
      return { text: node.textContent, status: node.dataset.status, background: getComputedStyle(node).backgroundColor };
    });
    assert.equal(view.text, 'You declined adding “buy milk”');
    assert.equal(view.status, 'rejected');
    assert.match(view.background, /^(color\(srgb 0\.86|rgba\(220, 38, 38)/, `a red tint, not the success colour (${view.background})`);
    assert.equal(await page.textContent(`patchbridge-agent [part~=tool-card] .status`), 'Rejected');
    assert.deepEqual(await todos(page), []);
    await context.close();
  });

  test('?theme=dark darkens the demo page with the element, whatever the system prefers; the Theme setting follows', async () => {
    const context = await env.browser.newContext({ viewport: { width: 1000, height: 700 }, colorScheme: 'light' });
    const page = await context.newPage();
    await page.goto(`${env.relay.url}/examples/demo/?user=theme&theme=dark`);
    await waitReady(page);
    const colours = () => page.evaluate(() => ({
      page: getComputedStyle(document.body).backgroundColor,
      element: getComputedStyle(document.querySelector('patchbridge-agent')).backgroundColor,
    }));
    assert.deepEqual(await colours(), { page: 'rgb(11, 13, 17)', element: 'rgb(15, 17, 21)' });
    await page.selectOption('#theme', 'light');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').dataset.scheme === 'light');
    assert.deepEqual(await colours(), { page: 'rgb(248, 250, 252)', element: 'rgb(255, 255, 255)' });
    await context.close();
  });

  test('Chinese strings, dark theme and a 320 px window: input visible, 44 px targets, nothing wider than the screen', async () => {
    const context = await env.browser.newContext({ viewport: { width: 320, height: 640 }, locale: 'zh-CN', colorScheme: 'dark', hasTouch: true });
    const page = await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    await page.goto(`${env.relay.url}/examples/demo/?user=li`);
    await waitReady(page);
    // lang follows the browser (zh-CN); theme "auto" follows prefers-color-scheme.
    assert.equal(await page.getAttribute(sel.send, 'aria-label'), '发送');
    assert.equal(await page.getAttribute(sel.input, 'placeholder'), '输入你的问题…');
    assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').dataset.scheme), 'dark');
    const bg = await page.evaluate(() => getComputedStyle(document.querySelector('patchbridge-agent')).backgroundColor);
    assert.equal(bg, 'rgb(15, 17, 21)');

    await sendInWidget(page, 'add todo 买牛奶');
    await page.waitForSelector(sel.confirmation);
    assert.equal(await page.textContent(`${sel.confirmation} h3`), '允许执行“todos.add”？');
    assert.equal(await page.textContent(sel.approve), '批准');
    await artifact(page, 'demo-320-zh-dark');
    if (process.env.UPDATE_SCREENSHOT === '1') await page.screenshot({ path: path.join(ROOT, 'docs', 'widget-mobile-zh-dark.png') });

    const layout = await page.evaluate(() => {
      const root = document.querySelector('patchbridge-agent').shadowRoot;
      const input = root.querySelector('textarea').getBoundingClientRect();
      const wide = [...root.querySelectorAll('*')].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && el.getClientRects().length);
      const small = [...root.querySelectorAll('button')].filter((b) => b.getClientRects().length && !b.closest('pre'))
        .map((b) => b.getBoundingClientRect()).filter((r) => r.width < 44 || r.height < 44);
      return { inputBottom: input.bottom, inputTop: input.top, height: window.innerHeight, wide: wide.map((e) => e.className || e.tagName), small: small.length, scrollWidth: document.documentElement.scrollWidth };
    });
    assert.ok(layout.inputTop >= 0 && layout.inputBottom <= layout.height, `the input is on screen (${layout.inputTop}..${layout.inputBottom} of ${layout.height})`);
    assert.deepEqual(layout.wide, [], 'nothing runs off the right edge');
    assert.equal(layout.scrollWidth, 320);
    assert.equal(layout.small, 0, 'every button is at least 44 × 44 px');
    await page.click(sel.approve);
    await waitInPage(page, () => document.querySelectorAll('#todos li').length === 1);
    // A text file attaches through the static script's own attachments chunk; its chip speaks Chinese.
    await page.setInputFiles('patchbridge-agent input[type=file]', [{ name: 'notes.md', mimeType: '', buffer: Buffer.from('# 笔记\n') }]);
    await page.waitForSelector('patchbridge-agent [part~=attachment]');
    assert.equal(await page.getAttribute('patchbridge-agent [part~=attachment] button', 'aria-label'), '移除 notes.md');
    assert.equal(await page.getAttribute(`${sel.input.replace('textarea[part~=input]', '[part~=attach-button]')}`, 'aria-label'), '添加文件');
    assert.deepEqual(problems, []);
    await context.close();
  });
});
