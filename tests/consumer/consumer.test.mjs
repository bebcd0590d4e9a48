// The package as a new user meets it: `npm pack` of the built npm/ folder, installed into fresh projects in a
// temporary folder (from the npm cache where it can; the tools' versions are the repository's devDependencies),
// then used the way README.md says:
//   - the tarball: the .wasm once, LICENSE, declarations for every export, no source maps, no builder's paths;
//   - `tsc --strict` over the TypeScript and React 19 snippets of README.md, npm/README.md and widget/README.md
//     and over typed-argument checks
//     (fixtures/), `attw` (ESM-only profile) and `publint --strict`;
//   - every export imported in plain Node (what SSR frameworks do on the server);
//   - README.md's bundler snippet built by Vite, then a demo turn with its typed tool in Chromium against the
//     real relay;
//   - README.md's no-build files (page, script, relay.json) served by the relay from the project folder, a demo
//     turn completing under the page's strict Content-Security-Policy.
// Needs the built package (scripts/build-wasm.sh, node widget/build.mjs), the relay binary (as tests/e2e) and
// Chromium. Run by scripts/test-js.sh; alone: node --test tests/consumer/.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';

import { launchChromium, newPage, waitInPage } from '../e2e/support/browser.mjs';
import { relayBinary, ROOT, startRelay } from '../e2e/support/relay.mjs';
import { sel, waitIdle, waitReady } from '../e2e/support/widget.mjs';
import { pick, readmeFiles } from './readme.mjs';

/** The element's events as widget/README.md documents them, on the server-side import and in the browser alike. */
const DOCUMENTED_EVENTS = {
  ready: 'patchbridge-ready', outcome: 'patchbridge-outcome', error: 'patchbridge-error',
  confirmation: 'patchbridge-confirmation', conversation: 'patchbridge-conversation',
  unauthorized: 'patchbridge-unauthorized', feedback: 'patchbridge-feedback', viewError: 'patchbridge-view-error',
};

const run = promisify(execFile);
const FIXTURES = path.join(ROOT, 'tests', 'consumer', 'fixtures');
const ROOT_BIN = path.join(ROOT, 'node_modules', '.bin');
const devVersions = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies;
/** The policy README.md's page declares (and widget/README.md documents). */
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob: https:; connect-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'";

let work;
let tarball;
let packed;
let noBuild;
let bundler;
let browser;
const readme = readmeFiles();
const npmReadme = readmeFiles(path.join(ROOT, 'npm', 'README.md'));
const widgetReadme = readmeFiles(path.join(ROOT, 'widget', 'README.md'));

/** Runs a command, failing with its whole output when it exits non-zero. */
async function sh(cmd, args, options = {}) {
  try {
    return await run(cmd, args, { maxBuffer: 64 * 1024 * 1024, timeout: 240_000, ...options, env: { ...process.env, NO_COLOR: '1', ...options.env } });
  } catch (error) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${error.code}):\n${error.stdout}\n${error.stderr}`);
  }
}

/** A fresh npm project in the work folder with `packages` installed (the tarball among them). */
async function project(name, packages) {
  const dir = path.join(work, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name, private: true, type: 'module' }, null, 2)}\n`);
  await sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-exact', ...packages], { cwd: dir });
  return dir;
}

function writeFiles(dir, files) {
  for (const [name, body] of files) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), body);
  }
}

/** Every file under `dir`, relative paths. */
function walk(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? walk(full, base) : [path.relative(base, full)];
  });
}

/** Spawns the relay binary with `args` in `cwd` on a free loopback port; resolves with its URL and a stop(). */
async function spawnRelay(args, cwd) {
  const child = spawn(relayBinary(), args, {
    cwd,
    env: { ...process.env, PATCHBRIDGE_BIND: '127.0.0.1:0', PATCHBRIDGE_LOG: process.env.PATCHBRIDGE_LOG ?? 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.on('exit', () => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`relay exited with ${code} before listening\n${stderr}`)));
  });
  child.removeAllListeners('exit');
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Records CSP violations, outcomes and requested URLs of a page before its own scripts run. */
async function instrument(page) {
  page.requested = [];
  page.on('request', (request) => page.requested.push(request.url()));
  await page.addInitScript(() => {
    globalThis.__cspViolations = [];
    globalThis.__outcomes = [];
    document.addEventListener('securitypolicyviolation', (e) => globalThis.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
    document.addEventListener('patchbridge-outcome', (e) => globalThis.__outcomes.push(e.detail.outcome));
  });
}

/** Asks the scripted demo model to add a todo, approves the confirmation, waits for the turn's summary. */
async function addTodoTurn(page) {
  await page.fill(sel.input, 'add todo buy milk');
  await page.click(sel.send);
  await page.waitForSelector(sel.approve);
  assert.match(await page.textContent(sel.confirmation), /todos\.add[\s\S]*buy milk/);
  await page.click(sel.approve);
  await waitInPage(page, () => globalThis.__outcomes.length === 1);
  await waitIdle(page);
  assert.deepEqual(await page.evaluate(() => globalThis.__outcomes), ['completed']);
  return page.locator('patchbridge-agent .msg.assistant:not(.draft)').allTextContents();
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'patchbridge-consumer-'));
  const { stdout } = await sh('npm', ['pack', '--json', '--pack-destination', work], { cwd: path.join(ROOT, 'npm') });
  [packed] = JSON.parse(stdout);
  tarball = path.join(work, packed.filename);
  noBuild = await project('no-build', [tarball]);
  bundler = await project('bundler', [tarball, `typescript@${devVersions.typescript}`, `@types/react@${devVersions['@types/react']}`, `vite@${devVersions.vite}`]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package in fresh projects', () => {
  test('the tarball holds the wasm once, the licence and declarations for every export, and no source maps or builder paths', (t) => {
    const files = packed.files.map((f) => f.path).sort();
    t.diagnostic(`${packed.filename}: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked, ${files.length} files: ${files.join(' ')}`);
    assert.deepEqual(files.filter((f) => f.endsWith('.wasm')), ['pkg/patchbridge_agent_bg.wasm']);
    assert.deepEqual(files.filter((f) => f.endsWith('.map')), []);
    const installed = path.join(noBuild, 'node_modules', '@patchbridge', 'agent');
    assert.equal(readFileSync(path.join(installed, 'LICENSE'), 'utf8'), readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'));
    assert.match(readFileSync(path.join(installed, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
    // The crates compiled into the wasm are listed with their licences (e.g. serde_json, MIT text of slab).
    const crates = readFileSync(path.join(installed, 'pkg', 'THIRD_PARTY_LICENSES.md'), 'utf8');
    assert.match(crates, /^\| serde_json \| [\d.]+ \| MIT OR Apache-2\.0 \| Apache-2\.0/m);
    assert.match(crates, /^\| wasm-bindgen \| /m);
    assert.doesNotMatch(crates, /^\| (serde_derive|wasm-bindgen-macro|syn) \|/m, 'procedural macros leave nothing in the wasm');

    const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
    assert.equal(pkg.license, 'Apache-2.0');
    assert.equal(pkg.type, 'module');
    assert.match(pkg.repository.url, /^git\+https:\/\/github\.com\/.+\.git$/);
    assert.match(pkg.homepage, /^https:\/\//);
    assert.match(pkg.bugs.url, /^https:\/\//);
    for (const [entry, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') { assert.ok(files.includes(target.slice(2)), `${entry} → ${target}`); continue; }
      assert.ok(files.includes(target.types.slice(2)), `${entry} has declarations (${target.types})`);
      assert.ok(files.includes(target.default.slice(2)), `${entry} → ${target.default}`);
    }

    // No folder of the machine that built it: the checkout, the cargo and rustup homes, the home folder.
    const builderPaths = [ROOT, path.join(homedir(), '.cargo'), path.join(homedir(), '.rustup'), process.env.CARGO_TARGET_DIR]
      .filter(Boolean).concat(homedir() === '/' ? [] : [`${homedir()}/`]);
    for (const file of walk(installed)) {
      const bytes = readFileSync(path.join(installed, file)).toString('latin1');
      for (const p of builderPaths) assert.ok(!bytes.includes(p), `${file} names the builder's folder ${p}`);
    }
  });

  test('tsc --strict accepts the READMEs\' TypeScript and React 19 snippets and the typed-argument checks', async () => {
    writeFiles(bundler, pick(readme, ['src/main.ts', 'src/headless.ts', 'src/Agent.tsx']));
    writeFiles(bundler, pick(npmReadme, ['src/device.ts']));
    writeFiles(bundler, pick(widgetReadme, ['src/widget-setup.ts']));
    writeFiles(bundler, [
      ['src/typed-tools.ts', readFileSync(path.join(FIXTURES, 'typed-tools.ts'), 'utf8')],
      ['src/react-checks.tsx', readFileSync(path.join(FIXTURES, 'react-checks.tsx'), 'utf8')],
      ['tsconfig.json', JSON.stringify({
        compilerOptions: {
          strict: true, noEmit: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', jsx: 'react-jsx',
          lib: ['es2022', 'dom', 'dom.iterable'], skipLibCheck: false, types: [], noUnusedLocals: false,
        },
        include: ['src'],
      }, null, 2)],
    ]);
    await sh(path.join(bundler, 'node_modules', '.bin', 'tsc'), ['-p', '.'], { cwd: bundler });
    // The same sources under Node's own resolution (what `"module": "nodenext"` projects use).
    writeFileSync(path.join(bundler, 'tsconfig.nodenext.json'), JSON.stringify({
      extends: './tsconfig.json', compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' },
    }));
    await sh(path.join(bundler, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.nodenext.json'], { cwd: bundler });
  });

  test('attw (ESM-only profile) and publint --strict find no problem', async () => {
    // attw exits non-zero on a problem its ESM-only profile counts; its JSON lists every problem, ignored or not.
    const attw = JSON.parse((await sh(path.join(ROOT_BIN, 'attw'), [tarball, '--profile', 'esm-only', '--format', 'json'])).stdout);
    assert.deepEqual(Object.keys(attw.analysis.entrypoints).sort(), ['.', './errors', './package.json', './patchbridge-agent.js', './react', './widget']);
    const counted = Object.values(attw.problems).flat().filter((p) => !['node10', 'node16-cjs'].includes(p.resolutionKind));
    assert.deepEqual(counted, []);
    // What the profile leaves out is exactly what ESM-only means: require() gets ESM (README.md says what to do).
    assert.deepEqual([...new Set(Object.values(attw.problems).flat().map((p) => `${p.kind} ${p.resolutionKind}`))].sort(),
      ['CJSResolvesToESM node16-cjs', 'NoResolution node10']);
    const publint = await sh(path.join(ROOT_BIN, 'publint'), ['--strict', path.join(noBuild, 'node_modules', '@patchbridge', 'agent')]);
    assert.match(publint.stdout, /All good/, publint.stdout);
  });

  test('every export imports in plain Node: the runtime works there and the widget defines nothing', async () => {
    writeFileSync(path.join(noBuild, 'ssr.mjs'), `
      const pkg = (await import('@patchbridge/agent/package.json', { with: { type: 'json' } })).default;
      const exportsSeen = {};
      for (const key of Object.keys(pkg.exports).filter((k) => !k.endsWith('.json'))) {
        const mod = await import(key === '.' ? pkg.name : pkg.name + key.slice(1));
        exportsSeen[key] = Object.fromEntries(Object.entries(mod).map(([name, value]) => [name, typeof value]));
      }
      const runtime = await import('@patchbridge/agent');
      const widget = await import('@patchbridge/agent/widget');
      const react = await import('@patchbridge/agent/react');
      console.log(JSON.stringify({
        exportsSeen,
        maxModelCalls: runtime.DEFAULT_LIMITS.maxModelCalls,
        events: widget.EVENTS,
        reactIsWidget: react.EVENTS === widget.EVENTS,
        customElements: typeof customElements,
        HTMLElement: typeof HTMLElement,
      }));
    `);
    const { stdout } = await sh(process.execPath, ['ssr.mjs'], { cwd: noBuild });
    const seen = JSON.parse(stdout);
    assert.deepEqual(Object.keys(seen.exportsSeen).sort(), ['.', './errors', './patchbridge-agent.js', './react', './widget']);
    assert.equal(seen.exportsSeen['.'].createAgentController, 'function');
    assert.equal(seen.exportsSeen['.'].DefaultAgentRuntime, 'function');
    assert.equal(seen.exportsSeen['./errors'].AgentError, 'function');
    for (const entry of ['./widget', './react', './patchbridge-agent.js']) {
      assert.deepEqual(seen.exportsSeen[entry], { EVENTS: 'object', PatchBridgeAgentElement: 'undefined', loadRuntime: 'function' }, entry);
    }
    assert.equal(seen.maxModelCalls, 16, 'the wasm was instantiated from the installed package');
    assert.deepEqual(seen.events, DOCUMENTED_EVENTS);
    assert.equal(seen.reactIsWidget, true);
    assert.equal(seen.customElements, 'undefined', 'nothing installed a DOM global');
    assert.equal(seen.HTMLElement, 'undefined');
  });

  test('README.md\'s bundler snippet built by Vite loads the element and its wasm from the bundle and completes a demo turn with its typed tool', async (t) => {
    writeFiles(bundler, pick(readme, ['index.html', 'src/main.ts']));
    // `--base ./`: relative URLs, because the relay serves the build below /examples/.
    const build = await sh(path.join(bundler, 'node_modules', '.bin', 'vite'), ['build', '--base', './'], { cwd: bundler });
    const output = `${build.stdout}\n${build.stderr}`;
    const warnings = output.split('\n').filter((line) => /warn|externalized|\[plugin|duplicate/i.test(line));
    assert.deepEqual(warnings, [], output);
    const assets = readdirSync(path.join(bundler, 'dist', 'assets'));
    const wasm = assets.filter((f) => f.endsWith('.wasm'));
    assert.equal(wasm.length, 1, assets.join(', '));
    const sizes = assets.map((f) => {
      const bytes = readFileSync(path.join(bundler, 'dist', 'assets', f));
      return `${f} ${bytes.length} (${gzipSync(bytes, { level: 9 }).length} gzip)`;
    });
    t.diagnostic(`vite build: ${sizes.join(', ')}`);

    const relay = await startRelay({ demo: true, examplesDir: path.join(bundler, 'dist') });
    const page = await newPage(browser);
    try {
      await instrument(page);
      await page.goto(`${relay.url}/examples/`);
      await waitReady(page);
      assert.deepEqual(page.requested.filter((u) => u.endsWith('.wasm')), [`${relay.url}/examples/assets/${wasm[0]}`]);
      assert.deepEqual(page.requested.filter((u) => u.includes('/npm/')), [], 'nothing loaded outside the build');
      const answers = await addTodoTurn(page);
      assert.match(answers.at(-1), /Added "buy milk" \(1 in all\)\./, 'the typed tool ran and the model saw its result');
      assert.deepEqual(page.problems, []);
    } finally {
      await page.context().close();
      await relay.stop();
    }
  });

  test('README.md\'s no-build page, script and relay.json complete a demo turn under the strict CSP', async () => {
    writeFiles(noBuild, pick(readme, ['public/index.html', 'public/app.js', 'relay.json']));
    const relay = await spawnRelay(['--config', 'relay.json'], noBuild);
    const page = await newPage(browser);
    try {
      await instrument(page);
      await page.goto(`${relay.url}/`);
      await waitReady(page);
      assert.equal(await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content'), CSP);
      assert.ok(page.requested.includes(`${relay.url}/npm/pkg/patchbridge_agent_bg.wasm`), 'the script fetched the package\'s one wasm');
      // The banner shows once the relay's /models answer (fetched at ready) says previewOnly.
      await waitInPage(page, () => !document.querySelector('patchbridge-agent').shadowRoot.querySelector('[part~=banner]').hidden);
      assert.match(await page.textContent(sel.banner), /scripted demo model/i);
      assert.deepEqual(await page.$$eval('#todos li', (l) => l.length), 0, 'nothing runs before approval');

      const answers = await addTodoTurn(page);
      assert.deepEqual(await page.$$eval('#todos li', (l) => l.map((li) => li.textContent)), ['buy milk']);
      assert.match(answers.at(-1), /Added "buy milk"\./);
      // The element's own EVENTS (the browser module) equal the ones the server-side import exports.
      const events = await page.evaluate(async () => (await import('/npm/dist/patchbridge-agent.js')).EVENTS);
      assert.deepEqual(events, DOCUMENTED_EVENTS);
      assert.deepEqual(page.problems, []);
      assert.deepEqual(await page.evaluate(() => globalThis.__cspViolations), []);
      // The policy is in force: an inline script injected now is refused (so "no violation" above means something).
      const inlineRan = await page.evaluate(async () => {
        const script = document.createElement('script');
        script.textContent = 'globalThis.__inlineRan = true;';
        document.head.append(script);
        await new Promise((resolve) => setTimeout(resolve, 50));
        return globalThis.__inlineRan === true;
      });
      assert.equal(inlineRan, false);
    } finally {
      await page.context().close();
      await relay.stop();
    }
  });
});
