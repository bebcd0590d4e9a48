// Markdown for model output, rendered safely and incrementally.
//
// The parser is `streaming-markdown` (npm): it consumes text chunk by chunk and emits tokens, so a long answer
// costs O(new characters) per animation frame instead of re-parsing the whole text. Our renderer below builds
// the DOM with createElement / textContent only — never innerHTML — so raw HTML in model output stays text.
// Links are live only for http(s) and mailto (opened in a new tab with rel=noopener noreferrer); images load
// only from http(s) or inline raster data; everything else renders as plain text.
//
// A long answer's top-level blocks are grouped: the first CHUNK blocks sit directly under the root (a short answer's
// DOM is just its blocks), later ones in `<div class="chunk">` groups of about CHUNK. The browser then lays out a
// growing answer as a few dozen groups plus the open one, not thousands of blocks, and a finished group out of view
// is skipped altogether (`content-visibility: auto` in the stylesheet), so the cost of a frame and of the end of an
// answer stays flat as the answer grows. A group starts only before a block whose top margin is 0, so spacing is
// the same as without groups (a finished group contains its last block's bottom margin).
//
// Math (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`) is found in the source before the parser sees it (math.js): each formula
// reaches the parser as a placeholder, which becomes a `.math` element showing its source until the on-demand
// MathML renderer (math-render.js, loaded the first time an answer has a formula) replaces it.
import * as smd from 'streaming-markdown';
import { MATH_CLOSE, MATH_OPEN, MathSplitter, PLACEHOLDER } from './math.js';
import { loadMath } from './runtime.js';

/** @type {Record<number, keyof HTMLElementTagNameMap>} */
const TAGS = {
  [smd.BLOCKQUOTE]: 'blockquote', [smd.PARAGRAPH]: 'p', [smd.LINE_BREAK]: 'br', [smd.RULE]: 'hr',
  [smd.HEADING_1]: 'h1', [smd.HEADING_2]: 'h2', [smd.HEADING_3]: 'h3', [smd.HEADING_4]: 'h4',
  [smd.HEADING_5]: 'h5', [smd.HEADING_6]: 'h6', [smd.ITALIC_AST]: 'em', [smd.ITALIC_UND]: 'em',
  [smd.STRONG_AST]: 'strong', [smd.STRONG_UND]: 'strong', [smd.STRIKE]: 's', [smd.CODE_INLINE]: 'code',
  [smd.LINK]: 'a', [smd.RAW_URL]: 'a', [smd.IMAGE]: 'img', [smd.LIST_UNORDERED]: 'ul',
  [smd.LIST_ORDERED]: 'ol', [smd.LIST_ITEM]: 'li', [smd.TABLE]: 'table', [smd.TABLE_ROW]: 'tr',
  [smd.EQUATION_BLOCK]: 'code', [smd.EQUATION_INLINE]: 'code',
};

/** Top-level blocks per group (see above): small enough for a cheap frame, large enough for few groups. */
const CHUNK = 32;
/**
 * The top-level blocks a group may start with: those the stylesheet gives no top margin.
 * @type {Set<smd.Token>}
 */
const STARTS_CHUNK = new Set([
  smd.PARAGRAPH, smd.CODE_BLOCK, smd.CODE_FENCE, smd.LIST_UNORDERED, smd.LIST_ORDERED, smd.BLOCKQUOTE, smd.TABLE,
]);

const LINK_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
const IMAGE_DATA = /^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]+$/i;

/** The URL as an absolute http(s)/mailto link, or null when it must not become live. @param {string} value */
export function safeLinkUrl(value) {
  try {
    const url = new URL(value, globalThis.document?.baseURI);
    return LINK_PROTOCOLS.has(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

/** The URL as an image source (http(s) or inline PNG/JPEG/GIF/WebP data), or null. @param {string} value */
export function safeImageUrl(value) {
  if (IMAGE_DATA.test(value)) return value;
  const url = safeLinkUrl(value);
  return url && url.startsWith('http') ? url : null;
}

/**
 * The element of a formula: its source as text until the MathML renderer chunk has loaded and rendered it (a
 * formula it cannot read stays as its source). The TeX stays on the element (`data-tex`) and in the MathML's
 * annotation, for copying.
 * @param {import('./math.js').Formula} formula
 */
function mathElement(formula) {
  const el = document.createElement('span');
  el.className = formula.display ? 'math display' : 'math';
  el.dataset.tex = formula.tex;
  el.textContent = formula.source;
  loadMath().then((chunk) => chunk.renderMath(el, formula.tex, formula.display), () => { /* stays as source */ });
  return el;
}

/**
 * A renderer for streaming-markdown that builds safe DOM under `root`.
 * @param {HTMLElement} root
 * @param {(pre: HTMLElement) => void} decorateCode  called when a code block is complete (adds the copy button)
 * @param {import('./math.js').Formula[]} formulas  the formulas the placeholders in the text stand for
 * @returns {smd.Any_Renderer}
 */
function safeRenderer(root, decorateCode, formulas) {
  /** @type {HTMLElement[]} the open elements; the bottom one is where top-level blocks go (the root or a group) */
  const stack = [root];
  const top = () => stack[stack.length - 1];
  let blocks = 0; // top-level blocks in stack[0]
  /** Text held back while a placeholder is split between two calls of add_text. */
  let held = '';
  /** @param {string} text */
  const appendText = (text) => {
    const el = top();
    if (el instanceof HTMLImageElement) { el.alt += text.replace(PLACEHOLDER, (_m, n) => formulas[Number(n)]?.source ?? ''); return; }
    let last = 0;
    for (const m of text.matchAll(PLACEHOLDER)) {
      if (m.index > last) el.appendChild(document.createTextNode(text.slice(last, m.index)));
      const formula = formulas[Number(m[1])];
      if (formula) el.appendChild(mathElement(formula));
      last = m.index + m[0].length;
    }
    if (last < text.length) el.appendChild(document.createTextNode(text.slice(last)));
  };
  const flushHeld = () => { if (held) { const text = held; held = ''; appendText(text); } };
  return {
    data: null,
    add_token(_data, type) {
      flushHeld();
      if (type === smd.DOCUMENT) return;
      if (stack.length === 1) {
        if (blocks >= CHUNK && STARTS_CHUNK.has(type)) {
          stack[0] = root.appendChild(document.createElement('div'));
          stack[0].className = 'chunk';
          blocks = 0;
        }
        blocks += 1;
      }
      let parent = top();
      let el;
      if (type === smd.CODE_BLOCK || type === smd.CODE_FENCE) {
        parent = parent.appendChild(document.createElement('pre'));
        el = document.createElement('code');
      } else if (type === smd.CHECKBOX) {
        el = document.createElement('input');
        el.type = 'checkbox';
        el.disabled = true;
      } else if (type === smd.TABLE_ROW) {
        const section = parent.children.length === 0 ? 'thead' : 'tbody';
        parent = parent.querySelector(`:scope > ${section}`) ?? parent.appendChild(document.createElement(section));
        el = document.createElement('tr');
      } else if (type === smd.TABLE_CELL) {
        el = document.createElement(parent.parentElement?.tagName === 'THEAD' ? 'th' : 'td');
      } else {
        el = document.createElement(TAGS[type] ?? 'span');
      }
      stack.push(parent.appendChild(el));
    },
    end_token() {
      flushHeld();
      const el = stack.pop();
      if (el && el.tagName === 'CODE' && el.parentElement?.tagName === 'PRE') decorateCode(el.parentElement);
      // A link that got no allowed URL (none, or javascript:, data:, …) is shown as the text it was written as.
      if (el && el.tagName === 'A' && !el.hasAttribute('href')) {
        const span = document.createElement('span');
        span.append('[', ...el.childNodes, ']');
        el.replaceWith(span);
      }
      // Likewise an image without an allowed source: its alt text, not a broken-image icon.
      if (el instanceof HTMLImageElement && !el.hasAttribute('src')) el.replaceWith(`[${el.alt}]`);
    },
    add_text(_data, text) {
      let all = held + text;
      held = '';
      const open = all.lastIndexOf(MATH_OPEN);
      if (open >= 0 && all.indexOf(MATH_CLOSE, open) < 0) { held = all.slice(open); all = all.slice(0, open); }
      if (all) appendText(all);
    },
    set_attr(_data, type, value) {
      const el = top();
      if (type === smd.HREF && el instanceof HTMLAnchorElement) {
        const href = safeLinkUrl(value);
        if (href) {
          el.href = href;
          el.target = '_blank';
          el.rel = 'noopener noreferrer';
        }
      } else if (type === smd.SRC && el instanceof HTMLImageElement) {
        const src = safeImageUrl(value);
        if (src) {
          el.src = src;
          el.loading = 'lazy';
          el.referrerPolicy = 'no-referrer';
        }
      } else if (type === smd.LANG) {
        el.dataset.lang = value;
      } else if (type === smd.CHECKED && el instanceof HTMLInputElement) {
        el.checked = true;
      } else if (type === smd.START && el instanceof HTMLOListElement) {
        const start = Number.parseInt(value, 10);
        if (Number.isFinite(start)) el.start = start;
      }
    },
  };
}

/**
 * A Markdown view over `root` that grows with the text: `update(text)` appends what is new since the last
 * call (the text only ever grows while streaming), `end()` flushes the parser's pending tokens.
 */
export class MarkdownView {
  /**
   * @param {HTMLElement} root
   * @param {(pre: HTMLElement) => void} decorateCode
   */
  constructor(root, decorateCode) {
    this.root = root;
    this.math = new MathSplitter();
    this.parser = smd.parser(safeRenderer(root, decorateCode, this.math.formulas));
    this.written = 0;
    this.ended = false;
  }

  /** @param {string} text the whole text so far */
  update(text) {
    if (this.ended || text.length <= this.written) return;
    let end = text.length;
    // Never split a surrogate pair between two writes: hold a trailing high surrogate for the next frame.
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end -= 1;
    if (end <= this.written) return;
    const parsed = this.math.push(text.slice(0, end));
    if (parsed) smd.parser_write(this.parser, parsed);
    this.written = end;
  }

  /** @param {string} text the final text */
  end(text) {
    if (this.ended) return;
    const parsed = this.math.push(text, true);
    if (parsed) smd.parser_write(this.parser, parsed);
    this.written = text.length;
    smd.parser_end(this.parser);
    this.ended = true;
  }
}
