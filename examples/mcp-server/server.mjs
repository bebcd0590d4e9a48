// A small MCP server for the mcp-server example, on the official TypeScript SDK (`Server` +
// `StreamableHTTPServerTransport`, one session per client): a notes list kept in memory, with `add_note` (changes
// the list, so the agent asks before it runs) and `list_notes` (the page vouches for it as read-only).
//
//   node examples/mcp-server/server.mjs            # http://127.0.0.1:8788/mcp (PORT=0 picks a free port)
//
// It sends no CORS headers, like most servers written for desktop clients: the page reaches it through the
// relay's passthrough (`mcp.servers` in ./relay.json), which also keeps any key of the server away from the page.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const notes = [];

const TOOLS = [
  {
    name: 'add_note',
    description: 'Add one note to the shared notes list.',
    inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'The note' } }, required: ['text'] },
  },
  {
    name: 'list_notes',
    description: 'List the notes.',
    inputSchema: { type: 'object', properties: {} },
    // The client checks the structured result against it (the SDK's schema validator, in the browser).
    outputSchema: { type: 'object', properties: { notes: { type: 'array', items: { type: 'string' } } }, required: ['notes'] },
    annotations: { readOnlyHint: true },
  },
];

function newSession() {
  const server = new Server({ name: 'patchbridge-example-notes', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    if (params.name === 'add_note') {
      const text = String(params.arguments?.text ?? '').trim();
      if (!text) return { content: [{ type: 'text', text: 'A note needs some text.' }], isError: true };
      notes.push(text);
      return { content: [{ type: 'text', text: `Added note ${notes.length}: ${text}` }] };
    }
    if (params.name === 'list_notes') {
      const text = notes.length ? notes.map((n, i) => `${i + 1}. ${n}`).join('\n') : 'No notes yet.';
      return { content: [{ type: 'text', text }], structuredContent: { notes: [...notes] } };
    }
    return { content: [{ type: 'text', text: `Unknown tool ${params.name}` }], isError: true };
  });
  return server;
}

/** @type {Map<string, StreamableHTTPServerTransport>} */
const sessions = new Map();

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString('utf8');
  return body ? JSON.parse(body) : undefined;
}

const http = createServer(async (req, res) => {
  try {
    if (new URL(req.url, 'http://x').pathname !== '/mcp') return void res.writeHead(404).end();
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || body?.method !== 'initialize') {
        return void res.writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
      await newSession().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (error) {
    if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error?.message ?? error));
  }
});

const port = Number(process.env.PORT ?? 8788);
http.listen(port, '127.0.0.1', () => {
  console.log(`MCP notes server listening on http://127.0.0.1:${http.address().port}/mcp`);
});
