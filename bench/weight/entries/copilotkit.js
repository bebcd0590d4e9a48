// Page entry: CopilotKit's ready-made chat (`<CopilotChat>` inside `<CopilotKit>`) with its stylesheet, as its
// quick start shows. React is external (not counted); the CSS it imports is counted.
import { createElement as h } from 'react';
import { CopilotKit } from '@copilotkit/react-core';
import { CopilotChat } from '@copilotkit/react-ui';
import '@copilotkit/react-ui/styles.css';

export function App() {
  return h(CopilotKit, { runtimeUrl: '/api/copilotkit' }, h(CopilotChat));
}
