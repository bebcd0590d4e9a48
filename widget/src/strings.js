// The widget's user-visible strings: English here, Chinese in strings-zh.js (a chunk loaded on demand). `lang`
// (attribute) or the browser's language picks the table; every key can be overridden through the element's
// `strings` property. Values that take parameters are functions, so translators can order the words as their
// language needs.

/** @typedef {Record<string, string | ((...args: any[]) => string)>} Strings */

/** @type {Strings} */
const en = {
  title: 'Assistant',
  inputLabel: 'Message',
  inputPlaceholder: 'Ask anything…',
  inputPlaceholderLoading: 'Starting… you can already type',
  send: 'Send',
  stop: 'Stop',
  attachImage: 'Attach image',
  attachFile: 'Attach files',
  attachments: 'Attachments',
  removeImage: 'Remove image',
  removeFile: (name) => `Remove ${name}`,
  history: 'Conversations',
  newConversation: 'New conversation',
  closePanel: 'Close',
  loadMore: 'Load more',
  historyEmpty: 'No saved conversations yet.',
  historyFailed: 'Could not load conversations.',
  untitled: 'Untitled conversation',
  rename: 'Rename',
  renamePrompt: 'New title',
  save: 'Save',
  cancel: 'Cancel',
  delete: 'Delete',
  deleteConfirm: (title) => `Delete “${title}”? This cannot be undone.`,
  deleteConfirmAction: 'Delete',
  deleting: 'Deleting…',
  deleteFailed: (code) => `Not deleted (${code}). The conversation is still there.`,
  renameFailed: (code) => `Not renamed (${code}).`,
  you: 'You',
  assistant: 'Assistant',
  thinking: 'Thinking…',
  thoughts: 'Thoughts',
  toolArguments: 'Arguments',
  toolResult: 'Result',
  toolProgress: 'Progress',
  toolStatusStreaming: 'Preparing…',
  toolStatusWaiting: 'Waiting for your approval',
  toolStatusRunning: 'Running…',
  toolStatusDone: 'Done',
  toolStatusError: 'Failed',
  toolStatusRejected: 'Rejected',
  toolStatusNotRun: 'Did not run',
  toolStatusInvalid: 'Invalid arguments, not run',
  confirmTitle: (tool) => `Allow “${tool}”?`,
  elicitTitle: 'A question for you',
  elicitTitleFrom: (source) => `A question from “${source}”`,
  elicitSend: 'Send',
  elicitDecline: 'Decline',
  elicitCancel: 'Cancel',
  elicitDone: 'Done',
  mcpConnect: (server) => `Connect ${server}`,
  mcpToolOf: (tool, server) => `Tool “${tool}” of the MCP server “${server}”.`,
  mcpHints: (hints) => `The server says: ${hints} (not verified).`,
  mcpHintReadOnly: 'read-only',
  mcpHintDestructive: 'destructive',
  mcpConnecting: 'connecting…',
  mcpReady: (n) => `ready, ${n} tool${n === 1 ? '' : 's'}`,
  mcpFailed: (why) => `unavailable: ${why}`,
  confirmBody: 'The assistant wants to run this action on this page:',
  confirmNoArguments: 'No arguments.',
  confirmRaw: 'Show raw JSON',
  approve: 'Approve',
  reject: 'Reject',
  maxTokens: 'The answer reached the model’s output limit and may be incomplete.',
  cancelled: 'Stopped. Nothing of that turn was saved.',
  retry: 'Retry',
  dismiss: 'Dismiss',
  continueInNew: 'Continue in a new conversation',
  demoBanner: 'Demo mode: answers come from a scripted demo model, not AI.',
  runtimeFailed: 'The assistant could not start.',
  copy: 'Copy',
  copied: 'Copied',
  imageTooLarge: (max) => `Images can be at most ${max}.`,
  imageNotSupported: 'Only PNG, JPEG, GIF and WebP images can be attached.',
  fileTooLarge: (name, max) => `“${name}” is too large: files can be at most ${max}.`,
  filesTooLarge: (name, max) => `“${name}” does not fit: the files of one message can be at most ${max} together.`,
  fileTypeRefused: (name) => `“${name}” cannot be attached: only PDF, text, Markdown, CSV, JSON and source code files and PNG, JPEG, GIF and WebP images can.`,
  fileNotForModel: (name, kind) => `“${name}” cannot be attached: this model does not read ${kind === 'pdf' ? 'PDF files' : 'images'}.`,
  tooManyFiles: (max) => `At most ${max} files can be attached to one message.`,
  fileNotText: (name) => `“${name}” cannot be attached: it is not a text file (UTF-8).`,
  fileNotPdf: (name) => `“${name}” cannot be attached: it is not a PDF file.`,
  fileUnreadable: (name) => `“${name}” could not be read.`,
  document: 'Document',
  image: 'Image',
  empty: 'How can I help?',
  limitExceeded: (limit) => `A limit of this turn was reached: ${limit}.`,
  timeout: 'The turn took too long and was stopped.',
  relayUnavailable: 'The server could not be reached. Check the connection, then retry.',
  signedOut: 'You are signed out. Sign in again, then retry.',
  signingIn: 'Signing you in again…',
  spendingLimit: (seconds) => `You have reached your usage limit for now. You can try again ${
    !(seconds > 0) ? 'later' : seconds < 60 ? 'in a few seconds' : seconds < 3600 ? `in ${Math.ceil(seconds / 60)} min`
      : `in about ${Math.ceil(seconds / 3600)} h`}.`,
  conflict: 'This conversation was changed elsewhere (another tab?). Reload it to continue.',
  reload: 'Reload conversation',
  copyAnswer: 'Copy answer',
  goodAnswer: 'Good answer',
  badAnswer: 'Bad answer',
  regenerate: 'Regenerate answer',
  editMessage: 'Edit message',
  editing: 'Editing your last message. Sending replaces it and the answers after it.',
  suggestions: 'Suggestions',
  sources: 'Sources',
};


/**
 * The tables at hand: English is built in; other languages are chunks of their own (strings-zh.js, built beside
 * the widget), added here by `loadStrings` the first time an element needs one, so a page in English never
 * downloads them.
 * @type {Partial<Record<'en' | 'zh', Strings>>}
 */
export const TABLES = { en };

/**
 * The language to use: the `lang` attribute if it names a table (`zh-CN` → `zh`), else the browser's first
 * preferred language that has a table, else English.
 * @param {string | null} lang
 * @returns {'en' | 'zh'}
 */
export function pickLanguage(lang) {
  const candidates = lang ? [lang] : (globalThis.navigator?.languages ?? [globalThis.navigator?.language ?? 'en']);
  for (const candidate of candidates) {
    const base = String(candidate).toLowerCase().split('-')[0];
    if (base === 'zh' || base === 'en') return base;
  }
  return 'en';
}

/** @type {Promise<void> | null} */
let loadingZh = null;

/**
 * Adds the table of `language` to TABLES: null when it is there already, else a promise that settles once the
 * chunk is in (a failed load may be retried; meanwhile the element shows English). `__PB_STRINGS_ZH_PATH__` is
 * set by widget/build.mjs: a literal `new URL('…', import.meta.url)`, which bundlers emit as an asset.
 * @param {'en' | 'zh'} language
 * @returns {Promise<void> | null}
 */
export function loadStrings(language) {
  if (TABLES[language]) return null;
  if (!loadingZh) {
    // @ts-ignore: replaced at build time by a string literal.
    const url = globalThis.PATCHBRIDGE_STRINGS_ZH_URL ?? new URL(__PB_STRINGS_ZH_PATH__, import.meta.url);
    loadingZh = import(/* @vite-ignore */ String(url)).then((chunk) => { TABLES.zh = chunk.default; });
    loadingZh.catch(() => { loadingZh = null; });
  }
  return loadingZh;
}

/**
 * A lookup function over the chosen table (English until the chosen one is loaded, see loadStrings) with the host's overrides on top.
 * @param {'en' | 'zh'} language
 * @param {Strings | undefined} overrides
 */
export function makeTranslator(language, overrides) {
  const table = { ...TABLES[language], ...(overrides ?? {}) };
  /** @param {string} key @param {...any} args */
  return (key, ...args) => {
    const value = table[key] ?? en[key] ?? key;
    return typeof value === 'function' ? value(...args) : String(value);
  };
}
