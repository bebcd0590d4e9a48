// The MCP reference server `@modelcontextprotocol/server-everything` (from npm, its own CLI: the `bin` of its
// package.json, `streamableHttp` mode, PORT from the environment) as a child process on a free 127.0.0.1 port,
// behind a small recording pass-through: every JSON-RPC message the client POSTs is kept (`messages`), so a
// test can see what reached the server (a `notifications/cancelled` naming the request it cancels, the
// progress token a tools/call carried). Requests and answers (JSON and SSE) are forwarded byte for byte; a
// client that drops its response drops the upstream one. The child is killed when the test process exits.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import path from 'node:path';

import { ROOT } from './relay.mjs';

const PACKAGE = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything');

const children = new Set();
process.on('exit', () => {
  for (const child of children) {
    try { child.kill('SIGKILL'); } catch { /* already gone */ }
  }
});

/** A free TCP port on 127.0.0.1 (asked of the OS, then released for the child to take). */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (probe.address());
      probe.close(() => resolve(port));
    });
  });
}

/** The server's CLI, as its package.json names it. */
function entry() {
  const manifest = JSON.parse(readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin['mcp-server-everything'];
  return { file: path.join(PACKAGE, bin), version: manifest.version };
}

/** Starts the server: `{ url, version, messages, close }`. */
export async function startEverythingServer() {
  const port = await freePort();
  const { file, version } = entry();
  const child = spawn(process.execPath, [file, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let log = '';
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start within 15 s: ${log}`)), 15_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      log = (log + chunk).slice(-4000);
      if (/listening on port/i.test(log)) { clearTimeout(timer); resolve(undefined); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server-everything exited (${code}): ${log}`)); });
  });

  /** @type {any[]} every JSON-RPC message POSTed to the server, in order */
  const messages = [];
  const proxy = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    if (body.length) {
      try { messages.push(...[JSON.parse(body.toString('utf8'))].flat()); } catch { /* not JSON: forwarded as it is */ }
    }
    const upstream = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end(); });
    res.on('close', () => { upstream.destroy(); });
    upstream.end(body);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxyPort = /** @type {import('node:net').AddressInfo} */ (proxy.address()).port;

  return {
    url: `http://127.0.0.1:${proxyPort}/mcp`,
    version,
    messages,
    async close() {
      proxy.closeAllConnections?.();
      await new Promise((resolve) => proxy.close(resolve));
      children.delete(child);
      child.kill('SIGTERM');
    },
  };
}
