// Runs inside headless Chromium: imports the built package over HTTP and drives a controller through a tool
// loop with a scripted in-page model (not AI) and a confirmation, then a DefaultAgentRuntime cancel. Results go
// to window.__smoke for the Node side to assert on.
import { createAgentController, DefaultAgentRuntime, AgentError, DEFAULT_LIMITS } from '/npm/index.js';

const log = [];
const say = (line) => { log.push(line); document.getElementById('log').textContent = log.join('\n'); };

function scriptedModel() {
  const requests = [];
  return {
    requests,
    stream(request, signal) {
      requests.push({ messages: request.messages.length, tools: request.tools.map((t) => t.name), signalIsAbortSignal: signal instanceof AbortSignal });
      const call = requests.length;
      return (async function* () {
        yield { type: 'message-start' };
        if (call === 1) {
          yield { type: 'block-start', index: 0, block: { type: 'text' } };
          yield { type: 'block-delta', index: 0, delta: 'Adding it ' };
          yield { type: 'block-delta', index: 0, delta: 'now.' };
          yield { type: 'block-stop', index: 0 };
          yield { type: 'block-start', index: 1, block: { type: 'tool-call', callId: 'call-1', name: 'page.addItem' } };
          yield { type: 'block-delta', index: 1, delta: '{"text":' };
          yield { type: 'block-delta', index: 1, delta: '"buy milk"}' };
          yield { type: 'block-stop', index: 1 };
          yield { type: 'message-stop', stopReason: 'tool-use', modelState: { format: 'scripted/v1', data: { call } } };
        } else {
          yield { type: 'block-start', index: 0, block: { type: 'text' } };
          yield { type: 'block-delta', index: 0, delta: 'Done: the list has one item.' };
          yield { type: 'block-stop', index: 0 };
          yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
        }
      })();
    },
  };
}

async function run() {
  const items = [];
  const model = scriptedModel();
  const controller = createAgentController({
    model,
    tools: [{
      name: 'page.addItem',
      description: 'Add an item to the page list',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      execute: async ({ text }, { callId, signal }) => {
        items.push(text);
        document.getElementById('items').append(Object.assign(document.createElement('li'), { textContent: text }));
        return { toolCallId: callId, content: `added ${text}; aborted=${signal.aborted}`, isError: false };
      },
    }],
  });
  const statuses = [];
  controller.subscribe((state) => {
    statuses.push(state.status);
    if (state.pendingConfirmation) {
      say(`confirm ${state.pendingConfirmation.tool} ${JSON.stringify(state.pendingConfirmation.arguments)}`);
      queueMicrotask(() => { try { controller.approveTool(); } catch { /* already approved */ } });
    }
  });
  const outcome = await controller.send('please add milk');
  const state = controller.getState();
  say(`outcome ${outcome}`);

  const runtime = new DefaultAgentRuntime({ stream: () => (async function* () { await new Promise(() => {}); })() }, { limits: { ...DEFAULT_LIMITS } });
  const execution = runtime.start({ messages: state.messages, modelState: null });
  await new Promise((resolve) => setTimeout(resolve, 10));
  execution.cancel();
  const cancelled = (await execution.result).outcome;

  let limitError = null;
  try { new DefaultAgentRuntime(model, { limits: { maxModelCalls: 1 } }); } catch (error) { limitError = { isAgentError: error instanceof AgentError, code: error.code, limit: error.limit }; }

  return {
    outcome,
    items,
    statuses: [...new Set(statuses)],
    roles: state.messages.map((m) => m.role),
    assistantBlocks: state.messages[1].blocks,
    toolResult: state.messages[2].blocks[0],
    finalText: state.messages[3].blocks[0].text,
    requests: model.requests,
    frozen: Object.isFrozen(state) && Object.isFrozen(state.messages[1].blocks[1].input),
    cancelled,
    limitError,
  };
}

run().then((result) => { window.__smoke = { ok: true, result }; say('done'); })
  .catch((error) => { window.__smoke = { ok: false, error: `${error?.code ?? ''} ${error?.stack ?? error}` }; say(`failed: ${error}`); });
