// How <patchbridge-agent> reads real provider answers, in headless Chromium: provider streams in their real wire
// formats, through the real relay, into the element. An OpenAI Responses answer whose reasoning summary comes in
// several parts shows one "Thoughts" section with the parts as paragraphs; an Anthropic answer with web-search
// citations (text blocks split at each citation) reads as the continuous text the provider meant, live and after
// a reload; a finished answer stays where it streamed (never detached and re-attached).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { messageTurn } from './support/anthropic.mjs';
import { textTurn } from './support/openai-chat.mjs';
import { responseTurn } from './support/openai-responses.mjs';
import { sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();

async function openPage(query) {
  const page = await newPage(env.browser);
  await page.goto(`${env.relay.url}/examples/widget.html?user=answers-${Date.now()}-${Math.random().toString(36).slice(2, 7)}${query}`);
  await waitReady(page);
  return page;
}

/** The last assistant message as the person sees it: its thoughts sections and its text bubbles. */
const lastAnswer = (page) => page.evaluate(() => {
  const msg = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg.assistant')].at(-1);
  return {
    thoughts: [...msg.querySelectorAll('details.reasoning')].map((d) => ({
      summary: d.querySelector('summary').textContent,
      paragraphs: [...d.querySelectorAll('.md > p')].map((p) => p.textContent),
    })),
    bubbles: [...msg.querySelectorAll(':scope > .bubble')].map((b) => [...b.children].map((c) => `${c.tagName.toLowerCase()}:${c.textContent}`)),
  };
});

const citation = (title) => ({
  type: 'web_search_result_location', url: `https://example.org/${title}`, title, encrypted_index: 'EqQBCioIBxgCIiQ4', cited_text: `${title} …`,
});

describe('<patchbridge-agent> reading provider answers', () => {
  test('an OpenAI Responses reasoning summary in four parts is one Thoughts section with four paragraphs', async () => {
    const page = await openPage('&model=responses-e2e');
    const parts = ['**Reading the question.** The person asks about tides.', '**Recalling.** The moon pulls the water.', '**Checking.** Two bulges, so two high tides a day.', '**Answering.** Keep it short.'];
    env.upstream.script(responseTurn([{ type: 'reasoning', summary: parts, encrypted: 'gAAAA-enc-1' }, { type: 'message', text: 'Twice a day, because of the moon.' }]));
    await sendInWidget(page, 'why are there tides?');
    await waitIdle(page);
    const expected = {
      thoughts: [{ summary: 'Thoughts', paragraphs: parts.map((p) => p.replace(/\*\*/g, '')) }],
      bubbles: [['p:Twice a day, because of the moon.']],
    };
    assert.deepEqual(await lastAnswer(page), expected);
    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg.assistant').length === 1);
    assert.deepEqual(await lastAnswer(page), expected, 'the stored answer reads the same');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('an Anthropic answer split at web-search citations reads as one continuous text, live and after a reload', async () => {
    const page = await openPage('&model=anthropic-e2e');
    env.upstream.script(messageTurn([
      { type: 'text', text: 'Here is what I found. ' },
      { type: 'text', text: 'The total eclipse of 12 August 2026 crosses Spain', citations: [citation('eclipse-2026')] },
      { type: 'text', text: '. ' },
      { type: 'text', text: 'It lasts up to two minutes', citations: [citation('duration')] },
      { type: 'text', text: '.\n\nBring eclipse glasses.' },
    ]));
    await sendInWidget(page, 'tell me about the 2026 eclipse');
    await waitIdle(page);
    const expected = {
      thoughts: [],
      bubbles: [[
        'p:Here is what I found. The total eclipse of 12 August 2026 crosses Spain. It lasts up to two minutes.',
        'p:Bring eclipse glasses.',
      ]],
    };
    assert.deepEqual(await lastAnswer(page), expected, 'no lone "." paragraph');
    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg.assistant').length === 1);
    assert.deepEqual(await lastAnswer(page), expected, 'the stored blocks read the same');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('a finished answer stays where it streamed: it is never detached and re-attached', async () => {
    const page = await openPage('');
    env.upstream.script(textTurn(`${'A paragraph of a long answer. '.repeat(20)}\n\n`.repeat(30), { pieces: 60, delayMs: 5 }));
    await sendInWidget(page, 'a long answer please');
    await waitInPage(page, () => {
      const root = document.querySelector('patchbridge-agent').shadowRoot;
      const draft = root.querySelector('.msg.assistant.draft');
      if (!draft || window.removals) return Boolean(draft);
      window.removals = [];
      new MutationObserver((records) => {
        for (const r of records) for (const node of r.removedNodes) if (node === draft) window.removals.push('removed');
      }).observe(root.querySelector('.log'), { childList: true });
      window.streamed = draft;
      return true;
    });
    await waitIdle(page);
    const after = await page.evaluate(() => ({
      same: document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log > .msg.assistant') === window.streamed,
      removals: window.removals,
    }));
    assert.deepEqual(after, { same: true, removals: [] });
    await page.context().close();
  });
});
