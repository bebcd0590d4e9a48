// End to end in Node against the MCP reference server `@modelcontextprotocol/server-everything` (from npm, its
// own CLI in `streamableHttp` mode, tests/e2e/support/everything-server.mjs) through the built controller with
// `mcpServers` and a scripted custom model (tests/e2e/support/scripted-model.mjs).
//
// Pinned: the server's own tools are listed (echo, get-sum, get-tiny-image, trigger-long-running-operation)
// and run with the page's readOnly; an image result in its documented textual form; every tools/call carries a
// progress token and the long-running operation's notifications reach `getMcpProgress()` /
// `subscribeMcpProgress` keyed by the toolCallId, dropped when the call ends; stop during the long call ends the
// turn cancelled, the server receives notifications/cancelled for that request, and no progress is published
// after the stop; the deadline still bounds a call that keeps sending progress; the server's elicitation
// reaches `pendingElicitation` and the person's answer reaches the server; an app's own call (callToolFromApp)
// gets progress under its own call id and the elicitation as its pending interrupt.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { agent, waitForState } from './support/agent.mjs';
import { startEverythingServer } from './support/everything-server.mjs';
import { say, scriptedModel, toolCalls } from './support/scripted-model.mjs';

/** @type {Awaited<ReturnType<typeof startEverythingServer>>} */
let everything;
before(async () => { everything = await startEverythingServer(); });
after(async () => { await everything?.close(); });

const READ_ONLY = ['echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation', 'trigger-elicitation-request'];

/** A controller on a scripted model with the reference server (its tools the page vouches for run unasked). */
function controllerWith(scripted, { limits } = {}) {
  return agent.createAgentController({
    model: scripted.model,
    mcpServers: [{ name: 'every', url: everything.url, readOnly: READ_ONLY }],
    ...(limits ? { runtime: { limits } } : {}),
  });
}

/** Resolves once no server is connecting and `tool` is listed (the elicitation tool joins after initialize). */
function listed(controller, tool) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`${tool} not listed: ${JSON.stringify(controller.getMcpServers())}`)); }, 15_000);
    const check = (servers) => {
      if (servers.every((s) => s.status === 'ready') && servers[0].tools.includes(tool)) { clearTimeout(timer); off(); resolve(servers); return true; }
      return false;
    };
    const off = controller.subscribeMcp(check);
    check(controller.getMcpServers());
  });
}

const toolResults = (state) => state.messages.filter((m) => m.role === 'tool').flatMap((m) => m.blocks);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** The tools/call the client POSTed for a toolCallId's arguments, and whether a cancellation named it. */
const callsOf = (tool) => everything.messages.filter((m) => m.method === 'tools/call' && m.params?.name === tool);
const cancelledIds = () => everything.messages.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.requestId);

async function until(predicate, what, ms = 10_000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${ms} ms`);
    await sleep(20);
  }
}

describe('the MCP reference server (server-everything)', () => {
  test('its tools are listed; echo, get-sum and the tiny image run and come back as the contract\'s results', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted);
    const [status] = await listed(controller, 'get-sum');
    for (const tool of ['echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation']) assert.ok(status.tools.includes(tool), `${tool} listed (${status.tools})`);
    assert.match(status.protocolVersion, /^2025-(06-18|11-25)$/);
    scripted.script(
      toolCalls([
        { id: 'call_echo', name: 'mcp__every__echo', arguments: { message: 'hello' } },
        { id: 'call_sum', name: 'mcp__every__get-sum', arguments: { a: 2, b: 3 } },
        { id: 'call_image', name: 'mcp__every__get-tiny-image', arguments: {} },
      ]),
      say('Done.'),
    );
    assert.equal(await controller.send('run them'), 'completed');
    assert.ok(scripted.toolNames(0).includes('mcp__every__get-sum'), 'the model was offered the server\'s tools');
    const results = toolResults(controller.getState());
    assert.deepEqual(results.map((r) => [r.callId, r.isError]), [['call_echo', false], ['call_sum', false], ['call_image', false]]);
    assert.equal(results[0].content, 'Echo: hello');
    assert.equal(results[1].content, 'The sum of 2 and 3 is 5.');
    assert.match(results[2].content, /^\[image image\/png, \d+ bytes\]$/m, 'the image in its documented textual form, not its data');
    assert.ok(!results[2].content.includes('iVBORw0KGgo'), 'no base64 reaches the model');
    for (const call of callsOf('echo')) assert.notEqual(call.params._meta?.progressToken, undefined, 'every tools/call carries a progress token');
    controller.destroy();
  });

  test('the long-running operation\'s progress reaches getMcpProgress and its subscribers by toolCallId, then is dropped', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted);
    await listed(controller, 'trigger-long-running-operation');
    /** @type {any[]} */
    const seen = [];
    const off = controller.subscribeMcpProgress((progress) => { seen.push(progress); });
    scripted.script(toolCalls([{ id: 'call_long', name: 'mcp__every__trigger-long-running-operation', arguments: { duration: 1.2, steps: 4 } }]), say('Finished.'));
    const sending = controller.send('take a while');
    await until(() => controller.getMcpProgress().call_long !== undefined, 'the first progress notification');
    const first = controller.getMcpProgress().call_long;
    assert.equal(first.total, 4);
    assert.ok(first.progress >= 1 && first.progress <= 4);
    assert.ok(Object.isFrozen(controller.getMcpProgress()) && Object.isFrozen(first));
    assert.equal(await sending, 'completed');
    off();
    assert.deepEqual(controller.getMcpProgress(), {}, 'dropped when the call ended');
    const steps = seen.map((p) => p.call_long?.progress).filter((p) => p !== undefined);
    assert.deepEqual(steps, [...steps].sort((a, b) => a - b), 'in order');
    assert.equal(steps.at(-1), 4, 'every step arrived');
    assert.ok(seen.every((p) => Object.keys(p).every((k) => k === 'call_long')), 'keyed by the toolCallId only');
    assert.deepEqual(seen.at(-1), {}, 'the last publication is the empty one');
    assert.match(toolResults(controller.getState())[0].content, /^Long running operation completed\. Duration: 1\.2 seconds, Steps: 4\.$/);
    controller.destroy();
  });

  test('stop during the long call: cancelled, the server receives notifications/cancelled, no progress after the stop', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted);
    await listed(controller, 'trigger-long-running-operation');
    let afterStop = 0;
    let stopped = false;
    const off = controller.subscribeMcpProgress((progress) => { if (stopped && Object.keys(progress).length) afterStop += 1; });
    const before = callsOf('trigger-long-running-operation').length;
    scripted.script(toolCalls([{ id: 'call_stop', name: 'mcp__every__trigger-long-running-operation', arguments: { duration: 3, steps: 10 } }]));
    const sending = controller.send('long one');
    await until(() => controller.getMcpProgress().call_stop !== undefined, 'progress of the call');
    stopped = true;
    controller.abort();
    assert.deepEqual(controller.getMcpProgress(), {}, 'dropped at the stop');
    assert.equal(await sending, 'cancelled');
    const request = callsOf('trigger-long-running-operation')[before];
    await until(() => cancelledIds().includes(request.id), 'notifications/cancelled for that request on the server');
    await sleep(1_500); // the server's remaining steps would have sent progress meanwhile
    off();
    assert.equal(afterStop, 0, 'no progress published after the stop');
    assert.deepEqual(controller.getMcpProgress(), {});
    const [result] = toolResults(controller.getState());
    assert.deepEqual([result.callId, result.isError], ['call_stop', true]);
    assert.match(result.content, /^\[not run\] /);
    controller.destroy();
  });

  test('progress does not extend the deadline: a call that keeps reporting ends at maxDurationMs', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted, { limits: { maxDurationMs: 1_500 } });
    await listed(controller, 'trigger-long-running-operation');
    const before = callsOf('trigger-long-running-operation').length;
    scripted.script(toolCalls([{ id: 'call_deadline', name: 'mcp__every__trigger-long-running-operation', arguments: { duration: 6, steps: 24 } }]));
    const started = Date.now();
    await assert.rejects(controller.send('slow'), (error) => error.code === 'AGENT_EXECUTION_TIMEOUT');
    const took = Date.now() - started;
    assert.ok(took < 4_000, `ended at the deadline (${took} ms), not when the server finished`);
    assert.deepEqual(controller.getMcpProgress(), {});
    const request = callsOf('trigger-long-running-operation')[before];
    await until(() => cancelledIds().includes(request.id), 'notifications/cancelled after the deadline');
    controller.destroy();
  });

  test('the server\'s elicitation reaches pendingElicitation; the person\'s answer reaches the server', async () => {
    const scripted = scriptedModel();
    const controller = controllerWith(scripted);
    await listed(controller, 'trigger-elicitation-request');
    scripted.script(toolCalls([{ id: 'call_ask', name: 'mcp__every__trigger-elicitation-request', arguments: {} }]), say('Thanks.'));
    const sending = controller.send('ask me');
    const { pendingElicitation: asked } = await waitForState(controller, (s) => s.pendingElicitation != null, 10_000, 'pendingElicitation');
    assert.deepEqual([asked.callId, asked.mode, asked.source], ['call_ask', 'form', 'every']);
    assert.ok(asked.requestedSchema.properties.name, 'the server\'s form schema');
    controller.answerElicitation({ action: 'accept', content: { name: 'Ada Lovelace', check: true } });
    assert.equal(await sending, 'completed');
    const [result] = toolResults(controller.getState());
    assert.equal(result.isError, false);
    assert.match(result.content, /Ada Lovelace/, 'the server echoes what the person answered');
    controller.destroy();
  });

  test('an app\'s own call (callToolFromApp) gets the same progress and elicitation, keyed by its own call id', async () => {
    const controller = controllerWith(scriptedModel());
    await listed(controller, 'trigger-elicitation-request');
    /** @type {Set<string>} */
    const progressed = new Set();
    const off = controller.subscribeMcpProgress((progress) => { for (const id of Object.keys(progress)) progressed.add(id); });
    const long = await controller.callToolFromApp({ server: 'every', name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } });
    off();
    assert.match(long.content[0].text, /^Long running operation completed/);
    assert.equal(progressed.size, 1);
    assert.match([...progressed][0], /^app_/, 'the app call\'s id');
    assert.deepEqual(controller.getMcpProgress(), {});

    const asking = controller.callToolFromApp({ server: 'every', name: 'trigger-elicitation-request' });
    const call = await new Promise((resolve) => {
      const stop = controller.subscribeMcpAppCall((c) => { if (c?.pendingInterrupt?.kind === 'elicitation') { stop(); resolve(c); } });
    });
    assert.equal(call.pendingInterrupt.source, 'every');
    controller.respondMcpAppCall({ interruptId: call.pendingInterrupt.interruptId, value: { action: 'decline' } });
    const declined = await asking;
    assert.match(declined.content.map((p) => p.text).join('\n'), /declined/);
    assert.equal(controller.getMcpAppCall(), null);
    controller.destroy();
  });
});
