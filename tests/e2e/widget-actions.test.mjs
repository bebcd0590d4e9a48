// What a person does with the answers of <patchbridge-agent>, in headless Chromium against the real relay and a
// fake OpenAI upstream: starter prompts in the empty state (`suggestions` attribute and property) sent on click;
// Copy answer puts the answer's Markdown on the clipboard; thumbs (only with the `feedback` attribute) dispatch
// `patchbridge-feedback` with the message id and the conversation's revision; Regenerate and Edit rewrite the
// conversation's tail through the controller as a new revision, also after a reload, and are offered only while
// no turn runs.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn } from './support/openai-chat.mjs';
import { logOf, sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();
const W = 'patchbridge-agent';

async function openPage(user) {
  const page = await newPage(env.browser);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.relay.url });
  await page.goto(`${env.relay.url}/examples/widget.html?user=${user}`);
  await waitReady(page);
  return page;
}
const uniqueUser = (name) => `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 7)}`;
const texts = async (page) => (await logOf(page)).map((m) => (m.role === 'user' ? m.text.replace(/^You/, '') : m.text));
const shown = (page, selector) => page.evaluate((s) => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll(s)]
  .filter((e) => e.getClientRects().length).length, selector);

describe('<patchbridge-agent> message actions', () => {
  test('starter prompts from the attribute and the property are sent on click and go once the conversation starts', async () => {
    const page = await openPage(uniqueUser('suggest'));
    await page.evaluate(() => document.querySelector('patchbridge-agent').setAttribute('suggestions', '["What can you do?", "Add a todo"]'));
    assert.deepEqual(await page.$$eval(`${W} [part~=suggestion]`, (l) => l.map((b) => b.textContent)), ['What can you do?', 'Add a todo']);
    // The property wins over the attribute.
    await page.evaluate(() => { document.querySelector('patchbridge-agent').suggestions = ['Summarise this page', 'Plan my day']; });
    assert.deepEqual(await page.$$eval(`${W} [part~=suggestion]`, (l) => l.map((b) => b.textContent)), ['Summarise this page', 'Plan my day']);
    const box = await page.$eval(`${W} [part~=suggestion]`, (b) => { const r = b.getBoundingClientRect(); return [r.width, r.height]; });
    assert.ok(box[0] >= 44 && box[1] >= 44, 'a 44 px target');
    env.upstream.script(textTurn('Here is your plan.'));
    await page.click(`${W} [part~=suggestion]:nth-child(2)`);
    await waitIdle(page);
    assert.deepEqual(await texts(page), ['Plan my day', 'Here is your plan.']);
    assert.match(JSON.stringify(env.upstream.requests.at(-1).body.messages.at(-1)), /Plan my day/);
    assert.equal(await shown(page, '[part~=suggestions]'), 0, 'gone once the conversation has messages');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('Copy answer puts the Markdown on the clipboard; feedback is off by default and dispatches the message and revision when on', async () => {
    const page = await openPage(uniqueUser('copy'));
    env.upstream.script(textTurn('Some **bold** text.\n\n- one\n- two'));
    await sendInWidget(page, 'format something');
    await waitIdle(page);
    assert.equal(await shown(page, '[part~=feedback-button]'), 0, 'no thumbs unless the page asks for them');
    await page.click(`${W} [part~=copy-answer-button]`);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'Some **bold** text.\n\n- one\n- two');

    await page.evaluate(() => {
      const el = document.querySelector('patchbridge-agent');
      el.setAttribute('feedback', '');
      window.feedback = [];
      el.addEventListener('patchbridge-feedback', (e) => window.feedback.push(e.detail));
    });
    env.upstream.script(textTurn('Second answer.'));
    await sendInWidget(page, 'again');
    await waitIdle(page);
    const state = await page.evaluate(() => {
      const s = document.querySelector('patchbridge-agent').controller.getState();
      return { id: s.messages.at(-1).id, conversation: { id: s.conversation.id, revision: s.conversation.revision } };
    });
    const up = `${W} .msg.assistant:last-of-type [part~=feedback-up]`;
    await page.click(up);
    assert.equal(await page.getAttribute(up, 'aria-pressed'), 'true');
    await page.click(`${W} .msg.assistant:last-of-type [part~=feedback-down]`);
    assert.equal(await page.getAttribute(up, 'aria-pressed'), 'false', 'one choice at a time');
    assert.deepEqual(await page.evaluate(() => window.feedback), [
      { messageId: state.id, value: 'up', conversation: state.conversation },
      { messageId: state.id, value: 'down', conversation: state.conversation },
    ]);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('Regenerate and Edit rewrite the tail as a new revision, also after a reload; neither is offered while a turn runs', async () => {
    const user = uniqueUser('rewrite');
    const page = await openPage(user);
    env.upstream.script(textTurn('Paris.'));
    await sendInWidget(page, 'capital of France?');
    await waitIdle(page);
    env.upstream.script(textTurn('Berlin.'));
    await sendInWidget(page, 'capital of Germany?');
    await waitIdle(page);
    const conversation = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation);
    assert.equal(conversation.revision, 2);
    // Only the last answer offers Regenerate, only the last user message offers Edit.
    assert.equal(await shown(page, '[part~=regenerate-button]'), 1);
    assert.equal(await shown(page, '[part~=edit-button]'), 1);

    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg.assistant').length === 2);
    await waitIdle(page);
    // Regenerate after the reload: a slow answer, during which neither action is offered.
    env.upstream.script(textTurn('Berlin, the capital since 1990.', { pieces: 10, delayMs: 60 }));
    await page.click(`${W} [part~=regenerate-button]:not([hidden])`);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().status === 'running');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    assert.equal(await shown(page, '[part~=regenerate-button]'), 0, 'not while a turn runs');
    assert.equal(await shown(page, '[part~=edit-button]'), 0, 'not while a turn runs');
    await waitIdle(page);
    assert.deepEqual(await texts(page), ['capital of France?', 'Paris.', 'capital of Germany?', 'Berlin, the capital since 1990.']);
    let stored = await env.relay.fetchJson('GET', `/conversations/${conversation.id}`, { user });
    assert.equal(stored.body.conversation.revision, 3, 'a new revision');
    assert.deepEqual(stored.body.context.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(env.upstream.requests.at(-1).body.messages.length, 3, 'the model saw the conversation up to the question');

    // Edit the last message: the box takes its text, sending replaces it and the answer after it.
    await page.click(`${W} [part~=edit-button]:not([hidden])`);
    assert.equal(await page.inputValue(sel.input), 'capital of Germany?');
    assert.equal(await shown(page, '[part~=editing]'), 1);
    env.upstream.script(textTurn('Rome.'));
    await page.fill(sel.input, 'capital of Italy?');
    await page.press(sel.input, 'Enter');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log').textContent.includes('Rome.'));
    await waitIdle(page);
    assert.deepEqual(await texts(page), ['capital of France?', 'Paris.', 'capital of Italy?', 'Rome.']);
    stored = await env.relay.fetchJson('GET', `/conversations/${conversation.id}`, { user });
    assert.equal(stored.body.conversation.revision, 4);
    assert.deepEqual(stored.body.context.messages.map((m) => m.blocks[0].text), ['capital of France?', 'Paris.', 'capital of Italy?', 'Rome.']);
    assert.equal(await shown(page, '[part~=editing]'), 0, 'edit mode ends with the send');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
});
