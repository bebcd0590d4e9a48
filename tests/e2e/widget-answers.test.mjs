// How <patchbridge-agent> reads real provider answers, in headless Chromium: provider streams in their real wire
// formats, through the real relay, into the element. An OpenAI Responses answer whose reasoning summary comes in
// several parts shows one "Thoughts" section with the parts as paragraphs; an Anthropic answer with web-search
// citations (text blocks split at each citation) reads as the continuous text the provider meant, live and after
// a reload; a finished answer stays where it streamed (never detached and re-attached), and so do its blocks: a
// long answer's finished blocks are grouped (the browser skips a finished group out of view) without changing how
// it reads, live or after a reload. A long stored answer (a reload, another conversation opened) renders in slices
// over several tasks into the same DOM as live, and a conversation opened meanwhile gets none of its nodes.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { messageTurn } from './support/anthropic.mjs';
import { textTurn } from './support/openai-chat.mjs';
import { responseTurn } from './support/openai-responses.mjs';
import { sel, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

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

  test('the blocks of a long answer are the nodes that streamed: none is removed or rebuilt when the answer ends', async () => {
    const page = await openPage('');
    env.upstream.script(textTurn(longMarkdown(40), { pieces: 160, delayMs: 4 }));
    await sendInWidget(page, 'a long structured answer please');
    // Mid-stream, once the answer has grouped blocks: keep every block rendered so far but the open last one.
    await waitInPage(page, () => {
      const bubble = document.querySelector('patchbridge-agent').shadowRoot.querySelector('.msg.assistant.draft > .bubble');
      if (!bubble || !bubble.querySelector(':scope > .chunk > pre')) return false;
      window.streamedBubble = bubble;
      window.streamedBlocks = [...bubble.querySelectorAll(':scope > :not(.chunk), :scope > .chunk, :scope > .chunk > *')].slice(0, -1);
      window.removedElements = [];
      new MutationObserver((records) => {
        for (const r of records) for (const node of r.removedNodes) if (node.nodeType === 1) window.removedElements.push(node.nodeName);
      }).observe(bubble, { childList: true, subtree: true });
      return true;
    });
    await waitIdle(page);
    const after = await page.evaluate(() => {
      const bubble = document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log > .msg.assistant:not(.draft) > .bubble');
      return {
        sameBubble: bubble === window.streamedBubble,
        kept: window.streamedBlocks.length,
        stillInPlace: window.streamedBlocks.filter((el) => bubble.contains(el)).length,
        removed: window.removedElements,
      };
    });
    assert.ok(after.kept > 32, `blocks and groups seen mid-stream: ${after.kept}`);
    assert.deepEqual(after, { sameBubble: true, kept: after.kept, stillInPlace: after.kept, removed: [] });
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('a long answer reads the same grouped as ungrouped, live and after a reload: finished groups out of view are skipped', async () => {
    const page = await openPage('');
    const units = 40;
    env.upstream.script(textTurn(longMarkdown(units), { pieces: 120, delayMs: 2 }));
    await sendInWidget(page, 'another long answer please');
    await waitIdle(page);
    const live = await page.evaluate(readGroupedAnswer);
    // Every block in order, as written: a paragraph (with its link), a list and a code block per unit.
    const expected = Array.from({ length: units }, (_, i) => [
      `p:Paragraph ${i} with bold and code and a link.`, `ul:item ${i}another`, `pre:line ${i}Copy`,
    ]).flat();
    assert.deepEqual(live.blocks, expected);
    // The first 32 blocks sit directly in the bubble (a short answer's DOM is just its blocks), the rest in groups.
    assert.equal(live.direct, 32);
    assert.deepEqual(live.groups, [
      { size: 32, contentVisibility: 'auto' }, { size: 32, contentVisibility: 'auto' }, { size: 24, contentVisibility: 'visible' },
    ], 'finished groups may be skipped while out of view, the last one is not');
    // Groups change nothing in how the answer is laid out: the gap across a group's edge is the gap without one.
    for (const edge of live.edges) assert.equal(edge.across, edge.inside, `${edge.pair}: ${edge.across} px across an edge, ${edge.inside} px without`);
    assert.ok(live.edges.every((edge) => edge.across > 0));
    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg.assistant').length === 1);
    const stored = await page.evaluate(readGroupedAnswer);
    assert.deepEqual(stored, live, 'the stored answer renders the same blocks in the same groups');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('a long stored answer renders in slices into the same blocks and groups as live', async () => {
    const page = await openPage('');
    const units = 300; // ~36,000 characters, 900 top-level blocks
    env.upstream.script(textTurn(longMarkdown(units), { pieces: 200, delayMs: 1 }));
    await sendInWidget(page, 'a very long answer please');
    await waitIdle(page);
    const live = await page.evaluate(readGroupedAnswer);
    assert.equal(live.blocks.length, units * 3);
    await holdSlices(page);
    await page.reload();
    await waitReady(page);
    // Held between two slices: the answer has its first part only, and says it is still being rendered.
    await waitInPage(page, () => window.slicesHeld > 0);
    const partial = await page.evaluate(() => {
      const msg = document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log > .msg.assistant');
      return { busy: msg.getAttribute('aria-busy'), blocks: msg.querySelectorAll('.bubble > :not(.chunk), .bubble > .chunk > *').length };
    });
    assert.equal(partial.busy, 'true');
    assert.ok(partial.blocks > 0 && partial.blocks < units * 3, `blocks rendered before the first pause: ${partial.blocks}`);
    await page.evaluate(() => window.releaseSlices());
    await waitInPage(page, () => {
      const msg = document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log > .msg.assistant');
      return msg && !msg.hasAttribute('aria-busy');
    });
    // The log still shows the conversation's end, as it did before the answer had its last slice.
    const fromEnd = await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
      const scroller = document.querySelector('patchbridge-agent').shadowRoot.querySelector('.scroller');
      resolve(scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight);
    }))));
    assert.ok(fromEnd < 2, `scrolled to the end: ${fromEnd} px from it`);
    const stored = await page.evaluate(readGroupedAnswer);
    assert.deepEqual(stored, live, 'the stored answer renders the same blocks in the same groups');
    // What follows the text is there once, after it: the answer's actions row.
    const tail = await page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log > .msg.assistant').children].map((c) => c.className));
    assert.deepEqual(tail, ['bubble md', 'msg-actions']);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('opening another conversation while a long answer is still being rendered leaves none of it in the log', async () => {
    const page = await openPage('');
    env.upstream.script(textTurn('A short answer.'));
    await sendInWidget(page, 'a short question');
    await waitIdle(page);
    const short = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation.id);
    await page.click(sel.newChat);
    env.upstream.script(textTurn(longMarkdown(300), { pieces: 200, delayMs: 1 }));
    await sendInWidget(page, 'a very long answer please');
    await waitIdle(page);
    await holdSlices(page);
    await page.reload(); // reopens the long one
    await waitReady(page);
    await waitInPage(page, () => window.slicesHeld > 0);
    assert.equal(await page.evaluate(() => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log > .msg.assistant').getAttribute('aria-busy')), 'true');
    await page.click(sel.history);
    await page.click(`${sel.panel} li[data-id="${short}"] button.open`);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log').textContent.includes('A short answer.'));
    // The held slices of the long answer may now run: they must have nowhere to go.
    await page.evaluate(() => window.releaseSlices());
    await page.evaluate(() => new Promise((resolve) => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(resolve)), 200)));
    const log = await page.evaluate(() => {
      const root = document.querySelector('patchbridge-agent').shadowRoot.querySelector('.log');
      return {
        messages: [...root.querySelectorAll(':scope > .msg')].map((m) => m.textContent),
        longAnswer: /Paragraph \d+|item \d+|line \d+/.test(root.textContent),
        groups: root.querySelectorAll('.chunk').length,
        busy: root.querySelectorAll('[aria-busy]').length,
      };
    });
    assert.deepEqual(log, { messages: ['Youa short question', 'A short answer.'], longAnswer: false, groups: 0, busy: 0 });
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
});

/**
 * From the next load of `page` on, the widget's slices of a long stored answer wait for the test: the page's
 * `scheduler.yield()` (what the widget yields with between slices) resolves only once `window.releaseSlices()` is
 * called; `window.slicesHeld` counts the yields.
 */
async function holdSlices(page) {
  await page.addInitScript(() => {
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    window.slicesHeld = 0;
    window.releaseSlices = () => release();
    Object.defineProperty(window, 'scheduler', {
      configurable: true,
      value: { yield: () => { window.slicesHeld += 1; return held; } },
    });
  });
}

/** `units` × (a paragraph with emphasis, inline code and a link; a two-item list; a code block). */
function longMarkdown(units) {
  return Array.from({ length: units }, (_, i) => `Paragraph ${i} with **bold** and \`code\` and a [link](https://example.org/${i}).\n\n`
    + `- item ${i}\n- another\n\n\`\`\`\nline ${i}\n\`\`\`\n\n`).join('');
}

/**
 * In the page: the last answer's top-level blocks in order (groups flattened, as `tag:text`), how many sit directly
 * in the bubble, each group's size and computed content-visibility, and at each group's first edge the vertical gap
 * between the blocks on either side beside the gap between the same pair of blocks where no edge is between them.
 */
function readGroupedAnswer() {
  const bubble = [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg.assistant > .bubble')].at(-1);
  const blocks = [...bubble.children].flatMap((el) => (el.classList.contains('chunk') ? [...el.children] : [el]));
  const groups = [...bubble.querySelectorAll(':scope > .chunk')];
  const gap = (a, b) => {
    b.scrollIntoView();
    return Math.round((b.getBoundingClientRect().top - a.getBoundingClientRect().bottom) * 10) / 10;
  };
  const edges = groups.map((group) => {
    const first = group.firstElementChild;
    const previous = blocks[blocks.indexOf(first) - 1];
    const same = blocks.findIndex((el, i) => i > 0 && el.parentElement === blocks[i - 1].parentElement
      && el.tagName === first.tagName && blocks[i - 1].tagName === previous.tagName);
    return { pair: `${previous.tagName}>${first.tagName}`, across: gap(previous, first), inside: gap(blocks[same - 1], blocks[same]) };
  });
  return {
    blocks: blocks.map((el) => `${el.tagName.toLowerCase()}:${el.textContent}`),
    direct: [...bubble.children].filter((el) => !el.classList.contains('chunk')).length,
    groups: groups.map((g) => ({ size: g.childElementCount, contentVisibility: getComputedStyle(g).contentVisibility })),
    edges,
  };
}
