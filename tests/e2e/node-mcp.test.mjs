// End to end in Node: remote MCP servers as tool sources. The built @patchbridge/agent controller with
// `mcpServers` → real MCP servers on the official SDK (tests/e2e/support/mcp-server.mjs) and the real relay with
// a fake OpenAI Chat Completions upstream that asks for the MCP tool calls.
//
// Pinned: confirmation before every MCP tool unless the page lists it in `readOnly` (a server's readOnlyHint is
// shown, never trusted); approve and reject; the allow- and deny-lists; a schema the validator refuses skipped
// and reported; arguments refused before any confirmation; `isError` and JSON-RPC errors as error results;
// credentials through an async `headers` function; stop during a long call (the server sees the cancellation
// and only the runtime's not-run result is published, never the late answer); a tool added on the server joining a later turn only; an unreachable and a
// 401 server; options refused with AGENT_INVALID_OPTIONS naming the entry; a reload with MCP calls in history.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { agent, textOf, waitForState } from './support/agent.mjs';
import { startMcpServer, text } from './support/mcp-server.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { relayWithFakeUpstream } from './support/suite.mjs';

const suite = relayWithFakeUpstream();
const TOKEN = 'mcp-secret-token';
const echoSchema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false };

/** @type {Awaited<ReturnType<typeof startMcpServer>>} */
let docs;
/** @type {() => void} lets the slow tool answer */
let releaseSlow = () => {};
before(async () => {
  docs = await startMcpServer({
    requireAuth: TOKEN,
    tools: [
      { name: 'echo', inputSchema: echoSchema, annotations: { readOnlyHint: true, destructiveHint: false }, run: ({ text: t }) => text(`echo: ${t}`) },
      { name: 'search', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { q: { type: 'string' } } }, run: ({ q }) => ({ content: [], structuredContent: { hits: [q, 'two'] } }) },
      { name: 'fails', run: () => ({ content: [{ type: 'text', text: 'the document is locked' }], isError: true }) },
      { name: 'picture', run: () => ({ content: [{ type: 'text', text: 'here:' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'resource_link', uri: 'https://example.com/a', name: 'a' }] }) },
      { name: 'remote-ref', inputSchema: { type: 'object', properties: { x: { $ref: 'https://example.com/schema.json' } } }, run: () => text('never') },
      { name: 'slow', run: (_args, extra) => new Promise((resolve) => { releaseSlow = () => resolve(text('late answer')); extra.signal.addEventListener('abort', () => resolve(text('aborted'))); }) },
      { name: 'secret.admin', run: () => text('denied tool ran') },
    ],
  });
});
after(async () => { await docs?.close(); });

/** A controller on the relay with MCP servers (the docs server with its token by default). */
function mcpController({ servers, user = 'mia' } = {}) {
  return agent.createAgentController({
    endpoint: suite.relay.api,
    headers: () => ({ 'x-patchbridge-user': user, origin: suite.relay.url }),
    model: 'openai-e2e',
    mcpServers: servers ?? [{
      name: 'docs', url: docs.url, headers: async () => ({ authorization: `Bearer ${TOKEN}` }),
      tools: { deny: ['secret.admin'] }, readOnly: ['search'],
    }],
  });
}

const toolNames = (request) => request.body.tools.map((t) => t.function.name).sort();
const toolMessages = (request) => request.body.messages.filter((m) => m.role === 'tool');
/** Polls `predicate` (something outside the controller's state, such as the MCP server's records). */
async function until(predicate, what, ms = 10_000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const ready = (controller) => new Promise((resolve) => {
  const check = (servers) => { if (servers.every((s) => s.status !== 'connecting')) { off(); resolve(servers); return true; } return false; };
  const off = controller.subscribeMcp(check);
  check(controller.getMcpServers());
});

describe('MCP servers as tool sources', () => {
  test('every MCP tool asks first (readOnlyHint is not trusted); approving runs it on the server with the page\'s credentials', async () => {
    const controller = mcpController();
    const first = suite.upstream.requests.length;
    const calls = docs.state.calls.length;
    suite.upstream.script(
      toolCallTurn([{ id: 'call_echo', name: 'mcp__docs__echo', arguments: { text: 'hello' } }]),
      textTurn('It said hello.'),
    );
    const sending = controller.send('echo hello');
    const waiting = await waitForState(controller, (s) => s.pendingConfirmation != null, 10_000, 'pendingConfirmation');
    assert.equal(waiting.pendingConfirmation.tool, 'mcp__docs__echo');
    const info = controller.describeMcpTool('mcp__docs__echo');
    assert.deepEqual({ ...info, annotations: { ...info.annotations } },
      { server: 'docs', tool: 'echo', title: null, readOnly: false, annotations: { readOnlyHint: true, destructiveHint: false }, ui: null });
    assert.equal(docs.state.calls.length, calls, 'nothing runs before approval');
    // The model saw the allowed tools under provider-safe names: no denied tool, no refused schema.
    assert.deepEqual(toolNames(suite.upstream.requests[first]), ['mcp__docs__echo', 'mcp__docs__fails', 'mcp__docs__picture', 'mcp__docs__search', 'mcp__docs__slow']);
    const echo = suite.upstream.requests[first].body.tools.find((t) => t.function.name === 'mcp__docs__echo');
    assert.equal(echo.function.description, 'test tool echo', "the server's description");
    assert.deepEqual(echo.function.parameters.properties, echoSchema.properties, "the server's inputSchema");

    controller.approveTool();
    assert.equal(await sending, 'completed');
    const call = docs.state.calls.at(-1);
    assert.deepEqual({ tool: call.tool, args: call.args }, { tool: 'echo', args: { text: 'hello' } });
    assert.equal(call.headers.authorization, `Bearer ${TOKEN}`, 'the async headers function ran for the request');
    assert.deepEqual(toolMessages(suite.upstream.requests[first + 1]).map((m) => m.content), ['echo: hello']);
    const [status] = controller.getMcpServers();
    assert.equal(status.status, 'ready');
    assert.match(status.protocolVersion, /^2025-(06-18|11-25)$/);
    assert.deepEqual(status.skipped.map((s) => s.tool), ['remote-ref']);
    assert.match(status.skipped[0].reason, /\$ref/);
    const inspection = controller.getToolInspectionSource();
    assert.deepEqual({ ...inspection.snapshot.tools.find((t) => t.name === 'mcp__docs__echo').mcp }, { server: 'docs', tool: 'echo' });
    controller.destroy();
  });

  test('rejecting never calls the server; a tool the page lists in readOnly runs without asking', async () => {
    const controller = mcpController();
    const calls = docs.state.calls.length;
    const first = suite.upstream.requests.length;
    suite.upstream.script(
      toolCallTurn([{ id: 'call_echo_r', name: 'mcp__docs__echo', arguments: { text: 'no' } }]),
      toolCallTurn([{ id: 'call_search', name: 'mcp__docs__search', arguments: { q: 'one' } }]),
      textTurn('Found two.'),
    );
    const sending = controller.send('go');
    await waitForState(controller, (s) => s.pendingConfirmation != null, 10_000, 'pendingConfirmation');
    controller.rejectTool('not now');
    assert.equal(await sending, 'completed');
    assert.deepEqual(docs.state.calls.slice(calls).map((c) => c.tool), ['search'], 'the rejected call never reached the server');
    const [rejected] = toolMessages(suite.upstream.requests[first + 1]);
    assert.match(rejected.content, /rejected/);
    const results = toolMessages(suite.upstream.requests[first + 2]);
    assert.equal(results.at(-1).content, JSON.stringify({ hits: ['one', 'two'] }), 'structuredContent as JSON text when there is no text');
    controller.destroy();
  });

  test('invalid arguments are refused before any confirmation; isError, JSON-RPC errors and rich content are error or text results', async () => {
    const controller = mcpController();
    const calls = docs.state.calls.length;
    const first = suite.upstream.requests.length;
    suite.upstream.script(
      toolCallTurn([{ id: 'call_bad', name: 'mcp__docs__echo', arguments: { text: 42 } }]),
      toolCallTurn([{ id: 'call_fails', name: 'mcp__docs__fails', arguments: {} }]),
      toolCallTurn([{ id: 'call_pic', name: 'mcp__docs__picture', arguments: {} }]),
      textTurn('Done.'),
    );
    let asked = 0;
    const off = controller.subscribe((s) => { if (s.pendingConfirmation) { asked += 1; controller.approveTool(); } });
    assert.equal(await controller.send('try things'), 'completed');
    off();
    assert.equal(asked, 2, 'the call with invalid arguments was never put to the person');
    assert.deepEqual(docs.state.calls.slice(calls).map((c) => c.tool), ['fails', 'picture']);
    const refused = toolMessages(suite.upstream.requests[first + 1]).at(-1);
    assert.match(refused.content, /invalid arguments/);
    const state = controller.getState();
    const results = state.messages.filter((m) => m.role === 'tool').map((m) => m.blocks[0]);
    assert.deepEqual(results.map((r) => r.isError), [true, true, false]);
    assert.equal(results[1].content, 'the document is locked');
    assert.equal(results[2].content, 'here:\n[image image/png, 3 bytes]\n[resource link a: https://example.com/a]');
    for (const r of results) assert.deepEqual(Object.keys(r).sort(), ['callId', 'content', 'isError', 'type']);
    controller.destroy();
  });

  test('stop during a long call aborts it: the server sees the cancellation and the late answer is never published', async () => {
    const controller = mcpController();
    suite.upstream.script(toolCallTurn([{ id: 'call_slow', name: 'mcp__docs__slow', arguments: {} }]));
    const sending = controller.send('take your time');
    await waitForState(controller, (s) => s.pendingConfirmation != null, 10_000, 'pendingConfirmation');
    controller.approveTool();
    await until(() => docs.state.calls.at(-1)?.tool === 'slow', 'the slow call on the server');
    controller.abort();
    assert.equal(await sending, 'cancelled');
    await until(() => docs.state.cancelled.includes('slow'), 'notifications/cancelled on the server');
    releaseSlow();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const state = controller.getState();
    const results = state.messages.filter((m) => m.role === 'tool').flatMap((m) => m.blocks);
    assert.deepEqual(results.map((r) => [r.callId, r.isError]), [['call_slow', true]]);
    assert.match(results[0].content, /^\[not run\] /, "the runtime's not-run result, never the server's late answer");
    assert.ok(!JSON.stringify(state).includes('late answer') && !JSON.stringify(state).includes('aborted'));
    controller.destroy();
  });

  test('a tool added on the server during a turn joins the next turn only', async () => {
    const server = await startMcpServer({ tools: [{ name: 'grow', run: async () => { await server.addTool({ name: 'sprout', run: () => text('sprouted') }); return text('grown'); } }] });
    try {
      const controller = mcpController({ servers: [{ name: 'garden', url: server.url, readOnly: ['grow', 'sprout'] }] });
      const first = suite.upstream.requests.length;
      suite.upstream.script(
        toolCallTurn([{ id: 'call_grow', name: 'mcp__garden__grow', arguments: {} }]),
        textTurn('Grown.'),
      );
      assert.equal(await controller.send('grow'), 'completed');
      await until(() => controller.getMcpServers()[0].tools.includes('sprout'), 'sprout listed');
      assert.deepEqual(toolNames(suite.upstream.requests[first + 1]), ['mcp__garden__grow'], 'not within the turn it appeared in');
      suite.upstream.script(textTurn('Now I can sprout.'));
      assert.equal(await controller.send('again'), 'completed');
      assert.deepEqual(toolNames(suite.upstream.requests[first + 2]), ['mcp__garden__grow', 'mcp__garden__sprout']);
      controller.destroy();
    } finally {
      await server.close();
    }
  });

  test('an unreachable server and one that answers 401 are reported; the turn goes on with the other tools', async () => {
    const controller = mcpController({
      servers: [
        { name: 'gone', url: 'http://127.0.0.1:9/mcp' },
        { name: 'locked', url: docs.url },
        { name: 'docs', url: docs.url, headers: { authorization: `Bearer ${TOKEN}` }, tools: ['echo'] },
      ],
    });
    const first = suite.upstream.requests.length;
    suite.upstream.script(textTurn('Only echo today.'));
    assert.equal(await controller.send('what can you do?'), 'completed');
    assert.deepEqual(toolNames(suite.upstream.requests[first]), ['mcp__docs__echo'], 'the allow-list and the failed servers');
    const byName = Object.fromEntries(controller.getMcpServers().map((s) => [s.name, s]));
    assert.deepEqual([byName.gone.status, byName.gone.reason, byName.gone.message], ['failed', 'unreachable', 'could not be reached (network or CORS)']);
    assert.deepEqual([byName.locked.status, byName.locked.reason], ['failed', 'unauthorized']);
    assert.match(byName.locked.message, /sign-in/);
    assert.equal(byName.docs.status, 'ready');
    controller.destroy();
  });

  test('mcpServers is validated like every option: AGENT_INVALID_OPTIONS naming the entry', () => {
    const make = (servers) => () => agent.createAgentController({ endpoint: suite.relay.api, mcpServers: servers });
    const refused = (pattern) => (e) => e instanceof agent.AgentError && e.code === 'AGENT_INVALID_OPTIONS' && pattern.test(e.message);
    assert.throws(make([{ name: 'a', url: 'https://a.example/mcp', token: 'x' }]), refused(/mcpServers\[0\] \("a"\): unknown key "token"/));
    assert.throws(make([{ name: 'a', url: 'https://a.example/mcp' }, { name: 'a', url: 'https://b.example/mcp' }]), refused(/mcpServers\[1\] \("a"\).*earlier entry/));
    assert.throws(make([{ name: 'a', url: 'file:///etc/passwd' }]), refused(/mcpServers\[0\] \("a"\)\.url must be http: or https:/));
    assert.throws(make([{ name: 'a_b', url: 'https://a.example/mcp' }]), refused(/mcpServers\[0\]\.name/));
    assert.throws(make([{ name: 'a', url: 'https://a.example/mcp', tools: { allow: ['x'], deny: ['y'] } }]), refused(/\.tools must be/));
    assert.throws(make([{ name: 'a', url: 'https://a.example/mcp', headers: 7 }]), refused(/\.headers must be/));
  });

  test('after a reload the stored MCP calls still name their server and tool', async () => {
    const controller = mcpController({ user: 'rey' });
    suite.upstream.script(
      toolCallTurn([{ id: 'call_search_h', name: 'mcp__docs__search', arguments: { q: 'history' } }]),
      textTurn('Found it.'),
    );
    assert.equal(await controller.send('search history'), 'completed');
    const id = controller.getState().conversation.id;
    controller.destroy();

    const reloaded = mcpController({ user: 'rey' });
    await reloaded.loadConversation(id);
    const call = reloaded.getState().messages.flatMap((m) => m.blocks).find((b) => b.type === 'tool-call');
    assert.equal(call.name, 'mcp__docs__search');
    await ready(reloaded);
    assert.deepEqual({ server: reloaded.describeMcpTool(call.name).server, tool: reloaded.describeMcpTool(call.name).tool }, { server: 'docs', tool: 'search' });
    assert.equal(textOf(reloaded.getState().messages.at(-1)), 'Found it.');
    // The next turn sends the history with the same tool name (no renaming on the way back).
    const first = suite.upstream.requests.length;
    suite.upstream.script(textTurn('Still here.'));
    assert.equal(await reloaded.send('and now?'), 'completed');
    const assistant = suite.upstream.requests[first].body.messages.find((m) => m.tool_calls);
    assert.equal(assistant.tool_calls[0].function.name, 'mcp__docs__search');
    reloaded.destroy();
  });
});

describe('MCP authorization (OAuth through the page\'s provider)', () => {
  test('a server behind the MCP authorization flow is connected with finishMcpAuth and its token is sent', async () => {
    const secure = await startMcpServer({ oauth: true, tools: [{ name: 'whoami', run: (_args, extra) => text(extra.authInfo?.clientId ? 'authorized' : 'token seen') }] });
    try {
      // A page's OAuth client provider, in memory (a widget would keep it in sessionStorage per server).
      const kept = { tokens: undefined, verifier: undefined, client: undefined, opened: [] };
      const provider = {
        redirectUrl: 'http://127.0.0.1/callback',
        clientMetadata: { redirect_uris: ['http://127.0.0.1/callback'], client_name: 'patchbridge test', grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' },
        clientInformation: () => kept.client,
        saveClientInformation: (info) => { kept.client = info; },
        tokens: () => kept.tokens,
        saveTokens: (tokens) => { kept.tokens = tokens; },
        redirectToAuthorization: (url) => { kept.opened.push(url); },
        saveCodeVerifier: (verifier) => { kept.verifier = verifier; },
        codeVerifier: () => kept.verifier,
      };
      const controller = mcpController({ servers: [{ name: 'secure', url: secure.url, auth: provider, readOnly: ['whoami'] }] });
      const [before] = await ready(controller);
      assert.deepEqual([before.status, before.reason], ['failed', 'unauthorized']);
      assert.equal(kept.opened.length, 1, 'the SDK asked the page to open the authorization URL');
      const authorization = kept.opened[0];
      assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
      assert.ok(kept.client?.client_id, 'the client registered itself (dynamic client registration)');
      // The person signs in; the authorization server redirects to the page with the code.
      const answer = await fetch(authorization, { redirect: 'manual' });
      const code = new URL(answer.headers.get('location')).searchParams.get('code');
      await controller.finishMcpAuth('secure', code);
      assert.equal(kept.tokens?.token_type.toLowerCase(), 'bearer');
      const [after] = controller.getMcpServers();
      assert.deepEqual([after.status, after.tools], ['ready', ['whoami']]);
      const first = suite.upstream.requests.length;
      suite.upstream.script(toolCallTurn([{ id: 'call_whoami', name: 'mcp__secure__whoami', arguments: {} }]), textTurn('Signed in.'));
      assert.equal(await controller.send('who am I?'), 'completed');
      assert.equal(toolMessages(suite.upstream.requests[first + 1])[0].content, 'token seen');
      assert.ok(!JSON.stringify(controller.getState()).includes(kept.tokens.access_token), 'the token never enters the conversation');
      controller.destroy();
    } finally {
      await secure.close();
    }
  });
});
