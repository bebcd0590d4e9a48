// Argument validation as a person sees it: on the demo page, "sloppy add todo buy milk" makes the scripted demo
// model send the todo text as a list. The runtime refuses that call before any approval (its card says
// "Invalid arguments, not run" and nothing reaches the page), the model repairs the call in its next step, and
// only the repaired call is shown for approval and run. A reload shows the same statuses.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { relayAndBrowser } from './support/suite.mjs';
import { artifact, logOf, sel, sendInWidget, waitIdle, waitReady } from './support/widget.mjs';

const env = relayAndBrowser({ demo: true });

const todos = (page) => page.$$eval('#todos li', (l) => l.map((li) => li.textContent));
const statuses = (page) => page.$$eval('patchbridge-agent [part~=tool-card] .status', (l) => l.map((e) => e.textContent));

describe('a call with invalid arguments on the demo page', () => {
  test('is refused without approval, then the repaired call is approved and runs', async () => {
    const page = await newPage(env.browser);
    await page.goto(`${env.relay.url}/examples/demo/?user=vera`);
    await waitReady(page);

    await sendInWidget(page, 'sloppy add todo buy milk');
    // The first confirmation the person sees is for the repaired call: the text is a string.
    await page.waitForSelector(sel.confirmation);
    // The demo page shows its own confirmation view (slotted from the page), built from the repaired arguments.
    assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot
      .querySelector('[part~=confirmation] slot').assignedElements()[0]?.textContent), 'Add “buy milk” to your todo list?');
    assert.deepEqual(await statuses(page), ['Invalid arguments, not run', 'Waiting for your approval']);
    assert.deepEqual(await todos(page), [], 'the refused call never reached the page');
    const refused = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState()
      .messages.flatMap((m) => m.blocks).find((b) => b.type === 'tool-result'));
    assert.equal(refused.isError, true);
    assert.match(refused.content, /^\[invalid arguments\] The call to todos\.add was not run/);
    assert.match(refused.content, /- "\/text": expected type string; got array of 1 items/);
    await artifact(page, 'validation-refused-then-repaired');

    await page.click(sel.approve);
    await waitInPage(page, () => document.querySelectorAll('#todos li').length === 1);
    await waitIdle(page);
    assert.deepEqual(await todos(page), ['buy milk']);
    assert.deepEqual(await statuses(page), ['Invalid arguments, not run', 'Done']);
    const log = await logOf(page);
    assert.match(log.at(-1).text, /todos\.add returned/);

    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card] .status').length === 2);
    assert.deepEqual(await statuses(page), ['Invalid arguments, not run', 'Done']);
    await page.close();
  });
});
