// Attributes the runtime's wasm bytes by area (prints figures; asserts nothing). Reads a wasm that keeps its
// "name" section (function names) and splits the code section by function into areas: the runtime's core, its
// bindings, the wasm-bindgen shims, serde / serde_json, the protocol crate, futures, std's formatting, float
// formatting, allocation, maps and the rest, with raw bytes, gzip -9 and brotli 11 of each area's function bodies
// compressed on their own (a part's share, not an exact contribution: the whole compresses better than its parts).
// The data section is split into printable text and the rest. Build the name-keeping wasm first (the same code
// as the shipped one; the build only keeps names):
//   wasm-bindgen --keep-debug --target web --out-dir /tmp/wn "$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release/patchbridge_agent.wasm"
//   node scripts/wasm-dead-float-display.mjs /tmp/wn/patchbridge_agent_bg.wasm /tmp/wn/patchbridge_agent_bg.wasm
//   node_modules/.bin/wasm-opt -g --remove-unused-module-elements <the features of scripts/build-wasm.sh> \
//     -o /tmp/wn/patchbridge_agent_bg.wasm /tmp/wn/patchbridge_agent_bg.wasm
//   node scripts/wasm-dead-panic-formatting.mjs /tmp/wn/patchbridge_agent_bg.wasm /tmp/wn/patchbridge_agent_bg.wasm
//   node_modules/.bin/wasm-opt -Oz -g --strip-dwarf --strip-producers <the features of scripts/build-wasm.sh> \
//     -o /tmp/wn/named.wasm /tmp/wn/patchbridge_agent_bg.wasm
// (The shipped import section is smaller: scripts/wasm-short-import-names.mjs runs after wasm-opt.)
// Usage: node bench/weight/attribute.mjs /tmp/wn/named.wasm [--top N]  (N largest functions as well)
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const file = process.argv[2];
if (!file) { console.error('usage: node bench/weight/attribute.mjs NAMED.wasm [--top N]'); process.exit(2); }
const top = process.argv.includes('--top') ? Number(process.argv[process.argv.indexOf('--top') + 1]) : 0;
const bytes = readFileSync(file);

let pos = 8;
const leb = () => { let result = 0; let shift = 0; let b; do { b = bytes[pos++]; result += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80); return result; };
const name = () => { const n = leb(); const s = bytes.subarray(pos, pos + n).toString('utf8'); pos += n; return s; };

const sections = [];
let importedFunctions = 0;
const bodies = [];
const names = new Map();
const data = [];
while (pos < bytes.length) {
  const id = bytes[pos++];
  const size = leb();
  const start = pos;
  const end = start + size;
  let label = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'elem', 'code', 'data', 'datacount'][id];
  if (id === 0) {
    const custom = name();
    label = `custom "${custom}"`;
    if (custom === 'name') {
      while (pos < end) {
        const sub = bytes[pos++];
        const subSize = leb();
        const subEnd = pos + subSize;
        if (sub === 1) { for (let n = leb(); n > 0; n -= 1) { const index = leb(); names.set(index, name()); } }
        pos = subEnd;
      }
    }
  } else if (id === 2) {
    for (let n = leb(); n > 0; n -= 1) {
      name(); name();
      const kind = bytes[pos++];
      if (kind === 0) { leb(); importedFunctions += 1; } else if (kind === 1) { pos += 1; const f = bytes[pos++]; leb(); if (f & 1) leb(); } else if (kind === 2) { const f = bytes[pos++]; leb(); if (f & 1) leb(); } else if (kind === 3) { pos += 2; }
    }
  } else if (id === 10) {
    for (let n = leb(), i = 0; i < n; i += 1) { const s = leb(); bodies.push(bytes.subarray(pos, pos + s)); pos += s; }
  } else if (id === 11) {
    for (let n = leb(); n > 0; n -= 1) {
      const flags = leb();
      if (flags === 0) { while (bytes[pos++] !== 0x0b); } else if (flags === 2) { leb(); while (bytes[pos++] !== 0x0b); }
      const s = leb(); data.push(bytes.subarray(pos, pos + s)); pos += s;
    }
  }
  sections.push({ label, size: end - start });
  pos = end;
}

/** The path of a Rust legacy-mangled symbol (`_ZN4core3fmt5write17h…E` → `core::fmt::write`), else the name. */
function demangle(symbol) {
  if (!symbol.startsWith('_ZN')) return symbol;
  const parts = [];
  let i = 3;
  while (i < symbol.length && symbol[i] !== 'E') {
    let j = i; while (/[0-9]/.test(symbol[j])) j += 1;
    const n = Number(symbol.slice(i, j));
    if (!n) break;
    parts.push(symbol.slice(j, j + n)); i = j + n;
  }
  if (/^h[0-9a-f]{16}$/.test(parts.at(-1) ?? '')) parts.pop();
  return parts.join('::').replace(/\$LT\$/g, '<').replace(/\$GT\$/g, '>').replace(/\$u20\$/g, ' ').replace(/\$u7b\$/g, '{').replace(/\$u7d\$/g, '}').replace(/\$RF\$/g, '&').replace(/\$C\$/g, ',').replace(/\.\./g, '::');
}

// First match wins; the order puts the specific areas before the crates that host them.
const AREAS = [
  ['float formatting (<f64 as Display>, flt2dec, grisu, dragon, bignum)', /flt2dec|dec2flt|grisu|dragon|bignum|float_to_decimal|float_to_exponential|fmt::float|<f64 as|<f32 as|zmij|ryu/],
  ['bindings (patchbridge_agent::bindings)', /patchbridge_agent::bindings/],
  ['core (patchbridge_agent::core)', /patchbridge_agent::core|patchbridge_agent::/],
  ['wasm-bindgen export shims and glue support', /^__wbg|wasm_bindgen|__wbindgen|externref|multivalue shim|describe|^[a-z0-9]+_[a-z0-9_]+$/],
  ['protocol (derives, tagged.rs)', /patchbridge_protocol/],
  ['serde_json', /serde_json/],
  ['serde (derive support, de::Error, Content)', /serde/],
  ['futures, wasm-bindgen-futures, js-sys', /futures|js_sys|gloo/],
  ['indexmap, hashbrown, hashing', /indexmap|hashbrown|foldhash|hash/i],
  ['core::fmt, panics, str/char/iter helpers (std)', /core::fmt|::fmt|panic|core\[|core::|<char>|std::|__multi3|itoa/],
  ['alloc and dlmalloc', /alloc|dlmalloc|RawVec|memcpy|memmove|memset|memcmp/],
];
const area = (n) => (AREAS.find(([, re]) => re.test(n)) ?? ['other (unnamed or std)'])[0];

const groups = new Map();
const functions = [];
bodies.forEach((body, i) => {
  const symbol = demangle(names.get(importedFunctions + i) ?? `func${importedFunctions + i}`);
  const a = area(symbol);
  if (!groups.has(a)) groups.set(a, []);
  groups.get(a).push(body);
  functions.push({ symbol, size: body.length, area: a });
});

const gz = (b) => gzipSync(b, { level: 9 }).length;
const br = (b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const row = (label, b, extra = '') => console.log(`| ${label} | ${b.length} | ${kb(gz(b))} | ${kb(br(b))} |${extra}`);

console.log(`${file}: ${bytes.length} bytes, ${bodies.length} functions (${importedFunctions} imported)`);
console.log('\nsections (raw bytes):', sections.map((s) => `${s.label} ${s.size}`).join(', '));
console.log('\n| area | raw bytes | gzip -9 alone | brotli 11 alone | functions |\n|---|---|---|---|---|');
for (const [label, list] of [...groups].sort((a, b) => b[1].reduce((s, x) => s + x.length, 0) - a[1].reduce((s, x) => s + x.length, 0))) {
  row(label, Buffer.concat(list), ` ${list.length} |`);
}
const all = Buffer.concat(data);
const printable = Buffer.from([...all].filter((c) => c >= 0x20 && c < 0x7f));
row('data section (all segments)', all, ` ${data.length} segments |`);
console.log(`\ndata: ${printable.length} of ${all.length} bytes printable ASCII; code section ${Buffer.concat(bodies).length} bytes`);
if (top) {
  console.log(`\n${top} largest functions:`);
  for (const f of functions.sort((a, b) => b.size - a.size).slice(0, top)) console.log(`${String(f.size).padStart(7)}  ${f.area.split(' ')[0].padEnd(10)} ${f.symbol}`);
}
