// The notice bar above the input: one message at a time — an error (its code, a readable text and the ways
// forward the element offers), the max-tokens notice (informative, not an error), "stopped", or a problem with
// the person's input. The element decides which actions an error gets; this file only shows them.
import { h } from './dom.js';

/** A readable text for an AgentError: the limit's name, a timeout, a conflict; else the error's own message. */
export function errorText(error, t) {
  const code = error?.code ?? 'ERROR';
  if (code === 'AGENT_LIMIT_EXCEEDED' && error.limit) return t('limitExceeded', error.limit);
  if (code === 'AGENT_EXECUTION_TIMEOUT') return t('timeout');
  if (code === 'AGENT_REVISION_CONFLICT') return t('conflict');
  if (code === 'AGENT_SPENDING_LIMIT_REACHED') return t('spendingLimit', error.details?.retryAfterSeconds);
  if (error?.details?.relayCode === 'UPSTREAM_UNAVAILABLE' && !error.message) return t('relayUnavailable');
  return error?.message || code;
}

export class NoticeBar {
  /**
   * @param {HTMLElement} el
   * @param {() => Function} translator  the current string lookup
   */
  constructor(el, translator) {
    this.el = el;
    this.translator = translator;
    /** The error object shown last (the same error is not re-rendered on every state snapshot). */
    this.shownError = null;
  }

  /** `kind`: the reason shown (`problem`, `max-tokens`, `cancelled`), or '' when hidden. */
  get kind() { return this.el.hidden ? '' : (this.el.dataset.kind ?? ''); }

  /**
   * @param {any} error an AgentError (or `{ code, message }`)
   * @param {{ label: string, onClick: () => void, primary?: boolean, part?: string }[]} actions
   */
  showError(error, actions) {
    const t = this.translator();
    this.shownError = error;
    const buttons = actions.map((a) => h('button', { type: 'button', className: a.primary ? 'primary' : '', part: a.part, onclick: a.onClick }, a.label));
    buttons.push(h('button', { type: 'button', onclick: () => this.hide() }, t('dismiss')));
    this.render('error', 'error', [h('code', {}, error?.code ?? 'ERROR'), ' ', errorText(error, t)], buttons);
  }

  /** `style`: `info` (amber), `plain`; `reason` names it for `::part()` and for not repeating it. */
  show(style, text, reason = 'problem') {
    if (this.kind === reason) return;
    this.render(style, reason, [text], [h('button', { type: 'button', onclick: () => this.hide() }, this.translator()('dismiss'))]);
  }

  hide() {
    this.el.hidden = true;
    this.el.dataset.kind = '';
  }

  render(style, reason, text, buttons) {
    this.el.className = `notice ${style}`;
    this.el.setAttribute('part', `notice ${reason}`);
    this.el.dataset.kind = reason;
    this.el.replaceChildren(h('span', { className: 'text' }, ...text), ...buttons);
    this.el.hidden = false;
  }
}
