// Page-weight benchmark: what `@patchbridge/agent` makes a page download, beside the peers'
// published npm packages bundled the same way in the same run. Prints one table (raw, gzip -9, brotli 11,
// ratio against ours) as text and as Markdown for bench/weight/README.md. Sizes are never asserted.
//
//   node bench/weight/bench.mjs      (./dev bench runs it after building npm/pkg and the widget)
//
// Method:
// - Every row is an entry file in bench/weight/entries/ doing what a real page would import, bundled by the
//   repository's esbuild with one set of options (bundle, minify, ESM, browser platform, code splitting,
//   NODE_ENV=production, no legal comments). A row's size is what the page fetches at load: the entry chunk
//   and the chunks, CSS and assets it imports statically, files of one kind compressed together (see
//   measure()). Chunks behind a dynamic import are reported apart ("on demand"), except ours: the element
//   imports the runtime as soon as it connects, so that chunk counts as loaded.
// - Ours: the runtime (`@patchbridge/agent`) and the element through `@patchbridge/agent/widget`, each plus the
//   .wasm the glue fetches (esbuild leaves `new URL('….wasm', import.meta.url)` alone, so the file is added
//   here), and the static script `npm/dist/patchbridge-agent.js` + .wasm exactly as shipped.
// - Peers come from bench/weight/peers/ (own package.json and package-lock.json, exact versions), installed
//   with `npm ci --ignore-scripts` when the lock is newer than the installed tree, never by CI or the tests.
//   A package that fails to install or bundle is printed as unavailable; the run still succeeds.
// - React-based peers are bundled with react and react-dom external (React not counted) unless the row says
//   "with React"; a row for React alone lets the reader add it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const npm = path.join(root, 'npm');
const peersDir = path.join(here, 'peers');
const outRoot = path.join(here, 'out');
const entries = path.join(here, 'entries');
const WASM = path.join(npm, 'pkg', 'patchbridge_agent_bg.wasm');
const REACT = ['react', 'react-dom', 'react/*', 'react-dom/*'];

// ------------------------------------------------------------------------------------------------ rows

/**
 * `vs`: which of ours a peer row is compared with: `core` (a runtime/SDK without UI) or `widget` (a chat UI).
 * `packages`: whose installed versions the label shows. `external`: left out of the bundle (not counted).
 */
const ROWS = [
  { id: 'core', label: 'ours: @patchbridge/agent (runtime) + .wasm', entry: 'patchbridge-core.js', wasm: WASM, ours: true },
  { id: 'widget', label: 'ours: @patchbridge/agent/widget (element + runtime) + .wasm', entry: 'patchbridge-widget.js', wasm: WASM, ours: true, eager: true },
  {
    id: 'static', label: 'ours: dist/patchbridge-agent.js (static script, as shipped) + .wasm', ours: true,
    files: [path.join(npm, 'dist', 'patchbridge-agent.js'), WASM],
  },
  { id: 'wasm', label: 'ours: of which the .wasm (in each row above)', files: [WASM], ours: true },
  { id: 'deep-chat', label: 'deep-chat (web component)', entry: 'deep-chat.js', packages: ['deep-chat'], vs: 'widget' },
  { id: 'ai', label: 'ai streamText + @ai-sdk/openai', entry: 'ai-stream-text.js', packages: ['ai', '@ai-sdk/openai'], vs: 'core' },
  { id: 'usechat', label: '@ai-sdk/react useChat (hook alone, React not counted)', entry: 'ai-sdk-react-use-chat.js', packages: ['@ai-sdk/react'], external: REACT, vs: 'core' },
  { id: 'usechat-react', label: '@ai-sdk/react useChat with React (react + react-dom counted)', entry: 'ai-sdk-react-use-chat.js', packages: ['@ai-sdk/react', 'react-dom'], vs: 'core' },
  { id: 'react', label: 'React alone (react + react-dom/client)', entry: 'react.js', packages: ['react', 'react-dom'] },
  { id: 'assistant-ui', label: '@assistant-ui/react thread + composer (React not counted)', entry: 'assistant-ui.js', packages: ['@assistant-ui/react'], external: REACT, vs: 'widget' },
  { id: 'copilotkit', label: '@copilotkit/react-ui CopilotChat + CSS (React not counted)', entry: 'copilotkit.js', packages: ['@copilotkit/react-ui'], external: REACT, vs: 'widget' },
];

// ------------------------------------------------------------------------------------------------ install

/** `npm ci` in peers/ when the lock is newer than the installed tree; false (with a note) when it fails. */
function installPeers() {
  const lock = path.join(peersDir, 'package-lock.json');
  const installed = path.join(peersDir, 'node_modules', '.package-lock.json');
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lock).mtimeMs) return true;
  console.log('bench/weight: npm ci in bench/weight/peers (bench-only packages, a few minutes the first time)');
  // --ignore-scripts: nothing here is run, only bundled, so no package's install script is needed.
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: peersDir, stdio: 'inherit' });
  if (r.status !== 0) console.log('bench/weight: npm ci failed; rows needing those packages print as unavailable');
  return r.status === 0;
}

function versionOf(name) {
  try {
    return JSON.parse(readFileSync(path.join(peersDir, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------------------------------------ bundle

/** Resolves the package's own specifiers to the built package in npm/ (what a page gets from the registry). */
const ourPackage = {
  name: 'patchbridge-agent',
  setup(b) {
    const targets = { '@patchbridge/agent': 'index.js', '@patchbridge/agent/widget': 'widget.js' };
    b.onResolve({ filter: /^@patchbridge\/agent(\/widget)?$/ }, (args) => ({ path: path.join(npm, targets[args.path]) }));
  },
};

/**
 * Bundles one entry into out/<id>/. Returns `{ initial, lazy }`: the files a page fetches at start (the entry
 * chunk, the chunks and assets it imports statically, its CSS) and those fetched only by a dynamic import.
 */
async function bundle(row) {
  const outdir = path.join(outRoot, row.id);
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    entryPoints: [path.join(entries, row.entry)],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox113', 'safari16.4'],
    minify: true,
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    external: row.external ?? [],
    nodePaths: [path.join(peersDir, 'node_modules')],
    loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file', '.gif': 'file' },
    plugins: [ourPackage],
    outdir,
    metafile: true,
    write: true,
    logLevel: 'silent',
  });
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((f) => outputs[f].entryPoint);
  const initial = new Set();
  const visit = (f) => {
    if (initial.has(f) || !outputs[f]) return;
    initial.add(f);
    if (outputs[f].cssBundle) visit(outputs[f].cssBundle);
    for (const i of outputs[f].imports) if (i.kind !== 'dynamic-import' && !i.external) visit(i.path);
  };
  visit(entry);
  const abs = (f) => path.resolve(root, f);
  return {
    initial: [...initial].map(abs),
    lazy: Object.keys(outputs).filter((f) => !initial.has(f)).map(abs),
  };
}

// ------------------------------------------------------------------------------------------------ measure

/**
 * Raw, gzip and brotli sums. Files of one kind (.js, .css, .wasm, …) are compressed together: esbuild's code
 * splitting can cut one package's static graph into hundreds of small chunks, and compressing each alone would
 * charge per-file overhead that a page's bundler (which merges chunks) would not produce.
 */
function measure(files) {
  const groups = new Map();
  for (const file of files) {
    const kind = path.extname(file);
    groups.set(kind, [...(groups.get(kind) ?? []), readFileSync(file)]);
  }
  let raw = 0;
  let gzip = 0;
  let brotli = 0;
  for (const parts of groups.values()) {
    const bytes = Buffer.concat(parts);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
    brotli += brotliCompressSync(bytes, {
      params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    }).length;
  }
  return { raw, gzip, brotli, files: files.length };
}

async function measureRow(row) {
  if (row.packages) {
    const missing = row.packages.filter((p) => !versionOf(p));
    if (missing.length) return { unavailable: `not installed: ${missing.join(', ')}` };
  }
  try {
    let files = row.files;
    let lazy = [];
    if (!files) {
      const out = await bundle(row);
      // Our element imports the runtime glue as soon as it connects, so that chunk is part of the page load.
      files = row.eager ? [...out.initial, ...out.lazy] : out.initial;
      lazy = row.eager ? [] : out.lazy;
      // Our glue fetches the .wasm at run time; esbuild does not emit it, so it is added here (once).
      if (row.wasm && !files.some((f) => f.endsWith('.wasm'))) files = [...files, row.wasm];
    }
    const absent = files.filter((f) => !existsSync(f));
    if (absent.length) return { unavailable: `missing ${absent.map((f) => path.relative(root, f)).join(', ')} (build the package first)` };
    return { ...measure(files), lazy: lazy.length ? measure(lazy) : null };
  } catch (error) {
    const first = error.errors?.[0];
    const why = first ? `${first.text}${first.location ? ` (${first.location.file})` : ''}` : String(error.message ?? error);
    return { unavailable: `bundle failed: ${why.slice(0, 160)}` };
  }
}

// ------------------------------------------------------------------------------------------------ report

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const times = (a, b) => `${(a / b).toFixed(2)}×`;

/** The exact versions bench/weight/peers/package.json pins (shown even when a package failed to install). */
const PINNED = JSON.parse(readFileSync(path.join(peersDir, 'package.json'), 'utf8')).dependencies;

function labelOf(row) {
  if (!row.packages) return row.label;
  const versions = row.packages.map((p) => `${p}@${versionOf(p) ?? PINNED[p] ?? '?'}`).join(', ');
  return `${row.label} [${versions}]`;
}

async function main() {
  const installed = process.env.WEIGHT_SKIP_INSTALL === '1' ? true : installPeers();
  const results = new Map();
  for (const row of ROWS) results.set(row.id, await measureRow(row));

  const table = ROWS.map((row) => {
    const r = results.get(row.id);
    const label = labelOf(row);
    if (r.unavailable) return { label, cells: ['unavailable', '', '', '', '', ''], note: r.unavailable };
    const base = row.vs && results.get(row.vs);
    const ratio = base && !base.unavailable
      ? `${times(r.gzip, base.gzip)} / ${times(r.brotli, base.brotli)} of ${row.vs}`
      : row.ours ? '(ours)' : '–';
    const lazy = r.lazy ? `+${r.lazy.files} files, ${kib(r.lazy.gzip)}` : '–';
    return { label, cells: [String(r.files), kib(r.raw), kib(r.gzip), kib(r.brotli), ratio, lazy] };
  });

  const head = ['bundle', 'files', 'raw', 'gzip -9', 'brotli 11', 'vs ours (gzip / brotli)', 'on demand (gzip)'];
  const width = (i) => Math.max(head[i].length, ...table.map((t) => (i === 0 ? t.label : t.cells[i - 1]).length));
  const line = (cols) => cols.map((c, i) => (i === 0 ? c.padEnd(width(0)) : c.padStart(width(i)))).join('  ');
  console.log('\n== page weight at load (files of one kind compressed together; "on demand": dynamic-import chunks)');
  console.log(line(head));
  for (const t of table) console.log(line([t.label, ...t.cells]));
  for (const t of table) if (t.note) console.log(`  unavailable: ${t.label}: ${t.note}`);
  if (!installed) console.log('  (peers could not be installed this run)');

  console.log('\nMarkdown (for bench/weight/README.md):\n');
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
  for (const t of table) console.log(`| ${t.label} | ${t.cells.map((c) => c || ' ').join(' | ')} |`);
}

await main();
