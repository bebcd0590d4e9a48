// Builds the widget into the npm package (both outputs are git-ignored, like npm/pkg/):
//   npm/widget.js              ES module export `@patchbridge/agent/widget`: the element plus streaming-markdown;
//                              the wasm-bindgen glue (./pkg/) and ./errors.js stay imports, shared with
//                              `@patchbridge/agent`
//   npm/dist/patchbridge-agent.js  one static script for a plain <script type="module"> page: element, parser,
//                              glue and adapters in one file; it fetches ../pkg/patchbridge_agent_bg.wasm, so the
//                              package holds the wasm once and a page serves the package folder as it is
//   npm/widget-highlight.js, npm/dist/patchbridge-highlight.js  the code highlighter, imported by the element
//                              only when a fenced code block with a language appears
//   npm/widget-files.js, npm/dist/patchbridge-files.js  what an attached file becomes (src/files.js), imported by
//                              the element only when the person first attaches a file
//   npm/widget-math.js, npm/dist/patchbridge-math.js  the MathML renderer (Temml), imported by the element only
//                              when an answer has a formula (src/math.js, src/math-render.js)
//   npm/widget-elicitation.js, npm/dist/patchbridge-elicitation.js  the question card of a running tool's
//                              elicitation, imported by the element the first time one appears
//   npm/widget-apps.js, npm/dist/patchbridge-apps.js  the MCP Apps host (src/apps/host.js), imported by the element
//                              only when a tool card carries a `ui://` view (src/apps/hook.js)
//   npm/mcp-client.js, npm/dist/patchbridge-mcp.js  the MCP client (npm/mcp/ with the official SDK bundled in),
//                              imported by the package entry and the element only when a page sets `mcpServers`
//   npm/widget-zh.js, npm/dist/patchbridge-zh.js  the Chinese strings, imported by the element only when it
//                              shows Chinese (src/strings.js, loadStrings)
// All are minified, without source maps (npm/README.md, "What is in the package", says why). Prints the sizes
// (min, gzip, brotli) of each and of the wasm.
// Usage: node widget/build.mjs   (needs npm/pkg from scripts/build-wasm.sh)
import { build, transform } from 'esbuild';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = path.join(root, 'npm');
const entry = path.join(root, 'widget', 'src', 'index.js');
const gluePath = path.join(npm, 'pkg', 'patchbridge_agent.js');

/**
 * Keeps the glue as a relative import of the ES module build (so it is shared with the package entry), and a
 * static one: the element's lazy `import()` of it becomes a module inside the bundle that re-exports the static
 * import. A bundler would otherwise emit a chunk for that `import()` which is requested only once the element
 * connects, one more request in a row before the .wasm (Vite: entry chunk, then the glue, then the .wasm).
 */
const externalGlue = {
  name: 'external-glue',
  setup(b) {
    b.onResolve({ filter: /pkg\/patchbridge_agent\.js$/ }, (args) => (args.kind === 'dynamic-import'
      ? { path: 'glue', namespace: 'static-glue' }
      : { path: './pkg/patchbridge_agent.js', external: true }));
    b.onLoad({ filter: /.*/, namespace: 'static-glue' }, () => ({
      contents: "export * from './pkg/patchbridge_agent.js';\nexport { default } from './pkg/patchbridge_agent.js';\n",
      resolveDir: npm,
    }));
  },
};

/**
 * Keeps the package's error module an import of the ES module build (`./errors.js`), so the element's
 * `AgentError`s are the class `@patchbridge/agent` exports (the static script bundles it once, with the glue).
 */
const externalErrors = {
  name: 'external-errors',
  setup(b) {
    b.onResolve({ filter: /npm\/errors\.js$/ }, () => ({ path: './errors.js', external: true }));
  },
};

/**
 * The element's stylesheet is CSS in a JavaScript string (widget/src/styles.js), which the JavaScript minifier
 * keeps as written: it is minified here as CSS (whitespace and syntax only), about 1 KiB gzip of the widget.
 */
const minifiedCss = {
  name: 'minified-css',
  setup(b) {
    b.onLoad({ filter: /[\\/]widget[\\/]src[\\/]styles\.js$/ }, async (args) => {
      const { CSS } = await import(pathToFileURL(args.path).href);
      const { code } = await transform(CSS, { loader: 'css', minify: true });
      // A custom property's value starts after the colon's whitespace (CSS Syntax), which esbuild keeps.
      const css = code.trim().replace(/(--[\w-]+): /g, '$1:');
      return { contents: `export const CSS = ${JSON.stringify(css)};\n`, loader: 'js' };
    });
  },
};

const common = {
  entryPoints: [entry],
  bundle: true,
  format: 'esm',
  target: ['es2022', 'chrome111', 'firefox113', 'safari16.4'],
  minify: true,
  sourcemap: false,
  // Licence comments of bundled code stay in the file (the full texts are in THIRD_PARTY_LICENSES.md).
  legalComments: 'eof',
  logLevel: 'warning',
  // The wasm-bindgen glue imports ./adapter.js from several extern blocks, which repeats one key in its import
  // object (all values are the same module namespace, so it is harmless); silence that one warning only.
  logOverride: { 'duplicate-object-key': 'silent' },
};

/**
 * The element builds rename property names that never leave the bundle: those of streaming-markdown's parser and
 * renderer objects (the parser is the widget's own; long names repeated through it, which compress badly) and a
 * few members of the widget's internal classes (MessageLog, Composer, Recovery, Actions), about 0.2 KiB gzip. Only
 * names that neither the package's declarations, the glue, the protocol, the DOM nor the ECMAScript library use are
 * listed (a WebMCP name such as `executeTool` must never be). The rename is the same in every module of one build,
 * so the modules keep fitting together as long as they write these names as identifiers, never as quoted keys or
 * computed strings.
 */
const mangleProps = new RegExp(`^(${[
  'renderer', 'token', 'indent', 'indent_len', 'spaces', 'add_token', 'end_token', 'add_text', 'set_attr',
  'blockquote_idx', 'fence_start', 'fence_end', 'table_state', 'hr_chars', 'hr_char',
  'emptyEl', 'suggestionsEl', 'viewStale', 'shownError', 'onViewError', 'argsPre', 'argsDetails', 'toolCard',
  'addCopyButton', 'setTranslator', 'setPlaceholder', 'setEditing', 'awaitingCredentials', 'authAsked',
].join('|')})$`);
/**
 * Options of the element builds only: the renames above, and streaming-markdown's `console.assert`s of its own
 * invariants (messages for the library's developers, about 0.1 KiB gzip) are dropped; the widget's code has none.
 */
const elementOnly = { mangleProps, pure: ['console.assert'] };

// The ES module build starts fetching and compiling the .wasm as soon as it is evaluated where there is a DOM,
// not when the first element connects (a page may define the element before adding one). The glue shares one
// init between callers, so the element's own load joins this one (and retries after a failure, which this catch
// leaves to it).
const eagerRuntime = [
  "import __pbInit from './pkg/patchbridge_agent.js';",
  'if (typeof document === "object") __pbInit({ module_or_path: globalThis.PATCHBRIDGE_WASM_URL ?? new URL("./pkg/patchbridge_agent_bg.wasm", import.meta.url) }).catch(() => {});',
].join('\n');
await build({ ...common, ...elementOnly, outfile: path.join(npm, 'widget.js'), plugins: [externalGlue, externalErrors, minifiedCss], banner: { js: eagerRuntime }, define: { __PB_WASM_PATH__: '"./pkg/patchbridge_agent_bg.wasm"', __PB_HIGHLIGHT_PATH__: '"./widget-highlight.js"', __PB_MATH_PATH__: '"./widget-math.js"', __PB_FILES_PATH__: '"./widget-files.js"', __PB_STRINGS_ZH_PATH__: '"./widget-zh.js"', __PB_MCP_PATH__: '"./mcp-client.js"', __PB_ELICITATION_PATH__: '"./widget-elicitation.js"', __PB_APPS_PATH__: '"./widget-apps.js"' } });
// Outputs of earlier builds (source maps, a copy of the wasm in dist/) must not linger into `npm pack`.
await rm(path.join(npm, 'dist'), { recursive: true, force: true });
await rm(path.join(npm, 'widget.js.map'), { force: true });
await rm(path.join(npm, 'widget-highlight.js.map'), { force: true });
await rm(path.join(npm, 'widget-math.js.map'), { force: true });
await mkdir(path.join(npm, 'dist'), { recursive: true });
await build({ ...common, ...elementOnly, outfile: path.join(npm, 'dist', 'patchbridge-agent.js'), plugins: [minifiedCss], define: { __PB_WASM_PATH__: '"../pkg/patchbridge_agent_bg.wasm"', __PB_HIGHLIGHT_PATH__: '"./patchbridge-highlight.js"', __PB_MATH_PATH__: '"./patchbridge-math.js"', __PB_FILES_PATH__: '"./patchbridge-files.js"', __PB_STRINGS_ZH_PATH__: '"./patchbridge-zh.js"', __PB_MCP_PATH__: '"./patchbridge-mcp.js"', __PB_ELICITATION_PATH__: '"./patchbridge-elicitation.js"', __PB_APPS_PATH__: '"./patchbridge-apps.js"' } });
const highlightEntry = path.join(root, 'widget', 'src', 'highlight.js');
await build({ ...common, entryPoints: [highlightEntry], outfile: path.join(npm, 'widget-highlight.js') });
await build({ ...common, entryPoints: [highlightEntry], outfile: path.join(npm, 'dist', 'patchbridge-highlight.js') });
const filesEntry = path.join(root, 'widget', 'src', 'files.js');
await build({ ...common, entryPoints: [filesEntry], outfile: path.join(npm, 'widget-files.js') });
await build({ ...common, entryPoints: [filesEntry], outfile: path.join(npm, 'dist', 'patchbridge-files.js') });
const mathEntry = path.join(root, 'widget', 'src', 'math-render.js');
await build({ ...common, entryPoints: [mathEntry], outfile: path.join(npm, 'widget-math.js') });
await build({ ...common, entryPoints: [mathEntry], outfile: path.join(npm, 'dist', 'patchbridge-math.js') });
// The question card of a running tool's elicitation, imported the first time one appears.
const elicitationEntry = path.join(root, 'widget', 'src', 'elicitation.js');
await build({ ...common, ...elementOnly, entryPoints: [elicitationEntry], outfile: path.join(npm, 'widget-elicitation.js') });
await build({ ...common, ...elementOnly, entryPoints: [elicitationEntry], outfile: path.join(npm, 'dist', 'patchbridge-elicitation.js') });
// The MCP Apps host (src/apps/host.js), imported the first time a tool card carries a `ui://` view.
const appsEntry = path.join(root, 'widget', 'src', 'apps', 'host.js');
await build({ ...common, entryPoints: [appsEntry], outfile: path.join(npm, 'widget-apps.js') });
await build({ ...common, entryPoints: [appsEntry], outfile: path.join(npm, 'dist', 'patchbridge-apps.js') });
// The MCP client (npm/mcp/, the official SDK bundled in), imported only once a page sets `mcpServers`.
const mcpEntry = path.join(npm, 'mcp', 'chunk.js');
await build({ ...common, entryPoints: [mcpEntry], outfile: path.join(npm, 'mcp-client.js') });
await build({ ...common, entryPoints: [mcpEntry], outfile: path.join(npm, 'dist', 'patchbridge-mcp.js') });
const zhEntry = path.join(root, 'widget', 'src', 'strings-zh.js');
await build({ ...common, entryPoints: [zhEntry], outfile: path.join(npm, 'widget-zh.js') });
await build({ ...common, entryPoints: [zhEntry], outfile: path.join(npm, 'dist', 'patchbridge-zh.js') });

async function sizes(file) {
  const bytes = await readFile(file);
  return {
    min: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const rows = [
  ['widget (npm/widget.js: element, styles, strings, Markdown)', path.join(npm, 'widget.js')],
  ['static script (npm/dist/patchbridge-agent.js: widget + runtime glue)', path.join(npm, 'dist', 'patchbridge-agent.js')],
  ['code highlighter, on demand (npm/widget-highlight.js)', path.join(npm, 'widget-highlight.js')],
  ['MathML renderer, on demand (npm/widget-math.js)', path.join(npm, 'widget-math.js')],
  ['attachments, on demand (npm/widget-files.js)', path.join(npm, 'widget-files.js')],
  ['Chinese strings, on demand (npm/widget-zh.js)', path.join(npm, 'widget-zh.js')],
  ['question card, on demand (npm/widget-elicitation.js)', path.join(npm, 'widget-elicitation.js')],
  ['MCP Apps host, on demand (npm/widget-apps.js)', path.join(npm, 'widget-apps.js')],
  ['MCP client, on demand (npm/mcp-client.js: npm/mcp/ + @modelcontextprotocol/sdk)', path.join(npm, 'mcp-client.js')],
  ['runtime glue (npm/pkg/patchbridge_agent.js, minified by scripts/minify-js.mjs)', gluePath],
  ['runtime wasm (npm/pkg/patchbridge_agent_bg.wasm)', path.join(npm, 'pkg', 'patchbridge_agent_bg.wasm')],
];
console.log('build-widget: sizes (min / gzip -9 / brotli 11)');
for (const [label, file] of rows) {
  const s = await sizes(file);
  console.log(`  ${label}: ${kib(s.min)} / ${kib(s.gzip)} / ${kib(s.brotli)}`);
}
