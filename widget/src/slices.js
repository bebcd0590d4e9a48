// Rendering a long stored text in slices. Opening a conversation (a reload, the history) renders its finished
// answers at once; a 100 KB answer would build its whole DOM in one task and block the page. A text over SLICE_FROM
// characters instead gets its first SLICE characters at once and the rest in later tasks, about SLICE_BUDGET ms of
// slices per task (`scheduler.yield()` where the browser has it, so the page's input goes first; else a timer),
// its message marked `aria-busy` until the last slice. The parser is the streaming one, so the DOM when done is the
// one a single write builds. Shorter texts (the common case) render at once. A slice whose bubble is no longer in
// the log (another conversation was opened, the message was replaced) is dropped, and `cancel` drops them all.

/** @typedef {import('./markdown.js').MarkdownView} MarkdownView */

const SLICE_FROM = 16_384;
const SLICE = 4_096;
const SLICE_BUDGET = 8;

/** Resolves in a later task: `scheduler.yield()` where the browser has it, else a timer. */
function nextTask() {
  const scheduler = /** @type {any} */ (globalThis).scheduler;
  if (typeof scheduler?.yield === 'function') return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export class Slices {
  /** @param {HTMLElement} root the log: slices go only into bubbles still in it */
  constructor(root) {
    this.root = root;
    /** Texts still being rendered, oldest first. */
    /** @type {{ view: MarkdownView, text: string, bubble: HTMLElement, message: HTMLElement | null }[]} */
    this.pending = [];
    /** The running pump's token (null: none runs). @type {object | null} */
    this.pumping = null;
  }

  /**
   * Renders `text` through `view` (whose root is `bubble`): at once when it is short, else in slices.
   * @param {MarkdownView} view
   * @param {HTMLElement} bubble
   * @param {string} text
   * @param {HTMLElement | null} message  marked `aria-busy` until its texts are complete
   */
  render(view, bubble, text, message) {
    if (text.length <= SLICE_FROM) { view.end(text); return; }
    view.update(text.slice(0, SLICE));
    message?.setAttribute('aria-busy', 'true');
    this.pending.push({ view, text, bubble, message });
    if (!this.pumping) void this.pump();
  }

  /** Drops every pending slice (the log was reset). */
  cancel() {
    this.pending = [];
    this.pumping = null;
  }

  /** Renders the pending slices, about SLICE_BUDGET ms per task, until none is left or they are cancelled. */
  async pump() {
    const token = {};
    this.pumping = token;
    while (this.pumping === token && this.pending.length > 0) {
      await nextTask();
      if (this.pumping !== token) return;
      const until = performance.now() + SLICE_BUDGET;
      while (this.pending.length > 0 && performance.now() < until) {
        const job = this.pending[0];
        // Gone from the log (reset, replaced): its remaining slices have nowhere to go.
        if (!this.root.contains(job.bubble)) { this.pending.shift(); continue; }
        const next = job.view.written + SLICE;
        if (next < job.text.length) { job.view.update(job.text.slice(0, next)); continue; }
        job.view.end(job.text);
        this.pending.shift();
        if (job.message && !this.pending.some((other) => other.message === job.message)) job.message.removeAttribute('aria-busy');
      }
    }
    if (this.pumping === token) this.pumping = null;
  }
}
