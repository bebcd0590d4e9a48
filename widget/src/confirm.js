// The confirmation card for a tool waiting for the person's approval: the tool's name and description, its
// arguments as readable label/value pairs (raw JSON folded away), Approve and Reject. Focus moves to the card
// when it appears so keyboard and screen-reader users meet it at once; it disappears once answered or cancelled.
import { h } from './dom.js';

function valueText(value) {
  if (typeof value === 'string') return value;
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

/**
 * @param {{ interruptId: string, tool: string, arguments: Record<string, unknown> }} pending
 * @param {{ t: Function, description?: string, onApprove: () => void, onReject: () => void, slot?: string }} options
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
    h('p', {}, description ? `${t('confirmBody')} ${description}` : t('confirmBody')),
    facts,
    h('details', {}, h('summary', {}, t('confirmRaw')), h('pre', {}, valueText(pending.arguments ?? {}))),
    h('div', { className: 'actions' }, reject, approve));
  return card;
}
