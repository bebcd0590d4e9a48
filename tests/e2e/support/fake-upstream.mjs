// A fake upstream model provider for the end-to-end tests: a real Node HTTP server on 127.0.0.1 that answers
// the relay's upstream requests with scripted responses in a provider's real SSE wire format (built by
// ./openai-chat.mjs and ./anthropic.mjs), and records what it received.
//
// - `script(...turns)` queues responses; each incoming POST takes the next one. A turn is
//   `{ provider, frames, delayMs?, firstDelayMs?, holdOpen? }`: `provider` must match the path the relay called
//   (a mismatch answers 500 and marks the exchange, so a wrong route fails the test instead of passing quietly);
//   `frames` are SSE frames written one by one, `delayMs` apart; `holdOpen` keeps the response open after the
//   last frame (a slow provider) until the client goes away.
// - `requests`: one record per request `{ path, headers, body, provider, disconnected, finished, closed }`.
//   `disconnected` becomes true when the client (the relay) closed the connection before the response ended;
//   `closed` is a promise settled when the connection is gone either way.
// - Anything unscripted (no turn left) answers 500 and is recorded in `unexpected`, which tests assert empty.

import http from 'node:http';

/** Which provider an upstream path belongs to. */
export function providerOfPath(path) {
  if (path.endsWith('/chat/completions')) return 'openai-chat';
  if (path.endsWith('/messages')) return 'anthropic-messages';
  if (path.endsWith('/responses')) return 'openai-responses';
  return null;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFakeUpstream() {
  const queue = [];
  const requests = [];
  const unexpected = [];
  const waiters = [];
  const sockets = new Set();

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body;
      try { body = JSON.parse(text); } catch { body = text; }
      let settle;
      const record = {
        method: req.method,
        path: req.url,
        headers: req.headers,
        body,
        provider: providerOfPath(req.url ?? ''),
        disconnected: false,
        finished: false,
        framesWritten: 0,
        closed: new Promise((resolve) => { settle = resolve; }),
      };
      requests.push(record);
      res.on('close', () => {
        if (!res.writableFinished) record.disconnected = true;
        settle();
      });
      for (const w of waiters.splice(0)) w();

      const turn = queue.shift();
      if (turn === undefined || turn.provider !== record.provider) {
        unexpected.push({ path: req.url, expected: turn?.provider ?? '(no turn scripted)' });
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'fake upstream: unscripted request' } }));
        return;
      }
      if (turn.status !== undefined && turn.status !== 200) {
        res.writeHead(turn.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(turn.errorBody ?? { error: { message: 'scripted failure' } }));
        record.finished = true;
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      for (let i = 0; i < turn.frames.length; i += 1) {
        const wait = i === 0 ? (turn.firstDelayMs ?? 0) : (turn.delayMs ?? 0);
        if (wait > 0) await sleep(wait);
        if (record.disconnected || res.destroyed) return;
        res.write(turn.frames[i]);
        record.framesWritten += 1;
      }
      if (turn.holdOpen) return; // a provider that stalls: only the client can end this exchange
      record.finished = true;
      res.end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unexpected,
    /** Queues responses for the next requests, in order. */
    script(...turns) {
      for (const t of turns) {
        if (!t || !t.provider || !Array.isArray(t.frames)) throw new Error('a turn needs { provider, frames }');
        queue.push(t);
      }
    },
    /** Turns scripted but not consumed yet. */
    pending() {
      return queue.length;
    },
    /** Resolves once at least `n` requests arrived (rejects after `ms`). */
    async waitForRequests(n, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (requests.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`fake upstream: expected ${n} request(s), got ${requests.length}`);
        await Promise.race([new Promise((resolve) => waiters.push(resolve)), sleep(Math.min(left, 50))]);
      }
      return requests[n - 1];
    },
    async close() {
      queue.length = 0;
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
