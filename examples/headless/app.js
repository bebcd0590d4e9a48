// The headless example: no <patchbridge-agent>, only `createAgentController` and a small UI of the page's own.
// It renders the controller's snapshots (stable messages, the streaming draft, the pending confirmation, errors)
// and forwards the person's actions (send, approve/reject, stop, new/open/delete conversation). Every agent rule
// (tool loop, confirmation, limits, cancellation, saving) stays in the runtime.
//
// The conversation list uses the controller's `listConversations` / `deleteConversation`, feature-detected.
import { createAgentController } from '../../npm/index.js';

const ENDPOINT = '/api';
// The relay of examples/relay-config/demo.json runs in development identity mode: the user travels in a header.
const HEADERS = { 'x-patchbridge-user': 'headless-user' };
const BUSY = new Set(['running', 'awaiting-confirmation', 'saving']);
const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

// ---- the page's tools ------------------------------------------------------------------------------------------

const todos = [];
function renderTodos() {
  $('todos').replaceChildren(...todos.map((text) => el('li', { textContent: text })));
  $('todos-empty').hidden = todos.length > 0;
}

/** @type {import('../../npm/index.js').AgentTool[]} */
const tools = [
  {
    name: 'todos.add',
    description: 'Add an item to the todo list shown on the page.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    // Not read-only: the runtime raises a confirmation interrupt before it runs.
    execute: ({ text }, { callId }) => {
      todos.push(String(text));
      renderTodos();
      return { toolCallId: callId, content: `Added "${text}".`, isError: false };
    },
  },
  {
    name: 'clock.now',
    description: 'The current local time of the browser.',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    execute: (_args, { callId }) => ({ toolCallId: callId, content: new Date().toString(), isError: false }),
  },
];

const controller = createAgentController({ endpoint: ENDPOINT, headers: HEADERS, tools });
// For the browser console (and the end-to-end test).
globalThis.agentController = controller;

// ---- conversations ---------------------------------------------------------------------------------------------

/** The conversation API is feature-detected: a runtime without it still chats, the sidebar just says so. */
const hasConversationApi = typeof controller.listConversations === 'function' && typeof controller.deleteConversation === 'function';
$('conv-source').textContent = hasConversationApi
  ? 'Listed with controller.listConversations().'
  : 'This runtime has no controller.listConversations(): no list.';

let listing = 0;
async function refreshConversations() {
  if (!hasConversationApi) return;
  const generation = ++listing;
  try {
    const page = await controller.listConversations({ limit: 20 });
    if (generation !== listing) return;
    const current = controller.getState().conversation?.id;
    $('conversations').replaceChildren(...page.items.map((item) => el('li', { ariaCurrent: item.id === current ? 'true' : null },
      el('button', { type: 'button', className: 'open', textContent: item.title || 'Untitled', title: item.id, onclick: () => openConversation(item.id) }),
      el('button', { type: 'button', className: 'delete', textContent: 'Delete', ariaLabel: `Delete ${item.title || 'Untitled'}`, onclick: () => deleteConversation(item.id) }))));
    $('conv-status').textContent = page.items.length ? '' : 'No saved conversations yet.';
  } catch (error) {
    if (generation === listing) $('conv-status').textContent = `Could not list conversations (${error.code ?? 'ERROR'}).`;
  }
}

/**
 * Stops a running turn and resolves once the controller is idle again: opening, deleting the open conversation
 * and starting a new one are refused (AGENT_BUSY) while a turn runs or saves.
 */
function whenIdle() {
  const settled = (state) => !BUSY.has(state.status) && state.status !== 'loading';
  if (settled(controller.getState())) return Promise.resolve();
  controller.abort();
  return new Promise((resolve) => {
    let done = false;
    const unsubscribe = controller.subscribe((state) => {
      if (done || !settled(state)) return;
      done = true;
      queueMicrotask(() => unsubscribe());
      resolve();
    });
  });
}

async function openConversation(id) {
  await whenIdle();
  controller.loadConversation(id).catch(() => { /* shown from state.error */ });
}

async function deleteConversation(id) {
  try {
    await whenIdle();
    // Deleting the open conversation also starts a new, empty one in the controller.
    await controller.deleteConversation(id);
  } catch (error) {
    $('conv-status').textContent = `Not deleted (${error.code ?? 'ERROR'}).`;
  }
  await refreshConversations();
}

// ---- actions ---------------------------------------------------------------------------------------------------

$('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const text = $('input').value.trim();
  if (!text || BUSY.has(controller.getState().status)) return;
  $('input').value = '';
  controller.send(text).catch(() => { /* shown from state.error */ });
});
$('stop').addEventListener('click', () => controller.abort());
$('approve').addEventListener('click', () => controller.approveTool());
$('reject').addEventListener('click', () => controller.rejectTool('The person rejected this action.'));
$('new').addEventListener('click', async () => {
  await whenIdle();
  controller.newConversation();
});

// ---- state → DOM -----------------------------------------------------------------------------------------------

function blockElement(block) {
  switch (block.type) {
    case 'text': return el('div', { className: 'block text', textContent: block.text });
    case 'reasoning': return el('details', { className: 'block reasoning' }, el('summary', { textContent: 'Reasoning' }), block.text);
    case 'tool-call': return el('div', { className: 'block call', textContent: `→ ${block.name}(${JSON.stringify(block.input)})` });
    case 'tool-result': return el('div', { className: `block tool-result${block.isError ? ' error' : ''}`, textContent: block.content });
    case 'image': return el('div', { className: 'block image', textContent: '[image]' });
    default: return el('div', { className: 'block' });
  }
}

let shownMessages = null;
let conversationKey = null;

function render(state) {
  $('status').textContent = state.status;
  $('title').textContent = state.conversation?.title || 'Headless controller';

  // Stable messages keep their array identity while unchanged, so this redraws only when one is added or replaced.
  const list = $('messages');
  const nearEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  if (state.messages !== shownMessages) {
    shownMessages = state.messages;
    $('messages').replaceChildren(...state.messages.map((message) =>
      el('li', { className: `msg ${message.role}` }, ...message.blocks.map(blockElement))));
  }

  // The draft: what the model is streaming now (tool calls show their raw argument text until sealed).
  const draft = state.draft;
  $('draft').hidden = !draft;
  $('draft').replaceChildren(...(draft?.blocks ?? []).map((block) => (block.type === 'tool-call'
    ? el('div', { className: 'block call', textContent: `→ ${block.name}(${block.argumentsText}` })
    : el('div', { className: `block ${block.type}`, textContent: block.text }))));

  const pending = state.pendingConfirmation;
  $('confirm').hidden = !pending;
  if (pending) {
    $('confirm-tool').textContent = pending.tool;
    $('confirm-args').textContent = JSON.stringify(pending.arguments, null, 2);
  }

  const busy = BUSY.has(state.status);
  $('send').disabled = busy || state.status === 'loading';
  $('stop').disabled = !busy;

  const notice = $('notice');
  if (state.error) {
    notice.className = 'error';
    notice.textContent = `${state.error.code}: ${state.error.message}`;
  } else if (!busy && state.lastOutcome === 'cancelled') {
    notice.className = '';
    notice.textContent = 'Stopped. Nothing of that turn was saved.';
  } else if (!busy && state.lastOutcome === 'max-tokens') {
    notice.className = '';
    notice.textContent = 'The answer reached the output limit and may be incomplete.';
  } else {
    notice.textContent = '';
  }
  notice.hidden = notice.textContent === '';
  if (nearEnd) list.scrollTop = list.scrollHeight;

  // A new, renamed or newly saved conversation changes the list.
  const conv = state.conversation;
  const key = conv ? `${conv.id}@${conv.revision}:${conv.title}` : null;
  if (key !== conversationKey) {
    conversationKey = key;
    void refreshConversations();
  }
}

controller.subscribe(render);
render(controller.getState());
renderTodos();
