// <patchbridge-agent> when something goes wrong, in headless Chromium against the real relay and a fake OpenAI
// upstream: a rejected tool call still reads "Rejected" after a reload (the runtime's `[rejected] ` marker in the
// stored result); with the relay unreachable the notice speaks plain words with the code tucked below and its
// buttons in one row; a 401 asks the page for fresh credentials (`patchbridge-unauthorized`, answered through
// `waitUntil`) and the turn runs again, or says the person is signed out when nobody answers; two tabs on one
// conversation: "Reload conversation" in the stale tab puts its unsaved message back into the box.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import {
  artifact, expireSessionAndSignInAgain, logOf, sel, sendInWidget, waitIdle, waitReady, widgetEnvironment,
} from './support/widget.mjs';

const env = widgetEnvironment();
const uniqueUser = (name) => `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 7)}`;

async function openPage(user, { viewport } = {}) {
  const page = await newPage(env.browser);
  if (viewport) await page.setViewportSize(viewport);
  await page.goto(`${env.relay.url}/examples/widget.html?user=${user}`);
  await waitReady(page);
  return page;
}
/** The log's texts, user messages without their visually hidden "You" label. */
const texts = async (page) => (await logOf(page)).map((m) => (m.role === 'user' ? m.text.replace(/^You/, '') : m.text));
const statuses = (page) => page.$$eval('patchbridge-agent [part~=tool-card] .status', (l) => l.map((e) => e.textContent));
const noticeShown = (page) => waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').hidden);
const noticeButtons = (page) => page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=notice] button')]
  .map((b) => { const r = b.getBoundingClientRect(); return { name: b.getAttribute('aria-label') ?? b.textContent, top: Math.round(r.top), bottom: Math.round(r.bottom) }; }));

/** The notice's ways forward share one row, the close button sits on the words' row; returns the notice height. */
async function assertOneRow(page) {
  const buttons = await noticeButtons(page);
  const ways = buttons.filter((b) => b.name !== 'Dismiss');
  assert.ok(ways.length >= 1, 'the notice offers a way forward');
  assert.equal(new Set(ways.map((b) => b.top)).size, 1, `the ways forward share one row: ${JSON.stringify(buttons)}`);
  const close = buttons.find((b) => b.name === 'Dismiss');
  assert.ok(close && close.bottom <= ways[0].top + 1, 'Dismiss is a close button above them, not a row of its own');
}

describe('<patchbridge-agent> recovering from failures', () => {
  test('a rejected call reads "Rejected" live and after a reload, from the stored result', async () => {
    const user = uniqueUser('reject');
    const page = await openPage(user);
    env.upstream.script(toolCallTurn([{ id: 'call_no', name: 'todos_add', arguments: { text: 'sell the car' } }]), textTurn('Understood, not added.'));
    await sendInWidget(page, 'add sell the car');
    await page.waitForSelector(sel.confirmation);
    await page.click(sel.reject);
    await waitIdle(page);
    assert.deepEqual(await statuses(page), ['Rejected']);
    const id = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation.id);
    const stored = await env.relay.fetchJson('GET', `/conversations/${id}`, { user });
    const result = stored.body.context.messages.flatMap((m) => m.blocks).find((b) => b.type === 'tool-result');
    assert.equal(result.isError, true);
    assert.equal(result.content, '[rejected] The user rejected the call to todos.add.');
    assert.deepEqual(await page.evaluate(() => window.calls), [], 'the tool never ran');

    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card] .status[data-status]').length === 1);
    assert.deepEqual(await statuses(page), ['Rejected'], 'after a reload the decision reads the same');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('with the relay unreachable the notice says so in plain words, the code tucked below, buttons in one row', async () => {
    const page = await openPage(uniqueUser('offline'), { viewport: { width: 390, height: 700 } });
    await page.route('**/api/model', (route) => route.abort('connectionrefused'));
    await sendInWidget(page, 'hello?');
    await noticeShown(page);
    const notice = await page.evaluate(() => {
      const el = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]');
      return { words: el.querySelector('.text').firstChild.textContent, code: el.querySelector('[part~=error-code]').textContent, all: el.textContent };
    });
    assert.equal(notice.words, 'The server could not be reached. Check the connection, then retry.');
    assert.equal(notice.code, 'AGENT_RELAY_ERROR');
    assert.doesNotMatch(notice.all, /TypeError|Failed to fetch/, 'no exception text');
    await assertOneRow(page);
    await artifact(page, 'recovery-offline-notice');

    // Back online: Retry runs the same turn.
    await page.unroute('**/api/model');
    env.upstream.script(textTurn('Back again.'));
    await page.click('patchbridge-agent [part~=retry-button]');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log').textContent.includes('Back again.'));
    await waitIdle(page);
    assert.deepEqual((await logOf(page)).map((m) => m.role), ['user', 'assistant']);
    page.problems.length = 0; // the refused connection is the point of this test
    await page.context().close();
  });

  test('a 401 asks the page for fresh credentials, and the turn runs again once it has them', async () => {
    const user = uniqueUser('auth');
    const page = await openPage(user);
    await page.evaluate(expireSessionAndSignInAgain);
    env.upstream.script(textTurn('You are back.'));
    await sendInWidget(page, 'are you there?');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log').textContent.includes('You are back.'));
    await waitIdle(page);
    assert.deepEqual(await page.evaluate(() => window.unauthorized), ['AGENT_RELAY_ERROR'], 'asked once');
    assert.deepEqual(await texts(page), ['are you there?', 'You are back.'], 'the message was not repeated');
    assert.equal(await page.isHidden(sel.notice), true);
    const conversation = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation);
    assert.equal((await env.relay.fetchJson('GET', `/conversations/${conversation.id}`, { user })).status, 200, 'saved for the user');
    page.problems.length = 0; // the 401 is the point of this test
    await page.context().close();
  });

  test('a 401 nobody answers says the person is signed out, with Retry', async () => {
    const page = await openPage(uniqueUser('signedout'));
    await page.evaluate(() => { document.querySelector('patchbridge-agent').headers = () => ({}); });
    await sendInWidget(page, 'hello');
    await noticeShown(page);
    const words = await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice] .text').firstChild.textContent);
    assert.equal(words, 'You are signed out. Sign in again, then retry.');
    await assertOneRow(page);
    // Signing in again and Retry completes the turn.
    await page.evaluate(() => {
      document.querySelector('patchbridge-agent').headers = () => ({ 'x-patchbridge-user': new URLSearchParams(location.search).get('user') });
    });
    env.upstream.script(textTurn('Hello again.'));
    await page.click('patchbridge-agent [part~=retry-button]');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log').textContent.includes('Hello again.'));
    page.problems.length = 0;
    await page.context().close();
  });

  test('two tabs: reloading the stale tab after a conflict puts its unsaved message back into the box', async () => {
    const user = uniqueUser('tabs');
    const first = await openPage(user, { viewport: { width: 390, height: 760 } });
    env.upstream.script(textTurn('One.'));
    await sendInWidget(first, 'start');
    await waitIdle(first);
    // The second tab opens the same conversation (the element remembers it per page origin).
    const second = await first.context().newPage();
    second.problems = [];
    await second.goto(first.url());
    await waitReady(second);
    await waitInPage(second, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log').textContent.includes('One.'));
    // The first tab moves on; the second is now stale.
    env.upstream.script(textTurn('Two.'));
    await sendInWidget(first, 'from the first tab');
    await waitInPage(first, () => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision === 2);
    env.upstream.script(textTurn('Three.'));
    await sendInWidget(second, 'typed in the second tab');
    await noticeShown(second);
    assert.match(await second.textContent(sel.notice), /changed elsewhere/);
    await assertOneRow(second);
    await artifact(second, 'recovery-conflict-notice');

    await second.click('patchbridge-agent [part~=reload-button]');
    await waitInPage(second, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log').textContent.includes('from the first tab'));
    await waitIdle(second);
    assert.equal(await second.inputValue(sel.input), 'typed in the second tab', 'the unsaved message is back in the box');
    assert.deepEqual(await texts(second), ['start', 'One.', 'from the first tab', 'Two.']);
    assert.equal(await second.isHidden(sel.notice), true);
    await first.context().close();
  });
});
