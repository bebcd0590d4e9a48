// A minimal HTTP server speaking the relay protocol of docs/protocol.md (§2 model stream as SSE from a scripted
// list of events, §4 error bodies, §6 conversations by revision) on 127.0.0.1, so the package's fetch adapters
// (relay model, conversation store, headers provider) are tested over real HTTP. It is a stand-in for the relay in
// these package tests only; the real relay is exercised end to end by tests/e2e.
import { createServer } from 'node:http';

export async function startRelay({ turns = [] } = {}) {
  const state = {
    turns,
    modelRequests: [],
    requests: [],
    conversations: new Map(),
    corrupt: new Set(),
    nextId: 1,
    failModel: null,
  };
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    state.requests.push({ method: req.method, url: req.url, headers: req.headers, body });
    const send = (status, value) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(value === undefined ? '' : JSON.stringify(value));
    };
    const error = (status, code, extra = {}) => send(status, { error: { code, message: `${code} (stand-in)`, ...extra } });
    if (req.headers.authorization !== 'Bearer test-token') return error(401, 'UNAUTHENTICATED');
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/api/model') {
      state.modelRequests.push(JSON.parse(body));
      if (state.failModel) return error(...state.failModel);
      const turn = state.turns[state.modelRequests.length - 1];
      if (!turn) return error(500, 'INTERNAL');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of turn) {
        res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        await new Promise((resolve) => setImmediate(resolve));
      }
      return res.end();
    }
    const summary = (c) => ({ id: c.id, title: c.title, revision: c.revision, createdAt: c.createdAt, updatedAt: c.updatedAt });
    const snapshot = (c) => ({ conversation: summary(c), context: c.context });
    if (req.method === 'POST' && url.pathname === '/api/conversations') {
      const parsed = JSON.parse(body);
      const now = new Date().toISOString();
      const c = { id: `c_${state.nextId++}`, title: parsed.title ?? 'New', revision: 1, createdAt: now, updatedAt: now, context: parsed.context ?? { messages: [], modelState: null } };
      state.conversations.set(c.id, c);
      return send(201, snapshot(c));
    }
    const match = url.pathname.match(/^\/api\/conversations\/([^/]+)$/);
    if (match) {
      const id = decodeURIComponent(match[1]);
      const c = state.conversations.get(id);
      if (!c) return error(404, 'NOT_FOUND');
      if (req.method === 'GET') {
        if (state.corrupt.has(id)) return error(500, 'CONVERSATION_CORRUPT');
        return send(200, snapshot(c));
      }
      if (req.method === 'PUT') {
        const parsed = JSON.parse(body);
        if (parsed.expectedRevision !== c.revision) return error(409, 'REVISION_CONFLICT', { currentRevision: c.revision });
        c.revision += 1;
        c.context = parsed.context;
        c.updatedAt = new Date().toISOString();
        return send(200, snapshot(c));
      }
    }
    return error(404, 'NOT_FOUND');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    state,
    endpoint: `http://127.0.0.1:${port}/api`,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
