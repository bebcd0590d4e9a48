// The card for a running tool's question to the person (`state.pendingElicitation`, an MCP server's
// elicitation): in form mode a small accessible form built from MCP's restricted schema (flat fields: text,
// email / URL / date inputs, numbers, a checkbox, a choice, several choices), in URL mode the link to open and
// the answers. Send (accept with the values), Decline and Cancel answer through `controller.answerElicitation`.
// Focus moves to the card when it appears; it goes once answered or consumed (a stop, the deadline). Built as
// its own chunk (widget/build.mjs), imported by the element the first time a question appears.
import { h } from './dom.js';

/** @typedef {import('../../npm/index.js').Elicitation} Elicitation */
/** @typedef {import('../../npm/index.js').ElicitationAnswer} Answer */

const INPUT_TYPES = /** @type {Record<string, string>} */ ({ email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' });

/**
 * The choices of an enum field: `[value, label]`.
 * @param {any} schema
 * @returns {[string, string][] | null}
 */
function choicesOf(schema) {
  if (Array.isArray(schema?.enum)) return schema.enum.map((/** @type {unknown} */ v, /** @type {number} */ i) => [String(v), String(schema.enumNames?.[i] ?? v)]);
  const options = schema?.oneOf ?? schema?.anyOf;
  if (Array.isArray(options)) return options.map((/** @type {any} */ o) => [String(o.const), String(o.title ?? o.const)]);
  return null;
}

/**
 * One field: its control and a reader of its value (`undefined` when left empty).
 * @param {string} name
 * @param {any} schema
 * @param {boolean} required
 * @param {string} id
 * @returns {{ el: HTMLElement, read: () => unknown }}
 */
function field(name, schema, required, id) {
  const label = String(schema?.title ?? name);
  const hint = typeof schema?.description === 'string' ? h('small', { id: `${id}-hint` }, schema.description) : null;
  const described = hint ? `${id}-hint` : undefined;
  if (schema?.type === 'boolean') {
    const box = h('input', { type: 'checkbox', id, checked: schema.default === true, 'aria-describedby': described });
    return { el: h('div', { className: 'field check' }, box, h('label', { htmlFor: id }, label), hint), read: () => /** @type {HTMLInputElement} */ (box).checked };
  }
  if (schema?.type === 'array') {
    const choices = choicesOf(schema.items) ?? [];
    const boxes = choices.map(([value, text], i) => {
      const box = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', id: `${id}-${i}`, value, checked: Array.isArray(schema.default) && schema.default.includes(value) }));
      return { box, el: h('div', { className: 'check' }, box, h('label', { htmlFor: `${id}-${i}` }, text)) };
    });
    const set = h('fieldset', { className: 'field', 'aria-describedby': described }, h('legend', {}, label), ...boxes.map((b) => b.el), hint);
    return { el: set, read: () => boxes.filter((b) => b.box.checked).map((b) => b.box.value) };
  }
  const choices = choicesOf(schema);
  /** @type {HTMLInputElement | HTMLSelectElement} */
  let control;
  if (choices) {
    control = /** @type {HTMLSelectElement} */ (h('select', { id, required, 'aria-describedby': described },
      ...(required ? [] : [h('option', { value: '' }, '')]),
      ...choices.map(([value, text]) => h('option', { value, selected: schema.default === value }, text))));
  } else {
    const numeric = schema?.type === 'number' || schema?.type === 'integer';
    control = /** @type {HTMLInputElement} */ (h('input', {
      id, required, 'aria-describedby': described,
      type: numeric ? 'number' : (INPUT_TYPES[schema?.format] ?? 'text'),
      step: schema?.type === 'integer' ? '1' : numeric ? 'any' : undefined,
      min: numeric && schema.minimum !== undefined ? String(schema.minimum) : undefined,
      max: numeric && schema.maximum !== undefined ? String(schema.maximum) : undefined,
      minLength: typeof schema?.minLength === 'number' ? schema.minLength : undefined,
      maxLength: typeof schema?.maxLength === 'number' ? schema.maxLength : undefined,
      value: schema?.default !== undefined ? String(schema.default) : '',
    }));
  }
  const numeric = schema?.type === 'number' || schema?.type === 'integer';
  return {
    el: h('div', { className: 'field' }, h('label', { htmlFor: id }, label, required ? ' *' : ''), control, hint),
    read: () => (control.value === '' ? undefined : numeric ? Number(control.value) : control.value),
  };
}

/**
 * @param {Readonly<Elicitation>} pending
 * @param {{ t: import('./model.js').Translate, onAnswer: (answer: Answer) => void }} options
 */
export function elicitationCard(pending, { t, onAnswer }) {
  const base = `pb-elicit-${pending.interruptId.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  const decline = h('button', { type: 'button', className: 'danger', part: 'elicitation-decline', onclick: () => onAnswer({ action: 'decline' }) }, t('elicitDecline'));
  const cancel = h('button', { type: 'button', part: 'elicitation-cancel', onclick: () => onAnswer({ action: 'cancel' }) }, t('elicitCancel'));
  const heading = h('h3', { id: `${base}-title` }, pending.source ? t('elicitTitleFrom', pending.source) : t('elicitTitle'));
  const message = h('p', {}, pending.message);
  if (pending.mode === 'url') {
    const safe = /^https?:\/\//i.test(pending.url ?? '');
    const link = safe ? h('a', { href: pending.url, target: '_blank', rel: 'noopener noreferrer', part: 'elicitation-link' }, pending.url) : h('code', {}, String(pending.url));
    const done = h('button', { type: 'button', className: 'primary', part: 'elicitation-accept', onclick: () => onAnswer({ action: 'accept' }) }, t('elicitDone'));
    return h('section', { className: 'confirm elicit', part: 'elicitation', role: 'group', 'aria-labelledby': `${base}-title`, tabIndex: -1, 'data-interrupt-id': pending.interruptId },
      heading, message, h('p', {}, link), h('div', { className: 'actions' }, cancel, decline, done));
  }
  const schema = /** @type {any} */ (pending.requestedSchema ?? {});
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, property], i) => ({ name, ...field(name, property, required.has(name), `${base}-f${i}`) }));
  const send = h('button', { type: 'submit', className: 'primary', part: 'elicitation-accept' }, t('elicitSend'));
  const form = /** @type {HTMLFormElement} */ (h('form', {
    className: 'confirm elicit', part: 'elicitation', 'aria-labelledby': `${base}-title`, tabIndex: -1, 'data-interrupt-id': pending.interruptId,
    onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault();
      if (!form.reportValidity()) return;
      /** @type {Record<string, string | number | boolean | string[]>} */
      const content = {};
      for (const f of fields) {
        const value = /** @type {string | number | boolean | string[] | undefined} */ (f.read());
        if (value !== undefined) content[f.name] = value;
      }
      onAnswer({ action: 'accept', content });
    },
  }, heading, message, ...fields.map((f) => f.el), h('div', { className: 'actions' }, cancel, decline, send)));
  return form;
}

/** The dock's question card: the pending elicitation's (kept while it is the same one), or none. */
export class ElicitationDock {
  #onAnswer;
  /** @type {HTMLElement} */
  el;

  /**
   * @param {HTMLElement} slot where the card goes
   * @param {(answer: Answer) => void} onAnswer
   */
  constructor(slot, onAnswer) {
    this.el = slot;
    this.#onAnswer = onAnswer;
  }

  /**
   * @param {Readonly<Elicitation> | null | undefined} pending
   * @param {import('./model.js').Translate} t
   */
  render(pending, t) {
    const shown = /** @type {HTMLElement | null} */ (this.el.firstElementChild);
    if (!pending) { if (shown) this.el.replaceChildren(); return; }
    if (shown?.dataset.interruptId === pending.interruptId) return;
    const card = elicitationCard(pending, { t, onAnswer: this.#onAnswer });
    this.el.replaceChildren(card);
    card.focus();
  }
}
