// MathML for formulas in answers: a separate chunk (npm/widget-math.js, and dist/patchbridge-math.js beside the
// static script) that the element imports only when an answer has a formula (math.js finds them), so it never adds
// to the first load. The converter is Temml (MIT): TeX to MathML, built as DOM nodes (createElementNS, styles
// through the CSSOM) — no HTML string is parsed and no web font or stylesheet is loaded, so it works under the
// strict CSP and inside the shadow root; the browser draws MathML with its own math fonts. `\href` and the other
// commands that need trust stay off, so a model's formula cannot become a link.
import temml from 'temml';

/**
 * Replaces the source text in `el` with the MathML of `tex` (the TeX kept as the MathML's annotation); a formula
 * Temml cannot read stays as its source, marked `data-math-error`. Returns whether it rendered.
 * @param {HTMLElement} el
 * @param {string} tex
 * @param {boolean} display
 */
export function renderMath(el, tex, display) {
  const holder = el.ownerDocument.createElement('span');
  try {
    temml.render(tex, holder, { displayMode: display, annotate: true, throwOnError: true, trust: false });
  } catch (error) {
    el.dataset.mathError = String(/** @type {any} */ (error)?.message ?? error).slice(0, 200);
    return false;
  }
  el.replaceChildren(...holder.childNodes);
  el.dataset.rendered = 'mathml';
  return true;
}
