// <patchbridge-agent>'s second-round journeys in Firefox ESR and in WebKitGTK, on the widget test page
// (tests/e2e/pages/widget.html, under its strict Content-Security-Policy) against the real relay and a fake OpenAI
// Chat upstream: a small phone with the confirmation card open; the history panel by keyboard only; a rejection
// read again after a reload; touch targets and disclosure markers; Copy, Regenerate and Edit after a reload; starter prompts and feedback; a 401 the
// page answers; a tool view that throws; code highlighting; two tabs on one conversation. Chromium runs the same
// journeys, with more detail each, in tests/e2e/widget-{layout,recovery,actions,views,code}.test.mjs.
//
// One relay for the file and one page per engine for all its journeys (each engine is a browser start, and a
// WebKit page is a MiniBrowser of its own): the journeys run in order on that page, each starting a new
// conversation, so a failure can leave the next one without its starting point; the first failure is the one to
// read. `PB_ENGINES=firefox` or `PB_ENGINES=webkit` runs one engine; both by default.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { textTurn, toolCallTurn } from '../e2e/support/openai-chat.mjs';
import { expireSessionAndSignInAgain } from '../e2e/support/widget.mjs';
import { ROOT } from '../e2e/support/relay.mjs';
import { relayWithFakeUpstream } from '../e2e/support/suite.mjs';
import { launch, selectedEngines } from './support/driver.mjs';
import {
  W, bubbles, sel, sendInWidget, shown, toolStatuses, waitBubbles, waitConfirmation, waitIdle, waitOutcome, waitReady,
} from './support/widget.mjs';

const suite = relayWithFakeUpstream({ examplesDir: path.join(ROOT, 'tests', 'e2e', 'pages') });

/** The controller's conversation `{ id, revision }`, or null. */
const conversationOf = (page) => page.evaluate(() => {
  const c = document.querySelector('patchbridge-agent').controller.getState().conversation;
  return c && { id: c.id, revision: c.revision };
});

/** What the person sees of the tail of the log: the bubbles' texts in order. */
const texts = async (page) => (await bubbles(page)).map((b) => b.text);

for (const engine of selectedEngines()) {
  describe(`the widget's second-round journeys in ${engine}`, () => {
    let browser;
    let page;
    let user;
    let url;
    /** Problems the page reported before the running journey began (those are the journey before's). */
    let problemsBefore = 0;
    /** The page's problems since the journey began, without those `expected` (RegExps) names as by design. */
    const newProblems = async (expected = []) => (await page.problems()).slice(problemsBefore)
      .filter((p) => !expected.some((re) => re.test(p)));

    before(async () => {
      browser = await launch(engine);
      user = `${engine}-widget-${Date.now()}`;
      url = `${suite.relay.url}/examples/widget.html?user=${user}&host=squeezed`;
      page = await browser.openPage(url, { width: 320, height: 568 });
      await waitReady(page);
    });
    after(async () => {
      await page?.close().catch(() => {});
      await browser?.close();
    });

    /** Starts the next journey on a new conversation; asserts the upstream saw nothing unscripted so far. */
    async function newConversation() {
      assert.deepEqual(suite.upstream.unexpected, []);
      problemsBefore = (await page.problems()).length;
      if (await conversationOf(page)) {
        await page.click(sel.newChat);
        await page.waitFor(() => document.querySelector('patchbridge-agent').controller.getState().messages.length === 0, null, 'an empty conversation');
      }
    }

    test('at 320 × 568 an open confirmation card scrolls inside the element; the input and an icon-only Stop stay on screen', async () => {
      await newConversation();
      // MiniBrowser's window cannot be narrower than its toolbar (a 447 × 530 px page at the smallest): there the
      // host page makes the element 320 px wide instead, which is what the element's own layout answers to.
      await page.evaluate(() => { if (innerWidth > 320) document.querySelector('patchbridge-agent').style.width = '320px'; });
      const long = 'A fairly long todo text that wraps over several lines on a narrow phone screen. '.repeat(4);
      suite.upstream.script(
        toolCallTurn([{ id: 'call_tall', name: 'todos_add', arguments: { text: long, note: long, when: 'tomorrow morning', list: long } }]),
        textTurn('Added it.'),
      );
      await sendInWidget(page, 'add a long todo');
      await waitConfirmation(page);
      await page.waitFor(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=tool-card] [role=status]')?.dataset.status === 'waiting',
        null, 'the tool card waiting for the decision');
      const layout = await page.evaluate(() => {
        const root = document.querySelector('patchbridge-agent').shadowRoot;
        const rect = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, right: r.right, width: r.width, height: r.height }; };
        const slot = root.querySelector('.confirm-slot');
        const stop = root.querySelector('[part~=stop-button]');
        return {
          viewport: { width: innerWidth, height: innerHeight },
          host: rect(root.host),
          input: rect(root.querySelector('[part~=input]')),
          stop: rect(stop),
          stopName: stop.textContent.trim(),
          stopLabelVisible: stop.querySelector('.label').getBoundingClientRect().width > 2,
          slot: rect(slot),
          bodyScrolls: ((body) => body.scrollHeight > body.clientHeight + 1)(root.querySelector('[part~=confirmation-body]')),
          approve: rect(root.querySelector('[part~=approve-button]')),
        };
      });
      assert.equal(Math.round(layout.host.width), 320, `the element is 320 px wide (in a ${layout.viewport.width} × ${layout.viewport.height} px page)`);
      assert.ok(layout.host.bottom <= layout.viewport.height + 0.5, `the element fits the window (${layout.host.bottom} of ${layout.viewport.height})`);
      assert.ok(layout.input.top >= 0 && layout.input.bottom <= layout.viewport.height, `the input is on screen (${layout.input.top}..${layout.input.bottom})`);
      assert.ok(layout.stop.bottom <= layout.viewport.height && layout.stop.right <= layout.viewport.width, 'Stop is on screen');
      assert.equal(Math.round(layout.stop.width), 44, 'Stop is an icon button at this width');
      assert.equal(layout.stopLabelVisible, false, 'its label is visually hidden');
      assert.equal(layout.stopName, 'Stop', 'and kept as its accessible name');
      assert.ok(layout.bodyScrolls, "the card's body scrolls inside the element");
      assert.ok(layout.approve.bottom <= layout.slot.bottom + 0.5 && layout.approve.bottom <= layout.input.top, 'Approve stays in view without scrolling');
      assert.ok(layout.slot.top >= layout.host.top && layout.slot.bottom <= layout.input.top, 'the card sits above the input, inside the element');
      assert.ok(layout.input.height <= 46, `the placeholder stays on one line (${layout.input.height} px)`);

      // Approve is further down the card: the engine's click scrolls it into view, and the tool runs.
      await page.click(sel.approve);
      await page.waitFor(() => window.calls.length === 1, null, 'the page tool to run');
      await waitOutcome(page, 'completed', 1);
      assert.deepEqual(await newProblems(), []);
    });

    test('the history panel by keyboard: focus stays inside, Escape closes it and focus returns to its button', async () => {
      // The conversation of the journey before is in the list.
      problemsBefore = (await page.problems()).length;
      await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=history-button]').focus());
      await page.keys('Enter');
      await page.waitFor(() => {
        const panel = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=history-panel]');
        return !panel.hidden && panel.querySelector('li') !== null;
      }, null, 'the open history panel with its list');
      const focusInPanel = () => page.evaluate(() => {
        const root = document.querySelector('patchbridge-agent').shadowRoot;
        const active = root.activeElement;
        return { inside: Boolean(active && root.querySelector('[part~=history-panel]').contains(active)), name: active?.getAttribute('aria-label') ?? active?.textContent ?? null };
      });
      const seen = new Set();
      for (let i = 0; i < 6; i += 1) {
        await page.keys('Shift+Tab');
        const where = await focusInPanel();
        assert.ok(where.inside, `Shift+Tab ${i + 1} stays in the panel (focus on ${where.name})`);
        seen.add(where.name);
      }
      for (let i = 0; i < 6; i += 1) {
        await page.keys('Tab');
        const where = await focusInPanel();
        assert.ok(where.inside, `Tab ${i + 1} stays in the panel (focus on ${where.name})`);
      }
      assert.ok(seen.size >= 3, `Shift+Tab cycles through the panel's controls (${[...seen]})`);
      const covered = () => page.evaluate(() => ['header', '.scroller', '.dock'].map((s) => document.querySelector('patchbridge-agent').shadowRoot.querySelector(s).inert));
      assert.deepEqual(await covered(), [true, true, true], 'what the panel covers takes neither focus nor clicks');

      await page.keys('Escape');
      await page.waitFor(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=history-panel]').hidden, null, 'the panel to close');
      assert.deepEqual(await page.evaluate(() => {
        const root = document.querySelector('patchbridge-agent').shadowRoot;
        return { focus: root.activeElement?.getAttribute('part'), expanded: root.querySelector('[part~=history-button]').getAttribute('aria-expanded') };
      }), { focus: 'history-button', expanded: 'false' });
      assert.deepEqual(await covered(), [false, false, false]);
      assert.deepEqual(await newProblems(), []);
    });

    test('a rejected call reads "Rejected" live and after a reload, from the stored result', async () => {
      await page.resize({ width: 1100, height: 760 });
      await page.evaluate(() => { document.querySelector('patchbridge-agent').style.width = ''; });
      await newConversation();
      const ran = await page.evaluate(() => window.calls.length);
      suite.upstream.script(toolCallTurn([{ id: 'call_no', name: 'todos_add', arguments: { text: 'sell the car' } }]), textTurn('Understood, not added.'));
      await sendInWidget(page, 'add sell the car');
      await waitConfirmation(page);
      await page.click(sel.reject);
      await waitOutcome(page, 'completed', 1);
      await waitBubbles(page, 2, /not added/);
      assert.deepEqual(await toolStatuses(page), ['Rejected']);
      assert.equal(await page.evaluate(() => window.calls.length), ran, 'the tool never ran');
      const { id } = await conversationOf(page);
      const stored = await suite.relay.fetchJson('GET', `/conversations/${id}`, { user });
      const result = stored.body.context.messages.flatMap((m) => m.blocks).find((b) => b.type === 'tool-result');
      assert.equal(result.content, '[rejected] The user rejected the call to todos.add.');

      await page.reload();
      await waitReady(page);
      await page.waitFor(() => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card] [role=status][data-status]').length === 1,
        null, 'the restored tool card');
      assert.deepEqual(await toolStatuses(page), ['Rejected'], 'after a reload the decision reads the same');
      assert.deepEqual(await newProblems(), []);
    });

    test('code Copy, Remove image and every expander are 44 × 44 px targets; expanders show a disclosure marker', async () => {
      await newConversation();
      suite.upstream.script(
        textTurn('Here:\n\n```\nconst a = 1;\n```\n', { reasoning: 'Think first.' }),
        toolCallTurn([{ id: 'call_t', name: 'todos_add', arguments: { text: 'milk' } }]),
        textTurn('Done.'),
      );
      await sendInWidget(page, 'code please');
      await waitOutcome(page, 'completed', 1);
      await waitIdle(page);
      await sendInWidget(page, 'add milk');
      await waitConfirmation(page);
      // A picked image shows its Remove button.
      const png = path.join(mkdtempSync(path.join(tmpdir(), 'pb-engines-')), 'dot.png');
      writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'));
      await page.upload(`${W} >>> input[type=file]`, png);
      await page.waitFor(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.attachments button') !== null, null, 'the picked image');
      const targets = await page.evaluate(() => {
        const root = document.querySelector('patchbridge-agent').shadowRoot;
        const size = (el) => { const r = el.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; };
        return {
          copy: size(root.querySelector('pre [part~=copy-button]')),
          removeImage: size(root.querySelector('.attachments button')),
          removeImageName: root.querySelector('.attachments button').getAttribute('aria-label'),
          summaries: [...root.querySelectorAll('summary')].filter((s) => s.getClientRects().length)
            .map((s) => ({ text: s.textContent, height: Math.round(s.getBoundingClientRect().height), marker: getComputedStyle(s, '::before').content })),
        };
      });
      assert.ok(targets.copy[0] >= 44 && targets.copy[1] >= 44, `Copy is ${targets.copy.join(' × ')}`);
      assert.ok(targets.removeImage[0] >= 44 && targets.removeImage[1] >= 44, `Remove image is ${targets.removeImage.join(' × ')}`);
      assert.equal(targets.removeImageName, 'Remove image');
      const names = targets.summaries.map((s) => s.text);
      for (const wanted of ['Thoughts', 'Arguments', 'Show raw JSON']) assert.ok(names.includes(wanted), `${wanted} expander shown (${names})`);
      for (const s of targets.summaries) {
        assert.ok(s.height >= 44, `${s.text} is ${s.height} px tall`);
        assert.ok(s.marker && s.marker !== 'none' && s.marker !== 'normal', `${s.text} shows a disclosure marker`);
      }
      await page.click(`${W} >>> .attachments button`);
      await page.click(sel.approve);
      await waitOutcome(page, 'completed', 2);
      await waitIdle(page);
      const result = await page.evaluate(() => {
        const summary = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=tool-card] details:not([hidden]) summary')].find((s) => s.textContent === 'Result');
        return summary && Math.round(summary.getBoundingClientRect().height);
      });
      assert.ok(result >= 44, `Result is ${result} px tall`);
      assert.deepEqual(await newProblems(), []);
    });

    test('Copy, Regenerate and Edit after a reload rewrite the tail as new revisions; none of them while a turn runs', async () => {
      await newConversation();
      suite.upstream.script(textTurn('Paris.'));
      await sendInWidget(page, 'capital of France?');
      await waitOutcome(page, 'completed', 1);
      suite.upstream.script(textTurn('Some **bold** Berlin.\n\n- one\n- two'));
      await sendInWidget(page, 'capital of Germany?');
      await waitOutcome(page, 'completed', 2);
      const conversation = await conversationOf(page);
      assert.equal(conversation.revision, 2);

      await page.reload();
      await waitReady(page);
      await waitBubbles(page, 4, /two/);
      await waitIdle(page);

      // Copy: the answer's Markdown reaches the clipboard (the engine's own `writeText` resolves; the element then
      // says "Copied").
      await page.evaluate(() => {
        window.copied = [];
        const write = navigator.clipboard.writeText.bind(navigator.clipboard);
        navigator.clipboard.writeText = async (text) => { await write(text); window.copied.push(text); };
      });
      const lastAnswer = `${W} >>> .msg.assistant:last-of-type [part~=copy-answer-button]`;
      await page.click(lastAnswer);
      assert.deepEqual(await page.waitFor(() => (window.copied.length ? window.copied : null), null, 'the copied text'), ['Some **bold** Berlin.\n\n- one\n- two']);
      assert.equal(await page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=copy-answer-button]')].at(-1).getAttribute('aria-label')), 'Copied');

      // Regenerate, with a slow answer during which neither action is offered.
      assert.equal(await shown(page, '[part~=regenerate-button]:not([hidden])'), true);
      suite.upstream.script(textTurn('Berlin, the capital since 1990.', { pieces: 10, delayMs: 60 }));
      await page.click(`${W} >>> [part~=regenerate-button]:not([hidden])`);
      await page.waitFor(() => document.querySelector('patchbridge-agent').controller.getState().status === 'running', null, 'the regenerated turn running');
      await page.waitFor(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=regenerate-button], [part~=edit-button]')]
        .every((b) => b.hidden || b.getClientRects().length === 0), null, 'Regenerate and Edit hidden while the turn runs');
      await waitOutcome(page, 'completed', 2);
      await waitBubbles(page, 4, /since 1990/);
      assert.deepEqual(await texts(page), ['capital of France?', 'Paris.', 'capital of Germany?', 'Berlin, the capital since 1990.']);
      let stored = await suite.relay.fetchJson('GET', `/conversations/${conversation.id}`, { user });
      assert.equal(stored.body.conversation.revision, 3, 'a new revision');
      assert.equal(suite.upstream.requests.at(-1).body.messages.length, 3, 'the model saw the conversation up to the question');

      // Edit the last question: the box takes its text, sending replaces it and the answer after it.
      await page.waitFor(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=edit-button]')].some((b) => !b.hidden),
        null, 'Edit offered again');
      await page.click(`${W} >>> [part~=edit-button]:not([hidden])`);
      assert.equal(await page.waitFor(() => {
        const root = document.querySelector('patchbridge-agent').shadowRoot;
        const editing = root.querySelector('[part~=editing]');
        return editing && !editing.hidden && editing.getClientRects().length > 0 ? root.querySelector('[part~=input]').value : null;
      }, null, 'edit mode with the question in the box'), 'capital of Germany?');
      // The box is emptied the way the page's own script would; the engines' typing appends at the caret.
      await page.evaluate(() => {
        const input = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=input]');
        input.value = '';
        input.dispatchEvent(new Event('input', { bubbles: true }));
      });
      suite.upstream.script(textTurn('Rome.'));
      await page.type(sel.input, 'capital of Italy?');
      await page.press(sel.input, 'Enter');
      await waitBubbles(page, 4, /Rome/);
      await waitIdle(page);
      assert.deepEqual(await texts(page), ['capital of France?', 'Paris.', 'capital of Italy?', 'Rome.']);
      stored = await suite.relay.fetchJson('GET', `/conversations/${conversation.id}`, { user });
      assert.equal(stored.body.conversation.revision, 4);
      assert.deepEqual(stored.body.context.messages.map((m) => m.blocks[0].text), ['capital of France?', 'Paris.', 'capital of Italy?', 'Rome.']);
      assert.equal(await shown(page, '[part~=editing]'), false, 'edit mode ends with the send');
      assert.deepEqual(await newProblems(), []);
    });

    test('starter prompts are sent on click; feedback, when on, dispatches the message id and revision', async () => {
      await newConversation();
      const suggestions = () => page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=suggestion]')]
        .filter((b) => b.getClientRects().length).map((b) => b.textContent));
      await page.evaluate(() => document.querySelector('patchbridge-agent').setAttribute('suggestions', '["What can you do?", "Add a todo"]'));
      assert.deepEqual(await page.waitFor(() => {
        const l = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=suggestion]')].map((b) => b.textContent);
        return l.length ? l : null;
      }, null, 'the starter prompts'), ['What can you do?', 'Add a todo']);
      await page.evaluate(() => { document.querySelector('patchbridge-agent').suggestions = ['Summarise this page', 'Plan my day']; });
      assert.deepEqual(await page.waitFor(() => {
        const shownPrompts = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=suggestion]')]
          .filter((b) => b.getClientRects().length).map((b) => b.textContent);
        return shownPrompts[0] === 'Summarise this page' ? shownPrompts : null;
      }, null, 'the prompts of the property on screen'), ['Summarise this page', 'Plan my day'], 'the property wins over the attribute');
      suite.upstream.script(textTurn('Here is your plan.'));
      await page.click(`${W} >>> [part~=suggestion]:nth-child(2)`);
      await waitOutcome(page, 'completed', 1);
      await waitBubbles(page, 2, /your plan/);
      assert.deepEqual(await texts(page), ['Plan my day', 'Here is your plan.']);
      await waitIdle(page);
      assert.deepEqual(await suggestions(), [], 'gone once the conversation has messages');

      await page.evaluate(() => {
        const el = document.querySelector('patchbridge-agent');
        el.setAttribute('feedback', '');
        window.feedback = [];
        el.addEventListener('patchbridge-feedback', (e) => window.feedback.push(e.detail));
      });
      suite.upstream.script(textTurn('Second answer.'));
      await sendInWidget(page, 'again');
      await waitOutcome(page, 'completed', 2);
      await waitIdle(page);
      const state = await page.evaluate(() => {
        const s = document.querySelector('patchbridge-agent').controller.getState();
        return { id: s.messages.at(-1).id, conversation: { id: s.conversation.id, revision: s.conversation.revision } };
      });
      await page.click(`${W} >>> .msg.assistant:last-of-type [part~=feedback-up]`);
      await page.click(`${W} >>> .msg.assistant:last-of-type [part~=feedback-down]`);
      assert.deepEqual(await page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.msg.assistant:last-of-type [part~=feedback-button]')]
        .map((b) => b.getAttribute('aria-pressed'))), ['false', 'true'], 'one choice at a time');
      assert.deepEqual(await page.evaluate(() => window.feedback), [
        { messageId: state.id, value: 'up', conversation: state.conversation },
        { messageId: state.id, value: 'down', conversation: state.conversation },
      ]);
      await page.evaluate(() => {
        const el = document.querySelector('patchbridge-agent');
        el.removeAttribute('feedback');
        el.suggestions = [];
      });
      assert.deepEqual(await newProblems(), []);
    });

    test('a 401 asks the page for fresh credentials, and the turn runs again once it has them', async () => {
      await newConversation();
      await page.evaluate(expireSessionAndSignInAgain, { once: true });
      suite.upstream.script(textTurn('You are back.'));
      await sendInWidget(page, 'are you there?');
      await waitBubbles(page, 2, /You are back/);
      await waitOutcome(page, 'completed', 1);
      assert.deepEqual(await page.evaluate(() => window.unauthorized), ['AGENT_RELAY_ERROR'], 'asked once');
      assert.deepEqual(await texts(page), ['are you there?', 'You are back.'], 'the message was not repeated');
      assert.equal(await shown(page, '[part~=notice]'), false);
      const { id } = await conversationOf(page);
      assert.equal((await suite.relay.fetchJson('GET', `/conversations/${id}`, { user })).status, 200, 'saved for the user');
      assert.deepEqual(await newProblems([/401/]), []);
    });

    test('a tool view that throws falls back to the generic card and confirmation, is reported, and the turn completes', async () => {
      await newConversation();
      const ran = await page.evaluate(() => window.calls.length);
      await page.evaluate(() => {
        window.viewErrors = [];
        const el = document.querySelector('patchbridge-agent');
        el.addEventListener('patchbridge-view-error', (e) => window.viewErrors.push(`${e.detail.tool}/${e.detail.view}/${e.detail.error.message}`));
        el.toolViews = { '*': { card: () => { throw new Error('card broke'); }, confirmation: () => { throw new Error('confirmation broke'); } } };
      });
      suite.upstream.script(toolCallTurn([{ id: 'call_v2', name: 'todos_add', arguments: { text: 'bread' } }]), textTurn('Done.'));
      await sendInWidget(page, 'add bread');
      await waitConfirmation(page);
      assert.deepEqual(await page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=confirmation] dl > *')].map((e) => e.textContent)),
        ['text', 'bread'], 'the generic facts');
      await page.click(sel.approve);
      await waitOutcome(page, 'completed', 1);
      await waitBubbles(page, 2, /Done\./);
      assert.deepEqual(await toolStatuses(page), ['Done'], 'the generic card, with its status');
      assert.deepEqual((await page.evaluate(() => window.viewErrors)).sort(), ['todos.add/card/card broke', 'todos.add/confirmation/confirmation broke']);
      assert.equal(await page.evaluate(() => window.calls.length), ran + 1, 'the tool ran');
      await page.evaluate(() => { document.querySelector('patchbridge-agent').toolViews = {}; });
      assert.deepEqual(await newProblems([/view of "todos\.add" failed/]), [], 'reported on the console by design, nothing else');
    });

    test('the highlighter loads on demand under the strict CSP and keeps the code text', async () => {
      await newConversation();
      await page.evaluate(() => {
        window.violations = [];
        document.addEventListener('securitypolicyviolation', (e) => window.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      const chunk = () => page.evaluate(() => performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname.endsWith('/widget-highlight.js')).length);
      assert.equal(await chunk(), 0, 'not part of the first load');
      suite.upstream.script(textTurn('Plain:\n\n```\nno language here\n```\n'));
      await sendInWidget(page, 'a plain block');
      await waitOutcome(page, 'completed', 1);
      await waitIdle(page);
      assert.equal(await chunk(), 0, 'a block without a language loads nothing');

      const code = 'const answer = 42; // the answer\nfunction greet(name) {\n  return `hi ${name}`;\n}';
      suite.upstream.script(textTurn(`In JavaScript:\n\n\`\`\`js\n${code}\n\`\`\`\n\nAnd Python:\n\n\`\`\`python\ndef f():\n    return "x"\n\`\`\`\n`));
      await sendInWidget(page, 'show code');
      await waitOutcome(page, 'completed', 2);
      const result = await page.waitFor(() => {
        const blocks = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('code[data-highlighted]')];
        return blocks.length === 2 && blocks.map((el) => ({
          language: el.dataset.highlighted,
          text: el.textContent,
          kinds: [...new Set([...el.querySelectorAll('span')].map((s) => s.className))].sort(),
          keywordColour: el.querySelector('.tok-kwd') && getComputedStyle(el.querySelector('.tok-kwd')).color,
          plainColour: getComputedStyle(el).color,
        }));
      }, null, 'two highlighted blocks');
      assert.equal(result[0].language, 'js');
      assert.equal(result[0].text, code, 'the code text is unchanged');
      assert.ok(['tok-kwd', 'tok-cmnt', 'tok-num'].every((k) => result[0].kinds.includes(k)), `tokens: ${result[0].kinds}`);
      assert.notEqual(result[0].keywordColour, result[0].plainColour, 'keywords are coloured');
      assert.equal(result[1].language, 'py');
      assert.equal(result[1].text, 'def f():\n    return "x"');
      assert.equal(await chunk(), 1, 'fetched once');
      assert.deepEqual(await page.evaluate(() => window.violations), [], 'no CSP violation');
      assert.deepEqual(await newProblems(), []);
    });

    test('two tabs: reloading the stale tab after a conflict puts its unsaved message back into the box', async () => {
      await newConversation();
      suite.upstream.script(textTurn('One.'));
      await sendInWidget(page, 'start');
      await waitOutcome(page, 'completed', 1);
      await page.waitFor(() => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision === 1, null, 'the first save');
      // The second tab opens the same conversation (the element remembers it per page origin).
      const second = await page.openTab(url);
      try {
        await waitReady(second);
        await waitBubbles(second, 2, /One\./);
        // The first tab moves on; the second is now stale.
        suite.upstream.script(textTurn('Two.'));
        await sendInWidget(page, 'from the first tab');
        await page.waitFor(() => document.querySelector('patchbridge-agent').controller.getState().conversation?.revision === 2, null, 'the first tab\'s second save');
        suite.upstream.script(textTurn('Three.'));
        await sendInWidget(second, 'typed in the second tab');
        assert.match(await second.waitFor(() => {
          const notice = document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=notice]');
          return notice && !notice.hidden ? notice.textContent : null;
        }, null, 'the conflict notice'), /changed elsewhere/);

        await second.click(`${W} >>> [part~=reload-button]`);
        await waitBubbles(second, 4, /Two\./);
        await waitIdle(second);
        assert.equal(await second.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=input]').value),
          'typed in the second tab', 'the unsaved message is back in the box');
        assert.deepEqual(await texts(second), ['start', 'One.', 'from the first tab', 'Two.']);
        assert.equal(await shown(second, '[part~=notice]'), false);
        assert.deepEqual((await second.problems()).filter((p) => !/409/.test(p)), []);
      } finally {
        await second.close();
      }
      assert.deepEqual(suite.upstream.unexpected, []);
      assert.deepEqual(await newProblems(), []);
    });
  });
}
