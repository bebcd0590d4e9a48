// Tool arguments checked against each tool's inputSchema through the public API: an invalid call is neither
// confirmed nor run, the model gets an `[invalid arguments]` error result and can repair the call, valid calls of
// the same batch still run in call order, retries count against maxToolCalls, unusable schemas are refused when
// the tool is registered, and `validateInput: false` opts a tool out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agent, fullLimits, scriptedModel, textMessage, toolMessage, recordingTool, ok, userInput, until } from './helpers.mjs';

const { DefaultAgentRuntime, createAgentController } = agent;

const todoSchema = {
  type: 'object',
  properties: { text: { type: 'string', minLength: 1 }, priority: { enum: ['low', 'high'] } },
  required: ['text'],
  additionalProperties: false,
};
const todoTool = (extra = {}) => recordingTool('todos.add', (args, ctx) => ok(ctx, `added ${args.text}`), { inputSchema: todoSchema, ...extra });

const start = (model, tools, { limits = {}, hooks = [], observer } = {}) =>
  new DefaultAgentRuntime(model, { limits: fullLimits(limits), hooks }).start({ ...userInput('add milk'), tools }, observer);

const toolResults = (messages) => messages.flatMap((m) => m.blocks).filter((b) => b.type === 'tool-result');

test('an invalid call gets an error result naming each violation, and the next model step repairs it', async () => {
  const tool = todoTool();
  const hookEvents = [];
  const seen = [];
  const model = scriptedModel([
    toolMessage([{ callId: 'c1', name: 'todos.add', input: { text: 5, priority: 'urgent' } }]),
    (request) => {
      // The repair: the model read the error result and calls again with what it asked for.
      const last = request.messages.at(-1).blocks[0];
      assert.match(last.content, /^\[invalid arguments\] /);
      return (async function* () { yield* toolMessage([{ callId: 'c2', name: 'todos.add', input: { text: 'milk', priority: 'low' } }]); })();
    },
    textMessage('done'),
  ]);
  const execution = start(model, [tool], { hooks: [{ onEvent: (e) => hookEvents.push(e) }], observer: (e) => seen.push(e) });
  const result = await execution.result;
  assert.equal(result.outcome, 'completed');
  assert.deepEqual(tool.calls.map((c) => c.args), [{ text: 'milk', priority: 'low' }], 'only the repaired call ran');
  const [refused, repaired] = toolResults(result.messages);
  assert.deepEqual(refused, {
    type: 'tool-result',
    callId: 'c1',
    isError: true,
    content: '[invalid arguments] The call to todos.add was not run: its arguments do not match the tool\'s inputSchema. Correct them and call the tool again.\n'
      + '- "/text": expected type string; got number 5\n'
      + '- "/priority": expected one of ["low", "high"]; got string "urgent"',
  });
  assert.deepEqual(repaired, { type: 'tool-result', callId: 'c2', content: 'added milk', isError: false });
  const completed = hookEvents.filter((e) => e.type === 'tool-call-completed');
  assert.deepEqual(completed.map((e) => [e.callId, e.invalidArguments, e.isError, e.rejected]), [['c1', true, true, false], ['c2', false, false, false]]);
  assert.deepEqual(hookEvents.filter((e) => e.type === 'tool-call-started').map((e) => e.callId), ['c2']);
  assert.ok(seen.some((e) => e.type === 'tool-result' && e.result.toolCallId === 'c1' && e.result.content.startsWith('[invalid arguments] ')));
});

test('in one batch the valid call runs and the invalid one is refused, results in call order', async () => {
  const tool = todoTool();
  const model = scriptedModel([
    toolMessage([
      { callId: 'c1', name: 'todos.add', input: { text: 'eggs' } },
      { callId: 'c2', name: 'todos.add', input: { text: '' } },
      { callId: 'c3', name: 'todos.add', input: { text: 'tea' } },
    ]),
    textMessage('done'),
  ]);
  const result = await start(model, [tool]).result;
  assert.deepEqual(tool.calls.map((c) => c.args.text), ['eggs', 'tea']);
  const results = toolResults(result.messages);
  assert.deepEqual(results.map((r) => [r.callId, r.isError]), [['c1', false], ['c2', true], ['c3', false]]);
  assert.match(results[1].content, /\n- "\/text": expected at least 1 characters; got string "" \(0 characters\)$/);
});

test('a call needing confirmation is not shown for approval when its arguments are invalid', async () => {
  const tool = todoTool({ readOnly: false });
  const seen = [];
  const model = scriptedModel([toolMessage([{ callId: 'c1', name: 'todos.add', input: {} }]), textMessage('sorry')]);
  const execution = start(model, [tool], { observer: (e) => seen.push(e.type) });
  const result = await execution.result;
  assert.equal(result.outcome, 'completed', 'settled with nobody answering');
  assert.equal(execution.pendingInterrupt, null);
  assert.ok(!seen.includes('interrupt'), seen.join(','));
  assert.equal(tool.calls.length, 0);
  assert.match(toolResults(result.messages)[0].content, /- "": expected required property "text"; got no such property/);
});

test('a model that keeps sending invalid calls is stopped by maxToolCalls', async () => {
  const tool = todoTool();
  const bad = (id) => toolMessage([{ callId: id, name: 'todos.add', input: { text: 1 } }]);
  const model = scriptedModel([bad('c1'), bad('c2'), bad('c3'), bad('c4')]);
  await assert.rejects(start(model, [tool], { limits: { maxToolCalls: 3 } }).result, { code: 'AGENT_LIMIT_EXCEEDED', limit: 'maxToolCalls' });
  assert.equal(model.requests.length, 4, 'three refused calls were answered, the fourth batch was over budget');
  assert.equal(tool.calls.length, 0);
});

test('a schema that cannot be used is refused at registration, naming the tool, keyword and place', async () => {
  const controller = createAgentController({ model: scriptedModel([]) });
  const bad = { type: 'object', properties: { text: { type: 'string', pattern: '(?<=x' } } };
  assert.throws(() => controller.registerTool(todoTool({ inputSchema: bad })), (error) => {
    assert.equal(error.code, 'AGENT_INVALID_TOOL');
    assert.deepEqual({ ...error.details }, { tool: 'todos.add', keyword: 'pattern', pointer: '/properties/text' });
    // The reason is the page's RegExp's own.
    assert.match(error.message, /^tool "todos\.add": inputSchema cannot be used to check arguments: pattern at "\/properties\/text": is not an ECMAScript regular expression \(flag u\): Invalid regular expression: \/\(\?<=x\/u: /);
    return true;
  });
  assert.throws(() => controller.registerTool(todoTool({ inputSchema: { $ref: 'https://example.com/s.json' } })),
    (error) => error.code === 'AGENT_INVALID_TOOL' && error.details.keyword === '$ref');
  assert.throws(() => controller.registerTool(todoTool({ inputSchema: { $ref: '#' } })),
    (error) => error.code === 'AGENT_INVALID_TOOL' && /cycle without a base case/.test(error.message));
  assert.equal(controller.getToolInspectionSource().snapshot.tools.length, 0, 'nothing was registered');
  // Keywords outside the checked set are ignored whatever their value: a patternProperties name the page's
  // RegExp refuses, a malformed uniqueItems.
  controller.registerTool(recordingTool('ignored', () => {}, { inputSchema: { patternProperties: { '(?<=x': {} }, uniqueItems: 'yes' } }));
  controller.unregisterTool('ignored');
  // The same schema with validateInput: false is the tool's own business.
  controller.registerTool(todoTool({ inputSchema: bad, validateInput: false }));
  assert.deepEqual(controller.getToolInspectionSource().snapshot.tools.map((t) => [t.name, t.validateInput]), [['todos.add', false]]);
  assert.throws(() => controller.registerTool(recordingTool('x', () => {}, { validateInput: 'no' })), { code: 'AGENT_INVALID_TOOL' });
  // Tools given to a runtime's start are checked the same way.
  assert.throws(() => start(scriptedModel([]), [todoTool({ inputSchema: { required: 'text' } })]), (error) =>
    error.code === 'AGENT_INVALID_TOOL' && error.details.keyword === 'required');
  controller.destroy();
});

test('patterns are the page\'s RegExp with the flag u: lookaround, backreferences and property escapes work', async () => {
  const schema = {
    type: 'object',
    properties: {
      code: { type: 'string', pattern: '^(?=.*\\d)(\\p{Lu})\\1-' },
      word: { type: 'string', pattern: '^\\w+$' },
      tag: { type: 'string', pattern: '^x-\\p{Ll}+$' },
    },
    additionalProperties: false,
  };
  const tool = todoTool({ inputSchema: schema });
  const model = scriptedModel([
    toolMessage([
      { callId: 'c1', name: 'todos.add', input: { code: 'ÉÉ-7', word: 'ok_1', tag: 'x-größe' } },
      // `\w` is ASCII in ECMAScript; `ÉE` is no backreference match; `\p{Ll}` is no capital.
      { callId: 'c2', name: 'todos.add', input: { code: 'ÉE-7', word: 'é', tag: 'x-A' } },
    ]),
    textMessage('done'),
  ]);
  const result = await start(model, [tool]).result;
  assert.equal(tool.calls.length, 1);
  assert.deepEqual(tool.calls[0].args, { code: 'ÉÉ-7', word: 'ok_1', tag: 'x-größe' });
  const refused = toolResults(result.messages)[1];
  assert.equal(refused.isError, true);
  assert.deepEqual(refused.content.split('\n').slice(1), [
    '- "/code": expected a string matching the pattern "^(?=.*\\\\d)(\\\\p{Lu})\\\\1-"; got string "ÉE-7"',
    '- "/word": expected a string matching the pattern "^\\\\w+$"; got string "é"',
    '- "/tag": expected a string matching the pattern "^x-\\\\p{Ll}+$"; got string "x-A"',
  ]);
});

test('the regular formats are generated patterns the page\'s RegExp compiles and decides; date formats stay exact', async () => {
  const formats = ['email', 'hostname', 'ipv4', 'ipv6', 'uuid', 'duration', 'date'];
  const schema = { type: 'object', properties: Object.fromEntries(formats.map((f) => [f, { type: 'string', format: f }])) };
  const tool = todoTool({ inputSchema: schema });
  const good = { email: '"a b"@[IPv6:::ffff:1.2.3.4]', hostname: 'a-b.example.', ipv4: '255.0.10.1', ipv6: '1::2:1.2.3.4', uuid: '12345678-abcd-ABCD-1234-123456789abc', duration: 'P1Y2MT3S', date: '2024-02-29' };
  const bad = { email: 'a..b@x.org', hostname: '-a.example', ipv4: '01.2.3.4', ipv6: '1:2:3:4:5:6:7::8', uuid: '12345678-abcd-abcd-1234-123456789abcd', duration: 'P1YT', date: '2023-02-29' };
  const model = scriptedModel([
    toolMessage([{ callId: 'c1', name: 'todos.add', input: good }, { callId: 'c2', name: 'todos.add', input: bad }]),
    textMessage('done'),
  ]);
  const result = await start(model, [tool]).result;
  assert.deepEqual(tool.calls.map((c) => c.args), [good]);
  const lines = toolResults(result.messages)[1].content.split('\n').slice(1);
  assert.deepEqual(lines.map((l) => l.slice(0, l.indexOf(':'))), formats.map((f) => `- "/${f}"`));
  assert.match(lines[0], /expected a string in the format email; got string "a\.\.b@x\.org"$/);
});

test('validateInput: false hands any arguments to the tool', async () => {
  const tool = todoTool({ validateInput: false });
  const model = scriptedModel([toolMessage([{ callId: 'c1', name: 'todos.add', input: { text: 5 } }]), textMessage('done')]);
  const result = await start(model, [tool]).result;
  assert.deepEqual(tool.calls.map((c) => c.args), [{ text: 5 }]);
  assert.deepEqual(toolResults(result.messages)[0], { type: 'tool-result', callId: 'c1', content: 'added 5', isError: false });
});

test('the controller repairs too: the refused call is in the state and the saved turn', async () => {
  const tool = todoTool();
  const model = scriptedModel([
    toolMessage([{ callId: 'c1', name: 'todos.add', input: { text: ['milk'] } }]),
    toolMessage([{ callId: 'c2', name: 'todos.add', input: { text: 'milk' } }]),
    textMessage('added'),
  ]);
  const controller = createAgentController({ model, tools: [tool] });
  assert.equal(await controller.send('add milk'), 'completed');
  await until(() => controller.getState().status === 'idle');
  const results = toolResults(controller.getState().messages);
  assert.deepEqual(results.map((r) => [r.callId, r.isError, r.content.startsWith('[invalid arguments] ')]), [['c1', true, true], ['c2', false, false]]);
  assert.match(results[0].content, /- "\/text": expected type string; got array of 1 items/);
  assert.equal(tool.calls.length, 1);
  controller.destroy();
});
