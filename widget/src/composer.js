// The input area: a growing textarea, image attachments (paste, drop or pick; bounded size), Send and Stop.
// Enter sends, Shift+Enter adds a line, and nothing is sent while an IME composition is active (Chinese and
// Japanese input confirm candidates with Enter).
import { h, iconButton } from './dom.js';

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** @param {number} n */
function formatBytes(n) {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) ? 1 : 0)} MiB` : `${Math.round(n / 1024)} KiB`;
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

export class Composer {
  /** @type {{ block: any, url: string }[]} */
  #images = [];
  #composing = false;
  #busy = false;
  #fileInput; #attachButton; #sendButton; #stopButton; #attachments; #editText; #editBar;

  /**
   * @param {{ t: import('./model.js').Translate, onSend: (text: string, images: any[]) => void, onStop: () => void,
   *           onProblem: (text: string) => void, maxImageBytes: number, signal: AbortSignal, dropZone: HTMLElement }} options
   */
  constructor(options) {
    this.options = options;
    const { t, signal } = options;
    this.editing = false;
    this.input = h('textarea', { rows: 1, part: 'input', 'aria-label': t('inputLabel'), placeholder: t('inputPlaceholder'), enterKeyHint: 'send' });
    this.#fileInput = h('input', { type: 'file', accept: IMAGE_TYPES.join(','), multiple: true, hidden: true });
    this.#attachButton = iconButton('image', t('attachImage'), { part: 'attach-button' });
    this.#sendButton = iconButton('send', t('send'), { part: 'send-button', className: 'primary' });
    this.#stopButton = iconButton('stop', t('stop'), { part: 'stop-button', hidden: true }, false);
    this.#attachments = h('div', { className: 'attachments', hidden: true });
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
      const files = [...(event.clipboardData?.files ?? [])].filter((f) => f.type.startsWith('image/'));
      if (files.length) { event.preventDefault(); void this.#addFiles(files); }
    });
    const zone = options.dropZone;
    on(zone, 'dragover', (event) => {
      if ([...(event.dataTransfer?.items ?? [])].some((i) => i.kind === 'file')) { event.preventDefault(); zone.classList.add('drop-target'); }
    });
    on(zone, 'dragleave', () => zone.classList.remove('drop-target'));
    on(zone, 'drop', (event) => {
      zone.classList.remove('drop-target');
      const files = [...(event.dataTransfer?.files ?? [])];
      if (files.length) { event.preventDefault(); void this.#addFiles(files); }
    });
    this.#update();
  }

  /** @param {import('./model.js').Translate} t */
  setTranslator(t) {
    this.options.t = t;
    this.input.setAttribute('aria-label', t('inputLabel'));
    this.#attachButton.title = t('attachImage');
    this.#attachButton.setAttribute('aria-label', t('attachImage'));
    this.#sendButton.title = t('send');
    this.#sendButton.setAttribute('aria-label', t('send'));
    this.#stopButton.title = t('stop');
    if (this.#stopButton.lastChild) this.#stopButton.lastChild.textContent = t('stop');
    this.#editText.textContent = t('editing');
  }

  /** @param {string} text */
  setPlaceholder(text) { this.input.placeholder = text; }

  /** @param {File[]} files */
  async #addFiles(files) {
    const { t, maxImageBytes, onProblem } = this.options;
    for (const file of files) {
      if (!IMAGE_TYPES.includes(file.type)) { onProblem(t('imageNotSupported')); continue; }
      if (file.size > maxImageBytes) { onProblem(t('imageTooLarge', formatBytes(maxImageBytes))); continue; }
      const data = await readAsBase64(file);
      const block = { type: 'image', source: { type: 'base64', mediaType: file.type, data } };
      this.#images.push({ block, url: `data:${file.type};base64,${data}` });
    }
    this.#renderAttachments();
  }

  #renderAttachments() {
    const { t } = this.options;
    this.#attachments.replaceChildren(...this.#images.map((image, index) => h('div', { className: 'thumb' },
      h('img', { src: image.url, alt: t('image') }),
      iconButton('close', t('removeImage'), { onclick: () => { this.#images.splice(index, 1); this.#renderAttachments(); } }))));
    this.#attachments.hidden = this.#images.length === 0;
    this.#update();
  }

  /**
   * Puts a message back into the box (text and image blocks), e.g. one whose turn could not be saved.
   * @param {string} text
   * @param {any[]} [imageBlocks]
   */
  restore(text, imageBlocks = []) {
    this.input.value = text;
    this.#images = imageBlocks.filter((b) => b.source?.type === 'base64')
      .map((block) => ({ block, url: `data:${block.source.mediaType};base64,${block.source.data}` }));
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
    if (!text && this.#images.length === 0) return;
    const images = this.#images.map((i) => i.block);
    this.input.value = '';
    this.#images = [];
    this.#renderAttachments();
    this.options.onSend(text, images);
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
