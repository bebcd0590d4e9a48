// Math delimiters in streamed Markdown: finds `$…$`, `$$…$$`, `\(…\)` and `\[…\]` in the answer's source before
// the Markdown parser sees it, and hands the parser the text with each formula replaced by a placeholder (a
// private-use character pair around its index), which the renderer turns into a math element (markdown.js). Code
// spans and fenced code are left exactly as written, and so is a `$` that does not open a formula: it is escaped
// (`\$`) for the parser, which shows it as written, so the parser's own equation rule never sees it either.
//
// A `$…$` formula follows Pandoc's rule, which keeps prices prose: the opening `$` is followed by a non-space, the
// closing `$` is preceded by a non-space and not followed by a digit, and both sit in one paragraph; so "$5 and
// $10" and "costs $3.50 or $4" stay text. `\$` is a literal dollar. A formula must close within its paragraph (a
// blank line ends the search); until its closing delimiter arrives the text from its opening delimiter on is held
// back (a streaming answer shows it once it is complete), and at the end of the answer an unclosed one is text.
// DOM-free (tests/node/widget-math.test.mjs).

/** Placeholder marks around a formula's index in the parser's text. */
export const MATH_OPEN = '\uE000';
export const MATH_CLOSE = '\uE001';
/** A placeholder in a text node (markdown.js). */
export const PLACEHOLDER = /\uE000(\d+)\uE001/g;

/** @typedef {{ tex: string, display: boolean, source: string }} Formula */

const isSpace = (/** @type {string | undefined} */ c) => c === undefined || c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (/** @type {string | undefined} */ c) => c !== undefined && c >= '0' && c <= '9';

/**
 * The end (exclusive) of the paragraph search from `from`: the first blank line, or the text's end.
 * @param {string} text
 * @param {number} from
 */
function paragraphEnd(text, from) {
  const blank = /\n[ \t]*\n/g;
  blank.lastIndex = from;
  const m = blank.exec(text);
  return m ? m.index : text.length;
}

/**
 * Where a formula opened at `from` must close by: the paragraph's end, or a backtick before it (a formula holds
 * no code span; a `$` inside one never closes a formula opened before it).
 * @param {string} text
 * @param {number} from
 */
function formulaEnd(text, from) {
  const end = paragraphEnd(text, from);
  const tick = text.indexOf('`', from);
  return tick >= 0 && tick < end ? tick : end;
}

/**
 * Splits a growing Markdown text into what the parser may be given so far. Feed it the whole text each time
 * (`push`); it returns only the new part of the parser's text. Its `formulas` fill as they are found.
 */
export class MathSplitter {
  /** @type {Formula[]} */
  formulas = [];
  /** Source position up to which the text has been handed on. */
  #pos = 0;
  /** Inside a fenced code block: its fence (e.g. "```"), else null. */
  /** @type {string | null} */
  #fence = null;
  /** At the start of a line (a fence can open or close here). */
  #lineStart = true;

  /**
   * @param {string} text the whole source so far (it only grows)
   * @param {boolean} [final] the text is complete: nothing is held back any more
   * @returns {string} the parser's text for the source handed on by this call
   */
  push(text, final = false) {
    let out = '';
    let i = this.#pos;
    let copied = i; // source from `copied` to `i` is copied verbatim on the next flush
    const flush = (/** @type {number} */ to) => { out += text.slice(copied, to); copied = to; };
    while (i < text.length) {
      const c = text[i];
      if (this.#lineStart) {
        // A fence line opens or closes fenced code; the line is taken whole once it has ended.
        const eol = text.indexOf('\n', i);
        const line = eol < 0 ? text.slice(i) : text.slice(i, eol);
        const fence = /^ {0,3}(`{3,}|~{3,})/.exec(line);
        if (this.#fence !== null || fence) {
          if (eol < 0 && !final) break;
          if (this.#fence === null) this.#fence = /** @type {RegExpExecArray} */ (fence)[1];
          else if (fence && fence[1][0] === this.#fence[0] && fence[1].length >= this.#fence.length && line.trim() === fence[1]) this.#fence = null;
          i = eol < 0 ? text.length : eol + 1;
          this.#lineStart = true;
          continue;
        }
        this.#lineStart = false;
      }
      if (c === '\n') { i += 1; this.#lineStart = true; continue; }
      if (c === '`') {
        // A code span: its backtick run up to the same run; held back until it closes within the paragraph.
        let run = 1;
        while (text[i + run] === '`') run += 1;
        const ticks = '`'.repeat(run);
        const end = paragraphEnd(text, i);
        let close = -1;
        for (let at = text.indexOf(ticks, i + run); at >= 0 && at + run <= end; at = text.indexOf(ticks, at + 1)) {
          if (text[at + run] !== '`' && text[at - 1] !== '`') { close = at; break; }
        }
        if (close < 0 && end === text.length && !final) break;
        i = close < 0 ? i + run : close + run;
        continue;
      }
      if (c === '\\') {
        const next = text[i + 1];
        if (next === undefined && !final) break;
        if (next === '(' || next === '[') {
          const found = this.#closing(text, i + 2, next === '(' ? '\\)' : '\\]', final);
          if (found === 'wait') break;
          if (found !== null) {
            flush(i);
            out += this.#formula(text.slice(i + 2, found).trim(), next === '[', text.slice(i, found + 2));
            i = found + 2;
            copied = i;
            continue;
          }
        }
        if (next === '(' || next === '[') {
          // `\(` or `\[` that never closes: the bracket itself, as a Markdown escape shows it (the parser would
          // take `\(` for its own equation).
          flush(i);
          out += next;
          i += 2;
          copied = i;
          continue;
        }
        // Any other escape (`\$`, `\\`…): both characters stay as they are, for the parser.
        i += next === undefined ? 1 : 2;
        continue;
      }
      if (c === '$') {
        const display = text[i + 1] === '$';
        if (!display && text[i + 1] === undefined && !final) break;
        const found = display ? this.#closing(text, i + 2, '$$', final) : this.#closingDollar(text, i, final);
        if (found === 'wait') break;
        if (found !== null) {
          const width = display ? 2 : 1;
          flush(i);
          out += this.#formula(text.slice(i + width, found).trim(), display, text.slice(i, found + width));
          i = found + width;
          copied = i;
          continue;
        }
        // Not a formula: a literal dollar for the parser (whose own `$` rule would take more than Pandoc's).
        flush(i);
        out += display ? '\\$\\$' : '\\$';
        i += display ? 2 : 1;
        copied = i;
        continue;
      }
      i += 1;
    }
    flush(i);
    this.#pos = i;
    return out;
  }

  /**
   * @param {string} tex
   * @param {boolean} display
   * @param {string} source
   */
  #formula(tex, display, source) {
    this.formulas.push({ tex, display, source });
    return `${MATH_OPEN}${this.formulas.length - 1}${MATH_CLOSE}`;
  }

  /**
   * Where `close` first appears after `from` in the same paragraph: its index, null when it does not (or the
   * formula would be empty), 'wait' when it may still arrive.
   * @param {string} text
   * @param {number} from
   * @param {string} close
   * @param {boolean} final
   * @returns {number | null | 'wait'}
   */
  #closing(text, from, close, final) {
    const end = formulaEnd(text, from);
    const at = text.indexOf(close, from);
    if (at >= 0 && at + close.length <= end) return text.slice(from, at).trim() ? at : null;
    return end === text.length && !final ? 'wait' : null;
  }

  /**
   * The closing `$` of an inline formula opening at `open` (Pandoc's rule, see the top), as for `#closing`.
   * @param {string} text
   * @param {number} open
   * @param {boolean} final
   * @returns {number | null | 'wait'}
   */
  #closingDollar(text, open, final) {
    if (isSpace(text[open + 1])) return null;
    const end = formulaEnd(text, open);
    for (let at = text.indexOf('$', open + 1); at >= 0 && at < end; at = text.indexOf('$', at + 1)) {
      if (text[at - 1] === '\\') continue;
      if (isSpace(text[at - 1])) continue;
      if (at + 1 === text.length && !final) return 'wait';
      if (isDigit(text[at + 1])) continue;
      return at;
    }
    return end === text.length && !final ? 'wait' : null;
  }
}

/**
 * The formulas of a whole text and the parser's text (the Node tests' view of `MathSplitter`).
 * @param {string} text
 */
export function splitMath(text) {
  const splitter = new MathSplitter();
  const parsed = splitter.push(text, true);
  return { parsed, formulas: splitter.formulas };
}
