// Type-level test of npm/index.d.ts: every public type used the way the README shows. Compiled with
// `tsc --noEmit --strict` by tests/node/types.test.mjs (compile only); a wrong or missing declaration fails that test.
import {
  createAgentController, DefaultAgentRuntime, DEFAULT_LIMITS, AgentError, AGENT_EXECUTION_TIMEOUT, ErrorCodes,
  isAgentError,
  type AgentModel, type AgentTool, type AgentState, type ExecutionEvent, type HookEvent, type StreamEvent,
  type ToolCallResult, type RelayErrorDetails, type ConversationPage, type ConversationSummary, type ConversationInfo, type Limits, type ModelInterceptor, type ToolInterceptor, type Message, type Outcome,
  type Source,
} from '../../../npm/index.js';

const model: AgentModel = {
  async *stream(request, signal): AsyncIterable<StreamEvent> {
    const count: number = request.messages.length + (signal.aborted ? 1 : 0);
    yield { type: 'message-start' };
    yield { type: 'block-start', index: 0, block: { type: 'text' } };
    yield { type: 'block-delta', index: 0, delta: `seen ${count}` };
    const cited: Source[] = [{ url: 'https://example.org', title: 'Example', citedText: 'seen' }, { title: 'Almanac.pdf' }];
    yield { type: 'block-stop', index: 0, sources: cited };
    yield { type: 'message-stop', stopReason: 'end-turn', modelState: null };
  },
};

const tool: AgentTool = {
  name: 'local.device_get',
  description: 'Reads a device',
  inputSchema: { type: 'object', properties: { serial: { type: 'string' } } },
  readOnly: true,
  execute: async (args, { callId, signal }): Promise<ToolCallResult> =>
    ({ toolCallId: callId, content: `${String(args.serial)} ${signal.aborted}`, isError: false }),
};

const modelInterceptor: ModelInterceptor = {
  async *intercept(request, context, signal, next) {
    for await (const event of next(request, context, signal)) yield event;
  },
};
const toolInterceptor: ToolInterceptor = { intercept: (invocation, next) => next(invocation) };

const controller = createAgentController({
  endpoint: '/ai',
  headers: async () => ({ authorization: 'Bearer x' }),
  tools: [tool],
  runtime: {
    limits: { maxModelCalls: 8, maxDurationMs: 120_000 },
    hooks: [{ onEvent: (event: Readonly<HookEvent>, context) => { void event.type; void context.traceId; } }],
    onHookError: (failure) => { const code: string = failure.error.code; void code; },
    modelInterceptors: [modelInterceptor],
    toolInterceptors: [toolInterceptor],
  },
});
const unsubscribe: () => void = controller.subscribe((state: AgentState) => {
  if (state.pendingConfirmation != null) controller.approveTool();
  const last: Readonly<Message> | undefined = state.messages[state.messages.length - 1];
  void last;
});
unsubscribe();
const outcome: Promise<Outcome> = controller.send('hello');
void outcome;
void controller.getToolInspectionSource().source;
async function history(): Promise<void> {
  const page: Readonly<ConversationPage> = await controller.listConversations({ limit: 20, cursor: null });
  const first: Readonly<ConversationSummary> | undefined = page.items[0];
  const next: string | null = page.nextCursor;
  if (first !== undefined) {
    const renamed: Readonly<ConversationInfo> = await controller.renameConversation(first.id, `${first.title} (${first.updatedAt})`);
    const done: void = await controller.deleteConversation(renamed.id);
    void [done, next];
  }
  controller.newConversation({ keepMessages: true });
  controller.newConversation();
}
void history;

const limits: Limits = { ...DEFAULT_LIMITS, maxModelCalls: 4 };
const runtime = new DefaultAgentRuntime(model, { limits });
const execution = runtime.start({ messages: [], modelState: null }, (event: Readonly<ExecutionEvent>) => {
  if (event.type === 'block-delta') void event.delta.length;
  if (event.type === 'interrupt') execution.respond({ interruptId: event.interruptId, value: true });
});
execution.result.then((r) => r.outcome, (e: unknown) => {
  if (isAgentError(e, AGENT_EXECUTION_TIMEOUT)) void e.limit;
  if (e instanceof AgentError && e.code === ErrorCodes.AGENT_LIMIT_EXCEEDED) void e.details;
  if (isAgentError(e, ErrorCodes.AGENT_RELAY_ERROR)) {
    const details = e.details as RelayErrorDetails;
    const code: string = details.relayCode;
    const status: number | undefined = details.status;
    const retry: boolean | undefined = details.retryable;
    const messageId: string | undefined = details.messageId;
    void [code, status, retry, messageId];
  }
});
execution.cancel();

// A stored text block's sources, read as a UI would.
const sourceTitles = (message: Message): string[] =>
  message.blocks.flatMap((block) => (block.type === 'text' ? (block.sources ?? []).map((s) => s.title ?? s.url ?? '') : []));
void sourceTitles;
