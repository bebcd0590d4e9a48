// Page entry: a minimal assistant-ui chat (`@assistant-ui/react` primitives: thread, messages, composer) over
// a local runtime whose adapter would call the page's model endpoint. React is external (not counted).
import { createElement as h } from 'react';
import {
  AssistantRuntimeProvider, ComposerPrimitive, MessagePrimitive, ThreadPrimitive, useLocalRuntime,
} from '@assistant-ui/react';

const adapter = {
  async *run({ messages, abortSignal }) {
    const response = await fetch('/api/chat', { method: 'POST', body: JSON.stringify({ messages }), signal: abortSignal });
    yield { content: [{ type: 'text', text: await response.text() }] };
  },
};

const Message = () => h(MessagePrimitive.Root, null, h(MessagePrimitive.Parts));

export function App() {
  const runtime = useLocalRuntime(adapter);
  return h(AssistantRuntimeProvider, { runtime },
    h(ThreadPrimitive.Root, null,
      h(ThreadPrimitive.Viewport, null, h(ThreadPrimitive.Messages, { components: { UserMessage: Message, AssistantMessage: Message } })),
      h(ComposerPrimitive.Root, null, h(ComposerPrimitive.Input), h(ComposerPrimitive.Send, null, 'Send'))));
}
