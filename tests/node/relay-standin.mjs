// A minimal HTTP server speaking the relay protocol of docs/protocol.md (§2 model stream as SSE from a scripted
// list of events, §4 error bodies, §6 conversations by revision: list with cursor, create, read, write, delete) on
// 127.0.0.1, so the package's fetch adapters
// (relay model, conversation store, headers provider) are tested over real HTTP. It is a stand-in for the relay in
// these package tests only; the real relay is exercised end to end by tests/e2e.
import { createServer } from 'node:http';

/** One SSE message: an event object, or its exact JSON text (a string is sent byte for byte). */
function sse(event) {
  const text = typeof event === 'string' ? event : JSON.stringify(event);
  return `event: ${JSON.parse(text).type}\ndata: ${text}\n\n`;
}

export async function startRelay({ turns = [] } = {}) {
  const state = {
    turns,
    modelRequests: [],
    requests: [],
    conversations: new Map(),
    corrupt: new Set(),
    nextId: 1,
    failModel: null,
    // `[status, code, extra]` the next conversation request (any method) answers with, then cleared.
    failNext: null,
    // When set, DELETE answers this status with an empty body instead of 204 (a proxy's answer, say).
    deleteStatus: null,
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
      // A turn `{ hang: [events] }` sends its events and then holds the stream open until the client goes away.
      if (turn.hang) {
        for (const event of turn.hang) res.write(sse(event));
        return;
      }
      for (const event of turn) {
        res.write(sse(event));
        await new Promise((resolve) => setImmediate(resolve));
      }
      return res.end();
    }
    if (url.pathname.startsWith('/api/conversations') && state.failNext) {
      const [status, code, extra] = state.failNext;
      state.failNext = null;
      return error(status, code, extra);
    }
    const summary = (c) => ({ id: c.id, title: c.title, revision: c.revision, createdAt: c.createdAt, updatedAt: c.updatedAt });
    const snapshot = (c) => ({ conversation: summary(c), context: c.context });
    if (req.method === 'GET' && url.pathname === '/api/conversations') {
      const limitText = url.searchParams.get('limit');
      const limit = limitText === null ? 20 : Number(limitText);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) return error(400, 'INVALID_REQUEST');
      // Newest updatedAt first (ties: newest id); the cursor is the position to continue from.
      const all = [...state.conversations.values()].sort((a, b) => (b.updatedAt.localeCompare(a.updatedAt)) || (b.seq - a.seq));
      const cursor = url.searchParams.get('cursor');
      const start = cursor === null ? 0 : Number(cursor.replace(/^p/, ''));
      const page = all.slice(start, start + limit).map(summary);
      return send(200, { items: page, nextCursor: start + limit < all.length ? `p${start + limit}` : null });
    }
    if (req.method === 'POST' && url.pathname === '/api/conversations') {
      const parsed = JSON.parse(body);
      const now = new Date().toISOString();
      const seq = state.nextId++;
      const c = { seq, id: `c_${seq}`, title: parsed.title ?? 'New', revision: 1, createdAt: now, updatedAt: now, context: parsed.context ?? { messages: [], modelState: null } };
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
        if (parsed.title !== undefined) c.title = parsed.title;
        c.updatedAt = new Date().toISOString();
        return send(200, snapshot(c));
      }
      if (req.method === 'DELETE') {
        if (state.deleteStatus !== null) return send(state.deleteStatus);
        state.conversations.delete(id);
        res.writeHead(204);
        return res.end();
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
