// Page entry: `useChat` of `@ai-sdk/react` in one component (default transport: POST /api/chat). React and
// react-dom are marked external by bench/weight/bench.mjs for the "hook alone" row and bundled in for the
// "with React" row (that row also renders the component with react-dom/client).
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';

export function Chat() {
  const { messages, sendMessage, status } = useChat();
  return createElement(
    'div',
    null,
    messages.map((m) => createElement('p', { key: m.id }, m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''))),
    createElement('button', { disabled: status !== 'ready', onClick: () => sendMessage({ text: 'hi' }) }, 'Send'),
  );
}

export function mount(element) {
  createRoot(element).render(createElement(Chat));
}
