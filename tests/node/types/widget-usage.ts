// Type-level test of npm/widget.d.ts: the element used the way widget/README.md shows. Compiled with
// `tsc --noEmit --strict` by tests/node/types.test.mjs; a wrong or missing declaration fails that test.
import { PatchBridgeAgentElement, EVENTS, type WidgetRuntimeOptions } from '../../../npm/widget.js';
import type { AgentController, Outcome } from '../../../npm/index.js';

const el = document.querySelector('patchbridge-agent');
if (el) {
  const options: WidgetRuntimeOptions = {
    limits: { maxModelCalls: 8 },
    hooks: [{ onEvent: (event) => console.debug(event.type) }],
  };
  el.runtimeOptions = options;
  el.headers = async () => ({ authorization: 'Bearer token' });
  el.tools = [{
    name: 'todos.add',
    inputSchema: { type: 'object' },
    execute: (_args, { callId }) => ({ toolCallId: callId, content: 'ok', isError: false }),
  }];
  el.strings = { send: 'Go', deleteConfirm: (title: string) => `Delete ${title}?` };
  el.maxImageBytes = 1024 * 1024;
  el.send('hello');
  el.addEventListener('patchbridge-outcome', (event) => {
    const outcome: Outcome = event.detail.outcome;
    console.debug(outcome, event.detail.conversation?.revision);
  });
  el.addEventListener('patchbridge-error', (event) => console.debug(event.detail.error.code));
  el.addEventListener('patchbridge-confirmation', (event) => console.debug(event.detail.pendingConfirmation.tool));
  void el.whenReady().then((controller: AgentController) => controller.getState().status);
  const live: AgentController | null = el.controller;
  console.debug(live, el instanceof PatchBridgeAgentElement, EVENTS.outcome);
}
