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
//   - `<f64 as Display>::fmt` is neither called directly nor taken as `ref.func`, and its table slot appears as a
//     32-bit constant (an `i32.const` in any context, a half of an `i64.const`, a lane of a `v128.const`) only
//     inside `<serde_core::de::WithDecimalPoint as Display>::fmt`, in no declaration, and in no 4-aligned word of
//     the data section (where a trait object's vtable would hold it);
//   - `<serde_core::de::Unexpected as Display>::fmt` (the only user of `WithDecimalPoint`, a private type of
//     serde) is not in the table and is called only by `<serde_json::error::JsonUnexpected as Display>::fmt`;
//   - serde_json's source, as compiled (the locked version in the cargo registry), still handles
//     `de::Unexpected::Float` in `JsonUnexpected`'s Display before it delegates to serde's;
//   - serde, serde_json, rustc and binaryen are the versions this was checked against (a new one is a reviewed
//     change of REVIEWED below).
// Anything else stops the build with the reason (scripts/wasm-module-text.mjs, `refuse`). Were the reasoning about
// serde_json ever wrong, the arm would trap (`unreachable`) rather than print a wrong text; tests/node/
// float-error-text.test.mjs drives that path through the shipped wasm and reads the text.
// The reading code is scripts/wasm-module-text.mjs; scripts/tests/wasm-steps.test.mjs has the modules it refuses.
// Usage: node scripts/wasm-dead-float-display.mjs <in.wasm> <out.wasm>
import { readFileSync, writeFileSync } from 'node:fs';
import {
  assertVersions, constants32, crateSource, directTargets, dropBody, jsonUnexpectedFormatsFloats, one, readModule, refuse,
  wordsInData,
} from './wasm-module-text.mjs';

const STEP = 'wasm-dead-float-display';
/** The versions the reasoning above was checked against. */
const REVIEWED = { crates: { serde_core: '1.0.229', serde_json: '1.0.154' }, rustc: '1.95.0', binaryen: '132.0.0' };

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/wasm-dead-float-display.mjs IN.wasm OUT.wasm');
  process.exit(2);
}
assertVersions(STEP, REVIEWED);
const { module, names, bodies, declarations, slots, memory } = readModule(readFileSync(input));
const single = (test) => one(names, test);
const floatDisplay = single((n) => /^<f64 as core(\[[0-9a-f]+\])?::fmt::Display>::fmt$/.test(n));
const withDecimalPoint = single((n) => n.startsWith('<serde_core::de::WithDecimalPoint as core::fmt::Display>::fmt::h'));
const unexpected = single((n) => n.startsWith('<serde_core::de::Unexpected as core::fmt::Display>::fmt::h'));
const jsonUnexpected = single((n) => n.startsWith('<serde_json::error::JsonUnexpected as core::fmt::Display>::fmt::h'));

/**
 * How often `body` holds `slot` as a 32-bit constant, in any context (`base + slot` too: no address arithmetic
 * is excused). A load/store `offset=` is part of an address, never a value, and does not count.
 */
function valueUses(body, slot) {
  return constants32(body).filter((n) => n === slot).length;
}

/** Why serde_json's source, as compiled, does not show that `JsonUnexpected` formats a float itself, or null. */
function serdeJsonReason() {
  const source = crateSource('serde_json', 'src/error.rs');
  if (source === null) return 'serde_json\'s src/error.rs (the locked version) is not in the cargo registry';
  return jsonUnexpectedFormatsFloats(source) ? null
    : 'serde_json\'s JsonUnexpected Display no longer formats Unexpected::Float before it delegates to serde';
}

/** The reason the step cannot apply, or null when the float formatting is provably unreachable. */
function keepReason() {
  if (!floatDisplay) return 'no single <f64 as Display>::fmt (a renamed symbol, or nothing left to drop)';
  if (!withDecimalPoint || !unexpected || !jsonUnexpected) return 'serde / serde_json no longer have the expected Display functions';
  if (slots === null) return 'an element segment has a non-constant offset';
  if (slots.has(unexpected)) return 'serde\'s Unexpected Display is in the table (reachable indirectly)';
  const floatSlots = slots.get(floatDisplay) ?? [];
  for (const slot of floatSlots) {
    if (valueUses(declarations, slot) > 0) return `a declaration outside the functions holds the table slot of <f64 as Display>::fmt (${slot})`;
  }
  for (const [name, body] of bodies) {
    for (const slot of floatSlots) {
      if (name !== withDecimalPoint && valueUses(body, slot) > 0) return `${name} uses the table slot of <f64 as Display>::fmt`;
    }
    for (const target of directTargets(body)) {
      if (target === floatDisplay) return `${name} refers to <f64 as Display>::fmt directly`;
      if (target === unexpected && name !== jsonUnexpected) return `${name} calls serde's Unexpected Display`;
    }
  }
  if (bodies.get(jsonUnexpected) === undefined || !directTargets(bodies.get(jsonUnexpected)).includes(unexpected)) {
    return 'serde_json\'s JsonUnexpected Display does not call serde\'s Unexpected Display (the printer or the code changed)';
  }
  // A trait object's vtable (or any stored function pointer) would hold the slot as 4 little-endian bytes in the
  // data section, at an address that is a multiple of 4 (a function pointer's alignment on wasm32: vtables and
  // `fmt::Arguments` are arrays and structs of pointer-sized words). Any such aligned 4 bytes count (a
  // coincidental number keeps the formatting: the safe side), except the line of a panic location
  // `{ file: &str, line: u32, column: u32 }`, recognised by the file text before it. Unaligned matches are
  // parts of other data: the slot number moves with every build, and 300 once matched an exponent inside a table
  // of powers of ten.
  for (const slot of floatSlots) {
    const [at] = wordsInData(memory, slot).filter((address) => address % 4 === 0);
    if (at !== undefined) return `the data section holds the table slot of <f64 as Display>::fmt (${slot}) at ${at}`;
  }
  return serdeJsonReason();
}

const reason = keepReason();
if (reason !== null) refuse(STEP, reason);
dropBody(module, floatDisplay);
console.log(`${STEP}: <f64 as Display>::fmt is unreachable; its body is dropped`);
writeFileSync(output, module.emitBinary());
