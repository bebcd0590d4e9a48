// Smaller promises of <patchbridge-agent>, each checked in headless Chromium on a bare page under the strict CSP:
// the CustomEvents (bubbling, composed), overridden strings, the `inherit` theme, reduced motion, image
// attachments (bounded size, sent as an image block), document attachments (chips with name, type and size,
// keyboard removal, refusals in plain words, only what the model takes), a custom model instead of the relay, `headers` set only
// after the runtime is ready (the remembered conversation the relay refused without them opens once they are set),
// `headers` set by a later module script (the first relay requests wait for the page's scripts),
// and a runtime that does not load (an AgentError of the closed set, shown with Retry).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { ROOT } from './support/relay.mjs';
import { sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();

/** A bare page with one element built by `setup` (a function body run in the page with `el`). */
async function page(setup, { user = `d-${Date.now()}-${Math.random().toString(36).slice(2, 7)}`, emulate, models } = {}) {
  const p = await newPage(env.browser);
  if (emulate) await p.emulateMedia(emulate);
  // `models`: what the relay's models endpoint reports to this page (the element reads the model's inputs there).
  if (models) await p.route('**/api/models', (route) => route.fulfill({ json: models }));
  await p.goto(`${env.relay.url}/examples/bare.html`);
  await p.waitForFunction(() => customElements.get('patchbridge-agent'));
  await p.evaluate(({ body, user: u }) => {
    window.events = [];
    for (const type of ['patchbridge-ready', 'patchbridge-outcome', 'patchbridge-error', 'patchbridge-confirmation', 'patchbridge-conversation']) {
      // Listening on document proves the events bubble and cross the shadow boundary.
      document.addEventListener(type, (e) => window.events.push({ type, composed: e.composed, detail: JSON.parse(JSON.stringify(e.detail, (k, v) => (k === 'controller' ? '[controller]' : v))) }));
    }
    const el = document.createElement('patchbridge-agent');
    el.headers = { 'x-patchbridge-user': u };
    // eslint-disable-next-line no-new-func
    new Function('el', body)(el);
    document.body.append(el);
  }, { body: setup, user });
  await waitReady(p);
  return p;
}

describe('<patchbridge-agent> details', () => {
  test('dispatches bubbling, composed events for ready, confirmation, outcome, conversation and error', async () => {
    const p = await page(`el.setAttribute('endpoint', '/api'); el.tools = [{ name: 'todos.add', description: 'Add', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, execute: async (a, c) => ({ toolCallId: c.callId, content: 'ok', isError: false }) }];`);
    env.upstream.script(toolCallTurn([{ id: 'call_ev', name: 'todos_add', arguments: { text: 'x' } }]), textTurn('done'));
    await sendInWidget(p, 'add x');
    await p.waitForSelector(sel.confirmation);
    await p.click(sel.approve);
    await waitInPage(p, () => window.events.some((e) => e.type === 'patchbridge-outcome'));
    env.upstream.script({ provider: 'openai-chat', status: 401, frames: [] });
    await sendInWidget(p, 'fail please');
    await waitInPage(p, () => window.events.some((e) => e.type === 'patchbridge-error'));
    const events = await p.evaluate(() => window.events);
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'patchbridge-ready');
    assert.ok(events.every((e) => e.composed));
    const confirmation = events.find((e) => e.type === 'patchbridge-confirmation').detail.pendingConfirmation;
    assert.equal(confirmation.tool, 'todos.add');
    assert.deepEqual(confirmation.arguments, { text: 'x' });
    assert.deepEqual(events.find((e) => e.type === 'patchbridge-outcome').detail.outcome, 'completed');
    const conversation = events.filter((e) => e.type === 'patchbridge-conversation').map((e) => e.detail.conversation).filter(Boolean);
    assert.equal(conversation.at(-1).revision, 1, 'the saved conversation is announced with its revision');
    assert.equal(events.find((e) => e.type === 'patchbridge-error').detail.error.code, 'AGENT_RELAY_ERROR');
    p.problems.length = 0;
    await p.context().close();
  });

  test('headers set after the runtime is ready: the remembered conversation opens, with no sign-in notice meanwhile', async () => {
    const user = `late-${Date.now()}`;
    const created = await env.relay.fetchJson('POST', '/conversations', { user, body: { title: 'Kept for later' } });
    assert.equal(created.status, 201);
    const id = created.body.conversation.id;
    const p = await newPage(env.browser);
    await p.goto(`${env.relay.url}/examples/bare.html`);
    await p.waitForFunction(() => customElements.get('patchbridge-agent'));
    const refused = p.waitForResponse((r) => r.url().endsWith(`/api/conversations/${id}`));
    await p.evaluate((remembered) => {
      localStorage.setItem('patchbridge-agent:late:/api', remembered);
      window.unauthorized = 0;
      document.addEventListener('patchbridge-unauthorized', () => { window.unauthorized += 1; });
      const el = document.createElement('patchbridge-agent');
      el.setAttribute('endpoint', '/api');
      el.setAttribute('storage-key', 'late');
      document.body.append(el);
    }, id);
    await waitReady(p);
    assert.equal((await refused).status(), 401, 'the relay refuses the load without the page\'s headers');
    await p.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    assert.equal(await p.isHidden(sel.notice), true, 'no sign-in notice');
    assert.equal(await p.evaluate(() => localStorage.getItem('patchbridge-agent:late:/api')), id, 'still remembered');
    await p.evaluate((u) => { document.querySelector('patchbridge-agent').headers = async () => ({ 'x-patchbridge-user': u }); }, user);
    await waitInPage(p, (want) => document.querySelector('patchbridge-agent').controller.getState().conversation?.id === want, id);
    await waitInPage(p, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=title]').textContent === 'Kept for later');
    assert.equal(await p.isHidden(sel.notice), true);
    assert.equal(await p.evaluate(() => window.unauthorized), 0);
    await p.context().close();
  });

  test('headers set by a later module script of the page go with the first relay requests, even when the runtime is ready before that script runs', async () => {
    const user = `later-${Date.now()}`;
    const created = await env.relay.fetchJson('POST', '/conversations', { user, body: { title: 'Opened at once' } });
    assert.equal(created.status, 201);
    const id = created.body.conversation.id;
    const p = await newPage(env.browser);
    // The page's own script (it sets `headers`) is held until the element's runtime is ready, so the element's
    // first requests would go out before it ran unless the element waits for the page's scripts.
    await p.route('**/examples/later-headers.js', async (route) => {
      await p.waitForFunction(() => Boolean(document.querySelector('patchbridge-agent')?.controller));
      await route.fulfill({
        contentType: 'text/javascript',
        body: `document.querySelector('patchbridge-agent').headers = { 'x-patchbridge-user': ${JSON.stringify(user)} };`,
      });
    });
    await p.route('**/examples/later-headers.html', (route) => route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>later headers</title><link rel="icon" href="data:,">
<script type="module" src="/npm/widget.js"></script></head>
<body><patchbridge-agent endpoint="/api" conversation="${id}"></patchbridge-agent>
<script type="module" src="/examples/later-headers.js"></script></body></html>`,
    }));
    const requests = [];
    p.on('request', (r) => { if (r.url().includes('/api/')) requests.push(`${r.url().replace(env.relay.url, '')} ${r.headers()['x-patchbridge-user'] ?? '-'}`); });
    await p.goto(`${env.relay.url}/examples/later-headers.html`);
    await waitInPage(p, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=title]')?.textContent === 'Opened at once');
    assert.ok(requests.length >= 2, requests.join(', '));
    assert.deepEqual(requests.filter((r) => !r.endsWith(` ${user}`)), [], 'every relay request carried the page\'s headers');
    assert.deepEqual(p.problems, [], 'no refused request, no console error');
    await p.context().close();
  });

  test('a runtime that does not load is reported as AGENT_RUNTIME_LOAD_FAILED, an AgentError, and Retry loads it', async () => {
    const p = await newPage(env.browser);
    await p.route('**/*.wasm', (route) => route.abort('connectionrefused'));
    await p.goto(`${env.relay.url}/examples/bare.html`);
    await p.waitForFunction(() => customElements.get('patchbridge-agent'));
    await p.evaluate(async () => {
      const { AgentError, ErrorCodes } = await import('/npm/errors.js');
      window.failures = [];
      document.addEventListener('patchbridge-error', ({ detail: { error } }) => window.failures.push({
        code: error.code, agentError: error instanceof AgentError, inClosedSet: Object.hasOwn(ErrorCodes, error.code), cause: Boolean(error.cause),
      }));
      const el = document.createElement('patchbridge-agent');
      el.setAttribute('endpoint', '/api');
      document.body.append(el);
    });
    await waitInPage(p, () => window.failures.length > 0);
    assert.deepEqual(await p.evaluate(() => window.failures), [{ code: 'AGENT_RUNTIME_LOAD_FAILED', agentError: true, inClosedSet: true, cause: true }]);
    await waitInPage(p, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').hidden);
    assert.match(await p.textContent(sel.notice), /could not start[\s\S]*AGENT_RUNTIME_LOAD_FAILED/);
    await p.unroute('**/*.wasm');
    await p.click('patchbridge-agent [part~=retry-button]');
    await waitReady(p);
    await waitInPage(p, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').hidden);
    p.problems.length = 0; // the refused .wasm requests and their console report are the point of this test
    await p.context().close();
  });

  test('strings can be overridden one by one, and lang switches the table live', async () => {
    const p = await page(`el.setAttribute('endpoint', '/api'); el.strings = { send: 'Go', inputPlaceholder: 'Say something' };`);
    assert.equal(await p.getAttribute(sel.send, 'aria-label'), 'Go');
    assert.equal(await p.getAttribute(sel.input, 'placeholder'), 'Say something');
    assert.equal(await p.getAttribute(sel.history, 'aria-label'), 'Conversations');
    const chunks = () => p.evaluate(() => performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname.endsWith('-zh.js')).length);
    assert.equal(await chunks(), 0, 'an English page does not load the Chinese strings');
    await p.evaluate(() => document.querySelector('patchbridge-agent').setAttribute('lang', 'zh'));
    // The Chinese table is a chunk of its own: the element translates itself once it is in.
    await p.waitForSelector(`${sel.history}[aria-label="历史对话"]`);
    assert.equal(await chunks(), 1);
    assert.equal(await p.getAttribute(sel.send, 'aria-label'), 'Go', 'overrides win in every language');
    await p.context().close();
  });

  test('an element in Chinese is hidden until its strings are in, never shown in English first', async () => {
    const p = await newPage(env.browser);
    await p.goto(`${env.relay.url}/examples/bare.html`);
    await p.waitForFunction(() => customElements.get('patchbridge-agent'));
    // Read in the same task that adds the element, before any frame can paint it.
    const first = await p.evaluate(() => {
      const el = document.createElement('patchbridge-agent');
      el.setAttribute('lang', 'zh');
      document.body.append(el);
      const title = /** @type {HTMLElement} */ (el.shadowRoot?.querySelector('h2'));
      return { text: title.textContent, visibility: getComputedStyle(title).visibility };
    });
    assert.ok(first.visibility === 'hidden' || first.text === '助手', `first paint: ${JSON.stringify(first)}`);
    await p.waitForFunction(() => {
      const title = document.querySelector('patchbridge-agent')?.shadowRoot?.querySelector('h2');
      return title?.textContent === '助手' && getComputedStyle(title).visibility === 'visible';
    });
    assert.equal(await p.getAttribute(sel.send, 'aria-label'), '发送');
    await p.context().close();
  });

  test('theme "inherit" takes the host page\'s font and colours; reduced motion stops animations', async () => {
    const p = await page(`el.setAttribute('endpoint', '/api'); el.setAttribute('theme', 'inherit');`, { emulate: { reducedMotion: 'reduce' } });
    const look = await p.evaluate(() => {
      const el = document.querySelector('patchbridge-agent');
      const input = el.shadowRoot.querySelector('textarea');
      return { font: getComputedStyle(el).fontFamily, color: getComputedStyle(el).color, bg: getComputedStyle(el).backgroundColor, inputFont: getComputedStyle(input).fontFamily };
    });
    assert.equal(look.font, 'Georgia, serif');
    assert.equal(look.inputFont, 'Georgia, serif');
    assert.equal(look.color, 'rgb(20, 90, 40)');
    assert.equal(look.bg, 'rgba(0, 0, 0, 0)');
    env.upstream.script(textTurn('slowly '.repeat(20), { pieces: 20, delayMs: 80 }));
    await sendInWidget(p, 'stream');
    await p.waitForSelector('patchbridge-agent .cursor');
    assert.equal(await p.evaluate(() => getComputedStyle(document.querySelector('patchbridge-agent').shadowRoot.querySelector('.cursor'), '::after').animationName), 'none');
    await waitIdle(p);
    await p.context().close();
  });

  test('an attached image is sent as an image block; one over the size limit is refused with a notice', async () => {
    const p = await page(`el.setAttribute('endpoint', '/api'); el.maxImageBytes = 2048;`);
    // A 1×1 PNG.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    await p.setInputFiles('patchbridge-agent input[type=file]', [{ name: 'dot.png', mimeType: 'image/png', buffer: png }]);
    await p.waitForSelector('patchbridge-agent .attachments img');
    await p.setInputFiles('patchbridge-agent input[type=file]', [{ name: 'big.png', mimeType: 'image/png', buffer: Buffer.alloc(4096, 1) }]);
    await waitInPage(p, () => /Images can be at most 2 KiB/.test(document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').textContent));
    assert.equal(await p.$$eval('patchbridge-agent .attachments img', (l) => l.length), 1);
    env.upstream.script(textTurn('a dot'));
    const seen = env.upstream.requests.length;
    await sendInWidget(p, 'what is this?');
    await waitIdle(p);
    const user = env.upstream.requests[seen].body.messages.find((m) => m.role === 'user');
    const parts = Array.isArray(user.content) ? user.content : [];
    assert.ok(parts.some((c) => c.type === 'image_url' && c.image_url.url === `data:image/png;base64,${png.toString('base64')}`), JSON.stringify(user.content).slice(0, 300));
    assert.equal(await p.$$eval('patchbridge-agent .msg.user img', (l) => l.length), 1, 'the sent image shows in the log');
    await p.context().close();
  });

  test('documents: chips with name, type and size, removed by keyboard; refusals say why; only what the model takes is offered', async () => {
    const models = { protocolVersion: 1, previewOnly: false, defaultModel: 'openai-e2e', models: [{ id: 'openai-e2e', label: 'x', previewOnly: false, capabilities: { tools: true, images: true, inputs: ['text', 'image'] } }] };
    const p = await page(`el.setAttribute('endpoint', '/api'); el.maxFileBytes = 4096; el.maxFiles = 3;`, { models });
    const file = 'patchbridge-agent input[type=file]';
    await waitInPage(p, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('input[type=file]').accept.includes('pdf'));
    const notice = () => p.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').textContent);
    await p.setInputFiles(file, [
      { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Notes\n\nbuy milk\n') },
      { name: 'main.ts', mimeType: 'video/mp2t', buffer: Buffer.from('export const x: number = 1;\n'.repeat(60)) },
      { name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n%%EOF\n') },
      { name: 'archive.zip', mimeType: 'application/zip', buffer: Buffer.from('PK') },
      { name: 'big.txt', mimeType: 'text/plain', buffer: Buffer.alloc(5000, 97) },
    ]);
    await waitInPage(p, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=attachment]').length === 2);
    assert.equal(await notice(), [
      '“report.pdf” cannot be attached: this model does not read PDF files.',
      '“archive.zip” cannot be attached: only PDF, text, Markdown, CSV, JSON and source code files and PNG, JPEG, GIF and WebP images can.',
      '“big.txt” is too large: files can be at most 4 KiB.',
    ].join(' '));
    const chips = () => p.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=attachment]')].map((c) => ({
      text: c.querySelector('.chip-name').textContent, meta: c.querySelector('.chip-meta').textContent,
      remove: c.querySelector('button').getAttribute('aria-label'), role: c.getAttribute('role'),
    })));
    assert.deepEqual(await chips(), [
      { text: 'notes.md', meta: 'Markdown · 18 B', remove: 'Remove notes.md', role: 'listitem' },
      { text: 'main.ts', meta: 'Text · 2 KiB', remove: 'Remove main.ts', role: 'listitem' },
    ]);
    assert.equal(await p.getAttribute('patchbridge-agent [part~=attachments]', 'aria-label'), 'Attachments');
    // Too many: the limit is per message.
    await p.setInputFiles(file, [
      { name: 'a.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n') },
      { name: 'b.json', mimeType: 'application/json', buffer: Buffer.from('{"a":1}') },
    ]);
    await waitInPage(p, () => /At most 3 files/.test(document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]').textContent));
    assert.deepEqual((await chips()).map((c) => c.text), ['notes.md', 'main.ts', 'a.csv']);
    // Keyboard: Remove on the first chip, by Enter; focus moves to the next chip's Remove.
    await p.focus('patchbridge-agent [part~=attachment] button');
    await p.keyboard.press('Enter');
    assert.deepEqual((await chips()).map((c) => c.text), ['main.ts', 'a.csv']);
    assert.equal(await p.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.activeElement?.getAttribute('aria-label')), 'Remove main.ts');
    assert.deepEqual(await p.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=attach-button]').getAttribute('aria-label')), 'Attach files');
    // Drop on the input area and paste into the input attach too.
    await p.evaluate(() => {
      const root = document.querySelector('patchbridge-agent').shadowRoot;
      const files = new DataTransfer();
      files.items.add(new File(['x,y\n'], 'dropped.csv', { type: 'text/csv' }));
      root.querySelector('[part~=composer]').dispatchEvent(new DragEvent('drop', { dataTransfer: files, bubbles: true, cancelable: true }));
    });
    await waitInPage(p, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=attachment]').length === 3);
    await p.click('patchbridge-agent [part~=attachment] button');
    await p.evaluate(() => {
      const root = document.querySelector('patchbridge-agent').shadowRoot;
      const files = new DataTransfer();
      files.items.add(new File(['{"b":2}'], 'pasted.json', { type: 'application/json' }));
      root.querySelector('textarea').dispatchEvent(new ClipboardEvent('paste', { clipboardData: files, bubbles: true, cancelable: true }));
    });
    await waitInPage(p, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=attachment]').length === 3);
    assert.deepEqual((await chips()).map((c) => `${c.text} ${c.meta}`), ['a.csv CSV · 8 B', 'dropped.csv CSV · 4 B', 'pasted.json JSON · 7 B']);
    // No serious accessibility violation with the chips and the refusal shown (axe-core, evaluated through the
    // debugging protocol: the page's CSP refuses inline scripts).
    await p.evaluate(readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
    const violations = await p.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
    assert.deepEqual(violations, []);
    await p.context().close();
  });

  test('a custom model instead of the relay: streams, asks for a tool, no history button needed', async () => {
    const p = await page(`
      el.tools = [{ name: 'page.mark', description: 'Mark', inputSchema: { type: 'object', properties: {} }, execute: async (a, c) => { window.marked = true; return { toolCallId: c.callId, content: 'marked', isError: false }; } }];
      el.model = {
        async *stream(request) {
          const last = request.messages.at(-1);
          yield { type: 'message-start', id: 'local-' + request.messages.length };
          if (last.role === 'user') {
            yield { type: 'block-start', index: 0, block: { type: 'tool-call', callId: 'c1', name: 'page.mark' } };
            yield { type: 'block-delta', index: 0, delta: '{}' };
            yield { type: 'block-stop', index: 0 };
            yield { type: 'message-stop', stopReason: 'tool-use', modelState: null };
          } else {
            yield { type: 'block-start', index: 0, block: { type: 'text' } };
            for (const word of ['All ', 'marked ', '**done**.']) yield { type: 'block-delta', index: 0, delta: word };
            yield { type: 'block-stop', index: 0 };
            yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
          }
        },
      };`);
    const before = env.upstream.requests.length;
    await sendInWidget(p, 'mark the page');
    await p.waitForSelector(sel.confirmation);
    await p.click(sel.approve);
    await waitInPage(p, () => document.querySelector('patchbridge-agent').controller.getState().lastOutcome === 'completed');
    await waitIdle(p);
    assert.equal(await p.evaluate(() => window.marked), true);
    assert.equal(await p.textContent('patchbridge-agent .log > .msg.assistant:last-child strong'), 'done');
    assert.equal(env.upstream.requests.length, before, 'the relay was not called');
    assert.equal(await p.isHidden(sel.history), true, 'no history without a relay');
    await p.context().close();
  });
});
