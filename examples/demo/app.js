// The demo page: a todo list whose page tools the assistant may use, and the <patchbridge-agent> element as
// its side panel. Everything agent-related (loop, confirmation, limits, saving, history) happens in the element
// and its runtime; this file only defines the page's tools and shows what the model is given.
//
// The relay is this page's own origin (`/api`): the endpoint is never taken from the URL, so a link cannot point
// the page (and its identity header) at another server.
//
// The element comes from the package's static script (`dist/`, the wasm beside it) rather than its module entry:
// that is what the relay binary carries for `patchbridge-relay demo`, so this page runs the same from the
// repository (`./dev demo`) and from the binary alone.
import '../../npm/dist/patchbridge-agent.js';

const params = new URLSearchParams(location.search);
// The demo relay runs in development identity mode (loopback only): the user id travels in a header.
const userId = params.get('user') ?? 'demo-user';
const $ = (id) => document.getElementById(id);
const todos = [];

function renderTodos() {
  $('todos').replaceChildren(...todos.map((t) => Object.assign(document.createElement('li'), { textContent: t })));
  $('todos-empty').hidden = todos.length > 0;
}

const tools = [
  {
    name: 'todos.add',
    description: 'Add an item to the todo list shown on the page.',
    inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'The todo text' } }, required: ['text'] },
    // Not read-only: the runtime asks the person before it runs.
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

const agent = document.querySelector('patchbridge-agent');
agent.headers = () => ({ 'x-patchbridge-user': userId });
agent.tools = tools;

// Custom tool views: the page shows "Add “milk” to the list" instead of the generic argument table, in the card
// and in the confirmation. The nodes are slotted from the page's light DOM, so style.css styles them (its colour
// by the call's status: green once added, red when rejected or failed, neutral while pending or not run). The
// element keeps the call's status (Done, Rejected, Failed…) beside the view.
const TODO_LINES = {
  done: (text) => `Added “${text}” to the list`,
  rejected: (text) => `You declined adding “${text}”`,
  error: (text) => `Could not add “${text}”`,
  'not-run': (text) => `“${text}” was not added`,
  invalid: (text) => `“${text}” was not added`,
};
const todoView = (text, status) => {
  const line = Object.assign(document.createElement('p'), { className: 'todo-view', textContent: text });
  line.dataset.status = status ?? 'pending';
  return line;
};
agent.toolViews = {
  'todos.add': {
    card: ({ arguments: args, status }) => todoView((TODO_LINES[status] ?? ((text) => `Adding “${text}” to the list`))(args.text), status),
    confirmation: ({ arguments: args }) => todoView(`Add “${args.text}” to your todo list?`, 'waiting'),
  },
};
// `?model=<id>` picks one of the relay's models (GET /api/models); the relay's default otherwise.
if (params.get('model')) agent.model = params.get('model');
if (params.get('lang')) agent.setAttribute('lang', params.get('lang'));
// The page's own colours follow the same choice (style.css reads data-theme on <html>).
const applyTheme = (value) => {
  agent.setAttribute('theme', value);
  document.documentElement.dataset.theme = value;
};
if (params.get('theme')) applyTheme(params.get('theme'));
$('lang').value = agent.getAttribute('lang') ?? '';
$('theme').value = agent.getAttribute('theme') ?? 'auto';
$('lang').addEventListener('change', (e) => (e.target.value ? agent.setAttribute('lang', e.target.value) : agent.removeAttribute('lang')));
$('theme').addEventListener('change', (e) => applyTheme(e.target.value));
renderTodos();

// The tool inspector: while a turn runs it shows that turn's frozen snapshot (what the model was given), when
// idle the registry as the next turn will get it.
function renderInspection(controller) {
  const inspection = controller.getToolInspectionSource();
  $('tool-source').textContent = `${inspection.source}, revision ${inspection.snapshot.revision}`;
  $('tools').replaceChildren(...inspection.snapshot.tools.map((t) =>
    Object.assign(document.createElement('li'), { textContent: `${t.name}${t.readOnly ? '' : ' (asks first)'}` })));
}
agent.whenReady().then((controller) => {
  controller.subscribe(() => renderInspection(controller));
  renderInspection(controller);
});
