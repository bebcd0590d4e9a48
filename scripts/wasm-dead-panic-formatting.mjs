// Drops the panic machinery's message formatting from the runtime's wasm when the binary shows that a panic can
// only end in a trap (run by scripts/build-wasm.sh after scripts/wasm-dead-float-display.mjs, on wasm-bindgen's
// output with its function names; wasm-opt -Oz then removes what became unreachable and strips the names).
//
// Why it is linked at all: the wasm is built with `panic = "abort"`, and on wasm32-unknown-unknown std's default
// panic hook writes nowhere (the target has no stderr). Still, every panic site builds a `fmt::Arguments` and
// calls `core::panicking::panic_fmt`, which wraps it in std's `FormatStringPayload` (a trait object whose
// `get`/`take_box`/`Display` format the message) and hands it to `std::panicking::panic_with_hook`. That
// function reads the payload only for a hook installed with `std::panic::set_hook`, or for the message of a
// panic inside such a hook; with the default hook it counts the panic and aborts (`__rust_start_panic` →
// `unreachable`). wasm-opt cannot see that: the payload's methods sit in the indirect-call table, and the
// arguments every panic site builds stay alive as stores before the call.
//
// The step replaces the bodies of `panic_with_hook` and `panic_fmt` with `unreachable` (the trap the panic ends
// in anyway) only when the binary shows:
//   - no `set_hook`, `take_hook` or `update_hook` is linked, so the hook stays std's default one;
//   - the static state of `panic_with_hook` (the panic counts, the hook slot: every static address it or
//     `panic_count::increase` names) is reached by no other function (no 32-bit constant of it, in an `i32.const`,
//     an `i64.const` half or a `v128.const` lane, and no constant plus a load/store offset of the same function,
//     the shape of an address kept in a local) and no declaration, appears in no data word, and starts zeroed, so
//     nothing else can see that a panic no longer counts itself before the trap (`std::thread::panicking()` is not
//     linked);
//   - `panic_with_hook` returns nothing, and the way from `panic_fmt` to it is quiet: every function on it calls
//     only such functions directly, makes no indirect call, stores to no constant static address, sets no global
//     but the stack pointer and has no loop.
//   - rustc (std's panicking code) and binaryen (its printer) are the versions this was checked against (REVIEWED).
// Any other finding stops the build with the reason (scripts/wasm-module-text.mjs, `refuse`), instead of costing
// ~3 KiB gzip silently.
// What changes is invisible to the runtime's callers: a panic was a `RuntimeError: unreachable` trap and still is
// (it no longer lowers the stack pointer or bumps the private panic counts first, state only a later panic read).
// The reading code is scripts/wasm-module-text.mjs; scripts/tests/wasm-steps.test.mjs has the modules it refuses.
// Usage: node scripts/wasm-dead-panic-formatting.mjs <in.wasm> <out.wasm>
import { readFileSync, writeFileSync } from 'node:fs';
import {
  assertVersions, constants32, directTargets, dropBody, one, reachedAddress, readMemory, readModule, refuse, wordsInData,
} from './wasm-module-text.mjs';

const STEP = 'wasm-dead-panic-formatting';
/** The versions the reasoning above was checked against. */
const REVIEWED = { rustc: '1.95.0', binaryen: '132.0.0' };

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/wasm-dead-panic-formatting.mjs IN.wasm OUT.wasm');
  process.exit(2);
}
assertVersions(STEP, REVIEWED);
const { module, names, bodies, declarations, memory } = readModule(readFileSync(input));
const crate = (name) => `${name}(\\[[0-9a-f]+\\])?`;
const single = (pattern) => one(names, (n) => new RegExp(`^${pattern}$`).test(n));
const panicFmt = single(`${crate('core')}::panicking::panic_fmt`);
const withHook = single(`${crate('std')}::panicking::panic_with_hook`);
const increase = single(`${crate('std')}::panicking::panic_count::increase`);

/** The first static address of the memory (rustc's stack ends there; statics and data lie above it). */
function staticBase() {
  const global = /\(global \$__stack_pointer \(mut i32\) \(i32\.const (\d+)\)\)/.exec(declarations);
  return global ? Number(global[1]) : null;
}

/** The static addresses a body names: `offset=N` and 32-bit constants in [base, limit). */
function staticAddresses(body, base, limit) {
  const found = new Set();
  for (const m of body.matchAll(/offset=(\d+)/g)) if (Number(m[1]) >= base && Number(m[1]) < limit) found.add(Number(m[1]));
  for (const n of constants32(body)) if (n >= base && n < limit) found.add(n);
  return found;
}

/** Why `name` is not quiet (see the header), or null; its direct calls are followed by the caller. */
function loudness(name, body, base) {
  if (/\(call_indirect|\(call_ref|\(return_call_indirect/.test(body)) return `${name} makes an indirect call`;
  if (/\(loop/.test(body)) return `${name} has a loop`;
  if (/\(memory\./.test(body)) return `${name} uses a bulk memory operation`;
  for (const m of body.matchAll(/\(global\.set \$("[^"]*"|[^\s()]+)/g)) {
    if (m[1] !== '$__stack_pointer' && m[1] !== '__stack_pointer') return `${name} sets the global ${m[1]}`;
  }
  for (const m of body.matchAll(/\((?:i32|i64|f32|f64)\.store\w*(?: offset=(\d+))?(?: align=\d+)?\n\s*\((i32\.const (\d+)\))?/g)) {
    if (Number(m[1] ?? 0) + Number(m[3] ?? 0) >= base) return `${name} writes static memory`;
  }
  return null;
}

/** The reason the module is left as it is, or null when a panic provably only traps. */
function keepReason() {
  if (!panicFmt || !withHook) return 'no single panic_fmt and panic_with_hook (a renamed symbol, or nothing left to drop)';
  const setter = names.find((n) => /::panicking::(set_hook|take_hook|update_hook)|::panic::(set_hook|take_hook|update_hook)/.test(n));
  if (setter) return `a panic hook can be installed (${setter} is linked)`;
  const base = staticBase();
  if (base === null) return 'no __stack_pointer global with a constant start';
  const pages = /\(memory \$[^\s()]+ (\d+)/.exec(declarations);
  if (!pages) return 'no memory declaration with an initial size';
  const limit = Number(pages[1]) * 65536;
  if (/\(result /.test(bodies.get(withHook).split('\n', 1)[0])) return 'panic_with_hook returns a value';
  // The panic state: every static address panic_with_hook and panic_count::increase name.
  const owners = new Set([withHook, increase].filter(Boolean));
  const state = new Set();
  for (const owner of owners) for (const a of staticAddresses(bodies.get(owner), base, limit)) state.add(a);
  // Any access overlapping one of its words (the counts and the hook slot are 4-byte words on wasm32).
  const overlaps = (a) => [...state].some((s) => a > s - 4 && a < s + 4);
  for (const [name, body] of bodies) {
    if (owners.has(name)) continue;
    const a = reachedAddress(body, base, limit, overlaps);
    if (a !== null) return `${name} reaches the panic state (${a}), directly or through a local`;
  }
  for (const a of state) {
    if (constants32(declarations).includes(a)) return `a declaration outside the functions names the panic state (${a})`;
    const [at] = wordsInData(memory, a);
    if (at !== undefined) return `the data section holds the address of the panic state (${a}) at ${at}`;
  }
  for (const s of state) {
    for (let a = s; a < s + 4; a += 1) {
      const byte = readMemory(memory, a, 1);
      if (byte !== null && byte[0] !== 0) return `the panic state does not start zeroed (${a})`;
    }
  }
  // The way from panic_fmt to panic_with_hook.
  const seen = new Set([withHook]);
  const queue = [panicFmt];
  while (queue.length) {
    const name = queue.shift();
    if (seen.has(name)) continue;
    seen.add(name);
    const body = bodies.get(name);
    if (body === undefined) return `${name} is imported`;
    const reason = loudness(name, body, base);
    if (reason) return reason;
    queue.push(...directTargets(body));
  }
  return null;
}

const reason = keepReason();
if (reason !== null) refuse(STEP, reason);
dropBody(module, withHook);
dropBody(module, panicFmt);
console.log(`${STEP}: a panic only traps; the bodies of panic_with_hook and panic_fmt are dropped`);
writeFileSync(output, module.emitBinary());
