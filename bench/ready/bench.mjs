// Time to ready benchmark (prints figures; never asserts on timing). In headless Chromium, from a local static
// server with the browser cache off (a fresh context per run and CDP `Network.setCacheDisabled`), the time from
// navigation start to the element's `patchbridge-ready` event (its controller exists), for:
//   empty        a page whose inline module script dispatches the event at once: the same-run floor
//   no-build     <script type="module" src="npm/dist/patchbridge-agent.js"> (fetches npm/pkg/…_bg.wasm)
//   no-build+preload  the same with <link rel="preload" as="fetch" crossorigin> of the .wasm in the page's head
//   vite-widget  a Vite production build of `import '@patchbridge/agent/widget'` only
//   vite-example a Vite production build of examples/vite-app (widget plus `@patchbridge/agent` for a limit)
// Printed per page: median, best and worst of the runs, the ratio of the median to the empty page's, and where
// the wasm request sat in the run of the median (start and end, ms after navigation start) with the number of
// requests, so a waterfall shows. A page that fell back from `WebAssembly.instantiateStreaming` (wrong MIME type
// or a bundler that inlined the module) is flagged. The Vite builds are made in a temporary folder with the
// repository's Vite, the package linked in as `node_modules/@patchbridge/agent` (as `file:../../npm` does).
// BENCH_READY_COMPARE=DIR adds the Vite builds of another built package folder (see below).
// Needs the built package (scripts/build-wasm.sh, node widget/build.mjs). BENCH_READY_RUNS (default 7) runs per
// page, interleaved round by round so a load spike hits every page alike; BENCH_READY_VERBOSE=1 also lists the
// requests of each page's median run (start → end).
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { launchChromium, sendFile, serve } from '../support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = Number(process.env.BENCH_READY_RUNS ?? 7);

const work = await mkdtemp(path.join(os.tmpdir(), 'pb-ready-'));
// BENCH_READY_COMPARE names another built package folder (say, a previous commit's npm/): its Vite builds run
// beside this one's, interleaved, as `vite-…@other`.
const packages = { '': path.join(root, 'npm'), ...(process.env.BENCH_READY_COMPARE ? { '@other': path.resolve(process.env.BENCH_READY_COMPARE) } : {}) };

/** Builds the app in `work/name` (index.html plus sources) against the package `pkg` and returns its dist folder. */
async function viteBuild(name, files, pkg = packages['']) {
  const dir = path.join(work, name);
  await mkdir(path.join(dir, 'node_modules', '@patchbridge'), { recursive: true });
  await symlink(pkg, path.join(dir, 'node_modules', '@patchbridge', 'agent'), 'dir');
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    if (typeof text === 'string') await writeFile(path.join(dir, file), text);
    else await cp(text.from, path.join(dir, file), { recursive: true });
  }
  await build({ root: dir, configFile: false, base: './', logLevel: 'warn', build: { outDir: 'dist', emptyOutDir: true } });
  return path.join(dir, 'dist');
}

const element = '<patchbridge-agent endpoint="/api" storage-key="bench"></patchbridge-agent>';
const dists = {};
for (const [suffix, pkg] of Object.entries(packages)) {
  dists[`vite-widget${suffix}`] = await viteBuild(`vite-widget${suffix}`, {
    'index.html': `<!doctype html><html><head><meta charset="utf-8"><title>vite widget</title><link rel="icon" href="data:,">
<script type="module" src="./main.js"></script></head><body>${element}</body></html>`,
    'main.js': "import '@patchbridge/agent/widget';\n",
  }, pkg);
  dists[`vite-example${suffix}`] = await viteBuild(`vite-example${suffix}`, {
    'index.html': { from: path.join(root, 'examples/vite-app/index.html') },
    src: { from: path.join(root, 'examples/vite-app/src') },
  }, pkg);
}

const pages = {
  empty: `<!doctype html><html><head><meta charset="utf-8"><title>empty</title><link rel="icon" href="data:,">
<script type="module">document.body.dispatchEvent(new CustomEvent('patchbridge-ready', { bubbles: true }));</script>
</head><body></body></html>`,
  'no-build': `<!doctype html><html><head><meta charset="utf-8"><title>no build</title><link rel="icon" href="data:,">
<script type="module" src="/npm/dist/patchbridge-agent.js"></script></head><body>${element}</body></html>`,
  'no-build+preload': `<!doctype html><html><head><meta charset="utf-8"><title>no build, preload</title><link rel="icon" href="data:,">
<link rel="preload" href="/npm/pkg/patchbridge_agent_bg.wasm" as="fetch" crossorigin>
<script type="module" src="/npm/dist/patchbridge-agent.js"></script></head><body>${element}</body></html>`,
};

const { server, base } = await serve(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const [, first, ...rest] = url.pathname.split('/');
  if (pages[first] !== undefined && rest.join('/') === '') {
    res.writeHead(200, { 'content-type': 'text/html' }).end(pages[first]);
    return;
  }
  const file = dists[first] ? path.join(dists[first], path.normalize(`/${rest.join('/') || 'index.html'}`))
    : path.join(root, path.normalize(url.pathname));
  await sendFile(res, file);
});

const browser = await launchChromium();

/** One cold load of `name`: ms from navigation start to `patchbridge-ready`, and the requests it made. */
async function run(name) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const warnings = [];
  page.on('console', (message) => { if (/instantiateStreaming|MIME/i.test(message.text())) warnings.push(message.text()); });
  await page.addInitScript(() => {
    addEventListener('patchbridge-ready', () => { globalThis.__pbReady ??= performance.now(); }, { capture: true });
  });
  await page.goto(`${base}${name}/`);
  await page.waitForFunction(() => globalThis.__pbReady !== undefined, null, { timeout: 60_000 });
  const result = await page.evaluate(() => ({
    ready: globalThis.__pbReady,
    resources: performance.getEntriesByType('resource').map((e) => ({ name: e.name, start: e.startTime, end: e.responseEnd })),
  }));
  await context.close();
  return { ...result, warnings };
}

const names = ['empty', 'no-build', 'no-build+preload', ...Object.keys(dists)];
const results = Object.fromEntries(names.map((n) => [n, []]));
for (const name of names) await run(name); // warm-up: Chromium's own start-up, the server's first reads
for (let i = 0; i < RUNS; i += 1) {
  for (const name of names) results[name].push(await run(name));
}
await browser.close();
server.close();
await rm(work, { recursive: true, force: true });

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const ms = (x) => `${x.toFixed(0).padStart(5)} ms`;
const floor = median(results.empty.map((r) => r.ready));
console.log(`navigation to patchbridge-ready, cache off, ${RUNS} runs each (load average ${os.loadavg()[0].toFixed(1)})`);
console.log('page                median     best    worst  ×empty  wasm request (median run)              requests');
for (const name of names) {
  const runs = results[name];
  const times = runs.map((r) => r.ready);
  const mid = runs.find((r) => r.ready === median(times)) ?? runs[runs.length >> 1];
  const wasm = mid.resources.find((e) => e.name.endsWith('.wasm'));
  const where = wasm ? `starts ${ms(wasm.start)}, ends ${ms(wasm.end)}` : '(no wasm request)';
  const fallback = runs.some((r) => r.warnings.length) ? '  instantiateStreaming fell back' : '';
  if (process.env.BENCH_READY_VERBOSE) {
    for (const e of mid.resources) console.log(`    ${ms(e.start)} → ${ms(e.end)}  ${e.name.replace(base, '/')}`);
  }
  console.log(`${name.padEnd(18)} ${ms(median(times))} ${ms(Math.min(...times))} ${ms(Math.max(...times))}  ${(median(times) / floor).toFixed(1).padStart(5)}×  ${where.padEnd(39)} ${String(mid.resources.length).padStart(4)}${fallback}`);
}
