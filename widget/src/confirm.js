// The confirmation card for a tool waiting for the person's approval: the tool's name, its arguments as readable
// label/value pairs (raw JSON folded away), its description, Approve and Reject. Focus moves to the card
// when it appears so keyboard and screen-reader users meet it at once; it disappears once answered or cancelled.
// A page's own view of the arguments (`toolViews[name].confirmation`) is placed in the element's light DOM and
// shown through a slot, so the page's styles apply.
import { h } from './dom.js';
import { drawView, pickView } from './views.js';

/** @typedef {import('../../npm/index.js').Interrupt} Interrupt */

const CONFIRM_SLOT = 'pb-confirm-view';

/** @param {unknown} value */
function valueText(value) {
  if (typeof value === 'string') return value;
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

/**
 * @param {{ interruptId: string, tool: string, arguments: Readonly<Record<string, unknown>> }} pending
 * @param {{ t: import('./model.js').Translate, description?: string, onApprove: () => void, onReject: () => void, slot?: string }} options
 *   `slot`: the name of a slot holding the page's own view of the arguments (light DOM), shown instead of the facts
 */
export function confirmationCard(pending, { t, description, onApprove, onReject, slot }) {
  const entries = Object.entries(pending.arguments ?? {});
  const titleId = `pb-confirm-${pending.interruptId.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  const facts = slot ? h('slot', { name: slot }) : entries.length
    ? h('dl', {}, ...entries.flatMap(([key, value]) => [h('dt', {}, key), h('dd', {}, valueText(value))]))
    : h('p', {}, t('confirmNoArguments'));
  const approve = h('button', { type: 'button', className: 'primary', part: 'approve-button', onclick: onApprove }, t('approve'));
  const reject = h('button', { type: 'button', className: 'danger', part: 'reject-button', onclick: onReject }, t('reject'));
  const card = h('section', { className: 'confirm', part: 'confirmation', role: 'group', 'aria-labelledby': titleId, tabIndex: -1, 'data-interrupt-id': pending.interruptId },
    h('h3', { id: titleId }, t('confirmTitle', pending.tool)),
    // The body scrolls when the card is taller than the room left; the title and the actions stay on screen.
    // What is asked (the arguments, or the page's view of them) comes first, where a short screen still shows it.
    h('div', { className: 'body', part: 'confirmation-body' },
      facts,
      h('p', {}, description ? `${t('confirmBody')} ${description}` : t('confirmBody')),
      h('details', {}, h('summary', {}, t('confirmRaw')), h('pre', {}, valueText(pending.arguments ?? {})))),
    h('div', { className: 'actions' }, reject, approve));
  return card;
}

/** The dock's confirmation: the card of the pending interrupt (kept while it is the same one), or none. */
export class ConfirmationDock {
  #options;
  /** @type {HTMLElement | null} the light-DOM holder of a page's confirmation view */
  #pageView = null;

  /**
   * @param {{ slot: HTMLElement, host: HTMLElement, views: () => Record<string, any> | null,
   *           onViewError: (tool: string, view: 'confirmation', error: unknown) => void,
   *           onAnswer: (approve: boolean) => void, onGone: () => void }} options
   *   `onGone`: the card went while focus was in it (focus belongs somewhere else now)
   */
  constructor(options) {
    this.#options = options;
  }

  /**
   * @param {Readonly<Interrupt> | null} pending
   * @param {() => string | undefined} describe the tool's description (asked only for a new card)
   * @param {import('./model.js').Translate} t
   */
  render(pending, describe, t) {
    const { slot } = this.#options;
    const shown = /** @type {HTMLElement | null} */ (slot.firstElementChild);
    if (!pending) {
      if (!shown) return;
      const active = /** @type {ShadowRoot} */ (slot.getRootNode()).activeElement;
      this.clear();
      if (active && shown.contains(active)) this.#options.onGone();
      return;
    }
    if (shown?.dataset.interruptId === pending.interruptId) return;
    const description = describe();
    const card = confirmationCard(pending, {
      t, description, slot: this.#pageViewOf(pending, description),
      onApprove: () => this.#options.onAnswer(true), onReject: () => this.#options.onAnswer(false),
    });
    slot.replaceChildren(card);
    card.focus();
  }

  clear() {
    this.#options.slot.replaceChildren();
    this.#pageView?.remove();
    this.#pageView = null;
  }

  /**
   * The page's view of a pending confirmation, placed in the light DOM; the slot name, or undefined.
   * @param {Readonly<Interrupt>} pending
   * @param {string | undefined} description
   */
  #pageViewOf(pending, description) {
    this.#pageView?.remove();
    this.#pageView = null;
    const render = pickView(this.#options.views(), pending.tool, 'confirmation');
    if (!render) return undefined;
    try {
      const node = drawView(render, { name: pending.tool, callId: pending.callId, arguments: pending.arguments, description });
      this.#pageView = h('div', { slot: CONFIRM_SLOT }, node);
      this.#options.host.append(this.#pageView);
      return CONFIRM_SLOT;
    } catch (error) {
      this.#options.onViewError(pending.tool, 'confirmation', error);
      return undefined;
    }
  }
}
