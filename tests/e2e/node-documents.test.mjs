// End to end in Node, a PDF and a text file through the built @patchbridge/agent controller → the real relay
// binary (SQLite) → a fake upstream: Anthropic receives them as `document` blocks; the conversation is saved with
// them and a NEW controller loading it shows them again and sends them again; a model that takes no PDFs
// (`capabilities.inputs`) refuses the PDF with UNSUPPORTED_INPUT before anything reaches the provider; a file
// over the runtime's limit never leaves the page.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { messageTurn } from './support/anthropic.mjs';
import { relayController, textOf, waitForState } from './support/agent.mjs';
import { relayWithFakeUpstream } from './support/suite.mjs';

const suite = relayWithFakeUpstream({ defaultModel: 'anthropic-e2e' });

const PDF = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n').toString('base64');
const blocks = [
  { type: 'text', text: 'What do these say?' },
  { type: 'document', name: 'report.pdf', source: { type: 'base64', mediaType: 'application/pdf', data: PDF } },
  { type: 'document', name: 'notes.md', source: { type: 'text', mediaType: 'text/markdown', text: '# Notes\n- milk' } },
];

describe('documents through the relay', () => {
  test('a PDF and a text file reach Anthropic as documents, are saved, and come back after a reload', async () => {
    const controller = relayController(suite.relay, { user: 'dora' });
    const first = suite.upstream.requests.length;
    suite.upstream.script(
      messageTurn([{ type: 'text', text: 'A report and a note about milk.' }]),
      messageTurn([{ type: 'text', text: 'Still the same two files.' }]),
    );
    assert.equal(await controller.send(blocks), 'completed');
    const sent = suite.upstream.requests[first].body.messages[0].content;
    assert.deepEqual(sent.map((c) => [c.type, c.title, c.source?.type, c.source?.media_type]), [
      ['text', undefined, undefined, undefined],
      ['document', 'report.pdf', 'base64', 'application/pdf'],
      ['document', 'notes.md', 'text', 'text/plain'],
    ]);
    assert.equal(sent[1].source.data, PDF);
    assert.equal(sent[2].source.data, '# Notes\n- milk');
    const { id } = controller.getState().conversation;
    controller.destroy();

    const stored = await suite.relay.fetchJson('GET', `/conversations/${id}`, { user: 'dora' });
    assert.deepEqual(stored.body.context.messages[0].blocks, blocks, 'stored as sent');

    const reloaded = relayController(suite.relay, { user: 'dora', conversationId: id });
    await waitForState(reloaded, (s) => s.status === 'idle' && s.messages.length > 0, 10_000, 'the loaded conversation');
    assert.deepEqual(reloaded.getState().messages[0].blocks, blocks, 'shown again after a reload');
    assert.equal(await reloaded.send('and now?'), 'completed');
    const again = suite.upstream.requests.at(-1).body.messages[0].content;
    assert.deepEqual(again.map((c) => c.type), ['text', 'document', 'document'], 'sent again with the history');
    assert.equal(textOf(reloaded.getState().messages.at(-1)), 'Still the same two files.');
    reloaded.destroy();
  });

  test('a PDF for a model that takes none (responses-e2e: text and images) is refused by the relay before any upstream call', async () => {
    const controller = relayController(suite.relay, { user: 'ed', model: 'responses-e2e' });
    const first = suite.upstream.requests.length;
    await assert.rejects(controller.send(blocks), (e) => {
      assert.equal(e.code, 'AGENT_RELAY_ERROR');
      assert.equal(e.details?.relayCode, 'UNSUPPORTED_INPUT');
      assert.equal(e.details?.status, 400);
      assert.match(e.message, /report\.pdf/);
      return true;
    });
    assert.equal(suite.upstream.requests.length, first, 'nothing reached the provider');
    controller.destroy();
  });

  test('a file over the runtime limit never leaves the page', async () => {
    const controller = relayController(suite.relay, { user: 'flo' });
    const first = suite.upstream.requests.length;
    const big = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(3 * 1024 * 1024)]).toString('base64');
    await assert.rejects(
      controller.send([{ type: 'document', name: 'scan.pdf', source: { type: 'base64', mediaType: 'application/pdf', data: big } }]),
      { code: 'AGENT_ATTACHMENT_TOO_LARGE' },
    );
    assert.equal(suite.upstream.requests.length, first);
    controller.destroy();
  });
});
