// Classifies the runtime's data section (prints figures; asserts nothing). Reads the same name-keeping wasm as
// bench/weight/attribute.mjs (its header says how to build it; the data section is byte for byte the shipped one)
// and splits the initial memory into:
//   - panic `Location` records (`{ file: &str, line: u32, column: u32 }`, recognised by the `.rs` text their first
//     word points to), named by a constant of the code or a word of the data, or named by nothing;
//   - the source paths those records point to, kept by a named record or by none;
//   - printable texts (runs of 6+ printable bytes, mostly letters), by the area of the first function whose constant lands on the
//     text or one of the two bytes before it (a `format!` template starts with a length byte), else named only by
//     a data word (string tables: serde's field lists, std's error kinds), else named by nothing;
//   - the rest: binary tables (float powers, Unicode tables, hex decoding, vtables, `format!` argument lists).
// Raw bytes and gzip -9 of each class compressed on its own. "Named by nothing" means that no i32 constant or
// load/store offset of the code and no 4-byte word of the data equals an address inside it: a measured
// potential, not a proof that nothing reads it (an address computed as a constant plus an index can land in a
// neighbouring static). With --zero it also prints the gzip of the shipped wasm with the Location records and
// paths named by nothing zeroed (the most that dropping them could save).
// Usage: node bench/weight/data-section.mjs NAMED.wasm [--texts] [--zero SHIPPED.wasm]
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dataSegments, readModule } from '../../scripts/wasm-module-text.mjs';

const file = process.argv[2];
if (!file) { console.error('usage: node bench/weight/data-section.mjs NAMED.wasm [--texts] [--zero SHIPPED.wasm]'); process.exit(2); }
const listTexts = process.argv.includes('--texts');
const zeroIndex = process.argv.indexOf('--zero');
const { bodies, memory, declarations } = readModule(readFileSync(file));

const AREAS = [
  ['core', /patchbridge_agent::core/],
  ['bindings and wasm-bindgen shims', /patchbridge_agent::bindings|patchbridge_agent::|_shim|^__wbg|wasm_bindgen|^[a-z0-9]+_[a-z0-9_]+$/],
  ['serde, serde_json, protocol', /serde|patchbridge_protocol/],
  ['std, futures, js-sys and other crates', /./],
];
const areaOf = (name) => AREAS.find(([, re]) => re.test(name))[0];

// Every constant of the code (with the first function naming it) and every 4-byte word of the data.
const named = new Map();
for (const [name, body] of [...bodies, ['<declarations>', declarations]]) {
  for (const m of body.matchAll(/offset=(\d+)|\(i32\.const (-?\d+)\)/g)) {
    const n = Number(m[1] ?? m[2]) >>> 0;
    if (!named.has(n)) named.set(n, name);
  }
}
const words = new Map();
for (const s of memory) {
  for (let i = 0; i + 4 <= s.bytes.length; i += 1) {
    const v = s.bytes.readUInt32LE(i);
    if (!words.has(v)) words.set(v, []);
    words.get(v).push(s.address + i);
  }
}
const segmentOf = (a) => memory.find((s) => a >= s.address && a < s.address + s.bytes.length);
const bytesAt = (a, n) => { const s = segmentOf(a); return s && a + n <= s.address + s.bytes.length ? s.bytes.subarray(a - s.address, a - s.address + n) : null; };
const namedIn = (a, n, except = new Set()) => {
  for (let x = a; x < a + n; x += 1) {
    if (named.has(x)) return true;
    if ((words.get(x) ?? []).some((at) => !except.has(at))) return true;
  }
  return false;
};

// Location records, then their paths.
const records = [];
const recordWords = new Set();
for (const s of memory) {
  for (let i = 0; i + 16 <= s.bytes.length; i += 4) {
    const [p, l, line, column] = [0, 4, 8, 12].map((o) => s.bytes.readUInt32LE(i + o));
    if (l < 4 || l > 300 || line > 1e6 || column > 1e4) continue;
    const path = bytesAt(p, l);
    if (!path || !/^[\x20-\x7e]+\.rs$/.test(path.toString('latin1'))) continue;
    records.push({ at: s.address + i, path: p, length: l });
    recordWords.add(s.address + i);
  }
}
const claimed = new Uint8Array(Math.max(...memory.map((s) => s.address + s.bytes.length)));
const classes = new Map();
const add = (label, a, n) => {
  const b = bytesAt(a, n);
  if (!classes.has(label)) classes.set(label, []);
  classes.get(label).push(b);
  claimed.fill(1, a, a + n);
};
const livePaths = new Set();
const deadRanges = [];
for (const r of records) {
  const live = namedIn(r.at, 16);
  if (live) livePaths.add(r.path);
  else deadRanges.push([r.at, 16]);
  add(live ? 'Location records, named' : 'Location records, named by nothing', r.at, 16);
}
const paths = new Map(records.map((r) => [r.path, r.length]));
for (const [p, l] of paths) {
  const live = livePaths.has(p) || namedIn(p, l, recordWords);
  if (!live) deadRanges.push([p, l]);
  add(live ? 'source paths, of a named record' : 'source paths, of records named by nothing', p, l);
}

// Printable texts.
const texts = [];
for (const s of memory) {
  for (let i = 0; i < s.bytes.length;) {
    let j = i;
    while (j < s.bytes.length && !claimed[s.address + j] && ((s.bytes[j] >= 0x20 && s.bytes[j] < 0x7f) || s.bytes[j] === 10)) j += 1;
    const run = s.bytes.subarray(i, j).toString('latin1');
    // Short or symbol-heavy runs are bytes of binary tables that happen to be printable.
    if (j - i >= 6 && (run.match(/[A-Za-z ]/g)?.length ?? 0) >= 0.7 * run.length) {
      const a = s.address + i;
      const namer = [a, a - 1, a - 2].map((x) => named.get(x)).find(Boolean);
      // A later piece of a `format!` template follows the previous piece after an argument marker and its options (up to 8 bytes)
      // and is reached through the template's start.
      const previous = texts.at(-1);
      const label = namer ? `texts named by ${areaOf(namer)}`
        : namedIn(a, j - i) ? 'texts named by a data word or inside'
          : previous && a - previous.end <= 8 ? previous.label : 'texts named by nothing';
      add(label, a, j - i);
      texts.push({ label, end: a + j - i, line: `${label}\t${j - i}\t${JSON.stringify(run)}` });
      i = j;
    } else i = j + 1;
  }
}
for (const s of memory) {
  let start = -1;
  for (let i = 0; i <= s.bytes.length; i += 1) {
    const free = i < s.bytes.length && !claimed[s.address + i];
    if (free && start < 0) start = i;
    if (!free && start >= 0) { add('binary (tables, vtables, argument lists)', s.address + start, i - start); start = -1; }
  }
}

const gz = (b) => gzipSync(b, { level: 9 }).length;
const all = Buffer.concat(memory.map((s) => s.bytes));
console.log(`${file}: data ${all.length} bytes (${gz(all)} gzip -9) in ${memory.length} segments; ${records.length} Location records, ${paths.size} paths`);
console.log('\n| class | pieces | raw bytes | gzip -9 alone |\n|---|---:|---:|---:|');
for (const [label, list] of [...classes].sort((a, b) => Buffer.concat(b[1]).length - Buffer.concat(a[1]).length)) {
  const b = Buffer.concat(list);
  console.log(`| ${label} | ${list.length} | ${b.length} | ${gz(b)} |`);
}
if (listTexts) console.log(`\n${texts.map((t) => t.line).join('\n')}`);
if (zeroIndex > 0) {
  const shipped = readFileSync(process.argv[zeroIndex + 1]);
  const copy = Buffer.from(shipped);
  let zeroed = 0;
  for (const [a, n] of deadRanges) {
    for (const s of dataSegments(copy)) {
      if (a >= s.address && a + n <= s.address + s.bytes.length) { s.bytes.fill(0, a - s.address, a - s.address + n); zeroed += n; }
    }
  }
  console.log(`\nzeroing the ${zeroed} bytes of records and paths named by nothing: ${gz(shipped)} -> ${gz(copy)} bytes gzip -9`);
}
