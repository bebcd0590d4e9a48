// A real MCP server for the tests, on the official TypeScript SDK (`Server` + `StreamableHTTPServerTransport`,
// stateful sessions, Node's http server on a free 127.0.0.1 port). The low-level `Server` is used so that a test
// writes each tool's JSON Schema and annotations exactly as a remote server would send them (a remote `$ref`, a
// 2020-12 `$schema`). It records every call (arguments, the request's headers), every cancellation the SDK
// delivers (`notifications/cancelled` aborts the handler's signal), and can add tools while sessions are open
// (the SDK sends `notifications/tools/list_changed` to each). `requireAuth` answers 401 without the bearer token.
// `oauth` puts it behind the MCP authorization flow: an authorization server on the SDK's `mcpAuthRouter` with its
// in-memory demo provider (dynamic client registration, authorization code with PKCE, issued at once), the
// protected-resource metadata, and 401 with `WWW-Authenticate: Bearer resource_metadata=…` without a valid token.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';
import express from 'express';

/** An authorization server on a free port: `{ issuer, provider, close }`. */
async function startAuthServer() {
  const provider = new DemoInMemoryAuthProvider();
  /** @type {(req: any, res: any) => void} */
  let handle = (_req, res) => res.writeHead(503).end();
  const http = createServer((req, res) => handle(req, res));
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = new URL(`http://127.0.0.1:${http.address().port}/`);
  const app = express();
  app.use(mcpAuthRouter({ provider, issuerUrl: issuer, scopesSupported: ['mcp:tools'] }));
  handle = app;
  return { issuer, provider, close: () => { http.closeAllConnections?.(); return new Promise((resolve) => http.close(resolve)); } };
}

/**
 * @typedef {{ name: string, description?: string, inputSchema?: object, annotations?: object,
 *   run: (args: any, extra: any, server: Server) => any }} TestTool `run` returns a CallToolResult (or throws an
 *   McpError); `server` is the session's SDK Server (`server.elicitInput(…)` asks the client's person)
 */

/**
 * @param {{ tools: TestTool[], requireAuth?: string, cors?: boolean, oauth?: boolean }} options
 */
export async function startMcpServer({ tools, requireAuth, cors = false, oauth = false }) {
  const auth = oauth ? await startAuthServer() : null;
  const state = {
    tools: [...tools],
    /** @type {{ tool: string, args: any, headers: Record<string, unknown> }[]} */
    calls: [],
    /** @type {string[]} tools whose call the client cancelled */
    cancelled: [],
    /** @type {Map<string, { server: Server, transport: StreamableHTTPServerTransport }>} */
    sessions: new Map(),
    /** protocol versions the clients asked for in initialize */
    initialized: [],
  };

  const newSession = () => {
    const server = new Server({ name: 'patchbridge-test-server', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: state.tools.map(({ name, description, inputSchema, annotations }) => ({
        name, description: description ?? `test tool ${name}`, inputSchema: inputSchema ?? { type: 'object', properties: {} },
        ...(annotations ? { annotations } : {}),
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = state.tools.find((t) => t.name === request.params.name);
      state.calls.push({ tool: request.params.name, args: request.params.arguments, headers: extra.requestInfo?.headers ?? {} });
      extra.signal.addEventListener('abort', () => state.cancelled.push(request.params.name));
      if (!tool) return { content: [{ type: 'text', text: `unknown tool ${request.params.name}` }], isError: true };
      return tool.run(request.params.arguments ?? {}, extra, server);
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => { state.sessions.set(id, { server, transport }); },
    });
    transport.onclose = () => { if (transport.sessionId) state.sessions.delete(transport.sessionId); };
    return { server, transport };
  };

  let port = 0;
  const http = createServer(async (req, res) => {
    if (cors) {
      res.setHeader('access-control-allow-origin', '*');
      res.setHeader('access-control-allow-headers', '*');
      res.setHeader('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
      res.setHeader('access-control-expose-headers', 'mcp-session-id, mcp-protocol-version, www-authenticate');
      if (req.method === 'OPTIONS') { res.writeHead(204).end(); return; }
    }
    if (auth && req.url === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ resource: `http://127.0.0.1:${port}/mcp`, authorization_servers: [auth.issuer.href] }));
      return;
    }
    if (auth) {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const valid = token ? await auth.provider.verifyAccessToken(token).then(() => true, () => false) : false;
      if (!valid) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"` }).end('{"error":"invalid_token"}');
        return;
      }
    }
    if (requireAuth && req.headers.authorization !== `Bearer ${requireAuth}`) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end('{"error":"invalid_token"}');
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const id = req.headers['mcp-session-id'];
    let session = typeof id === 'string' ? state.sessions.get(id) : undefined;
    if (!session) {
      if (req.method !== 'POST' || body?.method !== 'initialize') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
        return;
      }
      state.initialized.push(body.params?.protocolVersion);
      session = newSession();
      await session.server.connect(session.transport);
    }
    await session.transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  port = /** @type {import('node:net').AddressInfo} */ (http.address()).port;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    /** Adds a tool; every open session is told (notifications/tools/list_changed). @param {TestTool} tool */
    async addTool(tool) {
      state.tools.push(tool);
      await Promise.all([...state.sessions.values()].map(({ server }) => server.sendToolListChanged().catch(() => {})));
    },
    async close() {
      await Promise.all([...state.sessions.values()].map(({ transport }) => transport.close().catch(() => {})));
      http.closeAllConnections?.();
      await new Promise((resolve) => http.close(resolve));
      await auth?.close();
    },
  };
}

/** A text result. @param {string} text */
export const text = (text) => ({ content: [{ type: 'text', text }] });
