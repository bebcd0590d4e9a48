// The notice bar above the input: one message at a time — an error (plain words first, its code small below
// them, and the ways forward the element offers), the max-tokens notice (informative, not an error), "stopped",
// or a problem with the person's input. The element decides which actions an error gets; this file only shows
// them: the words and a close button on one row, the ways forward in one row below.
import { h, iconButton } from './dom.js';

/** Whether `error` is a relay request that never got an answer (offline, relay down, blocked by the network). */
export function isUnreachable(error) {
  return error?.code === 'AGENT_RELAY_ERROR' && error.details?.status == null && !error.details?.relayCode;
}

/** Whether `error` is the relay refusing the page's credentials (HTTP 401). */
export function isUnauthenticated(error) {
  return error?.code === 'AGENT_RELAY_ERROR' && (error.details?.status === 401 || error.details?.relayCode === 'UNAUTHENTICATED');
}

/** Plain words for an AgentError: the limit's name, a timeout, a conflict, no connection, signed out; else the
 *  error's own message. Exception text (`TypeError: Failed to fetch`) is never shown as the words. */
export function errorText(error, t) {
  const code = error?.code ?? 'ERROR';
  if (code === 'AGENT_LIMIT_EXCEEDED' && error.limit) return t('limitExceeded', error.limit);
  if (code === 'AGENT_EXECUTION_TIMEOUT') return t('timeout');
  if (code === 'AGENT_REVISION_CONFLICT') return t('conflict');
  if (code === 'AGENT_SPENDING_LIMIT_REACHED') return t('spendingLimit', error.details?.retryAfterSeconds);
  if (isUnreachable(error)) return t('relayUnavailable');
  if (isUnauthenticated(error)) return t('signedOut');
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

  /** `kind`: the reason shown (`error`, `problem`, `max-tokens`, `cancelled`, `auth`), or '' when hidden. */
  get kind() { return this.el.hidden ? '' : (this.el.dataset.kind ?? ''); }

  /**
   * @param {any} error an AgentError (or `{ code, message }`)
   * @param {{ label: string, onClick: () => void, primary?: boolean, part?: string }[]} actions
   */
  showError(error, actions) {
    const t = this.translator();
    this.shownError = error;
    const buttons = actions.map((a) => h('button', { type: 'button', className: a.primary ? 'primary' : '', part: a.part, onclick: a.onClick }, a.label));
    this.render('error', 'error', [errorText(error, t), h('code', { className: 'code', part: 'error-code' }, error?.code ?? 'ERROR')], buttons);
  }

  /** `style`: `info` (amber), `plain`; `reason` names it for `::part()` and for not repeating it. */
  show(style, text, reason = 'problem', actions = []) {
    if (this.kind === reason && !actions.length) return;
    const buttons = actions.map((a) => h('button', { type: 'button', className: a.primary ? 'primary' : '', part: a.part, onclick: a.onClick }, a.label));
    this.render(style, reason, [text], buttons);
  }

  hide() {
    this.el.hidden = true;
    this.el.dataset.kind = '';
  }

  render(style, reason, text, buttons) {
    const t = this.translator();
    this.el.className = `notice ${style}`;
    this.el.setAttribute('part', `notice ${reason}`);
    this.el.dataset.kind = reason;
    const close = iconButton('close', t('dismiss'), { className: 'icon close', part: 'dismiss-button', onclick: () => this.hide() });
    this.el.replaceChildren(h('span', { className: 'text' }, ...text), close);
    if (buttons.length) this.el.append(h('div', { className: 'ways' }, ...buttons));
    this.el.hidden = false;
  }
}
