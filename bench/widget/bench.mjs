// Widget streaming benchmark (prints figures; never asserts on timing). In headless Chromium, one long Markdown
// answer streams from a custom model through <patchbridge-agent>. Two baselines measured in the same run, in
// fresh pages, interleaved: the same deltas appended to a plain <pre> text node (no parsing, no runtime), and a
// naive Markdown view that re-renders the whole text once per animation frame (what "re-render per update"
// costs; same parser, streaming-markdown, fed the full text each frame).
// Printed per round: wall time, main-thread long tasks (> 50 ms), the longest frame gap while streaming, frames
// painted, and the ratio to the floor. From a Chromium trace of each round: the longest main-thread task of the
// whole stream, and the longest from the last delta to the painted end (where finishing a long answer costs). Sizes: BENCH_WIDGET_CHARS (default 100000), BENCH_WIDGET_DELTAS (10000),
// BENCH_WIDGET_ROUNDS (3).
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHARS = Number(process.env.BENCH_WIDGET_CHARS ?? 100_000);
const DELTAS = Number(process.env.BENCH_WIDGET_DELTAS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_WIDGET_ROUNDS ?? 3);
const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.map': 'application/json' };

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const file = url.pathname === '/' ? path.join(root, 'bench/widget/page.html') : path.join(root, path.normalize(url.pathname));
  if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
  try {
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(body);
  } catch { res.writeHead(404).end(); }
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

/** Top-level task slices of the scheduler (the name changed across Chromium versions). */
const TASK_EVENTS = new Set(['ThreadControllerImpl::RunTask', 'RunTask']);

/**
 * The longest main-thread tasks (ms) of a Chromium trace: between the page's `pb-start` and `pb-end` marks, and
 * between `pb-last-delta` and `pb-end`. A task is a top-level task slice of the renderer's main thread.
 */
function longestTasks(trace) {
  const events = JSON.parse(trace.toString('utf8')).traceEvents ?? [];
  const main = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const mark = (name) => events.find((e) => e.name === name && (e.cat ?? '').includes('blink.user_timing'))?.ts;
  const start = mark('pb-start');
  const lastDelta = mark('pb-last-delta');
  const end = mark('pb-end');
  let whole = 0;
  let ending = 0;
  for (const e of events) {
    if (e.ph !== 'X' || !TASK_EVENTS.has(e.name) || !main.has(`${e.pid}:${e.tid}`)) continue;
    const from = e.ts;
    const to = e.ts + (e.dur ?? 0);
    if (start != null && end != null && to >= start && from <= end) whole = Math.max(whole, e.dur / 1000);
    if (lastDelta != null && end != null && to >= lastDelta && from <= end) ending = Math.max(ending, e.dur / 1000);
  }
  return { longestTask: whole, longestTaskAtEnd: ending };
}

/** Runs one round in a fresh page; `mode` is 'widget', 'floor' or 'reparse'. */
async function round(mode) {
  const page = await browser.newPage({ viewport: { width: 900, height: 800 } });
  await page.goto(base);
  await page.waitForFunction(() => customElements.get('patchbridge-agent'));
  await browser.startTracing(page, { categories: ['devtools.timeline', 'blink.user_timing', 'toplevel'] });
  const result = await page.evaluate(async ({ mode: m, chars, deltas }) => {
    // A Markdown answer with the usual mix: paragraphs, lists, code, emphasis.
    const unit = 'Some **bold** text and `code` in a paragraph that keeps going for a while.\n\n- a list item\n- another\n\n```js\nconst x = 1;\n```\n\n';
    const text = unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
    const size = Math.ceil(text.length / deltas);
    const pieces = [];
    for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
    const longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: false });
    let frames = 0; let lastFrame = performance.now(); let maxGap = 0; let streaming = true;
    const tick = (t) => { frames += 1; maxGap = Math.max(maxGap, t - lastFrame); lastFrame = t; if (streaming) requestAnimationFrame(tick); };
    // Deltas arrive in network-sized bursts: 20 per macrotask.
    async function* source() {
      for (let i = 0; i < pieces.length; i += 1) {
        if (i % 20 === 0) await new Promise((r) => setTimeout(r, 0));
        if (i === pieces.length - 1) performance.mark('pb-last-delta');
        yield pieces[i];
      }
    }
    const start = performance.now();
    if (m !== 'widget') performance.mark('pb-start');
    requestAnimationFrame(tick);
    if (m === 'reparse') {
      const smd = await import('/node_modules/streaming-markdown/smd.js');
      const view = document.body.appendChild(document.createElement('div'));
      let received = '';
      let scheduled = false;
      const paint = () => {
        scheduled = false;
        const fresh = document.createElement('div');
        const parser = smd.parser(smd.default_renderer(fresh));
        smd.parser_write(parser, received);
        smd.parser_end(parser);
        view.replaceChildren(...fresh.childNodes);
      };
      for await (const piece of source()) {
        received += piece;
        if (!scheduled) { scheduled = true; requestAnimationFrame(paint); }
      }
      await new Promise((r) => requestAnimationFrame(() => { paint(); r(); }));
    } else if (m === 'floor') {
      const pre = document.body.appendChild(document.createElement('pre'));
      const node = pre.appendChild(document.createTextNode(''));
      for await (const piece of source()) node.appendData(piece);
      await new Promise((r) => requestAnimationFrame(() => r()));
    } else {
      const el = document.createElement('patchbridge-agent');
      el.model = {
        async *stream() {
          yield { type: 'message-start', id: 'bench' };
          yield { type: 'block-start', index: 0, block: { type: 'text' } };
          for await (const piece of source()) yield { type: 'block-delta', index: 0, delta: piece };
          yield { type: 'block-stop', index: 0 };
          yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
        },
      };
      el.runtimeOptions = { limits: { maxModelOutputCharacters: chars + 10 } };
      document.body.append(el);
      const controller = await el.whenReady();
      const t0 = performance.now();
      performance.mark('pb-start');
      const outcome = await controller.send('go');
      if (outcome !== 'completed') throw new Error(outcome);
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
      performance.mark('pb-end');
      const rendered = el.shadowRoot.querySelector('.log > .msg.assistant').textContent.length;
      streaming = false;
      return { ms: performance.now() - t0, frames, maxGap, longTasks: longTasks.length, longest: Math.max(0, ...longTasks), rendered };
    }
    streaming = false;
    performance.mark('pb-end');
    return { ms: performance.now() - start, frames, maxGap, longTasks: longTasks.length, longest: Math.max(0, ...longTasks), rendered: text.length };
  }, { mode, chars: CHARS, deltas: DELTAS });
  const trace = await browser.stopTracing();
  await page.close();
  return { ...result, ...longestTasks(trace) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = { widget: [], floor: [], reparse: [] };
for (let i = 0; i < ROUNDS; i += 1) {
  // Interleaved, so load on the machine hits all alike.
  rows.floor.push(await round('floor'));
  rows.reparse.push(await round('reparse'));
  rows.widget.push(await round('widget'));
}
const LABELS = { widget: '<patchbridge-agent>', floor: 'floor: <pre> appendData', reparse: 'naive: full re-render per frame' };
console.log(`widget streaming: ${CHARS} characters of Markdown in ${DELTAS} deltas, ${ROUNDS} rounds (median; spread min..max)`);
for (const [name, list] of Object.entries(rows)) {
  const ms = list.map((r) => r.ms);
  console.log(`  ${LABELS[name]}: ${median(ms).toFixed(0)} ms (${Math.min(...ms).toFixed(0)}..${Math.max(...ms).toFixed(0)}), `
    + `frames ${median(list.map((r) => r.frames))}, longest frame gap ${median(list.map((r) => r.maxGap)).toFixed(0)} ms, `
    + `long tasks ${median(list.map((r) => r.longTasks))} (longest ${median(list.map((r) => r.longest)).toFixed(0)} ms), rendered ${list[0].rendered} chars`);
  console.log(`    longest main-thread task: whole stream ${median(list.map((r) => r.longestTask)).toFixed(1)} ms `
    + `(max ${Math.max(...list.map((r) => r.longestTask)).toFixed(1)}), from the last delta to the painted end `
    + `${median(list.map((r) => r.longestTaskAtEnd)).toFixed(1)} ms (max ${Math.max(...list.map((r) => r.longestTaskAtEnd)).toFixed(1)})`);
}
const med = (name) => median(rows[name].map((r) => r.ms));
console.log(`  ratio widget / floor (wall): ${(med('widget') / med('floor')).toFixed(2)}×; widget / naive re-render: ${(med('widget') / med('reparse')).toFixed(2)}×`);
await browser.close();
server.close();
