// What a file the person attaches becomes (tests/node/widget-attachments.test.mjs): an image block, a document
// block (docs/protocol.md, ADR-015: PDF as base64, text files as UTF-8 text), or a refusal in plain words — too
// large, more than the message's files may be together, a type the element does not take, a type this model does
// not read, too many files, not a text file, not a PDF. A chunk of its own (npm/widget-files.js, and
// dist/patchbridge-files.js beside the static script), imported the first time the person attaches a file, so it
// adds nothing to the first load.
//
// Browsers report many text files' types badly (`.ts` as `video/mp2t`, most source code as ""), so a file's type
// comes from a closed table of file name extensions first and from the browser's type only for extensions the
// table lacks; source code travels as `text/plain`.
import { CODE_EXTENSIONS, IMAGE_TYPES, formatBytes, messageLimit } from './attachments.js';

/** Document media types (the block's closed list): PDF as base64, the others as text. */
export const DOCUMENT_TYPES = ['application/pdf', 'text/plain', 'text/markdown', 'text/csv', 'application/json'];

/** Extensions with a type of their own. */
/** @type {Record<string, string>} */
const NAMED = {
  pdf: 'application/pdf', md: 'text/markdown', markdown: 'text/markdown', csv: 'text/csv', json: 'application/json',
  txt: 'text/plain', text: 'text/plain', log: 'text/plain',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
};

const CODE = new Set(CODE_EXTENSIONS);
/** Whole file names that are code without an extension. */
const CODE_NAMES = new Set(['dockerfile', 'makefile', 'gemfile', 'rakefile', 'procfile', 'license', 'readme']);

/**
 * The media type a file is sent with, from its name and the browser's type: an image type, a document type, or
 * null when it is neither.
 * @param {{ name: string, type: string }} file
 * @returns {string | null}
 */
export function mediaTypeOf(file) {
  const name = String(file.name ?? '').toLowerCase();
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1) : '';
  if (ext && NAMED[ext]) return NAMED[ext];
  if (ext && CODE.has(ext)) return 'text/plain';
  if (!ext && CODE_NAMES.has(name)) return 'text/plain';
  const type = String(file.type ?? '').toLowerCase();
  if (IMAGE_TYPES.includes(type) || DOCUMENT_TYPES.includes(type)) return type;
  return null;
}

/**
 * The input kind a media type needs: `image`, `pdf`, or `text` (text documents need only text).
 * @param {string} mediaType
 */
export function kindOf(mediaType) {
  if (IMAGE_TYPES.includes(mediaType)) return 'image';
  if (mediaType === 'application/pdf') return 'pdf';
  return 'text';
}

/**
 * @typedef {{ ok: true, kind: 'image' | 'document', mediaType: string, encoding: 'base64' | 'text' }} Accepted
 * @typedef {{ ok: false, reason: 'too-large' | 'message-too-large' | 'type' | 'model' | 'too-many' | 'empty-name', max?: number, kind?: string }} Refused
 *   `kind`: the input kind the model does not take (`model`)
 */

/**
 * Whether a file may be attached, and as what.
 * @param {{ name: string, type: string, size: number }} file
 * @param {{ inputs: Set<string>, maxFileBytes: number, maxImageBytes: number, maxFiles: number, attached: number,
 *           attachedBytes?: number }} limits
 *   `attached`, `attachedBytes`: the files already attached to this message, and their bytes together
 * @returns {Accepted | Refused}
 */
export function checkFile(file, { inputs, maxFileBytes, maxImageBytes, maxFiles, attached, attachedBytes = 0 }) {
  if (attached >= maxFiles) return { ok: false, reason: 'too-many', max: maxFiles };
  if (!String(file.name ?? '').trim()) return { ok: false, reason: 'empty-name' };
  const mediaType = mediaTypeOf(file);
  if (!mediaType) return { ok: false, reason: 'type' };
  const kind = kindOf(mediaType);
  if (!inputs.has(kind)) return { ok: false, reason: 'model', kind };
  const max = kind === 'image' ? maxImageBytes : maxFileBytes;
  if (file.size > max) return { ok: false, reason: 'too-large', max };
  const total = messageLimit(maxFileBytes, maxImageBytes);
  if (attachedBytes + file.size > total) return { ok: false, reason: 'message-too-large', max: total };
  if (kind === 'image') return { ok: true, kind: 'image', mediaType, encoding: 'base64' };
  return { ok: true, kind: 'document', mediaType, encoding: mediaType === 'application/pdf' ? 'base64' : 'text' };
}

/**
 * The name a document block carries: the picked name without any path, at most 255 characters.
 * @param {string} name
 */
export function blockName(name) {
  const base = String(name).split(/[\\/]/).pop() ?? '';
  return [...base].slice(0, 255).join('');
}

/**
 * The block for an accepted file from its contents (`data`: base64 for images and PDF, the text otherwise).
 * @param {{ name: string }} file
 * @param {Accepted} accepted
 * @param {string} data
 */
export function blockOf(file, accepted, data) {
  if (accepted.kind === 'image') return { type: 'image', source: { type: 'base64', mediaType: accepted.mediaType, data } };
  const source = accepted.encoding === 'base64'
    ? { type: 'base64', mediaType: accepted.mediaType, data }
    : { type: 'text', mediaType: accepted.mediaType, text: data };
  return { type: 'document', name: blockName(file.name), source };
}


/**
 * @param {Blob} file
 * @returns {Promise<string>}
 */
function readAsBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** A text file's contents as UTF-8 text; throws when it is not UTF-8 (a binary file with a text name). @param {Blob} file */
async function readAsText(file) {
  const text = new TextDecoder('utf-8', { fatal: true }).decode(await file.arrayBuffer());
  if (text.includes('\u0000')) throw new TypeError('not text');
  return text;
}

/**
 * One attachment of the message being written: its block, and for a chip its name, type and size (`url`: an
 * image's preview).
 * @typedef {{ block: any, name: string, mediaType: string, size: number, url?: string }} Attachment
 */

/**
 * Reads the files a person attached, in order, next to those already attached (`attached`): the attachments
 * made, and the refusals in plain words (`t`, the element's strings).
 * @param {File[]} files
 * @param {{ t: (key: string, ...args: any[]) => string, inputs: Set<string>, maxFileBytes: number,
 *           maxImageBytes: number, maxFiles: number, attached: { size: number }[] }} options
 * @returns {Promise<{ added: Attachment[], problems: string[] }>}
 */
export async function readFiles(files, { t, inputs, maxFileBytes, maxImageBytes, maxFiles, attached }) {
  /** @type {Attachment[]} */
  const added = [];
  /** @type {string[]} */
  const problems = [];
  let count = attached.length;
  let bytes = attached.reduce((sum, a) => sum + a.size, 0);
  for (const file of files) {
    const name = file.name || t('image');
    const check = checkFile(file, { inputs, maxFileBytes, maxImageBytes, maxFiles, attached: count, attachedBytes: bytes });
    if (!check.ok) {
      if (check.reason === 'too-many') { problems.push(t('tooManyFiles', maxFiles)); break; }
      if (check.reason === 'too-large') {
        problems.push(check.max === maxImageBytes && file.type.startsWith('image/') ? t('imageTooLarge', formatBytes(check.max)) : t('fileTooLarge', name, formatBytes(check.max ?? 0)));
      } else if (check.reason === 'message-too-large') problems.push(t('filesTooLarge', name, formatBytes(check.max ?? 0)));
      else if (check.reason === 'model') problems.push(t('fileNotForModel', name, check.kind));
      else problems.push(t('fileTypeRefused', name));
      continue;
    }
    try {
      const data = check.encoding === 'base64' ? await readAsBase64(file) : await readAsText(file);
      // A file named .pdf that is not one ("%PDF-" is "JVBERi0" in base64) would be refused at Send.
      if (check.mediaType === 'application/pdf' && !data.startsWith('JVBERi0')) { problems.push(t('fileNotPdf', name)); continue; }
      const block = blockOf(file, check, data);
      added.push(check.kind === 'image'
        ? { block, name: file.name, mediaType: check.mediaType, size: file.size, url: `data:${check.mediaType};base64,${data}` }
        : { block, name: blockName(file.name), mediaType: check.mediaType, size: file.size });
      count += 1;
      bytes += file.size;
    } catch {
      problems.push(t(check.encoding === 'text' ? 'fileNotText' : 'fileUnreadable', name));
    }
  }
  return { added, problems };
}
