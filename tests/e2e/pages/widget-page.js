// A test page for <patchbridge-agent> (tests/e2e/widget-*.test.mjs), configured from its query string:
//   user=<id>           development identity header
//   limits=<json>       runtimeOptions.limits
//   options=before-load (default) | before-connect | after-ready   when runtimeOptions is set
//   delayWasm=1         the test delays the .wasm response itself (page.route); nothing to do here
//   model=<id>          a relay model id (e.g. anthropic-e2e, responses-e2e) instead of the relay's default
//   host=squeezed       the host page sizes the element to the window and overrides its minimum height
//   views=status        a custom card view for todos.add (`<p class="todo-view">` "<status>: <text>"), set
//                       before the element loads, so a reload gets it again
// `window.calls` records page-tool runs; `window.hookEvents` records hook event types.
const params = new URLSearchParams(location.search);
const when = params.get('options') ?? 'before-load';
window.calls = [];
window.hookEvents = [];

const tools = [
  {
    name: 'todos.add',
    description: 'Add a todo item.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    // A todo named "fail" fails (an error result), as a page tool can.
    execute: async ({ text }, { callId }) => {
      window.calls.push(text);
      if (text === 'fail') return { toolCallId: callId, content: 'the list is full', isError: true };
      return { toolCallId: callId, content: `added ${text}`, isError: false };
    },
  },
];
const runtimeOptions = {
  ...(params.get('limits') ? { limits: JSON.parse(params.get('limits')) } : {}),
  hooks: [{ onEvent: (event) => window.hookEvents.push(event.type) }],
};

function configure(el) {
  el.setAttribute('endpoint', '/api');
  if (params.get('model')) el.model = params.get('model');
  if (params.get('host')) el.classList.add(params.get('host'));
  el.setAttribute('storage-key', 'test');
  el.headers = () => ({ 'x-patchbridge-user': params.get('user') ?? 'tester' });
  el.tools = tools;
  if (params.get('views') === 'status') {
    el.toolViews = {
      'todos.add': ({ arguments: args, status }) => Object.assign(document.createElement('p'), { className: 'todo-view', textContent: `${status}: ${args.text}` }),
    };
  }
}

if (when === 'before-load') {
  // The element exists and gets its properties before the widget's bundle has defined the class.
  const el = document.createElement('patchbridge-agent');
  configure(el);
  el.runtimeOptions = runtimeOptions;
  document.body.append(el);
  await import('/npm/widget.js');
} else {
  await import('/npm/widget.js');
  const el = document.createElement('patchbridge-agent');
  configure(el);
  if (when === 'before-connect') el.runtimeOptions = runtimeOptions;
  document.body.append(el);
  if (when === 'after-ready') {
    await el.whenReady();
    el.runtimeOptions = runtimeOptions;
  }
}
window.pageReady = true;
