// End to end in Node: an MCP server through the relay's passthrough (`mcp.servers`, `{base}/mcp/{name}`). A real
// SDK MCP server that needs a bearer token only the relay's operator knows (an env secret of the relay's config),
// the real relay binary, and the built controller whose `mcpServers` entry points at the relay: the page never
// holds the token.
//
// Pinned: a tool call goes through (the operator's header reaches the server, the page's cookie and authorization
// do not; the session id comes back); a user not in the server's `users` is refused with 403
// MCP_SERVER_FORBIDDEN; an unknown name is 404 MCP_SERVER_NOT_FOUND; a body over `mcp.maxRequestBytes` is 413
// PAYLOAD_TOO_LARGE and never reaches the server; without an identity the route is 401 like every API route; an
// upstream 401 to the operator's key is 502 UPSTREAM_REJECTED; an answer larger than `mcp.maxResponseBytes` is cut,
// and a stream open past `mcp.maxExchangeMs` is ended while its idle bound is far off.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { agent } from './support/agent.mjs';
import { startFakeUpstream } from './support/fake-upstream.mjs';
import { startMcpServer, text } from './support/mcp-server.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { startRelay } from './support/relay.mjs';

const TOKEN = 'operator-only-mcp-token';
const MAX_BODY = 8192;

/** @type {Awaited<ReturnType<typeof startMcpServer>>} */
let vault;
/** @type {Awaited<ReturnType<typeof startFakeUpstream>>} */
let upstream;
/** @type {Awaited<ReturnType<typeof startRelay>>} */
let relay;
before(async () => {
  vault = await startMcpServer({
    requireAuth: TOKEN,
    tools: [{ name: 'lookup', inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] }, run: ({ key }) => text(`value of ${key}`) }],
  });
  upstream = await startFakeUpstream();
  relay = await startRelay({
    upstream: upstream.url,
    env: { E2E_MCP_AUTH: `Bearer ${TOKEN}`, E2E_MCP_STALE: 'Bearer revoked-token' },
    mcp: {
      maxRequestBytes: MAX_BODY,
      servers: [
        { name: 'vault', url: vault.url, headers: { authorization: { env: 'E2E_MCP_AUTH' } }, users: ['mia'] },
        { name: 'open', url: vault.url, headers: { authorization: { env: 'E2E_MCP_AUTH' } }, users: 'all' },
        { name: 'stale', url: vault.url, headers: { authorization: { env: 'E2E_MCP_STALE' } }, users: 'all' },
      ],
    },
  });
});
after(async () => {
  await relay?.stop();
  await upstream?.close();
  await vault?.close();
});

/** A controller whose only MCP server is `name` on the relay, as `user`. */
function throughRelay(name, user) {
  const identity = { 'x-patchbridge-user': user, origin: relay.url };
  return agent.createAgentController({
    endpoint: relay.api,
    headers: () => identity,
    model: 'openai-e2e',
    // The page's own credentials for the relay; the relay must not pass them on.
    mcpServers: [{ name, url: `${relay.api}/mcp/${name}`, headers: { ...identity, cookie: 'session=page', authorization: 'Bearer page-token' }, readOnly: ['lookup'] }],
  });
}

const initialize = (id = 1) => JSON.stringify({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } },
});
/** A raw POST to `{base}/mcp/{name}`. */
function post(name, { user = 'mia', body = initialize() } = {}) {
  return fetch(`${relay.api}/mcp/${name}`, {
    method: 'POST',
    headers: { 'x-patchbridge-user': user, origin: relay.url, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  });
}

describe('MCP servers through the relay', () => {
  test('a tool call goes through the relay with the operator\'s secret header; the page\'s credentials stay behind', async () => {
    const controller = throughRelay('vault', 'mia');
    const calls = vault.state.calls.length;
    const first = upstream.requests.length;
    upstream.script(
      toolCallTurn([{ id: 'call_lookup', name: 'mcp__vault__lookup', arguments: { key: 'alpha' } }]),
      textTurn('Alpha looked up.'),
    );
    assert.equal(await controller.send('look up alpha'), 'completed');
    const [status] = controller.getMcpServers();
    assert.equal(status.status, 'ready');
    const call = vault.state.calls.at(calls);
    assert.deepEqual({ tool: call.tool, args: call.args }, { tool: 'lookup', args: { key: 'alpha' } });
    assert.equal(call.headers.authorization, `Bearer ${TOKEN}`, "the operator's header, not the page's");
    assert.equal(call.headers.cookie, undefined, "the page's cookie is not forwarded");
    assert.equal(call.headers['x-patchbridge-user'], undefined, "the relay's identity header is not forwarded");
    assert.ok(call.headers['mcp-session-id'], 'the session id made the round trip');
    assert.equal(upstream.requests[first + 1].body.messages.filter((m) => m.role === 'tool').at(-1).content, 'value of alpha');
    controller.destroy();
  });

  test('the initialize answer carries the session id back, and a server open to "all" serves any identified user', async () => {
    const response = await post('open', { user: 'noah' });
    assert.equal(response.status, 200);
    assert.ok(response.headers.get('mcp-session-id'), 'mcp-session-id passed back');
    const body = await response.text();
    assert.match(body, /"protocolVersion":"2025-06-18"/);
  });

  test('a user not listed for the server is refused with 403 MCP_SERVER_FORBIDDEN; the controller reports the server failed', async () => {
    const sessions = vault.state.initialized.length;
    const response = await post('vault', { user: 'noah' });
    assert.equal(response.status, 403);
    assert.equal((await response.json()).error.code, 'MCP_SERVER_FORBIDDEN');

    const controller = throughRelay('vault', 'noah');
    upstream.script(textTurn('No vault for you.'));
    assert.equal(await controller.send('hi'), 'completed');
    const [status] = controller.getMcpServers();
    assert.deepEqual([status.status, status.reason], ['failed', 'http']);
    assert.match(status.message, /403/);
    assert.equal(vault.state.initialized.length, sessions, 'nothing reached the server');
    controller.destroy();
  });

  test('an upstream 401 to the operator\'s key is 502 UPSTREAM_REJECTED, not a sign-in prompt for the page', async () => {
    const response = await post('stale');
    assert.equal(response.status, 502);
    assert.equal(response.headers.get('www-authenticate'), null);
    assert.equal((await response.json()).error.code, 'UPSTREAM_REJECTED');
  });

  test('an unknown server name is 404 MCP_SERVER_NOT_FOUND; without an identity the route is 401', async () => {
    const response = await post('nope');
    assert.equal(response.status, 404);
    assert.equal((await response.json()).error.code, 'MCP_SERVER_NOT_FOUND');
    const anonymous = await fetch(`${relay.api}/mcp/vault`, { method: 'POST', headers: { origin: relay.url, 'content-type': 'application/json' }, body: initialize() });
    assert.equal(anonymous.status, 401);
    assert.equal((await anonymous.json()).error.code, 'UNAUTHENTICATED');
  });

  test('a body over mcp.maxRequestBytes is refused with 413 and never reaches the server', async () => {
    const sessions = vault.state.initialized.length;
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x'.repeat(MAX_BODY), version: '1' } } });
    const response = await post('vault', { body: big });
    assert.equal(response.status, 413);
    assert.equal((await response.json()).error.code, 'PAYLOAD_TOO_LARGE');
    assert.equal(vault.state.initialized.length, sessions);
  });

  test('a user with mcp.maxConcurrentPerUser exchanges open (GET streams) is refused with 429 until one ends; other users are not', async () => {
    const bounded = await startRelay({
      env: { E2E_MCP_AUTH: `Bearer ${TOKEN}` },
      demo: true,
      mcp: { maxConcurrentPerUser: 2, servers: [{ name: 'open', url: vault.url, headers: { authorization: { env: 'E2E_MCP_AUTH' } }, users: 'all' }] },
    });
    const send = (method, user, { session, signal, body } = {}) => fetch(`${bounded.api}/mcp/open`, {
      method, signal, body,
      headers: {
        'x-patchbridge-user': user, origin: bounded.url, accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
    });
    const streams = [];
    try {
      for (let i = 0; i < 2; i += 1) {
        const init = await send('POST', 'zoe', { body: initialize() });
        assert.equal(init.status, 200);
        await init.text();
        const controller = new AbortController();
        const stream = await send('GET', 'zoe', { session: init.headers.get('mcp-session-id'), signal: controller.signal });
        assert.equal(stream.status, 200, 'the standalone SSE stream is open');
        assert.match(stream.headers.get('content-type'), /text\/event-stream/);
        streams.push(controller);
      }
      const refused = await send('POST', 'zoe', { body: initialize() });
      assert.equal(refused.status, 429);
      assert.equal((await refused.json()).error.code, 'MCP_CONCURRENCY_LIMIT');
      const other = await send('POST', 'mia', { body: initialize() });
      assert.equal(other.status, 200, 'the bound is per user');
      await other.text();

      streams.shift().abort();
      let again;
      for (let i = 0; i < 200; i += 1) {
        again = await send('POST', 'zoe', { body: initialize() });
        if (again.status !== 429) break;
        await again.text();
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.equal(again.status, 200, 'a closed stream gives its place back');
      await again.text();
    } finally {
      for (const c of streams) c.abort();
      await bounded.stop();
    }
  });
  test('an answer over mcp.maxResponseBytes is cut, and a stream open past mcp.maxExchangeMs is ended', async () => {
    const large = await startMcpServer({
      tools: [
        { name: 'dump', run: () => text('x'.repeat(64 * 1024)) },
        {
          // Notifications before the result make the server stream its answer as SSE, with no length declared.
          name: 'chatty',
          run: async (_args, extra) => {
            for (let i = 1; i <= 40; i += 1) {
              await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: 'p', progress: i, total: 40, message: 'y'.repeat(1024) } });
            }
            return text('done');
          },
        },
      ],
    });
    const bounded = await startRelay({
      upstream: upstream.url,
      mcp: { maxResponseBytes: 16 * 1024, maxExchangeMs: 400, servers: [{ name: 'large', url: large.url, users: 'all' }] },
    });
    const send = (method, { session, signal, body } = {}) => fetch(`${bounded.api}/mcp/large`, {
      method, signal, body,
      headers: {
        'x-patchbridge-user': 'uma', origin: bounded.url, accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
    });
    try {
      // A tools/call whose answer (64 KiB of text, its length declared) passes the bound: refused before any
      // byte; one streamed as SSE (40 KiB of progress notifications) is cut once past it, not completed.
      const init = await send('POST', { body: initialize() });
      assert.equal(init.status, 200);
      await init.text();
      const session = init.headers.get('mcp-session-id');
      const initialized = await send('POST', { session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
      assert.equal(initialized.status, 202);
      const dump = await send('POST', { session, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'dump', arguments: {} } }) });
      assert.equal(dump.status, 502);
      assert.equal((await dump.json()).error.code, 'UPSTREAM_RESPONSE_TOO_LARGE');
      const chatty = await send('POST', { session, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'chatty', arguments: {}, _meta: { progressToken: 'p' } } }) });
      assert.equal(chatty.status, 200, 'a stream\'s head passes before its size is known');
      assert.match(chatty.headers.get('content-type'), /text\/event-stream/);
      assert.equal(await chatty.text().then(() => 'done', () => 'cut'), 'cut');
      assert.deepEqual(large.state.calls.map((c) => c.tool), ['dump', 'chatty'], 'the server ran both; the answers were stopped on the way back');

      // A standalone GET stream, silent, is ended at maxExchangeMs (the idle bound is 5 minutes).
      const opened = Date.now();
      const stream = await send('GET', { session });
      assert.equal(stream.status, 200);
      const ended = await stream.text().then(() => 'done', () => 'cut');
      const open = Date.now() - opened;
      assert.equal(ended, 'cut', 'the stream ends with an error, not as a complete body');
      assert.ok(open >= 350 && open < 10_000, `open for ${open} ms`);
    } finally {
      await bounded.stop();
      await large.close();
    }
  });
});
