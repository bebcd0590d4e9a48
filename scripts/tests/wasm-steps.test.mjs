// The wasm post-processing steps against small modules written as text (binaryen's parser): each step applies to
// the minimal module its header describes, and refuses (exit status 1, the reason on stderr, no output written)
// every variant its reasoning cannot cover: a table slot or an address in an `i64.const`, an address kept in a
// local, a path that reaches what it would drop, a renamed symbol. Also: the version assertions, serde_json's
// source fact and the size check. Run by scripts/test-js.sh (`node --test scripts/tests/`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import binaryen from 'binaryen';
import {
  constants32, crateSource, jsonUnexpectedFormatsFloats, lockedVersion, reachedAddress,
} from '../wasm-module-text.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'wasm-steps-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

/** Runs `scripts/<step>.mjs` on the module written as `wat`; `{ status, stdout, stderr, output }`. */
function runStep(step, wat) {
  const module = binaryen.parseText(wat);
  binaryen.setDebugInfo(true); // keep the names, as wasm-bindgen --keep-debug does
  const input = path.join(dir, `${step}-${Math.random().toString(36).slice(2)}.wasm`);
  writeFileSync(input, module.emitBinary());
  module.dispose();
  const output = `${input}.out`;
  const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts', `${step}.mjs`), input, output], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, output: existsSync(output) ? readFileSync(output) : null };
}

function refuses(result, reason) {
  assert.equal(result.status, 1, `refused, not kept: ${result.stdout}${result.stderr}`);
  assert.match(result.stderr, /refused: /);
  assert.match(result.stderr, reason);
  assert.equal(result.output, null, 'nothing written');
}

// ------------------------------------------------------------------------------------------------ float step

const SLOT = 7;
/** The float step's module: `<f64 as Display>::fmt` in table slot 7, named only by WithDecimalPoint. */
function floatModule({ extra = '', jsonCallsUnexpected = true, floatName = '<f64 as core::fmt::Display>::fmt' } = {}) {
  return `(module
 (type $fmt (func (param i32 i32) (result i32)))
 (table 16 funcref)
 (memory 1)
 (elem (i32.const ${SLOT}) $"${floatName}")
 (func $"${floatName}" (type $fmt) (i32.const 0))
 (func $"<serde_core::de::WithDecimalPoint as core::fmt::Display>::fmt::h01" (type $fmt)
  (call_indirect (type $fmt) (local.get 0) (local.get 1) (i32.const ${SLOT})))
 (func $"<serde_core::de::Unexpected as core::fmt::Display>::fmt::h02" (type $fmt)
  (call $"<serde_core::de::WithDecimalPoint as core::fmt::Display>::fmt::h01" (local.get 0) (local.get 1)))
 (func $"<serde_json::error::JsonUnexpected as core::fmt::Display>::fmt::h03" (type $fmt)
  ${jsonCallsUnexpected ? '(call $"<serde_core::de::Unexpected as core::fmt::Display>::fmt::h02" (local.get 0) (local.get 1))' : '(i32.const 0)'})
 ${extra}
 (export "json" (func $"<serde_json::error::JsonUnexpected as core::fmt::Display>::fmt::h03")))`;
}

test('the float step drops <f64 as Display>::fmt when only WithDecimalPoint names its slot', () => {
  const result = runStep('wasm-dead-float-display', floatModule());
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /its body is dropped/);
  binaryen.setDebugInfo(true);
  const out = binaryen.readBinary(result.output);
  const body = binaryen.getFunctionInfo(out.getFunction('<f64 as core::fmt::Display>::fmt')).body;
  assert.equal(binaryen.getExpressionId(body), binaryen.UnreachableId);
  out.dispose();
});

test('the float step refuses a table slot held in an i64.const (two 32-bit stores merged)', () => {
  const packed = (BigInt(SLOT) << 32n) | 5n;
  refuses(runStep('wasm-dead-float-display', floatModule({
    extra: `(func $store_pair (param i32) (i64.store (local.get 0) (i64.const ${packed})))`,
  })), /store_pair uses the table slot/);
});

test('the float step refuses a slot formed through a local (base + slot is not excused as an address)', () => {
  refuses(runStep('wasm-dead-float-display', floatModule({
    extra: `(func $through_local (param i32) (result i32) (local $base i32)
      (local.set $base (local.get 0))
      (i32.add (local.get $base) (i32.const ${SLOT})))`,
  })), /through_local uses the table slot/);
});

test('the float step refuses a reachable path: another caller of serde\'s Unexpected Display', () => {
  refuses(runStep('wasm-dead-float-display', floatModule({
    extra: `(func $another_caller (type $fmt)
      (call $"<serde_core::de::Unexpected as core::fmt::Display>::fmt::h02" (local.get 0) (local.get 1)))`,
  })), /another_caller calls serde's Unexpected Display/);
});

test('the float step refuses the slot in a data word (a vtable) and a renamed symbol', () => {
  refuses(runStep('wasm-dead-float-display', floatModule({
    extra: `(data (i32.const 64) "\\${SLOT.toString(16).padStart(2, '0')}\\00\\00\\00")`,
  })), /the data section holds the table slot/);
  refuses(runStep('wasm-dead-float-display', floatModule({ floatName: '<f64 as core::fmt::Display>::fmt_renamed' })),
    /no single <f64 as Display>::fmt/);
  refuses(runStep('wasm-dead-float-display', floatModule({ jsonCallsUnexpected: false })),
    /does not call serde's Unexpected Display/);
});

test('serde_json\'s source, as locked, formats a float itself before it delegates; an edited copy does not', () => {
  const source = crateSource('serde_json', 'src/error.rs');
  assert.ok(source, 'the locked serde_json is in the cargo registry');
  assert.equal(jsonUnexpectedFormatsFloats(source), true);
  const delegatingFloats = source.replace(/de::Unexpected::Float\(value\) => write!\([\s\S]*?\),\n/, '');
  assert.notEqual(delegatingFloats, source);
  assert.equal(jsonUnexpectedFormatsFloats(delegatingFloats), false);
});

// ------------------------------------------------------------------------------------------------ panic step

const STATE = 2000;
/** The panic step's module: panic_fmt → panic_with_hook → panic_count::increase, which counts at STATE. */
function panicModule({ extra = '', onTheWay = '' } = {}) {
  return `(module
 (type $t (func (param i32)))
 (memory 1)
 (global $__stack_pointer (mut i32) (i32.const 1024))
 (data (i32.const 1024) "panic text")
 (func $"std::panicking::panic_count::increase" (param i32)
  (i32.store (i32.const ${STATE}) (i32.add (i32.load (i32.const ${STATE})) (i32.const 1))))
 (func $"std::panicking::panic_with_hook" (param i32)
  (call $"std::panicking::panic_count::increase" (local.get 0))
  (unreachable))
 (func $"core::panicking::panic_fmt" (param i32)
  ${onTheWay}
  (call $"std::panicking::panic_with_hook" (local.get 0)))
 ${extra}
 (export "panic" (func $"core::panicking::panic_fmt")))`;
}

test('the panic step drops panic_with_hook and panic_fmt when nothing else reaches the panic state', () => {
  const result = runStep('wasm-dead-panic-formatting', panicModule());
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /a panic only traps/);
});

test('the panic step refuses the panic state\'s address in an i64.const', () => {
  refuses(runStep('wasm-dead-panic-formatting', panicModule({
    extra: `(func $reads_wide (param i32) (i64.store (local.get 0) (i64.const ${(BigInt(STATE) << 32n) | 1n})))`,
  })), /reads_wide reaches the panic state \(2000\)/);
});

test('the panic step refuses the panic state reached through a local (a constant plus a load offset)', () => {
  refuses(runStep('wasm-dead-panic-formatting', panicModule({
    extra: `(func $panicking (result i32) (local $p i32)
      (local.set $p (i32.const ${STATE - 8}))
      (i32.load offset=8 (local.get $p)))`,
  })), /panicking reaches the panic state \(2000\), directly or through a local/);
});

test('the panic step refuses a loud path from panic_fmt (an indirect call) and an installable hook', () => {
  refuses(runStep('wasm-dead-panic-formatting', panicModule({
    onTheWay: '(call $loud (local.get 0))',
    extra: `(table 1 funcref) (func $loud (param i32) (call_indirect (type $t) (local.get 0) (i32.const 0)))`,
  })), /loud makes an indirect call/);
  refuses(runStep('wasm-dead-panic-formatting', panicModule({
    extra: '(func $"std::panicking::set_hook" (param i32))',
  })), /a panic hook can be installed/);
});

// ------------------------------------------------------------------------------------------------ shared parts

test('32-bit constants are read from i32, both halves of i64 and every v128 lane', () => {
  const body = '(i32.const -1) (i64.const 30064771077) (v128.const i32x4 0x00000001 0x00000002 0x00000003 0x00000004)';
  assert.deepEqual(constants32(body), [0xffffffff, 5, 7, 1, 2, 3, 4]);
  assert.equal(reachedAddress('(i32.const 1992) (i32.load offset=8 (local.get $p))', 1024, 65536, (a) => a === 2000), 2000);
  assert.equal(reachedAddress('(i32.const 1992) (i32.load offset=4 (local.get $p))', 1024, 65536, (a) => a === 2000), null);
});

test('a version other than the reviewed one stops a step', () => {
  assert.match(lockedVersion('serde_json'), /^\d+\.\d+\.\d+$/);
  const run = spawnSync(process.execPath, ['--input-type=module', '-e',
    `import { assertVersions } from ${JSON.stringify(path.join(ROOT, 'scripts/wasm-module-text.mjs'))};
     assertVersions('some-step', { crates: { serde_json: '0.0.1' }, binaryen: '1.0.0' });`], { encoding: 'utf8' });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /some-step: refused: .*serde_json \S+ in Cargo\.lock, reviewed: 0\.0\.1; binaryen \S+, reviewed: 1\.0\.0/);
});

test('the size check fails past a ceiling and passes at it', () => {
  const file = path.join(dir, 'payload.bin');
  writeFileSync(file, Buffer.alloc(10_000, 7));
  const sizeOf = (ceiling) => {
    const ceilings = path.join(dir, `ceilings-${ceiling}.json`);
    writeFileSync(ceilings, JSON.stringify({ files: { payload: { file, gzip: 0, ceiling } } }));
    return spawnSync(process.execPath, [path.join(ROOT, 'scripts/check-size.mjs'), '--ceilings', ceilings], { encoding: 'utf8' });
  };
  const measured = Number(/(\d+) bytes gzip/.exec(sizeOf(1_000_000).stdout)[1]);
  assert.ok(measured > 0 && measured < 10_000);
  assert.equal(sizeOf(measured).status, 0);
  const over = sizeOf(measured - 1);
  assert.equal(over.status, 1);
  assert.match(over.stderr, /over the ceiling by 1 bytes/);
});
