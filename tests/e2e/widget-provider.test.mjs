// <patchbridge-agent> in headless Chromium against the real relay and a fake OpenAI Chat Completions upstream
// (real wire format), on a test page that carries the strict Content-Security-Policy the README documents.
// Covers what a person sees of each runtime rule: streaming Markdown rendered safely and never rebuilt at the end,
// reasoning that folds, Stop in mid-stream and during a confirmation, the max-tokens notice, an error with its
// code and a Retry that does not repeat the message, a limit from runtimeOptions set before the bundle loads and
// before the element connects, IME composition, a message typed before the runtime is ready, disconnect cleanup.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { artifact, logOf, sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();

let users = 0;
async function openPage(query = '') {
  const page = await newPage(env.browser);
  users += 1;
  await page.goto(`${env.relay.url}/examples/widget.html?user=w${users}-${Date.now()}${query}`);
  await waitReady(page);
  return page;
}
const state = (page) => page.evaluate(() => {
  const s = document.querySelector('patchbridge-agent').controller.getState();
  return { status: s.status, lastOutcome: s.lastOutcome, error: s.error && { code: s.error.code, limit: s.error.limit, message: s.error.message }, conversation: s.conversation, messages: s.messages.length };
});
const inShadow = (page, fn, arg) => page.evaluate(({ body, arg: a }) => {
  // eslint-disable-next-line no-new-func
  const f = new Function('root', 'arg', body);
  return f(document.querySelector('patchbridge-agent').shadowRoot, a);
}, { body: `return (${fn})(root, arg);`, arg });

describe('<patchbridge-agent> against the relay and a fake provider', () => {
  test('streams Markdown safely, folds reasoning, and keeps the streamed DOM when the message becomes stable', async () => {
    const page = await openPage();
    const markdown = [
      '# Title', '', 'Some **bold** and `code`.', '', '```js', 'const a = 1;', '```', '',
      '<img src=x onerror="window.pwned=1"> and <script>window.pwned=2</script>', '',
      '[safe](https://example.com/x) [evil](javascript:window.pwned=3) ![pic](javascript:window.pwned=4)', '',
      '| a | b |', '|---|---|', '| 1 | 2 |',
    ].join('\n');
    env.upstream.script(textTurn(markdown, { pieces: 20, delayMs: 25, reasoning: 'Let me think about the table.' }));
    await sendInWidget(page, 'show me markdown');
    // Remember the draft's element while it streams.
    await waitInPage(page, () => {
      const draft = document.querySelector('patchbridge-agent').shadowRoot.querySelector('.msg.assistant.draft');
      if (draft) window.draftElement = draft;
      return draft != null;
    });
    await waitIdle(page);
    const result = await page.evaluate(() => {
      const root = document.querySelector('patchbridge-agent').shadowRoot;
      const msg = root.querySelector('.log > .msg.assistant');
      return {
        sameElement: msg === window.draftElement,
        h1: msg.querySelector('h1')?.textContent,
        strong: msg.querySelector('strong')?.textContent,
        code: msg.querySelector('pre code')?.textContent,
        copy: msg.querySelector('pre button')?.textContent,
        liveImages: [...msg.querySelectorAll('img')].map((i) => i.getAttribute('src')),
        scripts: root.querySelectorAll('script').length,
        links: [...msg.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), target: a.target, rel: a.rel })),
        text: msg.textContent,
        table: msg.querySelectorAll('table td').length,
        reasoningOpen: msg.querySelector('details.reasoning')?.open,
        reasoning: msg.querySelector('details.reasoning')?.textContent,
        pwned: window.pwned ?? null,
      };
    });
    assert.equal(result.sameElement, true, 'the streamed message is adopted, not re-rendered');
    assert.equal(result.h1, 'Title');
    assert.equal(result.strong, 'bold');
    assert.equal(result.code, 'const a = 1;');
    assert.equal(result.copy, 'Copy');
    assert.deepEqual(result.liveImages.filter(Boolean), [], 'no image loads from model HTML or a javascript: URL');
    assert.equal(result.scripts, 0);
    assert.deepEqual(result.links, [{ href: 'https://example.com/x', target: '_blank', rel: 'noopener noreferrer' }]);
    assert.match(result.text, /<img src=x onerror="window\.pwned=1">/, 'raw HTML shows as text');
    assert.match(result.text, /\[evil\]/);
    assert.equal(result.table, 2);
    assert.equal(result.reasoningOpen, false, 'reasoning folds when done');
    assert.match(result.reasoning, /Let me think about the table\./);
    assert.equal(result.pwned, null);
    await artifact(page, 'provider-markdown');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('Stop in mid-stream cancels the provider call and saves nothing', async () => {
    const page = await openPage();
    env.upstream.script(textTurn('word '.repeat(200), { pieces: 100, delayMs: 100, holdOpen: true }));
    const seen = env.upstream.requests.length;
    await sendInWidget(page, 'talk for a while');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.msg.assistant.draft .md')?.textContent.includes('word'));
    await page.click(sel.stop);
    await waitIdle(page);
    const s = await state(page);
    assert.equal(s.lastOutcome, 'cancelled');
    assert.equal(s.conversation, null, 'a cancelled first turn creates no stored conversation');
    assert.match(await page.textContent(sel.notice), /Stopped\. Nothing of that turn was saved\./);
    const record = env.upstream.requests[seen];
    await record.closed;
    assert.equal(record.disconnected, true, 'the relay closed the provider stream');
    assert.equal(await page.isVisible(sel.send), true, 'Send is back');
    await page.context().close();
  });

  test('Stop while a tool waits for approval: the card goes, the tool never runs', async () => {
    const page = await openPage();
    env.upstream.script(toolCallTurn([{ id: 'call_stop_1', name: 'todos_add', arguments: { text: 'never' } }]));
    await sendInWidget(page, 'add never');
    await page.waitForSelector(sel.confirmation);
    await page.click(sel.stop);
    await waitIdle(page);
    assert.equal(await page.$(sel.confirmation), null);
    assert.deepEqual(await page.evaluate(() => window.calls), []);
    assert.equal((await state(page)).lastOutcome, 'cancelled');
    assert.equal(await page.textContent('patchbridge-agent [part~=tool-card] .status'), 'Did not run');
    await page.context().close();
  });

  test('max-tokens is a notice, not an error, and the turn is saved', async () => {
    const page = await openPage();
    env.upstream.script(textTurn('A long answer that was cut', { finishReason: 'length' }));
    await sendInWidget(page, 'write a lot');
    await waitIdle(page);
    const s = await state(page);
    assert.equal(s.lastOutcome, 'max-tokens');
    assert.equal(s.error, null);
    assert.equal(s.conversation?.revision, 1, 'saved like a completed turn');
    assert.equal(await page.getAttribute(sel.notice, 'part'), 'notice max-tokens');
    assert.match(await page.textContent(sel.notice), /output limit and may be incomplete/);
    await artifact(page, 'provider-max-tokens');
    await page.context().close();
  });

  test('an error shows its code and a Retry that runs the turn again without repeating the message', async () => {
    const page = await openPage();
    env.upstream.script({ provider: 'openai-chat', status: 400, frames: [], errorBody: { error: { message: 'bad request', type: 'invalid_request_error' } } });
    await sendInWidget(page, 'first try');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().error != null);
    await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').hidden);
    const notice = await page.textContent(sel.notice);
    assert.match(notice, /AGENT_RELAY_ERROR/);
    assert.doesNotMatch(notice, /bad request/, 'provider text is not echoed');
    await artifact(page, 'provider-error');
    env.upstream.script(textTurn('recovered'));
    await page.click(`patchbridge-agent [part~=retry-button]`);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().lastOutcome === 'completed');
    await waitIdle(page);
    const log = await logOf(page);
    assert.deepEqual(log.map((m) => m.role), ['user', 'assistant']);
    assert.match(log[1].text, /recovered/);
    const last = env.upstream.requests.at(-1).body;
    assert.equal(last.messages.filter((m) => m.role === 'user').length, 1, 'the provider got the message once');
    assert.equal(await page.isHidden(sel.notice), true);
    await page.context().close();
  });

  test('a conversation whose provider state the relay refuses continues in a new conversation with its messages', async () => {
    const page = await openPage();
    env.upstream.script(textTurn('first answer'));
    await sendInWidget(page, 'first question');
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision === 1);
    const first = (await state(page)).conversation;
    // The relay's answer when a stored ModelState no longer matches its messages (its own test pins when).
    await page.route('**/api/model', (route) => route.fulfill({
      status: 400, contentType: 'application/json',
      body: JSON.stringify({ error: { code: 'MODEL_STATE_MISMATCH', message: 'modelState entry does not match message m1; continue in a new conversation from these messages', messageId: 'm1' } }),
    }), { times: 1 });
    await sendInWidget(page, 'second question');
    await waitInPage(page, () => /Continue in a new conversation/.test(document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]')?.textContent ?? ''));
    page.problems.length = 0; // the scripted 400 is expected
    env.upstream.script(textTurn('answer in the new conversation'));
    const seen = env.upstream.requests.length;
    await page.click('patchbridge-agent [part~=notice] button.primary');
    // The refused turn runs again in a new conversation: same messages, no provider state.
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().conversation != null
      && document.querySelector('patchbridge-agent').controller.getState().status === 'idle');
    const sent = env.upstream.requests[seen].body.messages.map((m) => `${m.role}:${m.content}`);
    assert.deepEqual(sent, ['user:first question', 'assistant:first answer', 'user:second question']);
    assert.equal((await state(page)).messages, 4);
    const next = (await state(page)).conversation;
    assert.notEqual(next.id, first.id, 'a new stored conversation');
    assert.equal(next.revision, 1);
    assert.equal((await env.relay.fetchJson('GET', `/conversations/${first.id}`, { user: await page.evaluate(() => new URLSearchParams(location.search).get('user')) })).body.conversation.revision, 1, 'the old one is untouched');
    await page.context().close();
  });

  for (const when of ['before-load', 'before-connect', 'after-ready']) {
    test(`runtimeOptions set ${when}: the limit applies and names itself, the hooks run`, async () => {
      const page = await openPage(`&options=${when}&limits=${encodeURIComponent(JSON.stringify({ maxModelOutputCharacters: 5 }))}`);
      env.upstream.script(textTurn('more than five characters'));
      await sendInWidget(page, 'hi');
      await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().error != null);
      const s = await state(page);
      assert.equal(s.error.code, 'AGENT_LIMIT_EXCEEDED');
      assert.equal(s.error.limit, 'maxModelOutputCharacters');
      await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').hidden);
      assert.match(await page.textContent(sel.notice), /maxModelOutputCharacters/);
      const hooks = await page.evaluate(() => window.hookEvents);
      assert.ok(hooks.includes('execution-started') && hooks.includes('execution-failed'), `hooks ran: ${hooks}`);
      await page.context().close();
    });
  }

  test('nothing is sent while an IME composition is active; Shift+Enter adds a line', async () => {
    const page = await openPage();
    const before = env.upstream.requests.length;
    await page.fill(sel.input, 'ni hao');
    await page.evaluate(() => {
      const ta = document.querySelector('patchbridge-agent').shadowRoot.querySelector('textarea');
      ta.dispatchEvent(new CompositionEvent('compositionstart', { bubbles: true }));
      ta.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true, isComposing: true }));
    });
    await page.press(sel.input, 'Shift+Enter');
    assert.equal(await page.inputValue(sel.input), 'ni hao\n');
    assert.equal((await state(page)).messages, 0);
    await page.evaluate(() => {
      const ta = document.querySelector('patchbridge-agent').shadowRoot.querySelector('textarea');
      ta.value = '你好';
      ta.dispatchEvent(new CompositionEvent('compositionend', { bubbles: true, data: '你好' }));
    });
    env.upstream.script(textTurn('您好'));
    await page.press(sel.input, 'Enter');
    await waitIdle(page);
    assert.equal(env.upstream.requests.length, before + 1);
    assert.equal(env.upstream.requests.at(-1).body.messages.at(-1).content, '你好');
    await page.context().close();
  });

  test('a message typed before the runtime is ready is shown at once and sent when it is', async () => {
    const page = await newPage(env.browser);
    let release;
    const gate = new Promise((resolve) => { release = resolve; });
    await page.route('**/*.wasm', async (route) => { await gate; await route.continue(); });
    env.upstream.script(textTurn('ready now'));
    await page.goto(`${env.relay.url}/examples/widget.html?user=early-${Date.now()}`);
    await page.waitForSelector(sel.input);
    assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').controller), null, 'still loading');
    await sendInWidget(page, 'early bird');
    await page.waitForSelector('patchbridge-agent .msg.user.queued');
    release();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').controller.getState().lastOutcome === 'completed');
    await waitIdle(page);
    const log = await logOf(page);
    assert.deepEqual(log.map((m) => m.role), ['user', 'assistant']);
    assert.match(log[0].text, /early bird/);
    assert.equal(await page.$('patchbridge-agent .msg.user.queued'), null);
    await page.context().close();
  });

  test('removing the element destroys its controller and cancels the running turn', async () => {
    const page = await openPage();
    env.upstream.script(textTurn('endless '.repeat(50), { pieces: 50, delayMs: 100, holdOpen: true }));
    const seen = env.upstream.requests.length;
    await sendInWidget(page, 'go on');
    await env.upstream.waitForRequests(seen + 1);
    const status = await page.evaluate(async () => {
      const el = document.querySelector('patchbridge-agent');
      const controller = el.controller;
      el.remove();
      await new Promise((r) => setTimeout(r, 50));
      return { status: controller.getState().status, controller: el.controller };
    });
    assert.equal(status.status, 'destroyed');
    assert.equal(status.controller, null);
    const record = env.upstream.requests[seen];
    await record.closed;
    assert.equal(record.disconnected, true, 'the provider stream was closed');
    // Moving the element within the page is not a teardown.
    const moved = await page.evaluate(async () => {
      const el = document.createElement('patchbridge-agent');
      el.setAttribute('endpoint', '/api');
      document.body.append(el);
      const controller = await el.whenReady();
      const box = document.createElement('div');
      document.body.append(box);
      box.append(el);
      await new Promise((r) => setTimeout(r, 50));
      return { same: el.controller === controller, status: controller.getState().status };
    });
    assert.deepEqual(moved, { same: true, status: 'idle' });
    await page.context().close();
  });
});
