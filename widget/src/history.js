// The conversation history panel over the relay's conversations (through the controller's conversation API):
// a paged list, open, new, rename and delete. Delete asks first and trusts only the server's receipt: a failed
// or unknown result leaves the row in place with the error shown, and is never retried automatically.
import { h, iconButton } from './dom.js';

const PAGE = 20;

/** @typedef {import('../../npm/index.js').ConversationSummary} ConversationSummary */
/** @typedef {import('../../npm/index.js').AgentController} AgentController */
/** A failure's code for the words on a row. @param {unknown} error */
const codeOf = (error) => /** @type {{ code?: string } | null} */ (error)?.code ?? 'ERROR';

export class HistoryPanel {
  /** @type {ConversationSummary[]} the panel's own copies of the listed conversations */
  #items = [];
  /** @type {string | null} */
  #cursor = null;
  #loading = false;
  #generation = 0;
  #options; #titleEl; #list; #statusLine; #more; #closeButton; #newButton;

  /**
   * @param {{ t: import('./model.js').Translate, getController: () => AgentController | null,
   *           currentId: () => string | null, onOpen: (id: string) => void, onNew: () => void,
   *           onDeleted: (id: string) => void, beforeDelete: (id: string) => Promise<void>,
   *           onClose: () => void, signal: AbortSignal, lang: () => string }} options
   */
  constructor(options) {
    this.#options = options;
    const { t } = options;
    this.#titleEl = h('h2', { id: 'pb-history-title' }, t('history'));
    this.#list = h('ul', { className: 'list', role: 'list' });
    this.#statusLine = h('p', { className: 'status-line', role: 'status' });
    this.#more = h('button', { type: 'button', hidden: true, onclick: () => this.#load(false) }, t('loadMore'));
    this.#closeButton = iconButton('close', t('closePanel'), { onclick: () => options.onClose() });
    this.#newButton = iconButton('plus', t('newConversation'), { className: 'primary', onclick: () => options.onNew() }, false);
    this.el = h('div', { className: 'panel', part: 'history-panel', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'pb-history-title', hidden: true },
      h('header', {}, this.#titleEl, this.#closeButton),
      h('div', { className: 'foot' }, this.#newButton),
      this.#statusLine, this.#list,
      h('div', { className: 'foot' }, this.#more));
    this.el.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') { event.stopPropagation(); options.onClose(); }
      if (event.key === 'Tab') this.#keepFocus(event);
    }, { signal: options.signal });
  }

  get open() { return !this.el.hidden; }

  /** The strings of rows drawn from now on. @param {import('./model.js').Translate} t */
  setTranslator(t) { this.#options.t = t; }

  /** The element's controller; throws when it has none (disconnected meanwhile), which reads as a failure. */
  #controller() {
    const controller = this.#options.getController();
    if (!controller) throw new Error('the element has no controller');
    return controller;
  }

  /** Tab and Shift+Tab cycle inside the open panel (a modal dialog): past its last control to its first, and back. @param {KeyboardEvent} event */
  #keepFocus(event) {
    const controls = [.../** @type {NodeListOf<HTMLButtonElement>} */ (this.el.querySelectorAll('button, input, textarea, [tabindex]:not([tabindex="-1"])'))]
      .filter((el) => !el.disabled && el.getClientRects().length > 0);
    if (!controls.length) return;
    const active = /** @type {ShadowRoot} */ (this.el.getRootNode()).activeElement;
    const first = controls[0];
    const last = controls[controls.length - 1];
    if (event.shiftKey && (active === first || !this.el.contains(active))) { event.preventDefault(); last.focus(); }
    else if (!event.shiftKey && (active === last || !this.el.contains(active))) { event.preventDefault(); first.focus(); }
  }

  show() {
    // Rows from an earlier opening may be stale: start from an empty list until the fresh page arrives.
    this.#items = [];
    this.#list.replaceChildren();
    this.#more.hidden = true;
    this.el.hidden = false;
    this.#closeButton.focus();
    void this.#load(true);
  }

  hide() {
    this.el.hidden = true;
    this.#generation += 1; // late answers of this opening are ignored
  }

  /** @param {boolean} first */
  async #load(first) {
    const controller = this.#options.getController();
    const { t } = this.#options;
    if (!controller || typeof controller.listConversations !== 'function') {
      this.#statusLine.textContent = t('historyFailed');
      return;
    }
    if (this.#loading && !first) return;
    const generation = first ? ++this.#generation : this.#generation;
    this.#loading = true;
    if (first) { this.#items = []; this.#cursor = null; }
    this.#statusLine.classList.remove('error');
    try {
      const page = await controller.listConversations({ limit: PAGE, ...(this.#cursor ? { cursor: this.#cursor } : {}) });
      if (generation !== this.#generation) return;
      // The runtime hands out deep-frozen values; the panel keeps its own copies so a rename can update a row.
      this.#items.push(...page.items.map((item) => ({ ...item })));
      this.#cursor = page.nextCursor ?? null;
      this.#statusLine.textContent = this.#items.length ? '' : t('historyEmpty');
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#statusLine.classList.add('error');
      this.#statusLine.textContent = `${t('historyFailed')} (${codeOf(error)})`;
    } finally {
      if (generation === this.#generation) this.#loading = false;
    }
    this.#renderList();
  }

  /**
   * Rebuilds the rows; `focusId` gets focus back on its row (after a rename or a cancelled delete), null on the
   * New button (after a delete).
   * @param {string | null} [focusId]
   */
  #renderList(focusId) {
    const current = this.#options.currentId();
    this.#list.replaceChildren(...this.#items.map((item) => this.#row(item, item.id === current)));
    this.#more.hidden = !this.#cursor;
    if (focusId) /** @type {HTMLButtonElement | null} */ (this.#list.querySelector(`li[data-id="${CSS.escape(focusId)}"] button.open`))?.focus();
    else if (focusId === null) this.#newButton.focus();
  }

  /**
   * @param {ConversationSummary} item
   * @param {boolean} isCurrent
   */
  #row(item, isCurrent) {
    const { t, lang } = this.#options;
    const title = item.title || t('untitled');
    let date = '';
    try { date = new Date(item.updatedAt).toLocaleString(lang(), { dateStyle: 'medium', timeStyle: 'short' }); } catch { /* keep empty */ }
    const li = h('li', { 'aria-current': isCurrent ? 'true' : undefined, 'data-id': item.id },
      h('button', { type: 'button', className: 'open', onclick: () => this.#options.onOpen(item.id) },
        h('span', { className: 't' }, title), h('span', { className: 'd' }, date)),
      iconButton('edit', `${t('rename')}: ${title}`, { onclick: () => this.#startRename(li, item) }),
      iconButton('trash', `${t('delete')}: ${title}`, { className: 'icon danger', onclick: () => this.#startDelete(li, item) }));
    return li;
  }

  /**
   * @param {HTMLLIElement} li
   * @param {ConversationSummary} item
   */
  #startRename(li, item) {
    const { t } = this.#options;
    const input = h('input', { value: item.title, 'aria-label': t('renamePrompt'), maxLength: 500 });
    const message = h('span', { role: 'status' });
    const save = h('button', { type: 'submit', className: 'primary' }, t('save'));
    const form = h('form', { className: 'rename' }, input, message,
      h('div', { className: 'actions' }, h('button', { type: 'button', onclick: () => this.#renderList(item.id) }, t('cancel')), save));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      save.disabled = true;
      try {
        const info = await this.#controller().renameConversation(item.id, input.value.trim());
        item.title = info?.title ?? input.value.trim();
        this.#renderList(item.id);
      } catch (error) {
        save.disabled = false;
        message.textContent = t('renameFailed', codeOf(error));
      }
    });
    li.replaceChildren(form);
    input.focus();
    input.select();
  }

  /**
   * @param {HTMLLIElement} li
   * @param {ConversationSummary} item
   */
  #startDelete(li, item) {
    const { t } = this.#options;
    const title = item.title || t('untitled');
    const message = h('span', { role: 'status' }, t('deleteConfirm', title));
    const cancel = h('button', { type: 'button', onclick: () => this.#renderList(item.id) }, t('cancel'));
    const confirm = h('button', { type: 'button', className: 'danger', part: 'delete-confirm-button' }, t('deleteConfirmAction'));
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      cancel.disabled = true;
      message.textContent = t('deleting');
      try {
        await this.#options.beforeDelete(item.id);
        await this.#controller().deleteConversation(item.id);
      } catch (error) {
        // Not deleted, or unknown: the row stays, with the reason. Never shown as deleted without the receipt.
        message.textContent = t('deleteFailed', codeOf(error));
        cancel.disabled = false;
        cancel.textContent = t('dismiss');
        return;
      }
      this.#items = this.#items.filter((i) => i.id !== item.id);
      this.#options.onDeleted(item.id);
      this.#renderList(null);
      if (!this.#items.length) this.#statusLine.textContent = t('historyEmpty');
    });
    li.replaceChildren(h('div', { className: 'confirm-delete', role: 'alertdialog', 'aria-label': t('delete') }, message, h('div', { className: 'actions' }, cancel, confirm)));
    cancel.focus();
  }
}
