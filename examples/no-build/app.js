// The no-build example's own script: one page tool for the element that ../../npm/dist/patchbridge-agent.js
// defines. `tools` and `headers` may be set before or after the element is defined (values set before are
// picked up when it upgrades) and neither restarts it, so this file needs no waiting or ordering.

const items = [];
const list = document.getElementById('items');
const empty = document.getElementById('empty');

function render() {
  list.replaceChildren(...items.map((text) => Object.assign(document.createElement('li'), { textContent: text })));
  empty.hidden = items.length > 0;
}

const agent = document.querySelector('patchbridge-agent');
// The relay of examples/relay-config/demo.json runs in development identity mode: the user travels in a header.
agent.headers = { 'x-patchbridge-user': 'no-build-user' };
agent.tools = [
  {
    name: 'shopping.add',
    description: 'Add one item to the shopping list shown on the page.',
    inputSchema: { type: 'object', properties: { item: { type: 'string', description: 'What to buy' } }, required: ['item'] },
    // Not read-only, so the element shows a confirmation card and the tool runs only after Approve.
    execute: ({ item }, { callId }) => {
      items.push(String(item));
      render();
      return { toolCallId: callId, content: `Added "${item}"; the list has ${items.length} item(s).`, isError: false };
    },
  },
];
render();
