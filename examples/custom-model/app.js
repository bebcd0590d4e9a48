// The custom-model example: <patchbridge-agent> with a model object of this page (model.js) instead of a relay,
// and one page tool that the model asks for. Without an `endpoint` the element saves nothing: there is no
// conversation history, and a reload starts empty.
import { echoModel } from './model.js';

const stamps = document.getElementById('stamps');
const agent = document.querySelector('patchbridge-agent');

agent.model = echoModel;
agent.tools = [
  {
    name: 'stamps.add',
    description: 'Put a stamp with a short label on the page.',
    inputSchema: { type: 'object', properties: { label: { type: 'string', maxLength: 40 } }, required: ['label'] },
    // Not read-only: the element asks the person first.
    execute: ({ label }, { callId }) => {
      stamps.append(Object.assign(document.createElement('li'), { textContent: String(label) }));
      return { toolCallId: callId, content: `stamp “${label}” is on the page`, isError: false };
    },
  },
];
