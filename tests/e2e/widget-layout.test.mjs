// <patchbridge-agent> on small screens and by keyboard, in headless Chromium against the real relay and a fake
// OpenAI upstream: at 320 × 568 with a tall confirmation card and a host page that overrides the element's
// minimum height, the input, Stop, Approve and Reject stay on screen, the card's body scrolls inside the element
// and the message log keeps some room; Stop is an icon
// button with its label kept for assistive technology; every control a finger uses (code Copy, Remove image,
// the Arguments / Result / Thoughts / raw-JSON expanders) is at least 44 × 44 px and the expanders show a
// disclosure marker; the history panel is modal (focus stays inside, Escape closes it and focus returns to
// the button that opened it) and has no empty gap above its list.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { artifact, sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();

async function openAt(viewport, query = '') {
  const page = await newPage(env.browser);
  await page.setViewportSize(viewport);
  await page.goto(`${env.relay.url}/examples/widget.html?user=layout-${Date.now()}-${Math.random().toString(36).slice(2)}${query}`);
  await waitReady(page);
  return page;
}

const inRoot = (page, fn, arg) => page.evaluate(({ body, arg: a }) => {
  // eslint-disable-next-line no-new-func
  return new Function('root', 'arg', body)(document.querySelector('patchbridge-agent').shadowRoot, a);
}, { body: `return (${fn})(root, arg);`, arg });

describe('<patchbridge-agent> on a small phone and by keyboard', () => {
  test('at 320 × 568 a tall confirmation card scrolls inside the element; the input and an icon-only Stop stay on screen', async () => {
    const page = await openAt({ width: 320, height: 568 }, '&host=squeezed');
    const long = 'A fairly long todo text that wraps over several lines on a narrow phone screen. '.repeat(4);
    env.upstream.script(
      toolCallTurn([{ id: 'call_tall', name: 'todos_add', arguments: { text: long, note: long, when: 'tomorrow morning', list: long } }]),
      textTurn('Added it.'),
    );
    await sendInWidget(page, 'add a long todo');
    await page.waitForSelector(sel.confirmation);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=tool-card] .status')?.dataset.status === 'waiting');
    await artifact(page, 'layout-320-confirmation');
    const layout = await inRoot(page, (root) => {
      const rect = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height }; };
      const host = root.host.getBoundingClientRect();
      const slot = root.querySelector('.confirm-slot');
      const body = root.querySelector('[part~=confirmation-body]');
      const stop = root.querySelector('[part~=stop-button]');
      return {
        viewport: { width: innerWidth, height: innerHeight },
        host: { top: host.top, bottom: host.bottom },
        input: rect(root.querySelector('textarea')),
        stop: rect(stop),
        stopName: stop.textContent.trim(),
        stopLabelVisible: stop.querySelector('.label').getBoundingClientRect().width > 2,
        slot: rect(slot),
        bodyScrolls: body.scrollHeight > body.clientHeight + 1,
        approve: rect(root.querySelector('[part~=approve-button]')),
        reject: rect(root.querySelector('[part~=reject-button]')),
        log: rect(root.querySelector('.scroller')),
        placeholderLines: Math.round(root.querySelector('textarea').getBoundingClientRect().height),
      };
    });
    assert.ok(layout.host.bottom <= layout.viewport.height + 0.5, `the element fits the window (${layout.host.bottom} of ${layout.viewport.height})`);
    assert.ok(layout.input.top >= 0 && layout.input.bottom <= layout.viewport.height, `the input is on screen (${layout.input.top}..${layout.input.bottom})`);
    assert.ok(layout.stop.bottom <= layout.viewport.height && layout.stop.right <= layout.viewport.width, 'Stop is on screen');
    assert.equal(layout.stop.width, 44, 'Stop is an icon button at this width');
    assert.equal(layout.stopLabelVisible, false, 'its label is visually hidden');
    assert.equal(layout.stopName, 'Stop', 'and kept as its accessible name');
    assert.ok(await page.getByRole('button', { name: 'Stop' }).isVisible(), 'Stop is found by its accessible name');
    assert.ok(layout.bodyScrolls, "the card's body scrolls inside the element");
    for (const name of ['approve', 'reject']) {
      const r = layout[name];
      assert.ok(r.top >= layout.slot.top && r.bottom <= layout.slot.bottom + 0.5 && r.bottom <= layout.input.top, `${name} stays in view without scrolling (${r.top}..${r.bottom}, card ${layout.slot.top}..${layout.slot.bottom})`);
    }
    assert.ok(layout.log.height >= 72, `the message log keeps some room (${layout.log.height} px)`);
    assert.ok(layout.slot.top >= layout.host.top && layout.slot.bottom <= layout.input.top, 'the card sits above the input, inside the element');
    assert.ok(layout.placeholderLines <= 46, `the placeholder stays on one line (${layout.placeholderLines} px)`);

    // Approve is on screen as it is, and the tool runs.
    await page.click(sel.approve);
    await waitInPage(page, () => window.calls.length === 1);
    await waitIdle(page);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('code Copy, Remove image and every expander are 44 × 44 px targets; expanders show a disclosure marker', async () => {
    const page = await openAt({ width: 390, height: 844 });
    env.upstream.script(
      textTurn('Here:\n\n```js\nconst a = 1;\n```\n', { reasoning: 'Think first.' }),
      toolCallTurn([{ id: 'call_t', name: 'todos_add', arguments: { text: 'milk' } }]),
      textTurn('Done.'),
    );
    await sendInWidget(page, 'code please');
    await waitIdle(page);
    await sendInWidget(page, 'add milk');
    await page.waitForSelector(sel.confirmation);
    // A picked image shows its Remove button.
    await page.setInputFiles(`${sel.input.replace('textarea[part~=input]', 'input[type=file]')}`, {
      name: 'dot.png', mimeType: 'image/png',
      buffer: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'),
    });
    await page.waitForSelector(`${sel.input.replace('textarea[part~=input]', '.attachments button')}`);
    const targets = await inRoot(page, (root) => {
      const size = (el) => { const r = el.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; };
      const summaries = [...root.querySelectorAll('summary')].filter((s) => s.getClientRects().length);
      return {
        copy: size(root.querySelector('pre [part~=copy-button]')),
        removeImage: size(root.querySelector('.attachments button')),
        removeImageName: root.querySelector('.attachments button').getAttribute('aria-label'),
        summaries: summaries.map((s) => ({ text: s.textContent, height: Math.round(s.getBoundingClientRect().height), marker: getComputedStyle(s, '::before').content })),
      };
    });
    assert.ok(targets.copy[0] >= 44 && targets.copy[1] >= 44, `Copy is ${targets.copy.join(' × ')}`);
    assert.ok(targets.removeImage[0] >= 44 && targets.removeImage[1] >= 44, `Remove image is ${targets.removeImage.join(' × ')}`);
    assert.equal(targets.removeImageName, 'Remove image');
    const texts = targets.summaries.map((s) => s.text);
    for (const wanted of ['Thoughts', 'Arguments', 'Show raw JSON']) assert.ok(texts.includes(wanted), `${wanted} expander shown (${texts})`);
    for (const s of targets.summaries) {
      assert.ok(s.height >= 44, `${s.text} is ${s.height} px tall`);
      assert.ok(s.marker && s.marker !== 'none' && s.marker !== 'normal', `${s.text} shows a disclosure marker`);
    }
    // The marker turns when the expander opens.
    const turned = await inRoot(page, (root) => {
      const summary = [...root.querySelectorAll('[part~=tool-card] summary')].find((s) => s.getClientRects().length);
      const before = getComputedStyle(summary, '::before').transform;
      summary.click();
      return { before, after: getComputedStyle(summary, '::before').transform };
    });
    assert.notEqual(turned.before, turned.after);
    await page.click(sel.approve);
    await waitIdle(page);
    const result = await inRoot(page, (root) => {
      const summary = [...root.querySelectorAll('[part~=tool-card] details:not([hidden]) summary')].find((s) => s.textContent === 'Result');
      return summary && Math.round(summary.getBoundingClientRect().height);
    });
    assert.ok(result >= 44, `Result is ${result} px tall`);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('the history panel is modal: focus stays inside, Escape closes it and focus returns to its button', async () => {
    const page = await openAt({ width: 390, height: 844 });
    env.upstream.script(textTurn('first answer'));
    await sendInWidget(page, 'first question');
    await waitIdle(page);
    // Keyboard only: focus the history button and press Enter.
    await inRoot(page, (root) => root.querySelector('[part~=history-button]').focus());
    await page.keyboard.press('Enter');
    await page.waitForSelector(`${sel.panel} li`);
    const insidePanel = () => inRoot(page, (root) => {
      const active = root.activeElement;
      return { inside: Boolean(active && root.querySelector('[part~=history-panel]').contains(active)), name: active?.getAttribute('aria-label') ?? active?.textContent ?? null };
    });
    const seen = new Set();
    for (let i = 0; i < 8; i += 1) {
      await page.keyboard.press('Shift+Tab');
      const where = await insidePanel();
      assert.ok(where.inside, `Shift+Tab ${i + 1} stays in the panel (focus on ${where.name})`);
      seen.add(where.name);
    }
    for (let i = 0; i < 8; i += 1) {
      await page.keyboard.press('Tab');
      const where = await insidePanel();
      assert.ok(where.inside, `Tab ${i + 1} stays in the panel (focus on ${where.name})`);
    }
    assert.ok(seen.size >= 3, `Shift+Tab cycles through the panel's controls (${[...seen]})`);
    // What the panel covers takes neither focus nor clicks.
    assert.deepEqual(await inRoot(page, (root) => ['header', '.scroller', '.dock'].map((s) => root.querySelector(s).inert)), [true, true, true]);
    // No empty gap between "New conversation" and the first row.
    const gap = await inRoot(page, (root) => {
      const panel = root.querySelector('[part~=history-panel]');
      const button = panel.querySelector('.foot button').getBoundingClientRect();
      return panel.querySelector('li').getBoundingClientRect().top - button.bottom;
    });
    assert.ok(gap < 24, `the list starts right below New conversation (${gap} px)`);
    await artifact(page, 'layout-history-390');

    await page.keyboard.press('Escape');
    assert.equal(await page.isHidden(sel.panel), true);
    assert.equal(await inRoot(page, (root) => root.activeElement?.getAttribute('part')), 'history-button');
    assert.equal(await inRoot(page, (root) => root.querySelector('[part~=history-button]').getAttribute('aria-expanded')), 'false');
    assert.deepEqual(await inRoot(page, (root) => ['header', '.scroller', '.dock'].map((s) => root.querySelector(s).inert)), [false, false, false]);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
});
