// Widget streaming benchmark (prints figures; never asserts on timing). In headless Chromium, one long Markdown
// answer streams from a custom model through <patchbridge-agent>. Baselines measured in the same run, in fresh
// pages, interleaved: an empty page that consumes the same deltas and renders nothing (what the machine itself
// costs: timers, frames, load from other processes), the same deltas appended to a plain <pre> text node (no
// parsing, no runtime), and a naive Markdown view that re-renders the whole text once per animation frame (what
// "re-render per update" costs; same parser, streaming-markdown, fed the full text each frame).
// Printed per view over the rounds: wall time, main-thread long tasks (> 50 ms, from a PerformanceObserver), the
// longest frame gap while streaming, frames painted, and from a Chromium trace of each round the longest
// main-thread task of the whole stream and the longest from the last delta to the painted end (where finishing
// a long answer costs), median and max, with what the longest one was made of (exclusive time by trace event).
// Sizes: BENCH_WIDGET_CHARS (default 100000), BENCH_WIDGET_DELTAS (10000), BENCH_WIDGET_ROUNDS (3).
// BENCH_WIDGET_TASKS=N also lists each round's N longest tasks (when, and what they were made of).
// BENCH_WIDGET_NAIVE=0 leaves out the naive view (its rounds take minutes on a loaded machine).
// BENCH_WIDGET_COMPARE=DIR adds the element of another built package folder (say, a previous commit's npm/ after
// `node widget/build.mjs` there) as `<patchbridge-agent>@other`, interleaved with the rest.
// Then a stored conversation: the same answer, finished, rendered by the widget's message log (widget/src/messages.js,
// what a reload or opening a conversation from the history runs) in bench/widget/stored.html, a shadow root with
// the element's stylesheet; beside it the same page rendering nothing. Printed: the longest main-thread task from
// the render call to the painted, complete answer, and the time until then. BENCH_WIDGET_STREAM=0 leaves out the
// streaming rounds, BENCH_WIDGET_STORED=0 the stored ones.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, sendFile, serve } from '../support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHARS = Number(process.env.BENCH_WIDGET_CHARS ?? 100_000);
const DELTAS = Number(process.env.BENCH_WIDGET_DELTAS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_WIDGET_ROUNDS ?? 3);
const TOP_TASKS = Number(process.env.BENCH_WIDGET_TASKS ?? 0);
const NAIVE = process.env.BENCH_WIDGET_NAIVE !== '0';
const STREAM = process.env.BENCH_WIDGET_STREAM !== '0';
const STORED = process.env.BENCH_WIDGET_STORED !== '0';
const COMPARE = process.env.BENCH_WIDGET_COMPARE ? path.resolve(process.env.BENCH_WIDGET_COMPARE) : null;

const { server, base } = await serve(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  // The compared package is served at /other/ (its widget.js imports ./pkg/ beside it).
  const other = COMPARE && url.pathname.startsWith('/other/');
  const dir = other ? COMPARE : root;
  const file = url.pathname === '/' ? path.join(root, 'bench/widget/page.html')
    : path.join(dir, path.normalize(other ? url.pathname.slice('/other'.length) : url.pathname));
  if (!file.startsWith(dir)) { res.writeHead(403).end(); return; }
  const toOther = url.pathname === '/' && url.searchParams.has('other');
  await sendFile(res, file, (body) => (toOther ? body.toString('utf8').replace('/npm/widget.js', '/other/widget.js') : body));
});

const browser = await launchChromium();

/** Top-level task slices of the scheduler (the name changed across Chromium versions). */
const TASK_EVENTS = new Set(['ThreadControllerImpl::RunTask', 'RunTask']);

/**
 * Where a task's time went: the exclusive time of each trace event nested in it (its duration minus that of the
 * events nested in it), summed by name into `into` (a Map), by wall time or, with `key` 'tdur', by thread time.
 * `events` are the main thread's complete events inside the task.
 */
function breakdown(task, events, key = 'dur', into = new Map(), forced = null) {
  const inside = events
    .filter((e) => e !== task && e.ts >= task.ts && e.ts + (e.dur ?? 0) <= task.ts + task.dur)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const stack = [{ name: '(task)', end: task.ts + task.dur, self: task[key] ?? 0, script: false }];
  const close = (frame) => into.set(frame.name, (into.get(frame.name) ?? 0) + frame.self);
  for (const e of inside) {
    while (stack.length > 1 && stack[stack.length - 1].end <= e.ts) close(stack.pop());
    const parent = stack[stack.length - 1];
    parent.self -= e[key] ?? 0;
    // Style or layout inside running script: a script read layout while it was dirty (a forced layout).
    if (forced && parent.script && LAYOUT_EVENTS.has(e.name)) { forced[e.name] += 1; forced.ms += (e[key] ?? 0) / 1000; }
    stack.push({ name: e.name, end: e.ts + (e.dur ?? 0), self: e[key] ?? 0, script: parent.script || SCRIPT_EVENTS.has(e.name) });
  }
  while (stack.length) close(stack.pop());
  return into;
}

/** Trace events that run page script, and those that compute style or layout. */
const SCRIPT_EVENTS = new Set(['FunctionCall', 'EventDispatch', 'FireAnimationFrame', 'TimerFire', 'RunMicrotasks', 'EvaluateScript', 'v8.callFunction', 'V8.Execute']);
const LAYOUT_EVENTS = new Set(['Layout', 'UpdateLayoutTree']);

/** A breakdown's entries, largest first, in ms. */
const ranked = (map) => [...map].filter(([, us]) => us > 0).sort((a, b) => b[1] - a[1]).map(([name, us]) => [name, us / 1000]);

/**
 * The longest main-thread tasks (ms) of a Chromium trace: between the page's `pb-start` and `pb-end` marks, and
 * between `pb-last-delta` and `pb-end`, each with what it was made of (`breakdown`). A task is a top-level task
 * slice of the renderer's main thread.
 */
function longestTasks(trace) {
  const events = JSON.parse(trace.toString('utf8')).traceEvents ?? [];
  const main = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const mark = (name) => events.find((e) => e.name === name && (e.cat ?? '').includes('blink.user_timing'))?.ts;
  const start = mark('pb-start');
  const lastDelta = mark('pb-last-delta');
  const end = mark('pb-end');
  const onMain = events.filter((e) => e.ph === 'X' && main.has(`${e.pid}:${e.tid}`));
  let whole = null;
  let ending = null;
  let cpu = 0;
  let longestCpu = 0;
  for (const e of onMain) {
    if (!TASK_EVENTS.has(e.name)) continue;
    // Every task overlapping the marks, the one that set `pb-start` too (a render called in the same task).
    if (start != null && end != null && e.ts + (e.dur ?? 0) >= start && e.ts <= end) {
      cpu += (e.tdur ?? 0) / 1000;
      longestCpu = Math.max(longestCpu, (e.tdur ?? 0) / 1000);
    }
    const from = e.ts;
    const to = e.ts + (e.dur ?? 0);
    if (start != null && end != null && to >= start && from <= end && e.dur > (whole?.dur ?? -1)) whole = e;
    if (lastDelta != null && end != null && to >= lastDelta && from <= end && e.dur > (ending?.dur ?? -1)) ending = e;
  }
  const within = (task) => onMain.filter((e) => e.ts >= task.ts && e.ts <= task.ts + task.dur);
  const parts = (task) => (task ? ranked(breakdown(task, within(task))) : []);
  // Thread time by trace event over every task of the stream: where the main thread's own time went.
  const threadParts = new Map();
  const forced = { Layout: 0, UpdateLayoutTree: 0, ms: 0 };
  for (const e of onMain) {
    if (TASK_EVENTS.has(e.name) && start != null && end != null && e.ts >= start && e.ts <= end) breakdown(e, within(e), 'tdur', threadParts, forced);
  }
  const top = onMain.filter((e) => TASK_EVENTS.has(e.name) && start != null && end != null && e.ts >= start && e.ts <= end)
    .sort((a, b) => b.dur - a.dur).slice(0, TOP_TASKS)
    .map((e) => ({ at: (e.ts - start) / 1000, ms: e.dur / 1000, cpu: (e.tdur ?? 0) / 1000, parts: parts(e).slice(0, 4) }));
  return {
    top,
    cpu,
    longestCpu,
    threadParts: ranked(threadParts),
    forced,
    longestTask: (whole?.dur ?? 0) / 1000,
    longestTaskAtEnd: (ending?.dur ?? 0) / 1000,
    longestTaskParts: parts(whole),
    longestTaskAtEndParts: parts(ending),
  };
}

/** Runs one round in a fresh page; `mode` is 'widget', 'other' (the compared element), 'empty', 'floor' or 'reparse'. */
async function round(mode) {
  const page = await browser.newPage({ viewport: { width: 900, height: 800 } });
  await page.goto(mode === 'other' ? `${base}?other` : base);
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
    } else if (m === 'empty') {
      for await (const _ of source()) { /* consumed, nothing rendered */ }
      await new Promise((r) => requestAnimationFrame(() => r()));
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
      const ms = performance.now() - t0;
      const streamed = [...longTasks];
      return { ms, frames, maxGap, longTasks: streamed.length, longest: Math.max(0, ...streamed), rendered };
    }
    streaming = false;
    performance.mark('pb-end');
    return { ms: performance.now() - start, frames, maxGap, longTasks: longTasks.length, longest: Math.max(0, ...longTasks), rendered: m === 'empty' ? 0 : text.length };
  }, { mode: mode === 'other' ? 'widget' : mode, chars: CHARS, deltas: DELTAS });
  const trace = await browser.stopTracing();
  await page.close();
  return { ...result, ...longestTasks(trace) };
}

/**
 * One round of rendering a stored conversation (a question and the finished answer) in a fresh page: `mode` 'stored'
 * renders it with the widget's message log, 'stored-empty' renders nothing (the page's own cost in the same window).
 */
async function storedRound(mode) {
  const page = await browser.newPage({ viewport: { width: 900, height: 800 } });
  await page.goto(`${base}bench/widget/stored.html`);
  await page.waitForFunction(() => window.pbLog);
  await browser.startTracing(page, { categories: ['devtools.timeline', 'blink.user_timing', 'toplevel'] });
  const result = await page.evaluate(async ({ mode: m, chars }) => {
    const unit = 'Some **bold** text and `code` in a paragraph that keeps going for a while.\n\n- a list item\n- another\n\n```js\nconst x = 1;\n```\n\n';
    const text = unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
    const state = {
      status: 'idle', draft: null, toolResults: [], pendingConfirmation: null,
      messages: [
        { id: 'q', role: 'user', blocks: [{ type: 'text', text: 'a long answer please' }] },
        { id: 'a', role: 'assistant', blocks: [{ type: 'text', text }] },
      ],
    };
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    const longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: false });
    const t0 = performance.now();
    performance.mark('pb-start');
    if (m === 'stored') {
      window.pbLog.render(state);
      while (window.pbLogRoot.querySelector('[aria-busy]')) await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
    performance.mark('pb-end');
    const ms = performance.now() - t0;
    const answer = window.pbLogRoot.querySelector('.msg.assistant .bubble');
    return { ms, longTasks: longTasks.length, rendered: answer ? answer.textContent.length : 0 };
  }, { mode, chars: CHARS });
  const trace = await browser.stopTracing();
  await page.close();
  return { ...result, ...longestTasks(trace) };
}

/** The top parts of the longest of these rounds' tasks, as "name ms, …". */
const parts = (list, key) => {
  const worst = list.reduce((a, b) => (b[key] > a[key] ? b : a));
  return worst[`${key}Parts`].slice(0, 5).map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', ');
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
if (STORED) {
  const stored = { 'stored-empty': [], stored: [] };
  for (let i = 0; i < ROUNDS; i += 1) for (const m of Object.keys(stored)) stored[m].push(await storedRound(m));
  console.log(`stored conversation: the same ${CHARS} characters, finished, rendered by the message log (${ROUNDS} rounds, median (max))`);
  for (const [name, list] of Object.entries(stored)) {
    const stat = (key, digits = 1) => `${median(list.map((r) => r[key])).toFixed(digits)} ms (max ${Math.max(...list.map((r) => r[key])).toFixed(digits)})`;
    console.log(`  ${name === 'stored' ? 'message log' : 'empty page (renders nothing)'}: until painted complete ${stat('ms', 0)}, `
      + `longest main-thread task ${stat('longestTask')}, its thread time ${stat('longestCpu')}, all tasks' thread time ${stat('cpu', 0)}, `
      + `long tasks ${median(list.map((r) => r.longTasks))}, rendered ${list[0].rendered} chars`);
    console.log(`    the longest task: ${parts(list, 'longestTask')}`);
    for (const [i, r] of list.entries()) {
      for (const task of r.top) {
        console.log(`      round ${i + 1}: ${task.ms.toFixed(1)} ms (thread ${task.cpu.toFixed(1)}) at ${task.at.toFixed(0)} ms: ${task.parts.map(([n, ms]) => `${n} ${ms.toFixed(1)}`).join(', ')}`);
      }
    }
  }
}
if (!STREAM) { await browser.close(); server.close(); process.exit(0); }
const modes = ['empty', 'floor', ...(NAIVE ? ['reparse'] : []), ...(COMPARE ? ['other'] : []), 'widget'];
const rows = Object.fromEntries(modes.map((m) => [m, []]));
for (let i = 0; i < ROUNDS; i += 1) {
  // Interleaved, so load on the machine hits all alike.
  for (const m of modes) rows[m].push(await round(m));
}
const LABELS = {
  widget: '<patchbridge-agent>', other: '<patchbridge-agent>@other', empty: 'empty page (deltas consumed, nothing rendered)',
  floor: 'floor: <pre> appendData', reparse: 'naive: full re-render per frame',
};
console.log(`widget streaming: ${CHARS} characters of Markdown in ${DELTAS} deltas, ${ROUNDS} rounds (median; spread min..max)`);
for (const [name, list] of Object.entries(rows)) {
  const ms = list.map((r) => r.ms);
  console.log(`  ${LABELS[name]}: ${median(ms).toFixed(0)} ms (${Math.min(...ms).toFixed(0)}..${Math.max(...ms).toFixed(0)}), `
    + `frames ${median(list.map((r) => r.frames))}, longest frame gap ${median(list.map((r) => r.maxGap)).toFixed(0)} ms, `
    + `long tasks ${median(list.map((r) => r.longTasks))} (longest ${median(list.map((r) => r.longest)).toFixed(0)} ms), rendered ${list[0].rendered} chars`);
  console.log(`    longest main-thread task: whole stream ${median(list.map((r) => r.longestTask)).toFixed(1)} ms `
    + `(max ${Math.max(...list.map((r) => r.longestTask)).toFixed(1)}), from the last delta to the painted end `
    + `${median(list.map((r) => r.longestTaskAtEnd)).toFixed(1)} ms (max ${Math.max(...list.map((r) => r.longestTaskAtEnd)).toFixed(1)})`);
  console.log(`    main thread's own time (trace thread time, less sensitive to load): all tasks ${median(list.map((r) => r.cpu)).toFixed(0)} ms, `
    + `the longest task ${median(list.map((r) => r.longestCpu)).toFixed(1)} ms (max ${Math.max(...list.map((r) => r.longestCpu)).toFixed(1)})`);
  console.log(`    forced by script (a read while dirty): ${median(list.map((r) => r.forced.Layout))} layouts, `
    + `${median(list.map((r) => r.forced.UpdateLayoutTree))} style updates, ${median(list.map((r) => r.forced.ms)).toFixed(1)} ms thread time`);
  console.log(`    the main thread's own time by kind (round 1): ${list[0].threadParts.slice(0, 8).map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(', ')}`);
  console.log(`    the longest task, whole stream: ${parts(list, 'longestTask')}`);
  console.log(`    the longest task at the end: ${parts(list, 'longestTaskAtEnd')}`);
  for (const [i, r] of list.entries()) {
    for (const task of r.top) {
      console.log(`      round ${i + 1}: ${task.ms.toFixed(1)} ms (thread ${task.cpu.toFixed(1)}) at ${task.at.toFixed(0)} ms: ${task.parts.map(([n, ms]) => `${n} ${ms.toFixed(1)}`).join(', ')}`);
    }
  }
}
const med = (name) => median(rows[name].map((r) => r.ms));
console.log(`  ratio widget / floor (wall): ${(med('widget') / med('floor')).toFixed(2)}×`
  + `${NAIVE ? `; widget / naive re-render: ${(med('widget') / med('reparse')).toFixed(2)}×` : ''}`);
await browser.close();
server.close();
