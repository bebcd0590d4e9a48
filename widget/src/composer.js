// The input area: a growing textarea, attachments (images and documents: attach button, paste or drop; checked
// by attachments.js against the model's inputs and the limits, refusals said in plain words), Send and Stop.
// Enter sends, Shift+Enter adds a line, and nothing is sent while an IME composition is active (Chinese and
// Japanese input confirm candidates with Enter).
import { acceptList, blockName, blockOf, checkFile, documentBytes, formatBytes, typeLabel } from './attachments.js';
import { h, icon, iconButton } from './dom.js';

export { IMAGE_TYPES } from './attachments.js';

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

/** @param {any} block @returns {Attachment | null} */
function attachmentOf(block) {
  if (block?.type === 'image' && block.source?.type === 'base64') {
    return { block, name: '', mediaType: block.source.mediaType, size: documentBytes(block), url: `data:${block.source.mediaType};base64,${block.source.data}` };
  }
  if (block?.type === 'document') return { block, name: block.name, mediaType: block.source?.mediaType, size: documentBytes(block) };
  return null;
}

export class Composer {
  /** @type {Attachment[]} */
  #files = [];
  /** The input kinds the model takes (`setInputs`); images and text files until the relay says. */
  /** @type {Set<string>} */
  #inputs = new Set(['text', 'image']);
  #composing = false;
  /** Files accepted and still being read, and their bytes. */
  #reading = 0;
  #readingBytes = 0;
  #busy = false;
  #fileInput; #attachButton; #sendButton; #stopButton; #attachments; #editText; #editBar;

  /**
   * @param {{ t: import('./model.js').Translate, onSend: (text: string, blocks: any[]) => void, onStop: () => void,
   *           onProblem: (text: string) => void, maxImageBytes: number, maxFileBytes: number, maxFiles: number,
   *           signal: AbortSignal, dropZone: HTMLElement }} options
   */
  constructor(options) {
    this.options = options;
    const { t, signal } = options;
    this.editing = false;
    this.input = h('textarea', { rows: 1, part: 'input', 'aria-label': t('inputLabel'), placeholder: t('inputPlaceholder'), enterKeyHint: 'send' });
    this.#fileInput = h('input', { type: 'file', accept: acceptList(this.#inputs), multiple: true, hidden: true });
    this.#attachButton = iconButton('attach', t('attachFile'), { part: 'attach-button' });
    this.#sendButton = iconButton('send', t('send'), { part: 'send-button', className: 'primary' });
    this.#stopButton = iconButton('stop', t('stop'), { part: 'stop-button', hidden: true }, false);
    this.#attachments = h('div', { className: 'attachments', part: 'attachments', role: 'list', 'aria-label': t('attachments'), hidden: true });
    // Editing the last message: a line saying so, with Cancel (the element decides what sending then does).
    this.#editText = h('span', {}, t('editing'));
    this.#editBar = h('div', { className: 'editing', part: 'editing', role: 'status', hidden: true }, this.#editText,
      h('button', { type: 'button', part: 'cancel-edit-button', onclick: () => this.setEditing(false) }, t('cancel')));
    this.el = h('form', { className: 'composer-wrap', part: 'composer' },
      this.#editBar,
      this.#attachments,
      h('div', { className: 'composer' }, this.#attachButton, this.#fileInput, this.input, this.#sendButton, this.#stopButton));

    /**
     * @template {keyof HTMLElementEventMap} K
     * @param {HTMLElement} target
     * @param {K} type
     * @param {(event: HTMLElementEventMap[K]) => void} fn
     */
    const on = (target, type, fn) => target.addEventListener(type, fn, { signal });
    on(this.el, 'submit', (event) => { event.preventDefault(); this.#submit(); });
    on(this.#sendButton, 'click', () => this.#submit());
    on(this.#stopButton, 'click', () => options.onStop());
    on(this.#attachButton, 'click', () => this.#fileInput.click());
    on(this.#fileInput, 'change', () => { void this.#addFiles([...(this.#fileInput.files ?? [])]); this.#fileInput.value = ''; });
    on(this.input, 'compositionstart', () => { this.#composing = true; });
    on(this.input, 'compositionend', () => { this.#composing = false; });
    on(this.input, 'keydown', (event) => {
      if (event.key !== 'Enter' || event.shiftKey) return;
      // keyCode 229: the key went to an input method (Safari fires keydown after compositionend).
      if (event.isComposing || this.#composing || event.keyCode === 229) return;
      event.preventDefault();
      this.#submit();
    });
    on(this.input, 'paste', (event) => {
      // Pasted files (a screenshot, files copied in a file manager); pasted text stays text.
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length) { event.preventDefault(); void this.#addFiles(files); }
    });
    // Files dropped on the conversation or on the input area are attached.
    for (const zone of [options.dropZone, this.el]) {
      on(zone, 'dragover', (event) => {
        if ([...(event.dataTransfer?.items ?? [])].some((i) => i.kind === 'file')) { event.preventDefault(); zone.classList.add('drop-target'); }
      });
      on(zone, 'dragleave', () => zone.classList.remove('drop-target'));
      on(zone, 'drop', (event) => {
        zone.classList.remove('drop-target');
        const files = [...(event.dataTransfer?.files ?? [])];
        if (files.length) { event.preventDefault(); void this.#addFiles(files); }
      });
    }
    this.#update();
  }

  /** @param {import('./model.js').Translate} t */
  setTranslator(t) {
    this.options.t = t;
    this.input.setAttribute('aria-label', t('inputLabel'));
    this.#attachButton.title = t('attachFile');
    this.#attachButton.setAttribute('aria-label', t('attachFile'));
    this.#attachments.setAttribute('aria-label', t('attachments'));
    this.#sendButton.title = t('send');
    this.#sendButton.setAttribute('aria-label', t('send'));
    this.#stopButton.title = t('stop');
    if (this.#stopButton.lastChild) this.#stopButton.lastChild.textContent = t('stop');
    this.#editText.textContent = t('editing');
  }

  /** @param {string} text */
  setPlaceholder(text) { this.input.placeholder = text; }

  /**
   * What the model takes (from the relay's models endpoint): the file picker offers only those files.
   * @param {Set<string>} inputs
   */
  setInputs(inputs) {
    this.#inputs = inputs;
    this.#fileInput.accept = acceptList(inputs);
  }

  /** @param {File[]} files */
  async #addFiles(files) {
    const { t, maxImageBytes, maxFileBytes, maxFiles, onProblem } = this.options;
    /** @type {string[]} */
    const problems = [];
    for (const file of files) {
      const name = file.name || t('image');
      // Files still being read count too (a second drop while the first is read).
      const attachedBytes = this.#files.reduce((sum, f) => sum + f.size, 0) + this.#readingBytes;
      const check = checkFile(file, { inputs: this.#inputs, maxFileBytes, maxImageBytes, maxFiles, attached: this.#files.length + this.#reading, attachedBytes });
      if (!check.ok) {
        if (check.reason === 'too-many') { problems.push(t('tooManyFiles', maxFiles)); break; }
        if (check.reason === 'too-large') {
          problems.push(check.max === maxImageBytes && file.type.startsWith('image/') ? t('imageTooLarge', formatBytes(check.max)) : t('fileTooLarge', name, formatBytes(check.max ?? 0)));
        }
        else if (check.reason === 'message-too-large') problems.push(t('filesTooLarge', name, formatBytes(check.max ?? 0)));
        else if (check.reason === 'model') problems.push(t('fileNotForModel', name, check.kind));
        else problems.push(t('fileTypeRefused', name));
        continue;
      }
      this.#reading += 1;
      this.#readingBytes += file.size;
      try {
        const data = check.encoding === 'base64' ? await readAsBase64(file) : await readAsText(file);
        // A file named .pdf that is not one ("%PDF-" is "JVBERi0" in base64) would be refused at Send.
        if (check.mediaType === 'application/pdf' && !data.startsWith('JVBERi0')) { problems.push(t('fileNotPdf', name)); continue; }
        const block = blockOf(file, check, data);
        this.#files.push(check.kind === 'image'
          ? { block, name: file.name, mediaType: check.mediaType, size: file.size, url: `data:${check.mediaType};base64,${data}` }
          : { block, name: blockName(file.name), mediaType: check.mediaType, size: file.size });
      } catch {
        problems.push(t(check.encoding === 'text' ? 'fileNotText' : 'fileUnreadable', name));
      } finally {
        this.#reading -= 1;
        this.#readingBytes -= file.size;
      }
    }
    if (problems.length) onProblem(problems.join(' '));
    this.#renderAttachments();
  }

  #renderAttachments() {
    const { t } = this.options;
    const remove = (/** @type {number} */ index) => {
      this.#files.splice(index, 1);
      this.#renderAttachments();
      // Focus stays in the row (the next chip's Remove), else goes back to the input.
      const next = /** @type {HTMLElement | null} */ (this.#attachments.querySelectorAll('button')[Math.min(index, this.#files.length - 1)] ?? null);
      (next ?? this.input).focus();
    };
    this.#attachments.replaceChildren(...this.#files.map((file, index) => (file.url
      ? h('div', { className: 'thumb', role: 'listitem' },
        h('img', { src: file.url, alt: file.name ? `${t('image')}: ${file.name}` : t('image') }),
        iconButton('close', t('removeImage'), { onclick: () => remove(index) }))
      : h('div', { className: 'chip', part: 'attachment', role: 'listitem', 'data-type': file.mediaType },
        icon('file'),
        h('span', { className: 'chip-text' },
          h('span', { className: 'chip-name', title: file.name }, file.name),
          h('span', { className: 'chip-meta' }, `${typeLabel(file.mediaType)} · ${formatBytes(file.size)}`)),
        iconButton('close', t('removeFile', file.name), { onclick: () => remove(index) })))));
    this.#attachments.hidden = this.#files.length === 0;
    this.#update();
  }

  /**
   * Puts a message back into the box (its text, image and document blocks), e.g. one whose turn could not be saved.
   * @param {string} text
   * @param {any[]} [blocks]
   */
  restore(text, blocks = []) {
    this.input.value = text;
    this.#files = blocks.map(attachmentOf).filter((a) => a !== null);
    this.#renderAttachments();
    this.input.focus();
  }

  /** Edit mode: on, with the message's text in the box; off clears the box again. @param {boolean} on */
  setEditing(on, text = '') {
    const was = this.editing;
    this.editing = on;
    this.#editBar.hidden = !on;
    if (on) { this.input.value = text; this.input.focus(); }
    else if (was) this.input.value = '';
  }

  #submit() {
    if (this.#busy) return;
    const text = this.input.value.trim();
    if (!text && this.#files.length === 0) return;
    const blocks = this.#files.map((f) => f.block);
    this.input.value = '';
    this.#files = [];
    this.#renderAttachments();
    this.options.onSend(text, blocks);
  }

  /**
   * Busy: a turn runs (Stop replaces Send; typing the next message stays possible).
   * @param {boolean} busy
   * @param {boolean} canStop
   */
  setBusy(busy, canStop) {
    this.#busy = busy;
    this.#sendButton.hidden = busy;
    this.#stopButton.hidden = !busy;
    this.#stopButton.disabled = !canStop;
    this.#update();
  }

  #update() {
    this.#sendButton.disabled = this.#busy;
  }
}
