// End to end in headless Chromium: the demo page (examples/demo/, served by the real relay binary together with
// the built npm package) → the relay (SQLite) → a fake upstream (OpenAI Chat Completions; Anthropic Messages for
// the Stop test, picked with the page's `?model=`).
//
// The core flow a user sees: a message, the model asks for a page tool that is not read-only, the page's
// confirmation card appears, the user clicks Approve, the tool changes the page, the tool result reaches the
// model, the final answer renders; then a page reload restores exactly that conversation from the relay and the
// next turn continues it; a max-tokens turn is flagged, saved and survives another reload.
// Also: Stop in mid-stream from the page, and a `?c=` the user may not load.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { launchChromium, newPage, sendFromPage, waitInPage } from './support/browser.mjs';
import { messageTurn } from './support/anthropic.mjs';
import { startFakeUpstream } from './support/fake-upstream.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { startRelay } from './support/relay.mjs';

let upstream;
let relay;
let browser;

before(async () => {
  upstream = await startFakeUpstream();
  relay = await startRelay({ upstream: upstream.url });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await relay?.stop();
  await upstream?.close();
});

const messageTexts = (page) => page.$$eval('#messages > li', (items) => items.map((li) => ({
  role: li.classList.contains('user') ? 'user' : li.classList.contains('assistant') ? 'assistant' : li.classList.contains('tool') ? 'tool' : '?',
  text: li.textContent,
})));

describe('demo page in Chromium against the relay and a fake provider', () => {
  test('tool loop with the confirmation card, then a reload restores the conversation', async () => {
    const page = await newPage(browser);
    await page.goto(`${relay.url}/examples/demo/?user=carol`);
    await waitInPage(page, () => document.getElementById('mode').textContent.startsWith('Model:'));
    assert.equal(await page.textContent('#mode'), 'Model: openai-e2e (Fake OpenAI Chat)');
    assert.doesNotMatch(await page.textContent('#mode'), /scripted/i, 'a real provider is not labelled as the demo');

    upstream.script(
      toolCallTurn([{ id: 'call_page_1', name: 'todos_add', arguments: { text: 'buy milk' } }], { text: 'Adding it now.' }),
      textTurn('I added "buy milk" to your list.'),
    );
    await sendFromPage(page, 'please put buy milk on my todo list');

    // The confirmation card shows the tool and its arguments; nothing ran yet.
    await waitInPage(page, () => !document.getElementById('confirm').hidden);
    assert.equal(await page.textContent('#confirm-tool'), 'todos.add');
    assert.deepEqual(JSON.parse(await page.textContent('#confirm-args')), { text: 'buy milk' });
    assert.equal(await page.$$eval('#todos li', (l) => l.length), 0);
    assert.equal(await page.isDisabled('#send'), true, 'no second send while a turn waits');
    assert.equal(await page.isEnabled('#stop'), true);
    // The inspector shows the running turn's frozen tool snapshot, not the live registry.
    assert.match(await page.textContent('#tool-source'), /^current-execution, revision \d+$/);
    assert.deepEqual(await page.$$eval('#tools li', (l) => l.map((li) => li.textContent)), ['todos.add', 'todos.list', 'clock.now']);
    const r1 = upstream.requests.at(-1).body;
    assert.ok(r1.tools.some((t) => t.function.name === 'todos_add'), 'the page tools were sent to the provider');

    await page.click('#approve');
    await waitInPage(page, () => [...document.querySelectorAll('#messages li.assistant')].some((li) => li.textContent.includes('I added "buy milk"')));
    assert.deepEqual(await page.$$eval('#todos li', (l) => l.map((li) => li.textContent)), ['buy milk']);
    assert.equal(await page.isHidden('#confirm'), true);
    await waitInPage(page, () => document.getElementById('tool-source').textContent.startsWith('current-registry'));

    // The tool's result, produced in the page, reached the provider.
    const r2 = upstream.requests.at(-1).body;
    const toolMessage = r2.messages.find((m) => m.role === 'tool');
    assert.equal(toolMessage.tool_call_id, 'call_page_1');
    assert.equal(toolMessage.content, 'Added "buy milk". The list has 1 item(s).');

    const before = await messageTexts(page);
    assert.deepEqual(before.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);

    // The conversation id is in the URL once saved; the relay holds revision 1 for this user.
    await waitInPage(page, () => new URLSearchParams(location.search).has('c'));
    const conversationId = new URL(page.url()).searchParams.get('c');
    const stored = await relay.fetchJson('GET', `/conversations/${encodeURIComponent(conversationId)}`, { user: 'carol' });
    assert.equal(stored.status, 200);
    assert.equal(stored.body.conversation.revision, 1);
    assert.equal(stored.body.context.messages.length, 4);

    // Reload: the page restores the last complete turn from the relay.
    await page.reload();
    await waitInPage(page, () => document.querySelectorAll('#messages > li').length === 4);
    assert.deepEqual(await messageTexts(page), before);
    assert.equal(await page.isHidden('#confirm'), true);

    upstream.script(textTurn('Your list has one item: buy milk.'));
    await sendFromPage(page, 'what is on my list?');
    await waitInPage(page, () => document.querySelectorAll('#messages > li').length === 6);
    const r3 = upstream.requests.at(-1).body;
    assert.ok(r3.messages.some((m) => m.role === 'tool' && m.tool_call_id === 'call_page_1'), 'the restored history went to the provider');
    await waitInPage(page, async (id) => {
      const r = await fetch(`/api/conversations/${encodeURIComponent(id)}`, { headers: { 'x-patchbridge-user': 'carol' } });
      return (await r.json()).conversation.revision === 2;
    }, conversationId);

    // A max-tokens turn: the page says the answer may be incomplete; the turn is saved and survives a reload.
    upstream.script(textTurn('Your list, in full detail: 1. buy mi', { finishReason: 'length' }));
    await sendFromPage(page, 'describe the list in full detail');
    await waitInPage(page, () => document.getElementById('notice').textContent.includes('output limit'));
    await waitInPage(page, async (id) => {
      const r = await fetch(`/api/conversations/${encodeURIComponent(id)}`, { headers: { 'x-patchbridge-user': 'carol' } });
      return (await r.json()).conversation.revision === 3;
    }, conversationId);
    const withMaxTokens = await messageTexts(page);
    assert.equal(withMaxTokens.length, 8);
    assert.match(withMaxTokens.at(-1).text, /1\. buy mi$/);
    await page.reload();
    await waitInPage(page, () => document.querySelectorAll('#messages > li').length === 8);
    assert.deepEqual(await messageTexts(page), withMaxTokens);

    assert.deepEqual(page.problems, []);
    assert.deepEqual(upstream.unexpected, []);
    await page.context().close();
  });

  test('Stop in mid-stream: the page says nothing was saved, the provider sees the disconnect', async () => {
    const page = await newPage(browser);
    // `?model=` picks the relay's Anthropic model for this page.
    await page.goto(`${relay.url}/examples/demo/?user=dave&model=anthropic-e2e`);
    await waitInPage(page, () => document.getElementById('mode').textContent.startsWith('Model:'));
    assert.equal(await page.textContent('#mode'), 'Model: anthropic-e2e (Fake Anthropic)');
    upstream.script(messageTurn([
      { type: 'text', text: 'This reply trickles in slowly so that the user can stop it before it is complete.', pieces: 30 },
    ], { delayMs: 150, holdOpen: true }));
    await sendFromPage(page, 'write slowly');
    await waitInPage(page, () => document.getElementById('draft').textContent.length > 0);
    const record = upstream.requests.at(-1);
    assert.equal(record.path, '/v1/messages');
    await page.click('#stop');
    await waitInPage(page, () => document.getElementById('notice').textContent.includes('Nothing of that turn was saved'));
    assert.equal(await page.isHidden('#draft'), true, 'the half-streamed draft is gone');
    assert.equal(await page.isEnabled('#send'), true);
    await Promise.race([record.closed, new Promise((_, reject) => setTimeout(() => reject(new Error('upstream never saw the disconnect')), 5_000))]);
    assert.equal(record.disconnected, true);
    assert.equal(new URL(page.url()).searchParams.has('c'), false, 'no conversation was created');
    assert.deepEqual((await relay.fetchJson('GET', '/conversations', { user: 'dave' })).body.items, []);
    // Stop aborts the page's fetch of the model stream; that abort is the only request that may fail.
    const aborted = /^request failed: POST .*\/api\/model \(net::ERR_ABORTED\)$/;
    assert.equal(page.problems.filter((p) => aborted.test(p)).length, 1, 'the model stream fetch was aborted by Stop');
    assert.deepEqual(page.problems.filter((p) => !aborted.test(p)), []);
    await page.context().close();
  });

  test('a conversation id the user cannot load shows the error and no history', async () => {
    const owner = await relay.fetchJson('POST', '/conversations', {
      user: 'erin',
      body: { title: 'private', context: { messages: [{ id: 'm1', role: 'user', blocks: [{ type: 'text', text: 'secret plans' }] }], modelState: null } },
    });
    assert.equal(owner.status, 201);
    const page = await newPage(browser);
    await page.goto(`${relay.url}/examples/demo/?user=frank&c=${encodeURIComponent(owner.body.conversation.id)}`);
    await waitInPage(page, () => !document.getElementById('notice').hidden);
    assert.match(await page.textContent('#notice'), /AGENT_RELAY_ERROR/);
    assert.equal(await page.$$eval('#messages > li', (l) => l.length), 0);
    assert.doesNotMatch(await page.textContent('body'), /secret plans/);
    await waitInPage(page, () => !new URLSearchParams(location.search).has('c'));
    // The relay's 404 for another user's conversation is the expected response here, not a page problem.
    assert.deepEqual(page.problems.filter((p) => !/^http 404 GET .*\/api\/conversations\//.test(p)), []);
    await page.context().close();
  });
});
