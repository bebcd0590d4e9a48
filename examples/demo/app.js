// The PatchBridge demo page: a plain chat UI on createAgentController, with three page tools.
// Everything agent-related (loop, confirmation, limits, saving) happens in the runtime; this file only renders
// state and defines the tools.
import { createAgentController } from '../../npm/index.js';

const params = new URLSearchParams(location.search);
const endpoint = params.get('endpoint') ?? '/api';
// The demo relay runs in development identity mode (loopback only): the user id travels in a header.
const userId = params.get('user') ?? 'demo-user';
// `?model=<id>` picks one of the relay's models (GET {endpoint}/models); the relay default otherwise.
const modelId = params.get('model') ?? undefined;
const headers = () => ({ 'x-patchbridge-user': userId });

const $ = (id) => document.getElementById(id);
const todos = [];

const tools = [
  {
    name: 'todos.add',
    description: 'Add an item to the todo list shown on the page.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    // Not read-only: the runtime asks the user before it runs.
    execute: async ({ text }, { callId }) => {
      todos.push(String(text));
      renderTodos();
      return { toolCallId: callId, content: `Added "${text}". The list has ${todos.length} item(s).`, isError: false };
    },
  },
  {
    name: 'todos.list',
    description: 'List the todo items shown on the page.',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    execute: async (_args, { callId }) => ({
      toolCallId: callId,
      content: todos.length ? todos.map((t, i) => `${i + 1}. ${t}`).join('\n') : 'The list is empty.',
      isError: false,
    }),
  },
  {
    name: 'clock.now',
    description: 'The current local time of the browser.',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    execute: async (_args, { callId }) => ({ toolCallId: callId, content: new Date().toString(), isError: false }),
  },
];

const controller = createAgentController({ endpoint, headers, tools, model: modelId });

// Label the model honestly: the relay reports previewOnly when its scripted demo model is active.
fetch(`${endpoint}/models`, { headers: headers() })
  .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))))
  .then((info) => {
    const mode = $('mode');
    if (info.previewOnly) {
      mode.textContent = 'Scripted demo — answers are scripted, not AI';
      mode.classList.add('preview');
    } else {
      const id = modelId ?? info.defaultModel ?? info.models?.[0]?.id;
      const model = info.models?.find((m) => m.id === id);
      mode.textContent = model ? `Model: ${model.id}${model.label && model.label !== model.id ? ` (${model.label})` : ''}` : `Unknown model: ${id}`;
    }
  })
  .catch((err) => { $('mode').textContent = `Relay unavailable (${err.message})`; });

function renderTodos() {
  const list = $('todos');
  list.replaceChildren(...todos.map((t) => Object.assign(document.createElement('li'), { textContent: t })));
}

function blockNode(block) {
  const el = document.createElement('div');
  el.className = `block ${block.type}`;
  switch (block.type) {
    case 'text': el.textContent = block.text; break;
    case 'reasoning': el.textContent = `Thinking: ${block.text}`; break;
    // Stable tool calls carry the parsed `input`; while streaming, the draft only has the raw `argumentsText`.
    case 'tool-call': el.textContent = `→ ${block.name} ${block.input ? JSON.stringify(block.input) : (block.argumentsText ?? '')}`; break;
    case 'tool-result':
      el.textContent = `← ${block.content}`;
      if (block.isError) el.classList.add('error');
      break;
    case 'image': el.textContent = '[image]'; break;
    default: el.textContent = `[${block.type}]`;
  }
  return el;
}

let renderedMessages = null;
function render(state) {
  // Stable snapshots: the messages array keeps its identity until a message is added, so skip re-rendering.
  if (state.messages !== renderedMessages) {
    renderedMessages = state.messages;
    $('messages').replaceChildren(...state.messages.map((m) => {
      const li = document.createElement('li');
      li.className = `msg ${m.role}`;
      li.append(Object.assign(document.createElement('span'), { className: 'role', textContent: m.role }));
      m.blocks.forEach((b) => li.append(blockNode(b)));
      return li;
    }));
  }
  const draft = $('draft');
  const draftBlocks = state.draft?.blocks ?? [];
  draft.hidden = draftBlocks.length === 0;
  draft.replaceChildren(...draftBlocks.map((b) => blockNode(b)));

  const pending = state.pendingConfirmation;
  $('confirm').hidden = pending == null;
  if (pending) {
    $('confirm-tool').textContent = pending.tool;
    $('confirm-args').textContent = JSON.stringify(pending.arguments, null, 2);
  }

  const running = state.status !== 'idle';
  $('send').disabled = running;
  $('stop').disabled = !running;

  const notice = $('notice');
  notice.classList.remove('error');
  if (state.error) {
    notice.hidden = false;
    notice.classList.add('error');
    notice.textContent = `${state.error.code}: ${state.error.message}`;
  } else if (state.lastOutcome === 'max-tokens') {
    notice.hidden = false;
    notice.textContent = 'The answer hit the model’s output limit and may be incomplete.';
  } else if (state.lastOutcome === 'cancelled') {
    notice.hidden = false;
    notice.textContent = 'Stopped. Nothing of that turn was saved.';
  } else {
    notice.hidden = true;
  }

  const convId = state.conversation?.id;
  if (convId && params.get('c') !== convId) {
    params.set('c', convId);
    history.replaceState(null, '', `?${params}`);
  }

  renderInspection();
}

// The tool inspector: while a turn runs it shows that turn's frozen snapshot (what the model was given), when
// idle the registry as the next turn will get it.
function renderInspection() {
  const inspection = controller.getToolInspectionSource();
  const snapshot = inspection.snapshot ?? inspection;
  $('tool-source').textContent = `${inspection.source}, revision ${snapshot.revision}`;
  $('tools').replaceChildren(...(snapshot.tools ?? []).map((t) =>
    Object.assign(document.createElement('li'), { textContent: t.name })));
}

controller.subscribe(render);
render(controller.getState());

// A reload restores the last complete turn of the conversation named in the URL (`?c=`); a turn that was
// running when the page went away is not resumed. A failed load (gone, another user's, corrupt) shows the
// error and leaves an empty conversation rather than some other history.
const initialConversation = params.get('c');
if (initialConversation) {
  controller.loadConversation(initialConversation).catch(() => {
    params.delete('c');
    history.replaceState(null, '', `?${params}`);
  });
}

$('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const text = $('input').value.trim();
  if (!text) return;
  $('input').value = '';
  controller.send(text).catch(() => { /* the error is in state.error */ });
});
$('stop').addEventListener('click', () => controller.abort());
// A click that races the end of the wait (cancel, deadline) fails with a typed error; show it, never throw.
$('approve').addEventListener('click', () => { try { controller.approveTool(); } catch (e) { showNotice(`${e.code}: ${e.message}`, true); } });
$('reject').addEventListener('click', () => { try { controller.rejectTool(); } catch (e) { showNotice(`${e.code}: ${e.message}`, true); } });
$('new').addEventListener('click', () => {
  try {
    controller.newConversation();
  } catch (error) {
    showNotice(`${error.code ?? 'ERROR'}: ${error.message}`, true);
    return;
  }
  params.delete('c');
  history.replaceState(null, '', `?${params}`);
});

function showNotice(text, isError) {
  const notice = $('notice');
  notice.hidden = false;
  notice.classList.toggle('error', isError);
  notice.textContent = text;
}
