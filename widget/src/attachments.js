// What a file the person attaches becomes, without the DOM (tests/node/widget-attachments.test.mjs): an image
// block, a document block (docs/protocol.md, ADR-015: PDF as base64, text files as UTF-8 text), or a refusal in
// plain words — too large, a type this model does not take, too many files. Only what the configured model takes is
// offered (`capabilities.inputs` from the relay's models endpoint, `capabilities.images` as its alias).
//
// Browsers report many text files' types badly (`.ts` as `video/mp2t`, most source code as ""), so a file's type
// comes from a closed table of file name extensions first and from the browser's type only for extensions the
// table lacks; source code travels as `text/plain`.

/** Image types a message may carry (the runtime's list). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
/** Document media types (the block's closed list): PDF as base64, the others as text. */
export const DOCUMENT_TYPES = ['application/pdf', 'text/plain', 'text/markdown', 'text/csv', 'application/json'];

/** Extensions with a type of their own. */
/** @type {Record<string, string>} */
const NAMED = {
  pdf: 'application/pdf', md: 'text/markdown', markdown: 'text/markdown', csv: 'text/csv', json: 'application/json',
  txt: 'text/plain', text: 'text/plain', log: 'text/plain',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
};

/** Source code and configuration files, sent as `text/plain` (a closed table: anything else is refused). */
export const CODE_EXTENSIONS = Object.freeze([
  'c', 'cc', 'cpp', 'cxx', 'h', 'hh', 'hpp', 'cs', 'java', 'kt', 'kts', 'scala', 'go', 'rs', 'swift', 'm', 'mm',
  'js', 'mjs', 'cjs', 'jsx', 'ts', 'mts', 'cts', 'tsx', 'vue', 'svelte', 'py', 'pyi', 'rb', 'php', 'pl', 'lua', 'r',
  'dart', 'ex', 'exs', 'erl', 'hs', 'clj', 'elm', 'ml', 'fs', 'jl', 'zig', 'nim', 'sql', 'graphql', 'proto',
  'sh', 'bash', 'zsh', 'fish', 'ps1', 'bat', 'html', 'htm', 'css', 'scss', 'sass', 'less', 'xml', 'svg',
  'yaml', 'yml', 'toml', 'ini', 'cfg', 'conf', 'env', 'properties', 'gradle', 'cmake', 'mk', 'dockerfile',
  'tex', 'rst', 'adoc', 'diff', 'patch', 'tsv',
]);
const CODE = new Set(CODE_EXTENSIONS);
/** Whole file names that are code without an extension. */
const CODE_NAMES = new Set(['dockerfile', 'makefile', 'gemfile', 'rakefile', 'procfile', 'license', 'readme']);

/** The per-file and per-message limits the element starts with (`maxFileBytes`, `maxFiles`): the runtime's per-file
 *  limit (docs/protocol.md §1 "Sizes"), and a count. */
export const DEFAULT_MAX_FILE_BYTES = 3 * 1024 * 1024;
export const DEFAULT_MAX_FILES = 5;
/** The runtime's limit on the files of one message together (`AGENT_MESSAGE_TOO_LARGE`), checked here first so a
 *  file that would not fit is refused when it is attached, not when the message is sent. */
export const MESSAGE_FILE_BYTES = 4 * 1024 * 1024;

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
 * The input kinds a model takes, from its entry in `GET {endpoint}/models`: `capabilities.inputs` when the relay
 * reports it, else `images: true` as `"image"`; text always.
 * @param {any} model
 * @returns {Set<string>}
 */
export function inputsOf(model) {
  const caps = model?.capabilities ?? {};
  const inputs = new Set(['text']);
  if (Array.isArray(caps.inputs)) {
    for (const kind of caps.inputs) if (typeof kind === 'string') inputs.add(kind);
  }
  if (caps.images === true) inputs.add('image');
  return inputs;
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
 * The file picker's `accept` list for these inputs: the types and the extensions (text files by extension, since
 * browsers report them badly).
 * @param {Set<string>} inputs
 */
export function acceptList(inputs) {
  const list = ['.txt', '.md', '.csv', '.json', 'text/plain', 'text/markdown', 'text/csv', 'application/json', ...CODE_EXTENSIONS.map((e) => `.${e}`)];
  if (inputs.has('image')) list.unshift(...IMAGE_TYPES);
  if (inputs.has('pdf')) list.unshift('application/pdf', '.pdf');
  return list.join(',');
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
  if (attachedBytes + file.size > MESSAGE_FILE_BYTES) return { ok: false, reason: 'message-too-large', max: MESSAGE_FILE_BYTES };
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
 * A document block's size in bytes as the person's file had it (base64 decoded, text as UTF-8).
 * @param {any} block
 */
export function documentBytes(block) {
  const source = block?.source;
  if (source?.type === 'text') return new TextEncoder().encode(String(source.text ?? '')).length;
  if (source?.type === 'base64') {
    const data = String(source.data ?? '');
    const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
    return Math.max(0, Math.floor((data.length * 3) / 4) - pad);
  }
  return 0;
}

/**
 * A short readable name of a media type for a chip ("PDF", "Markdown", "Text"…).
 * @param {string} mediaType
 */
export function typeLabel(mediaType) {
  return TYPE_LABELS[mediaType] ?? mediaType;
}
/** @type {Record<string, string>} */
const TYPE_LABELS = {
  'application/pdf': 'PDF', 'text/plain': 'Text', 'text/markdown': 'Markdown', 'text/csv': 'CSV', 'application/json': 'JSON',
  'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/gif': 'GIF', 'image/webp': 'WebP',
};

/** A byte count in KiB or MiB (one decimal when it is not whole). @param {number} n */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) ? 1 : 0)} MiB` : `${Math.max(1, Math.round(n / 1024))} KiB`;
}

/** A limit property as set: a positive safe integer, else `fallback`. @param {unknown} value @param {number} fallback */
export function positiveLimit(value, fallback) {
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}
