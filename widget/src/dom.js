// Tiny DOM helpers shared by the widget's parts: element creation with properties and children, and the
// inline SVG icons (built with DOM APIs, so no markup strings are parsed anywhere in the widget).

/**
 * `h('button', { className: 'primary', onclick }, 'Send')`. Keys starting with `on` become listeners, `part`,
 * `aria-*`, `data-*` and `role` become attributes, everything else is assigned as a property.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>} [props]
 * @param {...(Node | string | null | undefined | false)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  const target = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (el));
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'part' || key === 'role' || key.startsWith('aria-') || key.startsWith('data-')) el.setAttribute(key, value === true ? '' : String(value));
    else target[key] = value;
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';
/** @type {Record<string, string[]>} */
const ICONS = {
  history: ['M3 12a9 9 0 1 0 3-6.7', 'M3 4v5h5', 'M12 7v5l3 3'],
  plus: ['M12 5v14', 'M5 12h14'],
  send: ['M22 2 11 13', 'M22 2l-7 20-4-9-9-4z'],
  stop: ['M6 6h12v12H6z'],
  image: ['M3 5h18v14H3z', 'M3 16l5-5 4 4 3-3 6 6', 'M15.5 8.5h.01'],
  attach: ['M21 11l-8.5 8.5a5 5 0 0 1-7-7L14 4a3.5 3.5 0 0 1 5 5l-8.5 8.5a2 2 0 0 1-3-3L15 7'],
  file: ['M6 2h8l5 5v15H6z', 'M14 2v5h5'],
  close: ['M6 6l12 12', 'M18 6 6 18'],
  edit: ['M4 20h4L19 9l-4-4L4 16z'],
  trash: ['M4 7h16', 'M10 11v6', 'M14 11v6', 'M6 7l1 13h10l1-13', 'M9 7V4h6v3'],
  copy: ['M9 9h11v11H9z', 'M5 15H4V4h11v1'],
  up: ['M7 10v10H4V10z', 'M7 10l4-7c2 0 3 1 3 3l-1 4h6l-2 10H7'],
  down: ['M7 14V4H4v10z', 'M7 14l4 7c2 0 3-1 3-3l-1-4h6L17 4H7'],
  redo: ['M20 12a8 8 0 1 1-2.3-5.7', 'M20 4v5h-5'],
};

/** An inline icon, hidden from assistive technology (buttons carry their own label). @param {string} name */
export function icon(name) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  for (const d of ICONS[name] ?? []) {
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', d);
    svg.append(path);
  }
  return svg;
}

/**
 * A button with an icon and an accessible name (visible text too unless `iconOnly`).
 * @param {string} name
 * @param {string} label
 * @param {Record<string, any>} [props]
 */
export function iconButton(name, label, props = {}, iconOnly = true) {
  const button = h('button', { type: 'button', title: label, 'aria-label': iconOnly ? label : undefined, ...props }, icon(name));
  // The visible label is its own element, so a narrow layout can hide it visually and keep it as the name.
  if (!iconOnly) button.append(h('span', { className: 'label' }, label));
  if (iconOnly) button.classList.add('icon');
  return button;
}
