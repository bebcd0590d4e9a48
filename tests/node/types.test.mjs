// The TypeScript declarations (npm/index.d.ts, npm/errors.d.ts and the generated npm/generated/) compile under
// --strict and describe the API the way tests/types/usage.ts uses it; the package's own JavaScript type-checks
// against them; and every runtime export has a declaration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { agent } from './helpers.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('index.d.ts compiles with tsc --strict against a usage file', () => {
  const tsc = `${root}/node_modules/.bin/tsc`;
  try {
    execFileSync(tsc, ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--lib', 'es2022,dom', '--skipLibCheck', 'false', 'tests/node/types/usage.ts'], { cwd: root, stdio: 'pipe' });
  } catch (error) {
    assert.fail(`tsc failed:\n${error.stdout}${error.stderr}`);
  }
});

test('widget.d.ts compiles with tsc --strict against a usage file', () => {
  const tsc = `${root}/node_modules/.bin/tsc`;
  try {
    execFileSync(tsc, ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--lib', 'es2022,dom', '--skipLibCheck', 'false', 'tests/node/types/widget-usage.ts'], { cwd: root, stdio: 'pipe' });
  } catch (error) {
    assert.fail(`tsc failed:\n${error.stdout}${error.stderr}`);
  }
});

test("the package's JavaScript type-checks under --strict with checkJs (npm/tsconfig.json)", () => {
  const tsc = `${root}/node_modules/.bin/tsc`;
  try {
    execFileSync(tsc, ['-p', 'npm'], { cwd: root, stdio: 'pipe' });
  } catch (error) {
    assert.fail(`tsc -p npm failed:\n${error.stdout}${error.stderr}`);
  }
});

test('every runtime export is declared in index.d.ts, errors.d.ts or the generated error codes', () => {
  const declared = ['index.d.ts', 'errors.d.ts', 'generated/error-codes.d.ts']
    .map((file) => readFileSync(`${root}/npm/${file}`, 'utf8')).join('\n');
  for (const name of Object.keys(agent)) {
    assert.match(declared, new RegExp(`export declare (const|class|function) ${name}\\b`), `${name} is declared`);
  }
});
