// Loads the WebAssembly runtime of @patchbridge/agent once per page, in the background, so the element can
// paint its shell before the runtime is ready. The wasm-bindgen glue is imported lazily and initialised with the
// .wasm file next to the built widget (`__PB_WASM_PATH__` is set by widget/build.mjs; bundlers such as Vite see
// the literal `new URL('…', import.meta.url)` and emit the .wasm as an asset). Initialising twice is a no-op in
// the glue, so a page that also imports `@patchbridge/agent` shares the same runtime and the same controllers.

/** @type {Promise<any> | null} */
let loading = null;

/** The runtime module (`createAgentController`, `defaultLimits`, …), loaded at most once. */
export function loadRuntime() {
  if (!loading) {
    loading = (async () => {
      const glue = await import('../../npm/pkg/patchbridge_agent.js');
      // @ts-ignore: replaced at build time by a string literal.
      const wasmUrl = globalThis.PATCHBRIDGE_WASM_URL ?? new URL(__PB_WASM_PATH__, import.meta.url);
      await glue.default({ module_or_path: wasmUrl });
      return glue;
    })();
    // A failed load may be retried (a flaky network should not break the page for good).
    loading.catch(() => { loading = null; });
  }
  return loading;
}

/** @type {Promise<any> | null} */
let highlighter = null;

/**
 * The syntax highlighter chunk (`highlight.js` built beside the widget), imported the first time a fenced code
 * block with a language appears; never part of the first load. `__PB_HIGHLIGHT_PATH__` is set by
 * widget/build.mjs (a literal `new URL('…', import.meta.url)`, which bundlers emit as an asset like the .wasm).
 */
export function loadHighlighter() {
  if (!highlighter) {
    // @ts-ignore: replaced at build time by a string literal.
    const url = globalThis.PATCHBRIDGE_HIGHLIGHT_URL ?? new URL(__PB_HIGHLIGHT_PATH__, import.meta.url);
    highlighter = import(/* @vite-ignore */ String(url));
    // A failed load may be retried by the next code block; the code stays readable as plain text meanwhile.
    highlighter.catch(() => { highlighter = null; });
  }
  return highlighter;
}

/** @type {Promise<any> | null} */
let elicitation = null;

/**
 * The question card's chunk (`elicitation.js` built beside the widget), imported the first time a running tool
 * asks the person (`state.pendingElicitation`); never part of the first load. `__PB_ELICITATION_PATH__` is set by
 * widget/build.mjs.
 */
export function loadElicitation() {
  if (!elicitation) {
    // @ts-ignore: replaced at build time by a string literal.
    const url = globalThis.PATCHBRIDGE_ELICITATION_URL ?? new URL(__PB_ELICITATION_PATH__, import.meta.url);
    elicitation = import(/* @vite-ignore */ String(url));
    elicitation.catch(() => { elicitation = null; });
  }
  return elicitation;
}

/** @type {Promise<any> | null} */
let mathRenderer = null;

/**
 * The MathML renderer chunk (`math-render.js` built beside the widget, Temml inside), imported the first time an
 * answer has a formula; never part of the first load. `__PB_MATH_PATH__` is set by widget/build.mjs like the
 * highlighter's path.
 */
export function loadMath() {
  if (!mathRenderer) {
    // @ts-ignore: replaced at build time by a string literal.
    const url = globalThis.PATCHBRIDGE_MATH_URL ?? new URL(__PB_MATH_PATH__, import.meta.url);
    mathRenderer = import(/* @vite-ignore */ String(url));
    // A failed load may be retried by the next formula; formulas stay readable as their source meanwhile.
    mathRenderer.catch(() => { mathRenderer = null; });
  }
  return mathRenderer;
}

/** @type {Promise<any> | null} */
let files = null;

/**
 * The attachments chunk (`files.js` built beside the widget: what a picked file becomes), imported the first time
 * the person attaches a file. `__PB_FILES_PATH__` is set by widget/build.mjs like the highlighter's path.
 */
export function loadFiles() {
  if (!files) {
    // @ts-ignore: replaced at build time by a string literal.
    const url = globalThis.PATCHBRIDGE_FILES_URL ?? new URL(__PB_FILES_PATH__, import.meta.url);
    files = import(/* @vite-ignore */ String(url));
    // A failed load may be retried by the next attachment (this one is refused as unreadable).
    files.catch(() => { files = null; });
  }
  return files;
}
