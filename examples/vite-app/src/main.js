// The Vite example: `@patchbridge/agent/widget` defines <patchbridge-agent>; Vite bundles the element and the
// runtime glue and emits the .wasm as an asset of the build. `@patchbridge/agent` is imported for a value the
// page shows (the factory default limits) and to tighten one of them for this page.
import '@patchbridge/agent/widget';
import { DEFAULT_LIMITS } from '@patchbridge/agent';

/** @typedef {import('@patchbridge/agent').AgentTool} AgentTool */

const agent = document.querySelector('patchbridge-agent');
const notes = [];
const MAX_MODEL_CALLS = Math.min(8, DEFAULT_LIMITS.maxModelCalls);

function renderNotes() {
  document.getElementById('count').textContent = String(notes.length);
  document.getElementById('notes').replaceChildren(...notes.map((text) => Object.assign(document.createElement('li'), { textContent: text })));
}

/** @type {AgentTool[]} */
const tools = [
  {
    name: 'notes.add',
    description: 'Add a short note to the page.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    // Not read-only: the element asks the person before it runs.
    execute: ({ text }, { callId }) => {
      notes.push(String(text));
      renderNotes();
      return { toolCallId: callId, content: `Noted. The page has ${notes.length} note(s).`, isError: false };
    },
  },
  {
    name: 'notes.list',
    description: 'The notes on the page, one a line.',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    execute: (_args, { callId }) => ({ toolCallId: callId, content: notes.join('\n') || 'No notes yet.', isError: false }),
  },
];

// The relay of examples/relay-config/demo.json runs in development identity mode: the user travels in a header.
agent.headers = { 'x-patchbridge-user': 'vite-user' };
agent.tools = tools;
agent.runtimeOptions = { limits: { maxModelCalls: MAX_MODEL_CALLS } };
document.getElementById('limits').textContent =
  `Model calls per turn: ${MAX_MODEL_CALLS} here (package default ${DEFAULT_LIMITS.maxModelCalls}).`;
renderNotes();
