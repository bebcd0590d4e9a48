// What a file the person attaches becomes, without a browser (widget/src/attachments.js and the files chunk
// widget/src/files.js, and model.js's `modelInputs`): the media type from the closed extension table before the browser's type, what the model in use
// takes (`capabilities.inputs`, `images` as its alias), the per-file and per-message limits with their refusals,
// and the blocks built (docs/protocol.md: PDF as base64, text files as text). No wasm, relay or DOM.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  CODE_EXTENSIONS, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES, MESSAGE_FILE_BYTES, acceptList, attachmentLimits, documentBytes,
  formatBytes, inputsOf, positiveLimit,
} from '../../widget/src/attachments.js';
import { blockName, blockOf, checkFile, mediaTypeOf } from '../../widget/src/files.js';
import { modelInputs } from '../../widget/src/model.js';

const ALL = new Set(['text', 'image', 'pdf']);
const limits = (over = {}) => ({ inputs: ALL, maxFileBytes: 1000, maxImageBytes: 500, maxFiles: 3, attached: 0, ...over });

test('the media type comes from the extension table first: source code is text/plain whatever the browser says', () => {
  assert.equal(mediaTypeOf({ name: 'main.ts', type: 'video/mp2t' }), 'text/plain');
  assert.equal(mediaTypeOf({ name: 'lib.rs', type: '' }), 'text/plain');
  assert.equal(mediaTypeOf({ name: 'Dockerfile', type: '' }), 'text/plain');
  assert.equal(mediaTypeOf({ name: 'Report.PDF', type: '' }), 'application/pdf');
  assert.equal(mediaTypeOf({ name: 'notes.md', type: 'text/x-markdown' }), 'text/markdown');
  assert.equal(mediaTypeOf({ name: 'data.csv', type: 'application/vnd.ms-excel' }), 'text/csv');
  assert.equal(mediaTypeOf({ name: 'config.json', type: '' }), 'application/json');
  assert.equal(mediaTypeOf({ name: 'photo.jpg', type: 'image/jpeg' }), 'image/jpeg');
  assert.equal(mediaTypeOf({ name: 'clip', type: 'image/png' }), 'image/png', 'no extension: the browser type, when it is one of ours');
  for (const [name, type] of [['movie.mp4', 'video/mp4'], ['sheet.xlsx', ''], ['archive.zip', 'application/zip'], ['unknown', ''], ['page.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document']]) {
    assert.equal(mediaTypeOf({ name, type }), null, name);
  }
  assert.ok(CODE_EXTENSIONS.includes('ts') && CODE_EXTENSIONS.includes('py') && !CODE_EXTENSIONS.includes('exe'));
});

test('what the model takes: capabilities.inputs, images as its alias; text always', () => {
  assert.deepEqual([...inputsOf({ capabilities: { inputs: ['text', 'pdf'] } })].sort(), ['pdf', 'text']);
  assert.deepEqual([...inputsOf({ capabilities: { images: true } })].sort(), ['image', 'text']);
  assert.deepEqual([...inputsOf({ capabilities: { images: false } })], ['text']);
  const info = { defaultModel: 'a', models: [
    { id: 'a', capabilities: { inputs: ['text'] } },
    { id: 'b', capabilities: { inputs: ['text', 'image', 'pdf'], images: true } },
    { id: 'old', capabilities: { images: false } },
  ] };
  assert.deepEqual([...modelInputs(info, undefined)], ['text'], 'the default model');
  assert.deepEqual([...modelInputs(info, 'b')].sort(), ['image', 'pdf', 'text']);
  // Unknown: no answer, a custom model, a relay without `inputs` — images and text files, as before; never PDF.
  for (const [answer, model] of [[null, undefined], [info, { stream() {} }], [info, 'old'], [info, 'missing']]) {
    assert.deepEqual([...modelInputs(answer, model)].sort(), ['image', 'text']);
  }
  assert.match(acceptList(new Set(['text'])), /\.ts,/);
  assert.doesNotMatch(acceptList(new Set(['text'])), /pdf|image/);
  assert.match(acceptList(ALL), /^application\/pdf,\.pdf,image\/png/);
});

test('refusals: too many, a type nobody takes, a type this model does not take, too large', () => {
  assert.deepEqual(checkFile({ name: 'a.txt', type: '', size: 1 }, limits({ attached: 3 })), { ok: false, reason: 'too-many', max: 3 });
  assert.deepEqual(checkFile({ name: 'a.zip', type: 'application/zip', size: 1 }, limits()), { ok: false, reason: 'type' });
  assert.deepEqual(checkFile({ name: 'a.pdf', type: 'application/pdf', size: 1 }, limits({ inputs: new Set(['text', 'image']) })), { ok: false, reason: 'model', kind: 'pdf' });
  assert.deepEqual(checkFile({ name: 'a.png', type: 'image/png', size: 1 }, limits({ inputs: new Set(['text']) })), { ok: false, reason: 'model', kind: 'image' });
  assert.deepEqual(checkFile({ name: 'a.pdf', type: '', size: 1001 }, limits()), { ok: false, reason: 'too-large', max: 1000 });
  assert.deepEqual(checkFile({ name: 'a.png', type: 'image/png', size: 501 }, limits()), { ok: false, reason: 'too-large', max: 500 }, 'images keep their own limit');
  const big = { inputs: ALL, maxFileBytes: 3 * 1024 * 1024, maxImageBytes: 3 * 1024 * 1024, maxFiles: 5, attached: 1 };
  assert.deepEqual(checkFile({ name: 'b.pdf', type: '', size: 2 * 1024 * 1024 }, { ...big, attachedBytes: 2.5 * 1024 * 1024 }), { ok: false, reason: 'message-too-large', max: MESSAGE_FILE_BYTES }, "the runtime's per-message limit, checked when attaching");
  assert.equal(checkFile({ name: 'b.pdf', type: '', size: 1.5 * 1024 * 1024 }, { ...big, attachedBytes: 2.5 * 1024 * 1024 }).ok, true);
  // A page that raises the per-file limit raises the message's too (one such file fits), and the runtime's with it.
  const MiB = 1024 * 1024;
  assert.equal(checkFile({ name: 'c.pdf', type: '', size: 6 * MiB }, { ...big, maxFileBytes: 8 * MiB, attached: 0 }).ok, true);
  assert.deepEqual(attachmentLimits(3 * MiB, 3 * MiB), { maxFileBytes: 3 * MiB, maxMessageBytes: 4 * MiB }, "the runtime's defaults");
  assert.deepEqual(attachmentLimits(8 * MiB, 2 * MiB), { maxFileBytes: 8 * MiB, maxMessageBytes: 8 * MiB });
  assert.deepEqual(checkFile({ name: 'a.pdf', type: '', size: 1000 }, limits()), { ok: true, kind: 'document', mediaType: 'application/pdf', encoding: 'base64' });
  assert.deepEqual(checkFile({ name: 'x.py', type: 'text/x-python', size: 10 }, limits({ inputs: new Set(['text']) })), { ok: true, kind: 'document', mediaType: 'text/plain', encoding: 'text' });
});

test('blocks: PDF as base64, text files as text, the name without a path and at most 255 characters', () => {
  const pdf = checkFile({ name: 'r.pdf', type: '', size: 4 }, limits());
  assert.deepEqual(blockOf({ name: 'C:\\docs\\r.pdf' }, /** @type {any} */ (pdf), 'JVBERi0x'), { type: 'document', name: 'r.pdf', source: { type: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' } });
  const md = checkFile({ name: 'n.md', type: '', size: 4 }, limits());
  assert.deepEqual(blockOf({ name: 'dir/n.md' }, /** @type {any} */ (md), '# Hi'), { type: 'document', name: 'n.md', source: { type: 'text', mediaType: 'text/markdown', text: '# Hi' } });
  assert.equal(blockName(`${'é'.repeat(300)}.txt`).length, 255);
  assert.equal(documentBytes({ source: { type: 'text', text: 'héllo' } }), 6, 'UTF-8 bytes');
  assert.equal(documentBytes({ source: { type: 'base64', data: Buffer.from('12345').toString('base64') } }), 5);
});

test('limits as properties: positive integers, else the documented defaults; sizes in plain words', () => {
  assert.equal(DEFAULT_MAX_FILE_BYTES, 3 * 1024 * 1024);
  assert.equal(DEFAULT_MAX_FILES, 5);
  assert.equal(MESSAGE_FILE_BYTES, 4 * 1024 * 1024, "the runtime's maxMessageBytes (docs/protocol.md §1)");
  for (const bad of [0, -1, 1.5, 'x', null, undefined, Number.MAX_VALUE]) assert.equal(positiveLimit(bad, 7), 7, String(bad));
  assert.equal(positiveLimit('2048', 7), 2048);
  assert.deepEqual([formatBytes(512), formatBytes(2048), formatBytes(3 * 1024 * 1024), formatBytes(1.5 * 1024 * 1024)], ['512 B', '2 KiB', '3 MiB', '1.5 MiB']);
});
