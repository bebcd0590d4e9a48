// The reading code the build's binary-proving steps share (scripts/wasm-dead-float-display.mjs,
// scripts/wasm-dead-panic-formatting.mjs): a wasm-bindgen output that keeps its function names, read with binaryen,
// its function bodies as text keyed by name, its indirect-call table slots and its initial memory. Each step
// proves from these that a function body is unreachable (or only traps) before it replaces the body with
// `unreachable`; wasm-opt -Oz then removes what became dead. scripts/wasm-dead-locations.mjs uses its data
// segments and features after wasm-opt.
import binaryen from 'binaryen';

/** The features of the wasm-opt run in scripts/build-wasm.sh. */
const F = binaryen.Features;
export const FEATURES = F.BulkMemory | F.SignExt | F.NontrappingFPToInt | F.MutableGlobals | F.ReferenceTypes | F.Multivalue;

/** A function name as binaryen prints it after `$` (a name with spaces or brackets in double quotes). */
export const unquote = (raw) => (raw.startsWith('"') ? raw.slice(1, -1) : raw);

/**
 * Reads a name-keeping wasm: `{ module, names, bodies, declarations, slots, memory }`. `bodies` maps each defined
 * function's name to its body as binaryen's text; `declarations` is the text outside the functions (globals and
 * the like) without the element segments; `slots` maps a function name to its table slots (null when an element
 * segment has a non-constant offset); `memory` lists the active data segments, `{ address, bytes }`.
 */
export function readModule(bytes) {
  binaryen.setDebugInfo(true);
  const module = binaryen.readBinary(bytes);
  module.setFeatures(FEATURES);
  const names = [];
  for (let i = 0; i < module.getNumFunctions(); i += 1) names.push(binaryen.getFunctionInfo(module.getFunctionByIndex(i)).name);
  let slots = new Map();
  for (let s = 0; s < module.getNumElementSegments(); s += 1) {
    const info = binaryen.getElementSegmentInfo(module.getElementSegmentByIndex(s));
    const offset = binaryen.getExpressionInfo(info.offset);
    if (offset.id !== binaryen.ConstId) { slots = null; break; }
    info.data.forEach((name, i) => { if (!slots.has(name)) slots.set(name, []); slots.get(name).push(offset.value + i); });
  }
  // binaryen prints each `(func $name` at the start of a line.
  const nameAt = /^\$("[^"]*"|[^\s()]+)/;
  const [head, ...functions] = module.emitText().split('\n (func ');
  const declarations = head.split('\n').filter((line) => !line.startsWith(' (elem')).join('\n');
  const bodies = new Map();
  for (const chunk of functions) {
    const header = nameAt.exec(chunk);
    if (!header) throw new Error('unreadable function text');
    bodies.set(unquote(header[1]), chunk.slice(header[0].length));
  }
  return { module, names, bodies, declarations, slots, memory: dataSegments(bytes) };
}

/** The one function whose name passes `test`, or null when none or several do. */
export function one(names, test) {
  const found = names.filter(test);
  return found.length === 1 ? found[0] : null;
}

/** The functions a body calls directly or takes as `ref.func`. */
export function directTargets(body) {
  return [...body.matchAll(/\((?:call|return_call|ref\.func) \$("[^"]*"|[^\s()]+)/g)].map((m) => unquote(m[1]));
}

/** `length` bytes of the initial memory at `address`, or null when no single data segment holds them all. */
export function readMemory(memory, address, length) {
  const segment = memory.find((s) => address >= s.address && address + length <= s.address + s.bytes.length);
  return segment ? segment.bytes.subarray(address - segment.address, address - segment.address + length) : null;
}

/**
 * Where the initial memory holds `value` as 4 little-endian bytes (a stored function pointer, table slot or
 * address), except as the line of a panic location `{ file: &str, line: u32, column: u32 }`, recognised by the
 * file text before it. Any other such 4 bytes count, a coincidental number included (the safe side).
 */
export function wordsInData(memory, value) {
  const le = Buffer.alloc(4);
  le.writeUInt32LE(value >>> 0);
  const found = [];
  for (const segment of memory) {
    for (let at = segment.bytes.indexOf(le); at >= 0; at = segment.bytes.indexOf(le, at + 1)) {
      const file = at >= 8 ? readMemory(memory, segment.bytes.readUInt32LE(at - 8), segment.bytes.readUInt32LE(at - 4)) : null;
      if (file === null || !/^[\x20-\x7e]+\.rs$/.test(file.toString('latin1'))) found.push(segment.address + at);
    }
  }
  return found;
}

/** The active data segments of the wasm: `{ address, bytes }` each (constant i32 offsets, memory 0). */
export function dataSegments(wasm) {
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

/** Replaces the body of the named function with `unreachable`. */
export function dropBody(module, name) {
  binaryen.Function.setBody(module.getFunction(name), module.unreachable());
}
