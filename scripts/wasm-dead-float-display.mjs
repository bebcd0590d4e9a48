// Drops std's float-to-decimal formatting from the runtime's wasm when nothing can reach it (run by
// scripts/build-wasm.sh on wasm-bindgen's output, which keeps its function names for this step; wasm-opt -Oz
// then removes what became unreachable and strips the names).
//
// Why it is linked at all: serde_json's `JsonUnexpected` Display (the text of an invalid-type error) writes a
// float itself, with zmij, and hands every other kind of `serde::de::Unexpected` to serde's own Display. That
// Display still holds its `Float` arm, which formats through the serde-private `WithDecimalPoint` and so
// `<f64 as Display>::fmt`, flt2dec, Grisu and Dragon (~18 KB raw, ~7 KiB gzip): an arm that is never taken,
// because the only caller never passes a float. wasm-opt cannot see that, and the function sits in the
// indirect-call table (a `fmt::Arguments` entry), which keeps it alive.
//
// The step replaces the body of `<f64 as Display>::fmt` with `unreachable` only when the binary shows that the
// sole way to it is that arm:
//   - `<f64 as Display>::fmt` is neither called directly nor taken as `ref.func`, and its table slot appears
//     as an `i32.const` only inside `<serde_core::de::WithDecimalPoint as Display>::fmt` and nowhere in the
//     data section (where a trait object's vtable would hold it);
//   - `<serde_core::de::Unexpected as Display>::fmt` (the only user of `WithDecimalPoint`, a private type of
//     serde) is not in the table and is called only by `<serde_json::error::JsonUnexpected as Display>::fmt`,
//     whose source handles `Unexpected::Float` before it delegates.
// Any other finding (a `format!("{}", some_f64)` anywhere in the runtime, a new serde or serde_json) leaves the
// module as it is and says why: the build stays correct and only the size shows it. Were the reasoning about
// serde_json ever wrong, the arm would trap (`unreachable`) rather than print a wrong text.
// Usage: node scripts/wasm-dead-float-display.mjs <in.wasm> <out.wasm>
import binaryen from 'binaryen';
import { readFileSync, writeFileSync } from 'node:fs';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/wasm-dead-float-display.mjs IN.wasm OUT.wasm');
  process.exit(2);
}
const bytes = readFileSync(input);
binaryen.setDebugInfo(true);
const module = binaryen.readBinary(bytes);
const F = binaryen.Features;
// The features of the wasm-opt run in scripts/build-wasm.sh.
module.setFeatures(F.BulkMemory | F.SignExt | F.NontrappingFPToInt | F.MutableGlobals | F.ReferenceTypes | F.Multivalue);

const names = [];
for (let i = 0; i < module.getNumFunctions(); i += 1) names.push(binaryen.getFunctionInfo(module.getFunctionByIndex(i)).name);
const one = (test) => {
  const found = names.filter(test);
  return found.length === 1 ? found[0] : null;
};
const floatDisplay = one((n) => /^<f64 as core(\[[0-9a-f]+\])?::fmt::Display>::fmt$/.test(n));
const withDecimalPoint = one((n) => n.startsWith('<serde_core::de::WithDecimalPoint as core::fmt::Display>::fmt::h'));
const unexpected = one((n) => n.startsWith('<serde_core::de::Unexpected as core::fmt::Display>::fmt::h'));
const jsonUnexpected = one((n) => n.startsWith('<serde_json::error::JsonUnexpected as core::fmt::Display>::fmt::h'));

/** The reason the module is left as it is, or null when the float formatting is provably unreachable. */
function keepReason() {
  if (!floatDisplay) return 'no single <f64 as Display>::fmt (nothing to do)';
  if (!withDecimalPoint || !unexpected || !jsonUnexpected) return 'serde / serde_json no longer have the expected Display functions';
  /** Table slot of each function in an element segment (the indirect-call table). */
  const slots = new Map();
  for (let s = 0; s < module.getNumElementSegments(); s += 1) {
    const info = binaryen.getElementSegmentInfo(module.getElementSegmentByIndex(s));
    const offset = binaryen.getExpressionInfo(info.offset);
    if (offset.id !== binaryen.ConstId) return 'an element segment has a non-constant offset';
    info.data.forEach((name, i) => { if (!slots.has(name)) slots.set(name, []); slots.get(name).push(offset.value + i); });
  }
  if (slots.has(unexpected)) return 'serde\'s Unexpected Display is in the table (reachable indirectly)';
  const floatSlots = slots.get(floatDisplay) ?? [];
  // Function bodies as text, keyed by name (binaryen prints each `(func $name` at the start of a line, a name
  // with spaces or brackets in double quotes).
  const nameAt = /^\$("[^"]*"|[^\s()]+)/;
  const unquote = (raw) => (raw.startsWith('"') ? raw.slice(1, -1) : raw);
  const [declarations, ...functions] = module.emitText().split('\n (func ');
  // Globals and the like (everything but the function bodies and the element segments that define the slots).
  const outside = declarations.split('\n').filter((line) => !line.startsWith(' (elem')).join('\n');
  for (const slot of floatSlots) {
    if (outside.includes(`(i32.const ${slot})`)) return `a declaration outside the functions holds the table slot of <f64 as Display>::fmt (${slot})`;
  }
  for (const chunk of functions) {
    const header = nameAt.exec(chunk);
    if (!header) return 'unreadable function text';
    const name = unquote(header[1]);
    const body = chunk.slice(header[0].length);
    for (const slot of floatSlots) {
      if (name !== withDecimalPoint && body.includes(`(i32.const ${slot})`)) return `${name} uses the table slot of <f64 as Display>::fmt`;
    }
    for (const ref of body.matchAll(/\((?:call|return_call|ref\.func) \$("[^"]*"|[^\s()]+)/g)) {
      const target = unquote(ref[1]);
      if (target === floatDisplay) return `${name} refers to <f64 as Display>::fmt directly`;
      if (target === unexpected && name !== jsonUnexpected) return `${name} calls serde's Unexpected Display`;
    }
  }
  // A trait object's vtable (or any stored function pointer) would hold the slot as 4 little-endian bytes in the
  // data section. Any such 4 bytes count (a coincidental number keeps the formatting: the safe side), except the
  // line of a panic location `{ file: &str, line: u32, column: u32 }`, recognised by the file text before it.
  const memory = dataSegments(bytes);
  const read = (address, length) => {
    const segment = memory.find((s) => address >= s.address && address + length <= s.address + s.bytes.length);
    return segment ? segment.bytes.subarray(address - segment.address, address - segment.address + length) : null;
  };
  for (const slot of floatSlots) {
    const le = Buffer.alloc(4);
    le.writeUInt32LE(slot);
    for (const segment of memory) {
      for (let at = segment.bytes.indexOf(le); at >= 0; at = segment.bytes.indexOf(le, at + 1)) {
        const file = at >= 8 ? read(segment.bytes.readUInt32LE(at - 8), segment.bytes.readUInt32LE(at - 4)) : null;
        if (file === null || !/^[\x20-\x7e]+\.rs$/.test(file.toString('latin1'))) {
          return `the data section holds the table slot of <f64 as Display>::fmt (${slot}) at ${segment.address + at}`;
        }
      }
    }
  }
  return null;
}

/** The active data segments of the wasm: `{ address, bytes }` each (constant i32 offsets, memory 0). */
function dataSegments(wasm) {
  let pos = 8;
  const leb = () => { let result = 0; let shift = 0; let b; do { b = wasm[pos++]; result += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80); return result; };
  const sleb = () => { let result = 0; let shift = 0; let b; do { b = wasm[pos++]; result |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80); return shift < 32 && (b & 0x40) ? result | (-1 << shift) : result; };
  const segments = [];
  while (pos < wasm.length) {
    const id = wasm[pos++];
    const size = leb();
    const end = pos + size;
    if (id === 11) {
      for (let n = leb(); n > 0; n -= 1) {
        const flags = leb();
        let address = null;
        if (flags === 0 || flags === 2) {
          if (flags === 2) leb();
          if (wasm[pos++] === 0x41) address = sleb() >>> 0;
          while (wasm[pos++] !== 0x0b);
        }
        const length = leb();
        if (address !== null) segments.push({ address, bytes: wasm.subarray(pos, pos + length) });
        pos += length;
      }
    }
    pos = end;
  }
  return segments;
}

const reason = keepReason();
if (reason === null) {
  binaryen.Function.setBody(module.getFunction(floatDisplay), module.unreachable());
  console.log('wasm-dead-float-display: <f64 as Display>::fmt is unreachable; its body is dropped');
} else {
  console.log(`wasm-dead-float-display: float formatting kept: ${reason}`);
}
writeFileSync(output, module.emitBinary());
