// Attachments through the public API: a PDF and a text file reach the model as document blocks; a file over
// 3 MiB, a media type outside the closed list, a bad name or bad base64 are refused before anything is sent,
// with their stable codes (exported as constants) and the file named in `details`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, scriptedModel, textMessage } from './helpers.mjs';
import * as errors from '../../npm/errors.js';

const { createAgentController, AgentError } = agent;

const pdfBase64 = (bytes) => Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(Math.max(0, bytes - 9), 65)]).toString('base64');
const pdf = (name, bytes) => ({ type: 'document', name, source: { type: 'base64', mediaType: 'application/pdf', data: pdfBase64(bytes) } });
const textFile = (name, mediaType, text) => ({ type: 'document', name, source: { type: 'text', mediaType, text } });

test('a PDF and a text file reach the model as document blocks, as sent', async () => {
  const model = scriptedModel([textMessage('read them')]);
  const controller = createAgentController({ model });
  const blocks = [
    { type: 'text', text: 'summarise' },
    pdf('report.pdf', 2000),
    textFile('notes.md', 'text/markdown', '# Notes\n- one'),
  ];
  assert.equal(await controller.send(blocks), 'completed');
  assert.deepEqual(model.requests[0].messages[0].blocks, blocks);
  assert.deepEqual(controller.getState().messages[0].blocks, blocks);
  controller.destroy();
});

test('a file over 3 MiB is refused before anything is sent, naming the file', async () => {
  const model = scriptedModel([]);
  const controller = createAgentController({ model });
  const limit = 3 * 1024 * 1024;
  const error = await controller.send([{ type: 'text', text: 'look' }, pdf('Quarterly report.pdf', limit + 1)]).then(
    () => assert.fail('accepted'),
    (e) => e,
  );
  assert.ok(error instanceof AgentError);
  assert.equal(error.code, errors.AGENT_ATTACHMENT_TOO_LARGE);
  assert.deepEqual({ ...error.details }, { name: 'Quarterly report.pdf', mediaType: 'application/pdf', bytes: limit + 1, limit });
  assert.match(error.message, /Quarterly report\.pdf/);
  assert.equal(model.requests.length, 0, 'nothing was sent');
  assert.equal(controller.getState().messages.length, 0, 'nothing was added');
  assert.equal(controller.getState().status, 'idle');
  // Exactly at the limit is accepted.
  const accepted = createAgentController({ model: scriptedModel([textMessage('ok')]) });
  assert.equal(await accepted.send([pdf('exact.pdf', limit)]), 'completed');
  accepted.destroy();
  controller.destroy();
});

test('media types, names and encodings outside the rules have their own codes', async () => {
  const model = scriptedModel([]);
  const controller = createAgentController({ model });
  const cases = [
    [textFile('main.ts', 'video/mp2t', 'let a = 1;'), errors.AGENT_ATTACHMENT_TYPE],
    [{ type: 'image', source: { type: 'base64', mediaType: 'image/svg+xml', data: 'PHN2Zz4=' } }, errors.AGENT_ATTACHMENT_TYPE],
    [textFile('reports/q3.csv', 'text/csv', 'a,b'), errors.AGENT_ATTACHMENT_INVALID],
    [{ type: 'document', name: 'a.pdf', source: { type: 'base64', mediaType: 'application/pdf', data: `data:application/pdf;base64,${pdfBase64(20)}` } }, errors.AGENT_ATTACHMENT_INVALID],
    [{ type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'not base64!' } }, errors.AGENT_ATTACHMENT_INVALID],
  ];
  for (const [block, code] of cases) {
    await assert.rejects(controller.send([block]), { code }, JSON.stringify(block).slice(0, 80));
  }
  await assert.rejects(
    controller.send([pdf('a.pdf', 3 * 1024 * 1024), pdf('b.pdf', 2 * 1024 * 1024)]),
    { code: errors.AGENT_MESSAGE_TOO_LARGE },
  );
  assert.equal(model.requests.length, 0);
  controller.destroy();
});

test('a conversation past its maxConversationBytes takes no new message; a smaller one still goes', async () => {
  const model = scriptedModel([textMessage('first'), textMessage('second')]);
  const controller = createAgentController({ model, attachments: { maxConversationBytes: 3000 } });
  assert.equal(await controller.send([{ type: 'text', text: 'one' }, textFile('a.txt', 'text/plain', 'x'.repeat(2000))]), 'completed');
  const before = controller.getState().messages;
  const error = await controller.send([textFile('b.txt', 'text/plain', 'y'.repeat(1000))]).then(() => assert.fail('accepted'), (e) => e);
  assert.equal(error.code, errors.AGENT_CONVERSATION_TOO_LARGE);
  assert.equal(error.details.limit, 3000);
  assert.ok(error.details.bytes > 3000);
  assert.equal(controller.getState().messages, before, 'nothing was added');
  assert.equal(model.requests.length, 1, 'nothing was sent');
  assert.equal(await controller.send('and without the file?'), 'completed');
  controller.destroy();
});

test('the attachments option is checked like every option', () => {
  const model = scriptedModel([]);
  assert.throws(() => createAgentController({ model, attachments: { maxFileSize: 1 } }), { code: 'AGENT_INVALID_OPTIONS' });
  assert.throws(() => createAgentController({ model, attachments: { maxFileBytes: 0 } }), { code: 'AGENT_INVALID_OPTIONS' });
  createAgentController({ model, attachments: { maxFileBytes: 10 } }).destroy();
});
