// Custom tool views (generative UI): the page's renderers per tool name, with `'*'` as the fallback. A renderer
// returns a DOM Node that the element shows through a named slot from its light DOM, so the page's own styles
// apply; one that throws (or returns something else) leaves the generic view and is reported by the caller.

/**
 * The renderer for `name` and `kind` (`card` or `confirmation`): the tool's own entry, else the `'*'` entry. An
 * entry is a function (a card renderer) or `{ card?, confirmation? }`.
 * @param {Record<string, any> | null} views
 * @param {string} name
 * @param {'card' | 'confirmation'} kind
 * @returns {((props: any) => Node) | null}
 */
export function pickView(views, name, kind) {
  if (!views) return null;
  const pick = (/** @type {any} */ entry) => (typeof entry === 'function' ? (kind === 'card' ? entry : null) : entry?.[kind] ?? null);
  const own = Object.prototype.hasOwnProperty.call(views, name) ? pick(views[name]) : null;
  const view = own ?? pick(views['*']);
  return typeof view === 'function' ? view : null;
}

/**
 * Calls `render(props)` and returns its Node; throws when it throws or returns anything but a Node.
 * @param {(props: any) => unknown} render
 * @param {Record<string, unknown>} props
 * @returns {Node}
 */
export function drawView(render, props) {
  const node = render(props);
  if (!(node instanceof Node)) throw new TypeError('a tool view must return a DOM Node');
  return node;
}
