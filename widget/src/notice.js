// The notice bar above the input: one message at a time — an error (plain words first, its code small below
// them, and the ways forward the element offers), the max-tokens notice (informative, not an error), "stopped",
// or a problem with the person's input. The words for an error and the ways forward it gets are decided in
// model.js; this file only shows them: the words and a close button on one row, the ways forward in one row below.
import { h, iconButton } from './dom.js';
import { errorText } from './model.js';

/** @typedef {{ label: string, onClick: () => void, primary?: boolean, part?: string }} NoticeAction */

export class NoticeBar {
  #el; #translator;

  /**
   * @param {HTMLElement} el
   * @param {() => import('./model.js').Translate} translator  the current string lookup
   */
  constructor(el, translator) {
    this.#el = el;
    this.#translator = translator;
    /** The error object shown last (the same error is not re-rendered on every state snapshot). @type {unknown} */
    this.shownError = null;
  }

  /** `kind`: the reason shown (`error`, `problem`, `max-tokens`, `cancelled`, `auth`), or '' when hidden. */
  get kind() { return this.#el.hidden ? '' : (this.#el.dataset.kind ?? ''); }

  /**
   * @param {any} error an AgentError
   * @param {NoticeAction[]} actions
   */
  showError(error, actions) {
    const t = this.#translator();
    this.shownError = error;
    const buttons = actions.map((a) => h('button', { type: 'button', className: a.primary ? 'primary' : '', part: a.part, onclick: a.onClick }, a.label));
    this.#render('error', 'error', [errorText(error, t), h('code', { className: 'code', part: 'error-code' }, error?.code ?? 'ERROR')], buttons);
  }

  /**
   * `style`: `info` (amber), `plain`; `reason` names it for `::part()` and for not repeating it.
   * @param {'info' | 'plain'} style
   * @param {string} text
   * @param {string} [reason]
   * @param {NoticeAction[]} [actions]
   */
  show(style, text, reason = 'problem', actions = []) {
    // A notice that follows the state (max-tokens, cancelled…) is not re-rendered on every snapshot; a problem with
    // the person's input (a refused file) is news each time.
    if (this.kind === reason && reason !== 'problem' && !actions.length) return;
    const buttons = actions.map((a) => h('button', { type: 'button', className: a.primary ? 'primary' : '', part: a.part, onclick: a.onClick }, a.label));
    this.#render(style, reason, [text], buttons);
  }

  hide() {
    this.#el.hidden = true;
    this.#el.dataset.kind = '';
  }

  /**
   * @param {string} style
   * @param {string} reason
   * @param {(string | Node)[]} text
   * @param {HTMLElement[]} buttons
   */
  #render(style, reason, text, buttons) {
    const t = this.#translator();
    this.#el.className = `notice ${style}`;
    this.#el.setAttribute('part', `notice ${reason}`);
    this.#el.dataset.kind = reason;
    const close = iconButton('close', t('dismiss'), { className: 'icon close', part: 'dismiss-button', onclick: () => this.hide() });
    this.#el.replaceChildren(h('span', { className: 'text' }, ...text), close);
    if (buttons.length) this.#el.append(h('div', { className: 'ways' }, ...buttons));
    this.#el.hidden = false;
  }
}
