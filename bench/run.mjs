// Runtime benchmark of the BUILT package (npm/). Prints figures and ratios against baselines measured in the
// same run; never fails on timing (machines are shared and noisy). Run: scripts/bench.sh (node --expose-gc).
//
//   1. size     — wasm raw/gzip, the JS a page loads (minified glue + adapter, errors, entry) raw/gzip, total gzip
//                 vs 80 KiB.
//   2. stream   — a 100,000-delta custom-model stream through DefaultAgentRuntime (with and without an observer)
//                 vs a bare `for await` over the same generator; deltas/s and heap growth.
//   3. toolloop — a 50-step tool loop (model call → tool call → result, 50 times, then a final answer); ms/step
//                 vs a bare JavaScript loop doing the same iteration and tool calls without a runtime.
//   4. validation — the same loop with a 1 KiB argument object checked against a typical schema, against the
//                 same loop with `validateInput: false`: µs per call.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { DefaultAgentRuntime } from '../npm/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const DELTAS = Number(process.env.BENCH_DELTAS ?? 100_000);
const STEPS = Number(process.env.BENCH_STEPS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const gc = globalThis.gc ?? (() => {});
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const mb = (n) => `${(n / 1048576).toFixed(1)} MB`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function size() {
  const file = (p) => readFileSync(`${root}/npm/${p}`);
  const gz = (b) => gzipSync(b, { level: 9 }).length;
  const wasm = file('pkg/patchbridge_agent_bg.wasm');
  const glueFiles = ['pkg/patchbridge_agent.js', 'pkg/adapter.js', 'errors.js', 'index.js'];
  const glue = Buffer.concat(glueFiles.map(file));
  console.log('== size');
  console.log(`wasm            ${kib(wasm.length)} raw, ${kib(gz(wasm))} gzip`);
  for (const f of glueFiles) console.log(`  ${f.padEnd(26)} ${kib(file(f).length)} raw, ${kib(gz(file(f)))} gzip`);
  console.log(`JS glue total   ${kib(glue.length)} raw, ${kib(gz(glue))} gzip`);
  const total = gz(wasm) + gz(glue);
  console.log(`wasm + glue     ${kib(total)} gzip (target <= 80 KiB: ${total <= 80 * 1024 ? 'met' : 'NOT met'})`);
}

const limits = {
  maxModelCalls: 1000, maxToolCalls: 1000, maxDurationMs: 600_000,
  maxModelOutputCharacters: 100_000_000, maxToolResultCharacters: 1_000_000,
};
const input = { messages: [{ id: 'u', role: 'user', blocks: [{ type: 'text', text: 'go' }] }], modelState: null };

async function* deltaStream(n) {
  yield { type: 'message-start', id: 'a' };
  yield { type: 'block-start', index: 0, block: { type: 'text' } };
  for (let i = 0; i < n; i += 1) yield { type: 'block-delta', index: 0, delta: 'tok ' };
  yield { type: 'block-stop', index: 0 };
  yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
}

async function bare() {
  let count = 0;
  let text = '';
  for await (const event of deltaStream(DELTAS)) {
    if (event.type === 'block-delta') { count += 1; text += event.delta; }
  }
  if (count !== DELTAS || text.length !== DELTAS * 4) throw new Error('baseline miscounted');
}

async function throughRuntime(withObserver) {
  const runtime = new DefaultAgentRuntime({ stream: () => deltaStream(DELTAS) }, { limits });
  let seen = 0;
  const observer = withObserver ? (event) => { if (event.type === 'block-delta') seen += 1; } : undefined;
  const result = await runtime.start(input, observer).result;
  const text = result.messages[1].blocks[0].text;
  if (text.length !== DELTAS * 4) throw new Error('runtime lost deltas');
  if (withObserver && seen !== DELTAS) throw new Error(`observer saw ${seen} deltas`);
}

// Wall time and this process's CPU time (user + system) per round. On a shared, loaded machine the CPU time is
// the steadier figure; both are printed.
async function measure(fn) {
  const times = [];
  const cpu = [];
  let heap = 0;
  for (let r = 0; r < ROUNDS; r += 1) {
    gc();
    const before = process.memoryUsage();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    const after = process.memoryUsage();
    heap = Math.max(heap, after.heapUsed - before.heapUsed);
  }
  return { ms: median(times), cpuMs: median(cpu), heap };
}

async function stream() {
  console.log(`\n== stream: ${DELTAS.toLocaleString('en')} deltas (median of ${ROUNDS} rounds, after 1 warm-up)`);
  await bare(); await throughRuntime(false); await throughRuntime(true);
  const base = await measure(bare);
  const plain = await measure(() => throughRuntime(false));
  const observed = await measure(() => throughRuntime(true));
  const rate = (m) => Math.round(DELTAS / (m.ms / 1000));
  const cpuRate = (m) => Math.round(DELTAS / (m.cpuMs / 1000));
  const line = (label, m) => console.log(`${label.padEnd(40)} ${String(rate(m).toLocaleString('en')).padStart(11)} deltas/s wall (${m.ms.toFixed(1).padStart(6)} ms), ${String(cpuRate(m).toLocaleString('en')).padStart(11)} per CPU-s  heap +${mb(m.heap)}`);
  line('bare for-await baseline', base);
  line('DefaultAgentRuntime, no observer', plain);
  line('DefaultAgentRuntime, observer per delta', observed);
  console.log(`runtime / baseline (wall): ${(rate(plain) / rate(base)).toFixed(2)} no observer, ${(rate(observed) / rate(base)).toFixed(2)} with observer`);
  console.log(`target >= 500,000 deltas/s (no observer): wall ${rate(plain) >= 500_000 ? 'met' : 'NOT met'}, CPU ${cpuRate(plain) >= 500_000 ? 'met' : 'NOT met'}`);
  const wasmMem = process.memoryUsage().arrayBuffers;
  console.log(`process rss ${mb(process.memoryUsage().rss)}, arrayBuffers (incl. wasm memory) ${mb(wasmMem)}`);
}

/**
 * A model that calls tool `name` with `args(n)` in each of its first `steps` calls, then answers "done".
 * @param {number} steps
 * @param {{ name?: string, args?: (n: number) => string }} [tool]
 */
function loopModel(steps, { name = 'step', args = (n) => `{"n":${n}}` } = {}) {
  let call = 0;
  return {
    stream() {
      call += 1;
      const n = call;
      return (async function* () {
        yield { type: 'message-start' };
        if (n <= steps) {
          yield { type: 'block-start', index: 0, block: { type: 'tool-call', callId: `c${n}`, name } };
          yield { type: 'block-delta', index: 0, delta: args(n) };
          yield { type: 'block-stop', index: 0 };
          yield { type: 'message-stop', stopReason: 'tool-use', modelState: null };
        } else {
          yield { type: 'block-start', index: 0, block: { type: 'text' } };
          yield { type: 'block-delta', index: 0, delta: 'done' };
          yield { type: 'block-stop', index: 0 };
          yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
        }
      })();
    },
  };
}

const stepTool = {
  name: 'step', description: 'one step', inputSchema: { type: 'object' }, readOnly: true,
  execute: (args, ctx) => ({ toolCallId: ctx.callId, content: `ok ${args.n}`, isError: false }),
};

async function toolLoopRuntime() {
  const runtime = new DefaultAgentRuntime(loopModel(STEPS), { limits });
  const result = await runtime.start({ ...input, tools: [stepTool] }).result;
  if (result.messages.length !== 2 + STEPS * 2) throw new Error(`tool loop produced ${result.messages.length} messages`);
}

async function toolLoopBare() {
  const model = loopModel(STEPS);
  const messages = [];
  for (;;) {
    const calls = [];
    let args = '';
    for await (const event of model.stream()) {
      if (event.type === 'block-start' && event.block.type === 'tool-call') calls.push(event.block);
      else if (event.type === 'block-delta') args += event.delta;
    }
    if (calls.length === 0) break;
    const parsed = JSON.parse(args);
    messages.push(await stepTool.execute(parsed, { callId: calls[0].callId }));
  }
  if (messages.length !== STEPS) throw new Error('bare loop miscounted');
}

async function toolLoop() {
  console.log(`\n== tool loop: ${STEPS} steps (median of ${ROUNDS * 4} rounds, after warm-up)`);
  for (let i = 0; i < 3; i += 1) { await toolLoopRuntime(); await toolLoopBare(); }
  const times = [];
  const cpu = [];
  const bareTimes = [];
  for (let r = 0; r < ROUNDS * 4; r += 1) {
    const c0 = process.cpuUsage();
    let t0 = performance.now();
    await toolLoopRuntime();
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    t0 = performance.now();
    await toolLoopBare();
    bareTimes.push(performance.now() - t0);
  }
  const perStep = median(times) / STEPS;
  const cpuPerStep = median(cpu) / STEPS;
  const barePerStep = median(bareTimes) / STEPS;
  console.log(`DefaultAgentRuntime   ${perStep.toFixed(4)} ms/step wall (${median(times).toFixed(2)} ms per run, best ${(Math.min(...times) / STEPS).toFixed(4)}), ${cpuPerStep.toFixed(4)} CPU-ms/step`);
  console.log(`bare JS loop baseline ${barePerStep.toFixed(4)} ms/step (same model iteration and tool calls, no runtime)`);
  console.log(`target <= 0.1 ms/step: wall ${perStep <= 0.1 ? 'met' : 'NOT met'}, CPU ${cpuPerStep <= 0.1 ? 'met' : 'NOT met'}`);
}

/** A typical tool's arguments (~1 KiB of JSON) and a schema using the common keywords (shared with perf.rs). */
const ARGS = {
  title: 'Weekly groceries for the family dinner on Saturday',
  priority: 'high',
  due: '2026-12-05',
  assignee: 'dana@example.com',
  tags: ['food', 'weekly', 'family', 'saturday', 'dinner', 'shopping'],
  items: Array.from({ length: 10 }, (_, i) => ({ name: `item number ${i} with a longer name`, quantity: i + 1, unit: i % 2 ? 'kg' : 'pcs', optional: i % 3 === 0 })),
  notes: 'Buy the fresh produce last so it stays cold; the shop closes at eight. Check the price of olive oil first.',
};
const SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    priority: { enum: ['low', 'normal', 'high'] },
    due: { type: 'string', format: 'date' },
    assignee: { anyOf: [{ type: 'string', format: 'email' }, { type: 'null' }] },
    tags: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' }, maxItems: 20, uniqueItems: true },
    items: { type: 'array', items: { $ref: '#/$defs/item' }, minItems: 1 },
    notes: { type: 'string', maxLength: 2000 },
  },
  required: ['title', 'items'],
  additionalProperties: false,
  $defs: {
    item: {
      type: 'object',
      properties: { name: { type: 'string' }, quantity: { type: 'number', exclusiveMinimum: 0 }, unit: { enum: ['pcs', 'kg', 'l'] }, optional: { type: 'boolean' } },
      required: ['name', 'quantity'],
      additionalProperties: false,
    },
  },
};
const ARGS_TEXT = JSON.stringify(ARGS);

async function validationLoop(validateInput, inputSchema = SCHEMA, argsText = ARGS_TEXT, steps = STEPS) {
  const tool = {
    name: 'plan', description: 'plan shopping', inputSchema, readOnly: true, validateInput,
    execute: (args, ctx) => ({ toolCallId: ctx.callId, content: 'ok', isError: false }),
  };
  const runtime = new DefaultAgentRuntime(loopModel(steps, { name: 'plan', args: () => argsText }), { limits });
  const result = await runtime.start({ ...input, tools: [tool] }).result;
  const refused = result.messages.flatMap((m) => m.blocks).filter((b) => b.type === 'tool-result' && b.isError);
  if (refused.length) throw new Error(`the bench arguments do not match the bench schema: ${refused[0].content}`);
}

/** The cost of checking a 1 KiB argument object: the same loop with validateInput true and false, interleaved. */
async function validation() {
  console.log(`\n== argument validation: ${ARGS_TEXT.length}-byte arguments, ${STEPS}-step loop (median of ${ROUNDS * 4} interleaved rounds)`);
  for (let i = 0; i < 3; i += 1) { await validationLoop(true); await validationLoop(false); }
  const checked = [];
  const unchecked = [];
  const checkedCpu = [];
  const uncheckedCpu = [];
  const timed = async (validateInput, wall, cpu) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await validationLoop(validateInput);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  };
  for (let r = 0; r < ROUNDS * 4; r += 1) {
    await timed(true, checked, checkedCpu);
    await timed(false, unchecked, uncheckedCpu);
  }
  const us = (ms) => (ms / STEPS) * 1000;
  const line = (label, wall, cpu, note = '') => console.log(`${label.padEnd(22)} ${us(median(wall)).toFixed(1).padStart(7)} µs/step wall, ${us(median(cpu)).toFixed(1).padStart(7)} CPU-µs/step${note}`);
  line('validateInput: true', checked, checkedCpu);
  line('validateInput: false', unchecked, uncheckedCpu, ' (baseline: the same loop without the check)');
  const wallCost = us(median(checked)) - us(median(unchecked));
  const cpuCost = us(median(checkedCpu)) - us(median(uncheckedCpu));
  console.log(`validation             ${wallCost.toFixed(1)} µs wall, ${cpuCost.toFixed(1)} CPU-µs per step (difference of medians: one registration per run, when \`start\` compiles the schema, spread over ${STEPS} checks)`);
  // The same difference for a 1-step run separates the two: what a run pays once (registration: the schema
  // compiled, its patterns compiled by the page's RegExp) and what each call pays (the check itself).
  const once = [[], []];
  for (let r = 0; r < ROUNDS * 4; r += 1) {
    for (const [validateInput, wall] of [[true, once[0]], [false, once[1]]]) {
      const t0 = performance.now();
      await validationLoop(validateInput, SCHEMA, ARGS_TEXT, 1);
      wall.push(performance.now() - t0);
    }
  }
  const oneStep = (median(once[0]) - median(once[1])) * 1000;
  const perCall = (wallCost * STEPS - oneStep) / (STEPS - 1);
  console.log(`  of which per run      ${(oneStep - perCall).toFixed(1)} µs wall (registration; 1-step runs, ${ROUNDS * 4} interleaved rounds)`);
  console.log(`  of which per call     ${perCall.toFixed(1)} µs wall (target < 20 µs: ${perCall < 20 ? 'met' : 'NOT met'})`);
  await patternCrossing();
}

/**
 * What one `pattern` check costs in the package, where the page's RegExp matches it: a call of 200 tags, each
 * checked against a pattern, against the same call whose schema has no pattern (the difference per tag is the
 * crossing into JS, the string's copy and `RegExp.test`), beside `RegExp.test` alone in JS.
 */
async function patternCrossing() {
  const TAGS = 1000;
  const pattern = '^[a-z][a-z0-9-]*$';
  const argsText = JSON.stringify({ tags: Array.from({ length: TAGS }, (_, i) => `tag-${i}`) });
  const schema = (withPattern) => ({ type: 'object', properties: { tags: { type: 'array', items: withPattern ? { type: 'string', pattern } : { type: 'string' } } } });
  const [patterned, plain] = [schema(true), schema(false)];
  for (let i = 0; i < 3; i += 1) { await validationLoop(true, patterned, argsText); await validationLoop(true, plain, argsText); }
  const withWall = [];
  const withoutWall = [];
  for (let r = 0; r < ROUNDS * 4; r += 1) {
    for (const [schemaOf, wall] of [[patterned, withWall], [plain, withoutWall]]) {
      gc();
      const t0 = performance.now();
      await validationLoop(true, schemaOf, argsText);
      wall.push(performance.now() - t0);
    }
  }
  const perCheck = ((median(withWall) - median(withoutWall)) / (STEPS * TAGS)) * 1e6;
  const regex = new RegExp(pattern, 'u');
  const tags = JSON.parse(argsText).tags;
  const jsOnly = [];
  for (let r = 0; r < ROUNDS * 4; r += 1) {
    const t0 = performance.now();
    let hits = 0;
    for (let s = 0; s < STEPS; s += 1) for (const tag of tags) if (regex.test(tag)) hits += 1;
    jsOnly.push(performance.now() - t0);
    if (hits !== STEPS * TAGS) throw new Error('the bench tags must match the pattern');
  }
  const jsPerCheck = (median(jsOnly) / (STEPS * TAGS)) * 1e6;
  console.log(`pattern check          ${perCheck.toFixed(0)} ns per string in the package (crossing + RegExp.test; ${TAGS} tags × ${STEPS} steps, difference of wall medians), RegExp.test alone ${jsPerCheck.toFixed(0)} ns`);
}

size();
await stream();
await toolLoop();
await validation();
