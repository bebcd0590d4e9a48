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
//     as an `i32.const` value only inside `<serde_core::de::WithDecimalPoint as Display>::fmt` (a constant
//     added to a local, an address offset, is not a function pointer) and nowhere in the data section (where
//     a trait object's vtable would hold it);
//   - `<serde_core::de::Unexpected as Display>::fmt` (the only user of `WithDecimalPoint`, a private type of
//     serde) is not in the table and is called only by `<serde_json::error::JsonUnexpected as Display>::fmt`,
//     whose source handles `Unexpected::Float` before it delegates.
// Any other finding (a `format!("{}", some_f64)` anywhere in the runtime, a new serde or serde_json) leaves the
// module as it is and says why: the build stays correct and only the size shows it. Were the reasoning about
// serde_json ever wrong, the arm would trap (`unreachable`) rather than print a wrong text.
// The reading code is scripts/wasm-module-text.mjs.
// Usage: node scripts/wasm-dead-float-display.mjs <in.wasm> <out.wasm>
import { readFileSync, writeFileSync } from 'node:fs';
import { dropBody, directTargets, one, readModule, wordsInData } from './wasm-module-text.mjs';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/wasm-dead-float-display.mjs IN.wasm OUT.wasm');
  process.exit(2);
}
const { module, names, bodies, declarations, slots, memory } = readModule(readFileSync(input));
const single = (test) => one(names, test);
const floatDisplay = single((n) => /^<f64 as core(\[[0-9a-f]+\])?::fmt::Display>::fmt$/.test(n));
const withDecimalPoint = single((n) => n.startsWith('<serde_core::de::WithDecimalPoint as core::fmt::Display>::fmt::h'));
const unexpected = single((n) => n.startsWith('<serde_core::de::Unexpected as core::fmt::Display>::fmt::h'));
const jsonUnexpected = single((n) => n.startsWith('<serde_json::error::JsonUnexpected as core::fmt::Display>::fmt::h'));

/**
 * How often `body` holds the number `slot` as a value that could be a function pointer: every `(i32.const slot)`
 * except those added to or subtracted from a local or global (`base ± slot`: an address, such as a stack frame's
 * field or the frame itself; compiled Rust never forms a table index by arithmetic on a variable, and LLVM folds
 * `0 + slot`). Frame sizes and offsets equal to the slot are common in the large async functions, and counting
 * them would keep the formatting by coincidence.
 */
function valueUses(body, slot) {
  const all = body.split(`(i32.const ${slot})`).length - 1;
  const offsets = body.match(new RegExp(`\\(i32\\.(?:add|sub)\\s+\\((?:local|global)\\.get \\$[^\\s()]+\\)\\s+\\(i32\\.const ${slot}\\)\\s*\\)`, 'g'));
  return all - (offsets?.length ?? 0);
}

/** The reason the module is left as it is, or null when the float formatting is provably unreachable. */
function keepReason() {
  if (!floatDisplay) return 'no single <f64 as Display>::fmt (nothing to do)';
  if (!withDecimalPoint || !unexpected || !jsonUnexpected) return 'serde / serde_json no longer have the expected Display functions';
  if (slots === null) return 'an element segment has a non-constant offset';
  if (slots.has(unexpected)) return 'serde\'s Unexpected Display is in the table (reachable indirectly)';
  const floatSlots = slots.get(floatDisplay) ?? [];
  for (const slot of floatSlots) {
    if (declarations.includes(`(i32.const ${slot})`)) return `a declaration outside the functions holds the table slot of <f64 as Display>::fmt (${slot})`;
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
  return null;
}

const reason = keepReason();
if (reason === null) {
  dropBody(module, floatDisplay);
  console.log('wasm-dead-float-display: <f64 as Display>::fmt is unreachable; its body is dropped');
} else {
  console.log(`wasm-dead-float-display: float formatting kept: ${reason}`);
}
writeFileSync(output, module.emitBinary());
