// The reading code the build's binary-proving steps share (scripts/wasm-dead-float-display.mjs,
// scripts/wasm-dead-panic-formatting.mjs): a wasm-bindgen output that keeps its function names, read with binaryen,
// its function bodies as text keyed by name, its indirect-call table slots and its initial memory. Each step
// proves from these that a function body is unreachable (or only traps) before it replaces the body with
// `unreachable`; wasm-opt -Oz then removes what became dead.
//
// Both steps reason about facts of particular versions (std's panicking code, serde_json's error text, binaryen's
// printer), so each asserts those versions first (`assertVersions`), and a step that cannot apply is a build
// failure (`refuse`), never a silent "kept": drift must be looked at, not paid for in bytes (or, for the float
// step, risked as a trap). The fixtures in scripts/tests/ are modules each step must refuse.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import binaryen from 'binaryen';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The version of a crate in Cargo.lock, or null when it is not there once. */
export function lockedVersion(crate, lock = readFileSync(path.join(ROOT, 'Cargo.lock'), 'utf8')) {
  const found = [...lock.matchAll(/\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"/g)]
    .filter((m) => m[1] === crate).map((m) => m[2]);
  return found.length === 1 ? found[0] : null;
}

/** The binaryen npm package's version (what reads, prints and rewrites the module). */
export function binaryenVersion() {
  return JSON.parse(readFileSync(path.join(ROOT, 'node_modules/binaryen/package.json'), 'utf8')).version;
}

/** `rustc --version`'s release (`1.95.0`): the compiler that built the module, pinned by rust-toolchain.toml. */
export function rustcVersion() {
  const text = execFileSync('rustc', ['--version'], { cwd: ROOT, encoding: 'utf8' });
  return /^rustc (\S+)/.exec(text)?.[1] ?? null;
}

/**
 * Fails the build unless the versions a step's reasoning was checked against are the ones in use: `crates`
 * (Cargo.lock), `rustc` and `binaryen`. A new version is a reviewed change: read what the step's header says about
 * it, then update the step's list.
 */
export function assertVersions(step, { crates = {}, rustc, binaryen: binaryenWanted }) {
  const wrong = [];
  for (const [crate, version] of Object.entries(crates)) {
    const locked = lockedVersion(crate);
    if (locked !== version) wrong.push(`${crate} ${locked ?? '(not locked once)'} in Cargo.lock, reviewed: ${version}`);
  }
  if (rustc !== undefined && rustcVersion() !== rustc) wrong.push(`rustc ${rustcVersion()}, reviewed: ${rustc}`);
  if (binaryenWanted !== undefined && binaryenVersion() !== binaryenWanted) {
    wrong.push(`binaryen ${binaryenVersion()}, reviewed: ${binaryenWanted}`);
  }
  if (wrong.length > 0) refuse(step, `its reasoning was checked against other versions: ${wrong.join('; ')}`);
}

/** The source file `file` of the locked `crate` in the cargo registry (what was compiled), or null. */
export function crateSource(crate, file) {
  const version = lockedVersion(crate);
  const registry = path.join(process.env.CARGO_HOME ?? path.join(process.env.HOME ?? '', '.cargo'), 'registry', 'src');
  if (version === null || !existsSync(registry)) return null;
  for (const index of readdirSync(registry)) {
    const candidate = path.join(registry, index, `${crate}-${version}`, file);
    if (existsSync(candidate)) return readFileSync(candidate, 'utf8');
  }
  return null;
}

/**
 * Whether serde_json's `src/error.rs` formats `de::Unexpected::Float` in `JsonUnexpected`'s Display itself, before
 * the arm that hands every other kind to serde's Display (the fact scripts/wasm-dead-float-display.mjs rests on).
 */
export function jsonUnexpectedFormatsFloats(source) {
  const impl = /impl<'a> Display for JsonUnexpected<'a> \{([\s\S]*?)\n\}/.exec(source);
  if (!impl) return false;
  const float = impl[1].indexOf('de::Unexpected::Float(value) =>');
  const delegate = impl[1].indexOf('unexp => Display::fmt(&unexp, formatter)');
  return float >= 0 && delegate >= 0 && float < delegate;
}

/** Stops the build: the step cannot show that its change is safe, so it makes none (exit status 1). */
export function refuse(step, reason) {
  console.error(`${step}: refused: ${reason}`);
  console.error(`${step}: the step cannot show its change is safe here; see its header (scripts/${step}.mjs).`);
  process.exit(1);
}

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

/**
 * Every 32-bit number a body writes as a constant, in any context: `i32.const`, each half of an `i64.const` (two
 * 32-bit stores merged into one, a pointer beside its length or vtable), each lane of a `v128.const`. Unsigned.
 */
export function constants32(body) {
  const found = [];
  for (const m of body.matchAll(/\(i32\.const (-?\d+)\)/g)) found.push(Number(m[1]) >>> 0);
  for (const m of body.matchAll(/\(i64\.const (-?\d+)\)/g)) {
    const v = BigInt.asUintN(64, BigInt(m[1]));
    found.push(Number(v & 0xffffffffn), Number(v >> 32n));
  }
  for (const m of body.matchAll(/\(v128\.const i32x4((?: 0x[0-9a-f]+)+)\)/g)) {
    for (const lane of m[1].trim().split(' ')) found.push(Number(lane) >>> 0);
  }
  if (/\(v128\.const (?!i32x4)/.test(body)) throw new Error('a v128.const printed in another lane format');
  return found;
}

/** The static load/store offsets (`offset=N`) of a body. */
export function offsets(body) {
  return [...body.matchAll(/offset=(\d+)/g)].map((m) => Number(m[1]));
}

/**
 * The first address a body can reach from a constant that passes `test`, also through a local, or null: each
 * constant at or above `base`, each such constant plus each load/store offset of the same body
 * (`(local.set $p (i32.const A))` … `(i32.load offset=8 (local.get $p))` reads A+8, a number the text never
 * holds), and each offset at or above `base` (a load from `(i32.const 0)` or from a small index). Constants at
 * or above `limit` (the initial memory's end, where no static lies) are not addresses of statics.
 */
export function reachedAddress(body, base, limit, test) {
  const bases = [...new Set(constants32(body).filter((n) => n >= base && n < limit))];
  const offs = [0, ...new Set(offsets(body))];
  for (const c of bases) for (const o of offs) if (test(c + o)) return c + o;
  for (const o of offs) if (o >= base && test(o)) return o;
  return null;
}
