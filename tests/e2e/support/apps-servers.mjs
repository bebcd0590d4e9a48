// The MCP Apps servers of tests/e2e/widget-apps.test.mjs, both real:
// - `startBasicAppServer()`: @modelcontextprotocol/server-basic-vanillajs from node_modules as published (tool
//   `get-time`, view `ui://get-time/mcp-app.html`), its own `main` in Streamable HTTP mode on a free port
//   (`PORT`), as a child process killed when the test process exits;
// - `startProbeServer({ forbiddenUrl })`: an MCP server on the official SDK (low-level `Server`, stateless
//   Streamable HTTP) whose view is a probe built here on @modelcontextprotocol/ext-apps's app side (`App`, bundled
//   by esbuild into the resource's one HTML file). The probe records in its own DOM (`#report`, JSON) what it could
//   reach: the parent's document, the top document, cookies, localStorage, its origin, a `no-cors` fetch of
//   `forbiddenUrl` (only a policy can refuse that one) and the policy violation it caused; what the host sent it
//   (tool input and result, host capabilities and context); and what its buttons got back: `#call` (its
//   app-only tool `probe-action`), `#message` (`ui/message`), `#link` (`ui/open-link`). Tool `broken` has a view
//   whose script throws before it connects, `flood` one that floods the host with messages, `grow` one that
//   keeps asking for more height.

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import path from 'node:path';

import { build } from 'esbuild';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema, ListResourcesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { ROOT } from './relay.mjs';

export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';

const children = new Set();
process.on('exit', () => {
  for (const child of children) {
    try { child.kill('SIGKILL'); } catch { /* already gone */ }
  }
});

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** server-basic-vanillajs on a free port: `{ url, close }` (url: its `/mcp` endpoint). */
export async function startBasicAppServer() {
  const port = await freePort();
  const main = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'index.js');
  const child = spawn(process.execPath, [main], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stderr.on('data', (d) => { output += d; });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-basic-vanillajs did not start within 20 s\n${output}`)), 20_000);
    child.stdout.on('data', (d) => {
      output += d;
      if (/MCP server listening/.test(output)) { clearTimeout(timer); resolve(); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server-basic-vanillajs exited with ${code}\n${output}`)); });
  });
  child.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
      children.delete(child);
    },
  };
}

/** The probe's script (bundled with the App class), reporting into #report. */
const PROBE_SOURCE = (forbiddenUrl) => `
import { App, PostMessageTransport } from '@modelcontextprotocol/ext-apps';
const report = {};
const out = document.getElementById('report');
const show = () => { out.textContent = JSON.stringify(report); };
const attempt = (key, fn) => { try { report[key] = fn(); } catch (e) { report[key] = 'blocked: ' + e.name; } };
attempt('parentDocument', () => String(window.parent.document.title));
attempt('topDocument', () => String(window.top.document.title));
attempt('cookie', () => document.cookie);
attempt('localStorage', () => String(window.localStorage.getItem('pb-secret')));
report.origin = String(window.origin);
document.addEventListener('securitypolicyviolation', (e) => { (report.violations ??= []).push(e.effectiveDirective + ' ' + e.blockedURI); show(); });
fetch(${JSON.stringify(forbiddenUrl)}, { mode: 'no-cors' }).then(() => { report.fetch = 'allowed'; show(); }, (e) => { report.fetch = 'blocked: ' + e.name; show(); });
show();
const app = new App({ name: 'probe', version: '1.0.0' }, {});
app.ontoolinput = (params) => { report.input = params.arguments ?? null; show(); };
app.ontoolresult = (result) => { report.result = result; show(); };
document.getElementById('call').onclick = async () => {
  try { report.call = await app.callServerTool({ name: 'probe-action', arguments: { n: 7 } }); } catch (e) { report.call = 'error: ' + e.message; }
  show();
};
document.getElementById('message').onclick = async () => {
  try { report.message = await app.sendMessage({ role: 'user', content: [{ type: 'text', text: 'A message from the probe' }] }); } catch (e) { report.message = 'error: ' + e.message; }
  show();
};
document.getElementById('link').onclick = async () => {
  try { report.link = await app.openLink({ url: 'https://example.com/from-the-probe' }); } catch (e) { report.link = 'error: ' + e.message; }
  show();
};
app.connect(new PostMessageTransport(window.parent, window.parent)).then(() => {
  report.connected = true;
  report.capabilities = app.getHostCapabilities() ?? null;
  report.context = app.getHostContext() ?? null;
  show();
}, (e) => { report.connected = 'error: ' + e.message; show(); });
`;

async function probeHtml(forbiddenUrl) {
  const bundle = await build({
    stdin: { contents: PROBE_SOURCE(forbiddenUrl), resolveDir: ROOT, loader: 'js' },
    bundle: true, format: 'iife', minify: true, write: false, logLevel: 'error', target: 'es2022',
  });
  const script = bundle.outputFiles[0].text.replace(/<\/script/gi, '<\\/script');
  return `<!doctype html><html><head><meta charset="utf-8"><title>probe</title></head><body>
<h1>probe</h1><button id="call">call</button><button id="message">message</button><button id="link">link</button>
<pre id="report">{}</pre><script>${script}</script></body></html>`;
}

const BROKEN_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>broken</title></head><body>
<p>broken view</p><script>throw new Error('this view breaks before it connects');</script></body></html>`;

// Views that misbehave on the wire without the SDK: one floods the host with notifications, one keeps asking to
// grow (each size change larger than the last).
const FLOOD_HTML = `<!doctype html><html><body><p>flood</p><script>
for (let i = 0; i < 400; i += 1) window.parent.postMessage({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: i } }, '*');
</script></body></html>`;
const GROW_HTML = `<!doctype html><html><body><p>grow</p><script>
let height = 100;
const grow = () => { height += 40; window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { height } }, '*'); if (height < 4000) setTimeout(grow, 10); };
grow();
</script></body></html>`;

/**
 * The probe server on a free port: `{ url, calls, close }` (`calls`: [tool, arguments] in order).
 * @param {{ forbiddenUrl: string }} options
 */
export async function startProbeServer({ forbiddenUrl }) {
  const resources = new Map([
    ['ui://probe/app.html', await probeHtml(forbiddenUrl)],
    ['ui://probe/broken.html', BROKEN_HTML],
    ['ui://probe/flood.html', FLOOD_HTML],
    ['ui://probe/grow.html', GROW_HTML],
  ]);
  const calls = [];
  const tools = [
    { name: 'probe', description: 'Shows the probe view.', inputSchema: { type: 'object', properties: { topic: { type: 'string' } } }, _meta: { ui: { resourceUri: 'ui://probe/app.html' } } },
    { name: 'probe-action', description: 'Only the probe view calls this.', inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }, _meta: { ui: { resourceUri: 'ui://probe/app.html', visibility: ['app'] } } },
    { name: 'broken', description: 'A tool whose view never starts.', inputSchema: { type: 'object', properties: {} }, _meta: { ui: { resourceUri: 'ui://probe/broken.html' } } },
    { name: 'flood', description: 'A tool whose view floods the host.', inputSchema: { type: 'object', properties: {} }, _meta: { ui: { resourceUri: 'ui://probe/flood.html' } } },
    { name: 'grow', description: 'A tool whose view grows without end.', inputSchema: { type: 'object', properties: {} }, _meta: { ui: { resourceUri: 'ui://probe/grow.html' } } },
  ];
  const newServer = () => {
    const server = new Server({ name: 'patchbridge-probe', version: '1.0.0' }, { capabilities: { tools: {}, resources: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { name, arguments: args = {} } = request.params;
      calls.push([name, args]);
      if (name === 'probe') return { content: [{ type: 'text', text: `probe result for ${args.topic ?? 'nothing'}` }], structuredContent: { topic: args.topic ?? null, answer: 42 } };
      if (name === 'probe-action') return { content: [{ type: 'text', text: `action ran with ${args.n}` }], structuredContent: { n: args.n } };
      if (name === 'broken' || name === 'flood' || name === 'grow') return { content: [{ type: 'text', text: `${name} tool result` }] };
      throw new Error(`unknown tool ${name}`);
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: [...resources.keys()].map((uri) => ({ uri, name: uri, mimeType: MCP_APP_MIME_TYPE })),
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const text = resources.get(request.params.uri);
      if (text === undefined) throw new Error(`no resource ${request.params.uri}`);
      return { contents: [{ uri: request.params.uri, mimeType: MCP_APP_MIME_TYPE, text }] };
    });
    return server;
  };
  const http = createServer(async (req, res) => {
    if (req.url !== '/mcp') { res.writeHead(404).end(); return; }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => { void transport.close(); void server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    calls,
    close: () => { http.closeAllConnections?.(); return new Promise((resolve) => http.close(resolve)); },
  };
}
