// An MCP Apps server for the tests, on the official TypeScript SDK's high-level `McpServer` (`registerTool`
// with `_meta.ui`, `registerResource` for `ui://` views) behind `StreamableHTTPServerTransport` (stateful
// sessions, Node's http server on a free 127.0.0.1 port). A test gives its tools (a zod input shape, the tool's
// `_meta`, a handler returning a CallToolResult) and its resources (uri, mimeType, a `read` giving the
// contents); the server records every tools/call and every resources/read it served.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * @typedef {{ name: string, description?: string, input?: Record<string, any>, meta?: object,
 *   run: (args: any) => any }} AppsTool
 * @typedef {{ name: string, uri: string, mimeType?: string, read: () => object[] }} AppsResource `read` gives
 *   the `contents` items
 */

/** @param {{ tools: AppsTool[], resources: AppsResource[] }} options */
export async function startAppsServer({ tools, resources }) {
  const state = {
    /** @type {{ tool: string, args: any }[]} */
    calls: [],
    /** @type {string[]} URIs of the resources/read requests served */
    reads: [],
    /** @type {Map<string, StreamableHTTPServerTransport>} */
    sessions: new Map(),
  };
  const newSession = () => {
    const server = new McpServer({ name: 'patchbridge-apps-test', version: '1.0.0' });
    for (const tool of tools) {
      server.registerTool(tool.name, {
        description: tool.description ?? `apps tool ${tool.name}`,
        ...(tool.input ? { inputSchema: tool.input } : {}),
        ...(tool.meta ? { _meta: tool.meta } : {}),
      }, async (/** @type {any} */ args) => {
        state.calls.push({ tool: tool.name, args });
        return tool.run(args);
      });
    }
    for (const resource of resources) {
      server.registerResource(resource.name, resource.uri, { mimeType: resource.mimeType }, async () => {
        state.reads.push(resource.uri);
        return { contents: resource.read() };
      });
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => { state.sessions.set(id, transport); },
    });
    transport.onclose = () => { if (transport.sessionId) state.sessions.delete(transport.sessionId); };
    return { server, transport };
  };

  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? state.sessions.get(id) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || body?.method !== 'initialize') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
        return;
      }
      const session = newSession();
      await session.server.connect(session.transport);
      transport = session.transport;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (http.address());
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    async close() {
      await Promise.all([...state.sessions.values()].map((t) => t.close().catch(() => {})));
      http.closeAllConnections?.();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
