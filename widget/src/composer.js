// The input area: a growing textarea, attachments (images and documents: attach button, paste or drop; checked
// and read by files.js, a chunk loaded with the first file, against the model's inputs and the limits, refusals
// said in plain words), Send and Stop.
// Enter sends, Shift+Enter adds a line, and nothing is sent while an IME composition is active (Chinese and
// Japanese input confirm candidates with Enter).
import { acceptList, documentBytes, formatBytes, typeLabel } from './attachments.js';
import { h, icon, iconButton } from './dom.js';
import { loadFiles } from './runtime.js';

/** @typedef {import('./files.js').Attachment} Attachment */

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
  /** The batch of files being attached (the next waits for it). */
  #adding = Promise.resolve();
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
    on(this.#fileInput, 'change', () => { this.#addFiles([...(this.#fileInput.files ?? [])]); this.#fileInput.value = ''; });
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
      if (files.length) { event.preventDefault(); this.#addFiles(files); }
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
        if (files.length) { event.preventDefault(); this.#addFiles(files); }
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

  /**
   * Attaches `files` (checked and read by the files chunk, loaded the first time); one batch after the other, so
   * the limits count every file before it.
   * @param {File[]} files
   */
  #addFiles(files) {
    this.#adding = this.#adding.then(async () => {
      const { t, maxImageBytes, maxFileBytes, maxFiles, onProblem } = this.options;
      let result;
      try {
        const chunk = await loadFiles();
        result = await chunk.readFiles(files, { t, inputs: this.#inputs, maxFileBytes, maxImageBytes, maxFiles, attached: this.#files });
      } catch {
        result = { added: [], problems: files.map((f) => t('fileUnreadable', f.name || t('image'))) };
      }
      this.#files.push(...result.added);
      if (result.problems.length) onProblem(result.problems.join(' '));
      this.#renderAttachments();
    });
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
