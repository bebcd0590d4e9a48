// End to end in headless Chromium, demo mode: the relay runs with no provider and its scripted demo model, and
// the demo page must say so ("scripted, not AI"). "add todo buy milk" asks for confirmation; Approve adds the
// todo; Reject on the next one leaves the list alone and the model reports the error. With UPDATE_SCREENSHOT=1 the page is captured mid-conversation, confirmation card visible, into
// docs/screenshot.png (the README's picture).

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launchChromium, newPage, sendFromPage, waitInPage } from './support/browser.mjs';
import { ROOT, startRelay } from './support/relay.mjs';

let relay;
let browser;

before(async () => {
  relay = await startRelay({ demo: true });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await relay?.stop();
});

describe('demo page with the scripted demo model', () => {
  test('labelled as scripted, not AI; add todo asks for confirmation; Approve adds it, Reject does not', async () => {
    const page = await newPage(browser);
    await page.goto(`${relay.url}/examples/demo/`);
    await waitInPage(page, () => /scripted/i.test(document.getElementById('mode').textContent));
    assert.match(await page.textContent('#mode'), /scripted, not AI/);

    const models = await relay.fetchJson('GET', '/models');
    assert.equal(models.body.previewOnly, true);

    await sendFromPage(page, 'hello');
    await waitInPage(page, () => document.querySelectorAll('#messages li.assistant').length === 1);
    assert.match(await page.textContent('#messages li.assistant'), /Scripted demo, not AI/);

    await sendFromPage(page, 'add todo buy milk');
    await waitInPage(page, () => !document.getElementById('confirm').hidden);
    assert.equal(await page.textContent('#confirm-tool'), 'todos.add');
    assert.deepEqual(JSON.parse(await page.textContent('#confirm-args')), { text: 'buy milk' });
    assert.equal(await page.$$eval('#todos li', (l) => l.length), 0, 'nothing runs before approval');

    if (process.env.UPDATE_SCREENSHOT === '1') {
      await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshot.png') });
    }

    await page.click('#approve');
    await waitInPage(page, () => document.querySelectorAll('#todos li').length === 1);
    assert.deepEqual(await page.$$eval('#todos li', (l) => l.map((li) => li.textContent)), ['buy milk']);
    // The scripted model saw the tool's result and summarised it.
    await waitInPage(page, () => document.querySelectorAll('#messages li.assistant').length === 3);
    const last = await page.$$eval('#messages li.assistant', (l) => l.at(-1).textContent);
    assert.match(last, /Scripted demo, not AI/);
    assert.match(last, /buy milk/);
    assert.equal(await page.isHidden('#confirm'), true);

    // Reject: the tool never runs, the page shows the error result, the model reports it.
    await sendFromPage(page, 'add todo walk the dog');
    await waitInPage(page, () => !document.getElementById('confirm').hidden);
    assert.deepEqual(JSON.parse(await page.textContent('#confirm-args')), { text: 'walk the dog' });
    await page.click('#reject');
    await waitInPage(page, () => document.querySelectorAll('#messages li.assistant').length === 5);
    assert.deepEqual(await page.$$eval('#todos li', (l) => l.map((li) => li.textContent)), ['buy milk']);
    assert.equal(await page.$$eval('#messages .block.tool-result.error', (l) => l.length), 1);
    assert.match(await page.$$eval('#messages li.assistant', (l) => l.at(-1).textContent), /todos\.add reported an error/);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
});
