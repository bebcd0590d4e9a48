// Attachments in the first load, without the DOM (tests/node/widget-attachments.test.mjs): what the model in use
// takes (`capabilities.inputs` from the relay's models endpoint, `capabilities.images` as its alias) and the file
// picker's list for it, the limits' defaults, and how a chip names a file (type, size). What a picked file becomes
// (its media type, the checks, the block) is files.js, a chunk loaded when the person first attaches something.

/** Image types a message may carry (the runtime's list). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** Source code and configuration files, sent as `text/plain` (a closed table: anything else is refused). */
export const CODE_EXTENSIONS = Object.freeze([
  'c', 'cc', 'cpp', 'cxx', 'h', 'hh', 'hpp', 'cs', 'java', 'kt', 'kts', 'scala', 'go', 'rs', 'swift', 'm', 'mm',
  'js', 'mjs', 'cjs', 'jsx', 'ts', 'mts', 'cts', 'tsx', 'vue', 'svelte', 'py', 'pyi', 'rb', 'php', 'pl', 'lua', 'r',
  'dart', 'ex', 'exs', 'erl', 'hs', 'clj', 'elm', 'ml', 'fs', 'jl', 'zig', 'nim', 'sql', 'graphql', 'proto',
  'sh', 'bash', 'zsh', 'fish', 'ps1', 'bat', 'html', 'htm', 'css', 'scss', 'sass', 'less', 'xml', 'svg',
  'yaml', 'yml', 'toml', 'ini', 'cfg', 'conf', 'env', 'properties', 'gradle', 'cmake', 'mk', 'dockerfile',
  'tex', 'rst', 'adoc', 'diff', 'patch', 'tsv',
]);

/** The per-file and per-message limits the element starts with (`maxFileBytes`, `maxFiles`): the runtime's per-file
 *  limit (docs/protocol.md §1 "Sizes"), and a count. */
export const DEFAULT_MAX_FILE_BYTES = 3 * 1024 * 1024;
export const DEFAULT_MAX_FILES = 5;
/** The runtime's limit on the files of one message together (`AGENT_MESSAGE_TOO_LARGE`), checked here first so a
 *  file that would not fit is refused when it is attached, not when the message is sent. */
export const MESSAGE_FILE_BYTES = 4 * 1024 * 1024;

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

/**
 * The runtime's attachment limits (`createAgentController({ attachments })`) for the element's: a file up to the
 * larger of `maxFileBytes` and `maxImageBytes`, a message's files up to the runtime's 4 MiB or one such file.
 * @param {number} maxFileBytes
 * @param {number} maxImageBytes
 */
export function attachmentLimits(maxFileBytes, maxImageBytes) {
  const file = Math.max(maxFileBytes, maxImageBytes);
  return { maxFileBytes: file, maxMessageBytes: messageLimit(maxFileBytes, maxImageBytes) };
}

/**
 * The files of one message together: the runtime's default 4 MiB, or more when one file may be larger.
 * @param {number} maxFileBytes
 * @param {number} maxImageBytes
 */
export function messageLimit(maxFileBytes, maxImageBytes) {
  return Math.max(MESSAGE_FILE_BYTES, maxFileBytes, maxImageBytes);
}
