// Spawns the real relay binary (`patchbridge-relay --config FILE`) for one test file: a fresh temp dir with a
// generated strict config and a fresh SQLite file, bound to 127.0.0.1:0 (the relay prints the address it got),
// development identity (the `x-patchbridge-user` header), serving `npm/` at /npm/ and `examples/` at /examples/.
//
// The binary comes from $PATCHBRIDGE_RELAY_BIN (scripts/test-e2e.sh sets it), else
// $CARGO_TARGET_DIR/{debug,release}/patchbridge-relay, else target/{debug,release}. Every spawned relay is
// killed when the test process exits, whatever happens.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const children = new Set();
process.on('exit', () => {
  for (const child of children) {
    try { child.kill('SIGKILL'); } catch { /* already gone */ }
  }
});

export function relayBinary() {
  const candidates = [];
  if (process.env.PATCHBRIDGE_RELAY_BIN) candidates.push(process.env.PATCHBRIDGE_RELAY_BIN);
  for (const dir of [process.env.CARGO_TARGET_DIR, path.join(ROOT, 'target')].filter(Boolean)) {
    candidates.push(path.join(dir, 'debug', 'patchbridge-relay'), path.join(dir, 'release', 'patchbridge-relay'));
  }
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`patchbridge-relay binary not found (tried ${candidates.join(', ')}); run scripts/test-e2e.sh`);
  return found;
}

/** The API key the relay is configured with; the fake upstream asserts it arrives there (and only there). */
export const UPSTREAM_KEY = 'sk-e2e-upstream-secret-1234';

/**
 * Starts a relay. `upstream`: the fake upstream's base URL; models `openai-e2e`, `anthropic-e2e` and
 * `responses-e2e` point at it. Omit it and pass `demo: true` for the scripted demo model. `examplesDir` (default
 * `examples/`) is what the relay serves at `/examples/` (the widget tests serve `tests/e2e/pages/`). `identity`
 * replaces the development identity. `spending`: the relay's `spending` section (its defaults when absent). `mcp`:
 * the relay's `mcp` section; `env`: extra environment variables of the relay (secrets the config names).
 * `sandbox: true`: the MCP Apps sandbox listener too, as `http://localhost:<port>` for the page origin
 * `http://127.0.0.1:<relay port>` (both ports picked free first, since each names the other); its URL is
 * `sandboxUrl`.
 */
export async function startRelay({ upstream, demo = false, defaultModel, examplesDir, identity, spending, mcp, env, sandbox = false } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'patchbridge-e2e-'));
  const config = {
    server: {
      bind: '127.0.0.1:0',
      basePath: '/api',
      npmDir: path.join(ROOT, 'npm'),
      examplesDir: examplesDir ?? path.join(ROOT, 'examples'),
    },
    identity: identity ?? { mode: 'development' },
    database: { url: `sqlite://${path.join(dir, 'relay.sqlite3')}` },
    models: [],
    demo,
  };
  if (spending) config.spending = spending;
  if (mcp) config.mcp = mcp;
  let sandboxUrl = null;
  if (sandbox) {
    const [port, sandboxPort] = [await freePort(), await freePort()];
    config.server.bind = `127.0.0.1:${port}`;
    sandboxUrl = `http://localhost:${sandboxPort}/`;
    config.sandbox = { bind: `127.0.0.1:${sandboxPort}`, publicOrigin: `http://localhost:${sandboxPort}`, pageOrigins: [`http://127.0.0.1:${port}`] };
  }
  if (upstream) {
    config.models.push(
      {
        id: 'openai-e2e', provider: 'openai-chat', label: 'Fake OpenAI Chat', baseUrl: `${upstream}/v1`,
        upstreamModel: 'gpt-4.1-mini', apiKey: { env: 'E2E_UPSTREAM_KEY' },
        // Takes images and PDFs (the widget offers them; the relay enforces it, UNSUPPORTED_INPUT).
        capabilities: { tools: true, inputs: ['text', 'image', 'pdf'] },
      },
      {
        id: 'anthropic-e2e', provider: 'anthropic-messages', label: 'Fake Anthropic', baseUrl: `${upstream}/v1`,
        upstreamModel: 'claude-sonnet-4-5', apiKey: { env: 'E2E_UPSTREAM_KEY' }, maxOutputTokens: 2048,
        reasoning: { budgetTokens: 1024 }, capabilities: { tools: true, inputs: ['text', 'pdf'], reasoning: true },
      },
      {
        id: 'responses-e2e', provider: 'openai-responses', label: 'Fake OpenAI Responses', baseUrl: `${upstream}/v1`,
        upstreamModel: 'o4-mini', apiKey: { env: 'E2E_UPSTREAM_KEY' }, maxOutputTokens: 4096,
        reasoning: { effort: 'low', summary: 'auto' }, capabilities: { tools: true, images: false, reasoning: true },
      },
    );
    config.defaultModel = defaultModel ?? 'openai-e2e';
  }
  const configPath = path.join(dir, 'relay.json');
  writeFileSync(configPath, JSON.stringify(config, null, 2));

  const child = spawn(relayBinary(), ['--config', configPath], {
    env: { ...process.env, ...env, E2E_UPSTREAM_KEY: UPSTREAM_KEY, PATCHBRIDGE_LOG: process.env.PATCHBRIDGE_LOG ?? 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    if (process.env.E2E_RELAY_LOG) process.stderr.write(d);
  });
  const url = await new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`relay did not start within 20 s\n${stderr}`)), 20_000);
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`relay exited with ${code} before listening\n${stderr}`)); });
  });
  child.removeAllListeners('exit');

  return {
    url,
    api: `${url}/api`,
    sandboxUrl,
    dir,
    stderr: () => stderr,
    /** A direct JSON call to the relay API as `user` (what a second device or an operator would see). */
    async fetchJson(method, apiPath, { user = 'alice', body } = {}) {
      const headers = { 'x-patchbridge-user': user, origin: url };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${url}/api${apiPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      children.delete(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port free on 127.0.0.1 right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}
