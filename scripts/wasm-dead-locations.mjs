// Zeroes the panic locations that no code of the runtime's wasm can read any more (run by scripts/build-wasm.sh
// after wasm-opt, on bytes only: the module is not re-encoded).
//
// Why they are there: every call of a `#[track_caller]` function that can panic (a `RefCell` borrow, a slice
// index, an `unwrap`) passes the address of a `core::panic::Location` record, `{ file: &str, line: u32,
// column: u32 }` (16 bytes), whose `file` points to the source path. Since scripts/wasm-dead-panic-formatting.mjs
// a panic only traps, so wasm-opt removes the code that passed those addresses, but it never shrinks the data
// section: ~300 records and ~50 paths (~8 KB, ~1.7 KiB gzip) stay in the file, read by nothing.
//
// The step sets a record's 16 bytes to zero only when the binaries show:
//   - before wasm-opt (BEFORE, the module wasm-opt read), some code named the record's first byte as a constant:
//     the record is a static of its own whose address code passed as a value, as rustc does for a caller
//     location (an element of a table reached by an index would not be named itself);
//   - after wasm-opt (IN), no `i32.const` and no load/store offset of the code or of the declarations (globals,
//     segment offsets) lands inside the record, and no 4 bytes of the data section (at any alignment) hold an
//     address inside it, while the 16 bytes are still the ones they were before;
//   - the data section has only active segments at constant addresses.
// A path is zeroed when every record pointing to it is zeroed and nothing else (no constant, no data word outside
// those records) lands inside it.
// Why that suffices: a `Location` is read only through its own address, at the constant offsets of its fields
// (`file()`, `line()`, `column()`); rustc never indexes into it. So code that could read it holds a constant
// inside it, or reads the address from the data, and the checks above find either. Were a record read after all,
// it would read as an empty path at line 0, and only by a panic message nobody formats.
// A passive segment (or one at a computed address) keeps the module as it is and says why; a record whose bytes
// are not the ones wasm-opt read, or that something still names, is kept.
// The reading code is scripts/wasm-module-text.mjs.
// Usage: node scripts/wasm-dead-locations.mjs <before-wasm-opt.wasm> <in.wasm> <out.wasm>
import { readFileSync, writeFileSync } from 'node:fs';
import binaryen from 'binaryen';
import { dataSegments, FEATURES } from './wasm-module-text.mjs';

const [beforeFile, input, output] = process.argv.slice(2);
if (!beforeFile || !input || !output) {
  console.error('usage: node scripts/wasm-dead-locations.mjs BEFORE-WASM-OPT.wasm IN.wasm OUT.wasm');
  process.exit(2);
}

/** Every constant the module's text names: `(i32.const N)` and `offset=N` of its functions and declarations. */
function namedConstants(bytes) {
  const module = binaryen.readBinary(bytes);
  module.setFeatures(FEATURES);
  const text = module.emitText();
  module.dispose();
  const found = new Set();
  for (const m of text.matchAll(/offset=(\d+)|\(i32\.const (-?\d+)\)/g)) found.add(Number(m[1] ?? m[2]) >>> 0);
  return found;
}

/** How many data segments the module declares (active or passive). */
function segmentCount(wasm) {
  let pos = 8;
  const leb = () => { let result = 0; let shift = 0; let b; do { b = wasm[pos++]; result += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80); return result; };
  while (pos < wasm.length) {
    const id = wasm[pos++];
    const size = leb();
    if (id === 11) return leb();
    pos += size;
  }
  return 0;
}

const before = readFileSync(beforeFile);
const bytes = Buffer.from(readFileSync(input));
const memory = dataSegments(bytes);
const beforeMemory = dataSegments(before);
const segmentAt = (segments, a, n) => segments.find((s) => a >= s.address && a + n <= s.address + s.bytes.length);
const read = (segments, a, n) => { const s = segmentAt(segments, a, n); return s ? s.bytes.subarray(a - s.address, a - s.address + n) : null; };

/** The dead records and paths as `[address, length]`, or the reason the module is kept. */
function deadRanges() {
  if (memory.length !== segmentCount(bytes)) return 'the data section has a passive segment or a non-constant offset';
  const namedBefore = namedConstants(before);
  const namedAfter = namedConstants(bytes);
  const records = [];
  for (const s of memory) {
    for (let i = (4 - (s.address % 4)) % 4; i + 16 <= s.bytes.length; i += 4) {
      const [file, length, line, column] = [0, 4, 8, 12].map((o) => s.bytes.readUInt32LE(i + o));
      if (length === 0 || length > 300 || line === 0 || column === 0) continue;
      const path = read(memory, file, length);
      if (path && /^[\x20-\x7e]+\.rs$/.test(path.toString('latin1'))) records.push({ at: s.address + i, file, length });
    }
  }
  // Every 4 bytes of the data as a little-endian value, by where they are.
  const words = [];
  for (const s of memory) for (let i = 0; i + 4 <= s.bytes.length; i += 1) words.push([s.address + i, s.bytes.readUInt32LE(i)]);
  const inside = (v, a, n) => v >= a && v < a + n;
  const namedByCode = (a, n) => { for (let x = a; x < a + n; x += 1) if (namedAfter.has(x)) return true; return false; };
  const dead = records.filter((r) => {
    if (!namedBefore.has(r.at) || namedByCode(r.at, 16)) return false;
    const was = read(beforeMemory, r.at, 16);
    return was !== null && was.equals(read(memory, r.at, 16));
  });
  // Data words pointing into a record keep it; a word that overlaps a dead record goes with it.
  const overlapsDead = (at) => dead.some((r) => at + 4 > r.at && at < r.at + 16);
  const keptByData = new Set();
  for (const [at, v] of words) {
    if (overlapsDead(at)) continue;
    for (const r of dead) if (inside(v, r.at, 16)) keptByData.add(r.at);
  }
  const zeroed = dead.filter((r) => !keptByData.has(r.at));
  const zeroedSet = new Set(zeroed.map((r) => r.at));
  const ranges = zeroed.map((r) => [r.at, 16]);
  const paths = new Map();
  for (const r of records) {
    if (!paths.has(r.file)) paths.set(r.file, { length: r.length, live: false });
    if (!zeroedSet.has(r.at)) paths.get(r.file).live = true;
  }
  const overlapsZeroed = (at) => zeroed.some((r) => at + 4 > r.at && at < r.at + 16);
  for (const [file, { length, live }] of paths) {
    if (live || namedByCode(file, length)) continue;
    if (words.some(([at, v]) => inside(v, file, length) && !overlapsZeroed(at))) continue;
    ranges.push([file, length]);
  }
  return { ranges, records: zeroed.length, total: records.length };
}

const found = deadRanges();
if (typeof found === 'string') {
  console.log(`wasm-dead-locations: panic locations kept: ${found}`);
} else {
  let zeroedBytes = 0;
  for (const [a, n] of found.ranges) {
    read(memory, a, n).fill(0);
    zeroedBytes += n;
  }
  console.log(`wasm-dead-locations: ${found.records} of ${found.total} panic locations and ${found.ranges.length - found.records} source paths read by nothing, ${zeroedBytes} bytes zeroed`);
}
writeFileSync(output, bytes);
