// End to end in Node: the built @patchbridge/agent controller → the real relay binary (SQLite) → a fake OpenAI
// Chat Completions upstream speaking the real SSE wire format.
//
// Scenarios: a tool loop with a confirmation (approve: the tool runs and its result reaches the model) and its
// rejection path (the tool never runs; the model sees an error tool result); a max-tokens turn (`length`) saved
// with its ModelState; a cancel in mid-stream (nothing saved; the upstream sees the disconnect).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { pageTool, relayController, textOf, waitForState } from './support/agent.mjs';
import { textTurn, toolCallTurn } from './support/openai-chat.mjs';
import { UPSTREAM_KEY } from './support/relay.mjs';
import { disconnectSeen, relayWithFakeUpstream } from './support/suite.mjs';

const suite = relayWithFakeUpstream();

function notesTools() {
  const notes = [];
  const save = pageTool('notes.save', ({ text }) => {
    notes.push(text);
    return `Saved note #${notes.length}: ${text}`;
  });
  const count = pageTool('notes.count', () => `${notes.length} note(s)`, { readOnly: true, inputSchema: { type: 'object', properties: {} } });
  return { notes, save, count };
}

/** The upstream's view of the tool messages of a Chat Completions request. */
const toolMessages = (body) => body.messages.filter((m) => m.role === 'tool');

describe('OpenAI Chat Completions through the relay', () => {
  test('tool loop with a confirmation: approve runs the tool and the model sees its result', async () => {
    const { notes, save, count } = notesTools();
    const controller = relayController(suite.relay, { model: 'openai-e2e', tools: [save, count] });
    const first = suite.upstream.requests.length;
    suite.upstream.script(
      toolCallTurn([{ id: 'call_save_1', name: 'notes_save', arguments: { text: 'buy milk' } }], { text: 'Saving that.' }),
      textTurn('Your note "buy milk" is saved.'),
    );

    const sending = controller.send('please save a note: buy milk');
    const waiting = await waitForState(controller, (s) => s.pendingConfirmation != null, 10_000, 'pendingConfirmation');
    assert.equal(waiting.status, 'awaiting-confirmation');
    assert.equal(waiting.pendingConfirmation.tool, 'notes.save', 'the neutral name, mapped back from notes_save');
    assert.deepEqual({ ...waiting.pendingConfirmation.arguments }, { text: 'buy milk' });
    assert.equal(typeof waiting.pendingConfirmation.interruptId, 'string');
    assert.ok(waiting.pendingConfirmation.interruptId.length > 0);
    assert.equal(save.calls.length, 0, 'nothing runs before approval');
    assert.equal(suite.upstream.requests.length, first + 1, 'no second model call while waiting');

    // What the provider received on the first call: the relay's key, the neutral request encoded for Chat.
    const r1 = suite.upstream.requests[first];
    assert.equal(r1.path, '/v1/chat/completions');
    assert.equal(r1.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.equal(r1.body.model, 'gpt-4.1-mini');
    assert.equal(r1.body.stream, true);
    assert.deepEqual(r1.body.tools.map((t) => t.function.name).sort(), ['notes_count', 'notes_save']);
    const lastUser = r1.body.messages.filter((m) => m.role === 'user').at(-1);
    assert.match(JSON.stringify(lastUser.content), /please save a note: buy milk/);

    controller.approveTool();
    const outcome = await sending;
    assert.equal(outcome, 'completed');
    assert.deepEqual(save.calls.map((c) => ({ ...c.args })), [{ text: 'buy milk' }]);
    assert.equal(save.calls[0].callId, 'call_save_1');
    assert.deepEqual(notes, ['buy milk']);

    // The second upstream request carries the assistant's tool call and the tool's result.
    assert.equal(suite.upstream.requests.length, first + 2);
    const r2 = suite.upstream.requests[first + 1].body;
    const assistant = r2.messages.find((m) => m.role === 'assistant' && m.tool_calls);
    assert.equal(assistant.tool_calls[0].id, 'call_save_1');
    assert.equal(assistant.tool_calls[0].function.name, 'notes_save');
    assert.deepEqual(JSON.parse(assistant.tool_calls[0].function.arguments), { text: 'buy milk' });
    assert.deepEqual(toolMessages(r2).map((m) => [m.tool_call_id, m.content]), [['call_save_1', 'Saved note #1: buy milk']]);

    const state = controller.getState();
    assert.equal(state.status, 'idle');
    assert.equal(state.lastOutcome, 'completed');
    assert.equal(state.pendingConfirmation, null);
    assert.deepEqual(state.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    const call = state.messages[1].blocks.find((b) => b.type === 'tool-call');
    assert.deepEqual({ callId: call.callId, name: call.name, input: { ...call.input } },
      { callId: 'call_save_1', name: 'notes.save', input: { text: 'buy milk' } });
    const result = state.messages[2].blocks[0];
    assert.deepEqual({ ...result }, { type: 'tool-result', callId: 'call_save_1', content: 'Saved note #1: buy milk', isError: false });
    assert.equal(textOf(state.messages[3]), 'Your note "buy milk" is saved.');

    // Saved as revision 1, exactly these messages, for this user only.
    assert.equal(state.conversation?.revision, 1);
    const stored = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(state.conversation.id)}`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.conversation.revision, 1);
    assert.deepEqual(stored.body.context.messages, JSON.parse(JSON.stringify(state.messages)));
    assert.equal(stored.body.context.modelState, null, 'no reasoning was streamed, so no state');
    const other = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(state.conversation.id)}`, { user: 'mallory' });
    assert.equal(other.status, 404);
    assert.deepEqual(suite.upstream.unexpected, []);
    controller.destroy();
  });

  test('rejecting the confirmation: the tool never runs and the model sees an error tool result', async () => {
    const { save, count } = notesTools();
    const controller = relayController(suite.relay, { model: 'openai-e2e', tools: [save, count] });
    const first = suite.upstream.requests.length;
    suite.upstream.script(
      toolCallTurn([{ id: 'call_save_2', name: 'notes_save', arguments: { text: 'wipe the disk' } }]),
      textTurn('Understood, I did not save it.'),
    );
    const sending = controller.send('save a note: wipe the disk');
    await waitForState(controller, (s) => s.pendingConfirmation != null, 10_000, 'pendingConfirmation');
    controller.rejectTool();
    assert.equal(await sending, 'completed');
    assert.equal(save.calls.length, 0, 'a rejected tool never runs');

    const r2 = suite.upstream.requests[first + 1].body;
    const [toolMessage] = toolMessages(r2);
    assert.equal(toolMessage.tool_call_id, 'call_save_2');
    assert.match(toolMessage.content, /^Error: /, 'isError results reach Chat Completions with the Error: prefix');

    const state = controller.getState();
    assert.deepEqual(state.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    const result = state.messages[2].blocks[0];
    assert.equal(result.type, 'tool-result');
    assert.equal(result.callId, 'call_save_2');
    assert.equal(result.isError, true);
    assert.equal(textOf(state.messages[3]), 'Understood, I did not save it.');
    // A second answer to the same (now resolved) confirmation fails clearly.
    assert.throws(() => controller.approveTool(), (e) => e.code === 'AGENT_NO_PENDING_INTERRUPT');
    assert.deepEqual(suite.upstream.unexpected, []);
    controller.destroy();
  });

  test('max-tokens: the cut-off answer is kept and saved with its ModelState', async () => {
    const controller = relayController(suite.relay, { model: 'openai-e2e' });
    suite.upstream.script(textTurn('Hello! This is the first turn.'));
    assert.equal(await controller.send('hello'), 'completed');
    const before = controller.getState().conversation;
    assert.equal(before.revision, 1);

    suite.upstream.script(textTurn('Chapter one: it was a dark and stormy', {
      finishReason: 'length',
      reasoning: 'The user wants a long story; start with a classic opening.',
    }));
    const outcome = await controller.send('tell me a very long story');
    assert.equal(outcome, 'max-tokens');
    const state = controller.getState();
    assert.equal(state.lastOutcome, 'max-tokens');
    assert.equal(state.error, null);
    assert.equal(state.conversation.revision, 2, 'a max-tokens turn is saved as a new revision');
    const last = state.messages.at(-1);
    assert.equal(last.role, 'assistant');
    assert.equal(textOf(last), 'Chapter one: it was a dark and stormy');
    const reasoning = last.blocks.find((b) => b.type === 'reasoning');
    assert.equal(reasoning?.text, 'The user wants a long story; start with a classic opening.');

    const stored = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(before.id)}`);
    assert.equal(stored.body.conversation.revision, 2);
    assert.deepEqual(stored.body.context.messages, JSON.parse(JSON.stringify(state.messages)));
    // The gateway's reasoning_content is provider state: stored verbatim, keyed by the message id.
    assert.deepEqual(stored.body.context.modelState, {
      format: 'openai-chat/v1',
      data: { messages: { [last.id]: { field: 'reasoning_content', text: 'The user wants a long story; start with a classic opening.' } } },
    });
    assert.deepEqual(JSON.parse(JSON.stringify(controller.getModelState())), stored.body.context.modelState);
    assert.deepEqual(suite.upstream.unexpected, []);
    controller.destroy();
  });

  test('cancel in mid-stream: outcome cancelled, nothing of the turn saved, the upstream sees the disconnect', async () => {
    const controller = relayController(suite.relay, { model: 'openai-e2e' });
    suite.upstream.script(textTurn('A short first answer.'));
    assert.equal(await controller.send('first'), 'completed');
    const saved = controller.getState();
    assert.equal(saved.conversation.revision, 1);

    const slowText = 'This answer streams very slowly, one small piece at a time, so that it can be stopped midway.';
    suite.upstream.script(textTurn(slowText, { pieces: 40, delayMs: 150, holdOpen: true }));
    const sending = controller.send('second, slowly');
    const streaming = await waitForState(controller, (s) => (s.draft?.blocks?.[0]?.text ?? '').length > 0, 10_000, 'draft text');
    const record = suite.upstream.requests.at(-1);
    assert.equal(record.finished, false);
    assert.ok(streaming.draft.blocks[0].text.length < slowText.length, 'still mid-stream');

    controller.abort();
    assert.equal(await sending, 'cancelled');
    const state = controller.getState();
    assert.equal(state.lastOutcome, 'cancelled');
    assert.equal(state.status, 'idle');
    assert.equal(state.draft, null);
    assert.equal(state.error, null);
    assert.ok(!state.messages.some((m) => m.role === 'assistant' && textOf(m).startsWith('This answer')),
      'no half-streamed block becomes a stable message');
    assert.equal(state.conversation.revision, 1);

    // The relay dropped the upstream request as soon as the browser side went away.
    await disconnectSeen(record);
    assert.equal(record.disconnected, true);
    assert.ok(record.framesWritten < 40 + 1, 'the upstream stream did not run to its end');

    const stored = await suite.relay.fetchJson('GET', `/conversations/${encodeURIComponent(saved.conversation.id)}`);
    assert.equal(stored.body.conversation.revision, 1, 'nothing of the cancelled turn was saved');
    assert.deepEqual(stored.body.context.messages, JSON.parse(JSON.stringify(saved.messages)));
    assert.deepEqual(suite.upstream.unexpected, []);
    controller.destroy();
  });
});
