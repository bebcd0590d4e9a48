// Sources under an answer, in headless Chromium through the real relay: an Anthropic answer that searched the
// web and cites its results (Anthropic's real wire format: server_tool_use, web_search_tool_result, text split at
// each citation with citations_delta) reads as one continuous text with a numbered sources list under it, each
// URL once, links opening in a new tab without opener or referrer; the same after a reload (the sources are
// stored with the text blocks); a provider's source with a `javascript:` URL is dropped by the relay and never
// becomes a link, and the relay refuses a stored conversation that carries one.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { messageTurn } from './support/anthropic.mjs';
import { artifact, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();

const citation = (url, title, citedText) => ({
  type: 'web_search_result_location', url, title, cited_text: citedText, encrypted_index: 'EqQBCioIBxgCIiQ4',
});

/** The last answer as the person sees it: its text bubbles, its sources list and every link in the element. */
const lastAnswer = (page) => page.evaluate(() => {
  const root = document.querySelector('patchbridge-agent').shadowRoot;
  const msg = [...root.querySelectorAll('.log > .msg.assistant')].at(-1);
  const list = msg.querySelector('[part~=sources] ol');
  return {
    bubbles: [...msg.querySelectorAll(':scope > .bubble')].map((b) => [...b.children].map((c) => c.textContent)),
    label: list?.getAttribute('aria-label') ?? null,
    items: [...(list?.children ?? [])].map((li) => {
      const a = li.querySelector('a');
      return a ? { link: a.getAttribute('href'), text: a.textContent, target: a.target, rel: a.rel, tip: a.title } : { text: li.textContent };
    }),
    unsafeLinks: [...root.querySelectorAll('a')].map((a) => a.getAttribute('href')).filter((href) => !/^https?:/.test(href ?? '')),
  };
});

describe('<patchbridge-agent> sources', () => {
  test('an Anthropic web-search answer shows one text and its sources, links safe, the same after a reload', async () => {
    const page = await newPage(env.browser);
    await page.goto(`${env.relay.url}/examples/widget.html?user=sources-${Date.now()}&model=anthropic-e2e`);
    await waitReady(page);
    env.upstream.script(messageTurn([
      { type: 'server_tool_use', id: 'srvtoolu_e2e_1', input: { query: 'eclipse 2026' } },
      {
        type: 'web_search_tool_result', toolUseId: 'srvtoolu_e2e_1', results: [
          { title: 'Eclipse 2026 | Example Observatory', url: 'https://www.example.org/eclipse-2026' },
          { title: 'Sneaky result', url: 'javascript:alert(document.domain)' },
        ],
      },
      { type: 'text', text: 'Here is what I found. ' },
      { type: 'text', text: 'The total eclipse of 12 August 2026 crosses Spain', citations: [citation('https://www.example.org/eclipse-2026', 'Eclipse 2026 | Example Observatory', 'It crosses Spain.')] },
      { type: 'text', text: '. ' },
      { type: 'text', text: 'Use certified glasses', citations: [citation('https://safety.example.net/glasses', 'Eclipse glasses', 'Certified glasses only.'), citation('javascript:alert(1)', 'Injected', 'x')] },
      { type: 'text', text: '.' },
    ]));
    await sendInWidget(page, 'tell me about the 2026 eclipse');
    await waitIdle(page);
    const expected = {
      bubbles: [['Here is what I found. The total eclipse of 12 August 2026 crosses Spain. Use certified glasses.']],
      label: 'Sources',
      items: [
        { link: 'https://www.example.org/eclipse-2026', text: 'Eclipse 2026 | Example Observatory', target: '_blank', rel: 'noopener noreferrer', tip: 'It crosses Spain.' },
        { link: 'https://safety.example.net/glasses', text: 'Eclipse glasses', target: '_blank', rel: 'noopener noreferrer', tip: 'Certified glasses only.' },
      ],
      unsafeLinks: [],
    };
    assert.deepEqual(await lastAnswer(page), expected);
    await artifact(page, 'widget-sources');
    // The host beside a titled link.
    assert.deepEqual(await page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=sources] .host')].map((s) => s.textContent)),
      ['example.org', 'safety.example.net']);

    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.log > .msg.assistant').length === 1);
    assert.deepEqual(await lastAnswer(page), expected, 'the stored blocks carry the sources');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test('the relay refuses a conversation whose text carries a javascript: source URL', async () => {
    const context = (url) => ({
      messages: [
        { id: 'u1', role: 'user', blocks: [{ type: 'text', text: 'q' }] },
        { id: 'a1', role: 'assistant', blocks: [{ type: 'text', text: 'a', sources: [{ url, title: 'T' }] }] },
      ],
      modelState: null,
    });
    const post = (body) => fetch(`${env.relay.url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: env.relay.url, 'x-patchbridge-user': 'sources-api' },
      body: JSON.stringify(body),
    });
    const refused = await post({ context: context('javascript:alert(1)') });
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).error.code, 'INVALID_REQUEST');
    const stored = await post({ context: context('https://example.org/a') });
    assert.equal(stored.status, 201);
    assert.deepEqual((await stored.json()).context.messages[1].blocks[0].sources, [{ url: 'https://example.org/a', title: 'T' }]);
  });
});
