// Documents end to end in <patchbridge-agent>, in headless Chromium under the widget test page's strict CSP,
// against the real relay and a fake OpenAI Chat Completions upstream: a person attaches a PDF and a text file,
// sends them, the relay sends them on in the provider's format (a `file` part, a text part headed with the file
// name), the conversation is stored with its `document` blocks, and after a reload the user message shows both
// documents (name and type). The attachments chunk is fetched only when the first file is attached.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { newPage, waitInPage } from './support/browser.mjs';
import { textTurn } from './support/openai-chat.mjs';
import { artifact, sendInWidget, waitIdle, waitReady, widgetEnvironment } from './support/widget.mjs';

const env = widgetEnvironment();
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const NOTES = '# Notes\n\n- buy milk\n- call Sam\n';

describe('<patchbridge-agent> documents end to end', () => {
  test('a PDF and a text file: attached, sent on in the provider format, stored, and shown after a reload', async () => {
    const user = `docs-${Date.now()}`;
    const page = await newPage(env.browser);
    const requested = [];
    page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    await page.goto(`${env.relay.url}/examples/widget.html?user=${user}`);
    await waitReady(page);
    const chunk = () => requested.filter((p) => p.endsWith('/widget-files.js')).length;
    assert.equal(chunk(), 0, 'the attachments chunk is not part of the first load');
    // The model takes PDF (the relay's models endpoint says so): the picker offers it.
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelector('input[type=file]').accept.includes('application/pdf'));
    await page.setInputFiles('patchbridge-agent input[type=file]', [
      { name: 'report.pdf', mimeType: 'application/pdf', buffer: PDF },
      { name: 'fake.pdf', mimeType: 'application/pdf', buffer: Buffer.from('not a pdf') },
      { name: 'notes.md', mimeType: '', buffer: Buffer.from(NOTES) },
    ]);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('[part~=attachment]').length === 2);
    assert.equal(await page.textContent('patchbridge-agent [part~=notice] .text'), '“fake.pdf” cannot be attached: it is not a PDF file.');
    assert.equal(chunk(), 1, 'fetched with the first files');
    env.upstream.script(textTurn('The report is empty; the notes list two errands.'));
    const seen = env.upstream.requests.length;
    await sendInWidget(page, 'summarise these');
    await waitIdle(page);
    assert.deepEqual(page.problems, []);

    const body = env.upstream.requests[seen].body;
    const parts = body.messages.find((m) => m.role === 'user').content;
    const file = parts.find((p) => p.type === 'file');
    assert.equal(file?.file?.filename, 'report.pdf', JSON.stringify(parts).slice(0, 400));
    assert.equal(file.file.file_data, `data:application/pdf;base64,${PDF.toString('base64')}`);
    assert.ok(parts.some((p) => p.type === 'text' && p.text.includes('notes.md') && p.text.includes('- buy milk')), 'the text file as a text part headed with its name');

    // Stored with its document blocks.
    const conversationId = await page.evaluate(() => document.querySelector('patchbridge-agent').controller.getState().conversation.id);
    const stored = await env.relay.fetchJson('GET', `/conversations/${encodeURIComponent(conversationId)}`, { user });
    assert.equal(stored.status, 200);
    const blocks = stored.body.context.messages.find((m) => m.role === 'user').blocks;
    assert.deepEqual(blocks.filter((b) => b.type === 'document').map((b) => ({ name: b.name, source: b.source })), [
      { name: 'report.pdf', source: { type: 'base64', mediaType: 'application/pdf', data: PDF.toString('base64') } },
      { name: 'notes.md', source: { type: 'text', mediaType: 'text/markdown', text: NOTES } },
    ]);

    // After a reload the message shows both documents.
    await page.reload();
    await waitReady(page);
    await waitInPage(page, () => document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.msg.user [part~=document]').length === 2);
    const cards = await page.evaluate(() => [...document.querySelector('patchbridge-agent').shadowRoot.querySelectorAll('.msg.user [part~=document]')]
      .map((c) => ({ name: c.querySelector('.chip-name').textContent, meta: c.querySelector('.chip-meta').textContent, label: c.getAttribute('aria-label') })));
    assert.deepEqual(cards, [
      { name: 'report.pdf', meta: `PDF · ${PDF.length} B`, label: `Document: report.pdf, PDF, ${PDF.length} B` },
      { name: 'notes.md', meta: `Markdown · ${NOTES.length} B`, label: `Document: notes.md, Markdown, ${NOTES.length} B` },
    ]);
    await artifact(page, 'documents-after-reload');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
});
