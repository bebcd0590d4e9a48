// Gives the functions the runtime's wasm imports from its wasm-bindgen glue short names, in the wasm and in the
// glue's import object alike (run by scripts/build-wasm.sh on the finished npm/pkg staging directory).
// wasm-bindgen names each import `__wbg_<name>_<16 hex digits>`: ~75 such names, written once in the wasm's import
// section and once as keys of the glue's import object, and their hex digits do not compress (~1.5 KiB gzip in
// the wasm, ~1 KiB in the glue). Only the names from the glue's own module ("./patchbridge_agent_bg.js") change;
// the imports of npm/adapter.js ("./adapter.js") are that module's export names and stay. The glue must hold each
// old name exactly once, as a key of the import object; anything else stops the build.
// The exports the glue reads as `wasm.<name>` (its `let wasm = instance.exports`) get short names too (~30, the
// classes' `__call` entries, `__wbg_<class>_free`, the closure invokers `…_invoke__h<16 hex digits>`, the
// allocator's); `memory` and any export the glue does not read keep theirs. The glue must use such a name only as
// `wasm.<name>` (or as its own identifier, which the closure invokers' JS wrappers share): a `.name` on another
// object or the name in a string stops the build. The declarations wasm-bindgen writes beside the glue (pkg/*.d.ts,
// not shipped) get the new export names as well, so they stay true.
// Usage: node scripts/wasm-short-import-names.mjs <dir>  (rewrites <dir>/patchbridge_agent_bg.wasm and
// <dir>/patchbridge_agent.js in place)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/wasm-short-import-names.mjs <dir>');
  process.exit(2);
}
const GLUE_MODULE = './patchbridge_agent_bg.js';
const wasmFile = path.join(dir, 'patchbridge_agent_bg.wasm');
const glueFile = path.join(dir, 'patchbridge_agent.js');
const declarationFiles = [path.join(dir, 'patchbridge_agent.d.ts'), path.join(dir, 'patchbridge_agent_bg.wasm.d.ts')];
const wasm = readFileSync(wasmFile);
let glue = readFileSync(glueFile, 'utf8');

const uleb = (n) => {
  const out = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Buffer.from(out);
};
const text = (s) => {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([uleb(b.length), b]);
};
/** 0 → "a", 25 → "z", 26 → "A", 51 → "Z", 52 → "aa"…: short identifiers that are valid unquoted keys. */
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const shortName = (i) => (i < LETTERS.length ? LETTERS[i] : shortName(Math.floor(i / LETTERS.length) - 1) + LETTERS[i % LETTERS.length]);

let pos = 8;
const leb = () => {
  let result = 0;
  let shift = 0;
  let b;
  do { b = wasm[pos++]; result += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
  return result;
};
const str = () => { const n = leb(); const s = wasm.subarray(pos, pos + n).toString('utf8'); pos += n; return s; };

const parts = [wasm.subarray(0, 8)];
const renamed = new Map();
const exportsRenamed = new Map();
const escape = (name) => name.replace(/\$/g, '\\$');
/** Whether the glue reads export `name` only as `wasm.<name>` (at least once). */
const readByGlueOnly = (name) => {
  let reads = 0;
  for (const m of glue.matchAll(new RegExp(`(?<![\\w$])${escape(name)}(?![\\w$])`, 'g'))) {
    const before = glue.slice(Math.max(0, m.index - 5), m.index);
    if (before === 'wasm.') reads += 1;
    else if (/[.'"`]$/.test(before)) throw new Error(`glue uses the wasm export ${name} other than as wasm.${name}`);
  }
  return reads > 0;
};
while (pos < wasm.length) {
  const sectionStart = pos;
  const id = wasm[pos++];
  const size = leb();
  const end = pos + size;
  if (id === 7) {
    const entries = [];
    const count = leb();
    for (let i = 0; i < count; i += 1) {
      const name = str();
      const descStart = pos;
      pos += 1;
      leb();
      let newName = name;
      if (name !== 'memory' && readByGlueOnly(name)) {
        newName = shortName(exportsRenamed.size);
        exportsRenamed.set(name, newName);
      }
      entries.push(Buffer.concat([text(newName), wasm.subarray(descStart, pos)]));
    }
    if (pos !== end) throw new Error('export section not read to its end');
    const body = Buffer.concat([uleb(count), ...entries]);
    parts.push(Buffer.from([7]), uleb(body.length), body);
    continue;
  }
  if (id !== 2) {
    parts.push(wasm.subarray(sectionStart, end));
    pos = end;
    continue;
  }
  const entries = [];
  const count = leb();
  for (let i = 0; i < count; i += 1) {
    const module = str();
    const name = str();
    const descStart = pos;
    const kind = wasm[pos++];
    if (kind === 0) leb();
    else if (kind === 1) { pos += 1; const flags = wasm[pos++]; leb(); if (flags & 1) leb(); }
    else if (kind === 2) { const flags = wasm[pos++]; leb(); if (flags & 1) leb(); }
    else if (kind === 3) pos += 2;
    else throw new Error(`import ${module} ${name}: unknown kind ${kind}`);
    let newName = name;
    if (module === GLUE_MODULE) {
      newName = shortName(renamed.size);
      renamed.set(name, newName);
    }
    entries.push(Buffer.concat([text(module), text(newName), wasm.subarray(descStart, pos)]));
  }
  if (pos !== end) throw new Error('import section not read to its end');
  const body = Buffer.concat([uleb(count), ...entries]);
  parts.push(Buffer.from([2]), uleb(body.length), body);
}

for (const [name, short] of renamed) {
  const key = new RegExp(`(?<![\\w$])("?)${name.replace(/\$/g, '\\$')}\\1:`, 'g');
  const uses = glue.split(name).length - 1;
  const keys = [...glue.matchAll(key)].length;
  if (uses !== 1 || keys !== 1) throw new Error(`glue holds ${name} ${uses} times (${keys} as an import-object key); expected once, as a key`);
  glue = glue.replace(key, `${short}:`);
}
const declarations = declarationFiles.map((file) => readFileSync(file, 'utf8'));
for (const [name, short] of exportsRenamed) {
  glue = glue.replace(new RegExp(`(?<![\\w$])wasm\\.${escape(name)}(?![\\w$])`, 'g'), `wasm.${short}`);
  declarations.forEach((text, i) => {
    declarations[i] = text.replace(new RegExp(`(readonly |export const )${escape(name)}:`, 'g'), `$1${short}:`);
  });
}
const out = Buffer.concat(parts);
const exported = new Set(WebAssembly.Module.exports(new WebAssembly.Module(out)).map((e) => e.name));
for (const m of glue.matchAll(/(?<![\w$])wasm\.([\w$]+)/g)) {
  if (!exported.has(m[1])) throw new Error(`glue reads wasm.${m[1]}, which the wasm does not export`);
}
writeFileSync(wasmFile, out);
writeFileSync(glueFile, glue);
declarationFiles.forEach((file, i) => writeFileSync(file, declarations[i]));
console.log(`wasm-short-import-names: ${renamed.size} imports and ${exportsRenamed.size} exports renamed`);
