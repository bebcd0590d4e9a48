// Type declarations of @patchbridge/agent. Wire shapes follow docs/protocol.md; runtime behaviour follows the
// runtime contract (npm/README.md). Every value the runtime hands to JavaScript (results, hook data, state, events)
// is deep-frozen, hence the Readonly types.

import type { AgentError, AgentErrorCode, LimitName } from './errors.js';

export * from './errors.js';

// ---------------------------------------------------------------------------------------------------------------
// Messages and wire types (docs/protocol.md §1–§3)

export type Role = 'user' | 'assistant' | 'tool';

export type ImageSource =
  | { type: 'url'; url: string }
  | { type: 'base64'; mediaType: string; data: string };

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
/** The same JSON, possibly deeply readonly: what a tool's schema may be (a literal written `as const`). */
export type ReadonlyJsonValue = null | boolean | number | string | readonly ReadonlyJsonValue[] | { readonly [key: string]: ReadonlyJsonValue };
export type ReadonlyJsonObject = { readonly [key: string]: ReadonlyJsonValue };

export type TextBlock = { type: 'text'; text: string };
export type ImageBlock = { type: 'image'; source: ImageSource };
/** Reasoning the provider allows to be shown (private reasoning state lives in ModelState). */
export type ReasoningBlock = { type: 'reasoning'; text: string };
/** A tool call whose `input` is a validated, complete JSON object. */
export type ToolCallBlock = { type: 'tool-call'; callId: string; name: string; input: JsonObject };
/** A tool result strictly tied to a tool call of the preceding assistant message. */
export type ToolResultBlock = { type: 'tool-result'; callId: string; content: string; isError: boolean };
export type Block = TextBlock | ImageBlock | ReasoningBlock | ToolCallBlock | ToolResultBlock;

/** A stable message: blocks in produced order. */
export interface Message {
  id: string;
  role: Role;
  blocks: Block[];
}

/** Provider-private continuation state: never shown, never read by the runtime, passed through verbatim. */
export interface ModelState {
  format: string;
  data: JsonValue;
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** A tool as the model sees it. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonObject;
}

/** What a model receives per call (the relay's `POST {endpoint}/model` body). Fields are read lazily. */
export interface ModelRequest {
  readonly model?: string;
  readonly messages: ReadonlyArray<Readonly<Message>>;
  readonly modelState: Readonly<ModelState> | null;
  readonly tools: ReadonlyArray<Readonly<ToolDefinition>>;
  readonly conversationId?: string;
}

export type StopReason = 'end-turn' | 'tool-use' | 'max-tokens' | 'stop-sequence' | 'pause-turn' | 'refusal' | 'other';

export type BlockKind =
  | { type: 'text' }
  | { type: 'reasoning' }
  | { type: 'tool-call'; callId: string; name: string };

/** One event of a model stream (what a custom model yields; the relay sends the same as SSE). */
export type StreamEvent =
  | { type: 'message-start'; id?: string }
  | { type: 'block-start'; index: number; block: BlockKind }
  | { type: 'block-delta'; index: number; delta: string }
  | { type: 'block-stop'; index: number }
  | { type: 'message-stop'; stopReason: StopReason; usage?: Usage; modelState: ModelState | null }
  | { type: 'error'; code: string; message: string; retryable?: boolean };

/** A custom model. `stream` returns an async iterable (or a promise of one) of stream events. */
export interface AgentModel {
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> | Iterable<StreamEvent> | Promise<AsyncIterable<StreamEvent>>;
}

// ---------------------------------------------------------------------------------------------------------------
// Limits

/** The five limits. `DefaultAgentRuntime` requires all; `createAgentController` takes a partial override. */
export interface Limits {
  /** Model calls per execution (default 16). */
  maxModelCalls: number;
  /** Tool calls accepted per execution, cumulative (default 32). */
  maxToolCalls: number;
  /** Wall time of the whole execution incl. confirmation waits, ms, <= 2147483647 (default 300000). */
  maxDurationMs: number;
  /** Text + shown reasoning + tool-argument characters of one model call (default 100000). */
  maxModelOutputCharacters: number;
  /** Characters of one tool result's content (default 100000). */
  maxToolResultCharacters: number;
}

/** The factory defaults used by createAgentController for limits not overridden. */
export declare const DEFAULT_LIMITS: Readonly<Limits>;

// ---------------------------------------------------------------------------------------------------------------
// Tools

/** What a tool returns: exactly these three fields, `toolCallId` equal to the call's id. */
export interface ToolCallResult {
  toolCallId: string;
  content: string;
  isError: boolean;
}

export interface ToolContext {
  /** The execution's AbortSignal (aborted on cancel, deadline or failure). */
  readonly signal: AbortSignal;
  readonly callId: string;
}

/**
 * A tool. Tools not explicitly `readOnly: true`, and every tool with `requireConfirmation: true`, raise a
 * `tool-confirmation` interrupt before they run. Return `isError: true` for expected failures the model should
 * see; a throw or rejection ends the execution (`AGENT_TOOL_FAILED`).
 *
 * `Args` types what `execute` receives: `AgentTool<{ text: string }>`. The runtime only checks that the model's
 * arguments are one complete JSON object; that they match `inputSchema` (and so `Args`) is the model's promise,
 * so a tool that must not trust it validates its input. The default is any JSON object.
 */
export interface AgentTool<Args = JsonObject> {
  name: string;
  description?: string;
  /** A JSON Schema object; `as const` literals fit (and can feed a schema-to-type library for `Args`). */
  inputSchema: ReadonlyJsonObject;
  readOnly?: boolean;
  requireConfirmation?: boolean;
  /**
   * Check every call's arguments against `inputSchema` before confirmation or execution (default `true`). A call
   * that does not match is neither confirmed nor run: the model gets an error result starting with
   * `[invalid arguments] ` listing each violation, and may correct the call. `false` for tools that validate
   * their arguments themselves (their schema is then not compiled, so any JSON object schema is accepted).
   */
  validateInput?: boolean;
  /** `args` is the tool's own plain copy (mutable; changing it changes nothing else). */
  execute(args: Args, context: ToolContext): ToolCallResult | Promise<ToolCallResult>;
}

/**
 * What lists of tools accept: a tool of any argument type (`AgentTool<{ text: string }>`, an interface, a type
 * inferred from the schema). Declare a tool with its own `AgentTool<Args>` type to have its arguments checked;
 * one written inline in such a list gets untyped (`any`) arguments.
 */
export type AnyAgentTool = AgentTool<any>;

// ---------------------------------------------------------------------------------------------------------------
// Hooks and interceptors

export type Outcome = 'completed' | 'max-tokens' | 'cancelled';

/** Stable lifecycle events (never token deltas, never ModelState). */
export type HookEvent =
  | { type: 'execution-started'; toolRevision: number; messageCount: number }
  | { type: 'model-call-started'; modelCall: number }
  | {
    type: 'model-call-completed'; modelCall: number; messageId: string; stopReason: StopReason; usage: Required<Usage>;
    /** ms from the call's start to its first block-delta (null without deltas). */
    timeToFirstTokenMs: number | null;
    /** ms from the first block-delta to message-stop. */
    outputDurationMs: number;
    outputCharacters: number;
  }
  | { type: 'tool-call-started'; callId: string; tool: string; arguments: JsonObject }
  | { type: 'tool-call-completed'; callId: string; tool: string; isError: boolean; contentCharacters: number; rejected: boolean; invalidArguments: boolean }
  | { type: 'confirmation-requested'; interruptId: string; callId: string; tool: string; arguments: JsonObject }
  | { type: 'confirmation-resolved'; interruptId: string; callId: string; approved: boolean }
  | { type: 'execution-completed'; outcome: 'completed' | 'max-tokens'; usage: Required<Usage>; modelCalls: number; toolCalls: number }
  | { type: 'execution-cancelled'; usage: Required<Usage> }
  | { type: 'execution-failed'; error: { code: AgentErrorCode; message: string; limit?: LimitName; details?: JsonValue } };

export interface HookContext {
  executionId: string;
  traceId: string;
  /** 1-based sequence number of the event within the execution. */
  sequence: number;
  timestampMs: number;
}

/** Observes lifecycle events synchronously, in registration order, with deep-frozen data. */
export interface AgentHook {
  /**
   * Called synchronously. Throwing on a non-terminal event fails the turn (AGENT_HOOK_FAILED); returning a promise
   * is the same failure (push asynchronous work to a host queue instead).
   */
  onEvent(event: Readonly<HookEvent>, context: Readonly<HookContext>): void;
}

/** A hook that threw on the terminal event (which cannot change the outcome). */
export interface HookFailure {
  hookIndex: number;
  eventType: HookEvent['type'];
  executionId: string;
  error: AgentError;
}

export interface ModelCallContext {
  executionId: string;
  traceId: string;
  /** 1-based model call index within the execution. */
  modelCall: number;
}

/** Wraps one model call. Call `next` once (a second call fails with AGENT_NEXT_CALLED_TWICE). */
export interface ModelInterceptor {
  intercept(
    request: ModelRequest,
    context: Readonly<ModelCallContext>,
    signal: AbortSignal,
    next: (request?: ModelRequest, context?: ModelCallContext, signal?: AbortSignal) => AsyncIterable<StreamEvent>,
  ): AsyncIterable<StreamEvent>;
}

export interface ToolInvocation {
  readonly callId: string;
  readonly tool: string;
  readonly arguments: Readonly<JsonObject>;
  readonly executionId: string;
  readonly signal: AbortSignal;
}

/** Wraps one tool call. `next` may receive changed `arguments`; call it once. */
export interface ToolInterceptor {
  intercept(
    invocation: ToolInvocation,
    next: (invocation?: { arguments?: JsonObject }) => Promise<Readonly<ToolCallResult>>,
  ): ToolCallResult | Promise<ToolCallResult>;
}

export interface RuntimeOptions<L = Limits> {
  limits: L;
  hooks?: AgentHook[];
  /** Receives hook failures on the terminal event (console.error when absent). */
  onHookError?: (failure: HookFailure) => void;
  modelInterceptors?: ModelInterceptor[];
  toolInterceptors?: ToolInterceptor[];
}

// ---------------------------------------------------------------------------------------------------------------
// DefaultAgentRuntime

export interface ExecutionInput {
  messages: Message[];
  /** Provider state from the last message-stop (or the store); null or absent when none. */
  modelState?: ModelState | null;
  tools?: AnyAgentTool[];
  /** Model id (forwarded in the request). */
  model?: string;
  conversationId?: string;
  traceId?: string;
}

/** The kinds of interrupt (only tool confirmation today). */
export type InterruptKind = 'tool-confirmation';

export interface Interrupt {
  interruptId: string;
  kind: InterruptKind;
  callId: string;
  tool: string;
  arguments: JsonObject;
}

/** What the observer passed to `start` sees, in order (block events are the draft). */
export type ExecutionEvent =
  | { type: 'message-started'; id: string; modelCall: number }
  | { type: 'block-start'; index: number; block: BlockKind }
  | { type: 'block-delta'; index: number; delta: string }
  | { type: 'block-stop'; index: number }
  | { type: 'message-completed'; message: Message }
  | { type: 'tool-result'; result: ToolCallResult }
  | ({ type: 'interrupt' } & Interrupt)
  | { type: 'interrupt-resolved'; interruptId: string; callId: string; approved: boolean };

export interface ExecutionResult {
  outcome: Outcome;
  /**
   * Input messages plus every message that became stable (never a draft). A `cancelled` result that stopped
   * between an assistant message's tool calls and their tool message ends with a closing tool message: the
   * results already published, and a not-run result (`isError: true`, content starting with `[not run] `) for
   * each call that never ran, so these messages are a valid next input.
   */
  messages: Message[];
  modelState: ModelState | null;
  usage: Required<Usage>;
}

/** `true`/`false`, `'approve'`/`'reject'`, or `{ approved, reason? }` (a reason only when rejecting). */
export type InterruptValue = boolean | 'approve' | 'reject' | { approved: boolean; reason?: string };

/** One independent execution: own signal, interrupt slot, budget and result. */
export declare class AgentExecution {
  private constructor();
  readonly id: string;
  /** Resolves with the outcome; rejects with an AgentError (limits, protocol, deadline, host failures). */
  readonly result: Promise<Readonly<ExecutionResult>>;
  readonly settled: boolean;
  readonly pendingInterrupt: Readonly<Interrupt> | null;
  /** Closes the terminal gate (outcome `cancelled`), then aborts the signal. True if this call decided it. */
  cancel(): boolean;
  /**
   * Throws AGENT_NO_PENDING_INTERRUPT, AGENT_INTERRUPT_MISMATCH or AGENT_INTERRUPT_ALREADY_RESOLVED. A rejection
   * is always accepted: its error tool result is cut to maxToolResultCharacters.
   */
  respond(response: { interruptId: string; value: InterruptValue }): void;
  free(): void;
}

/** The low-level runtime: all five limits required, no defaults merged. Throws AgentError on invalid options. */
export declare class DefaultAgentRuntime {
  constructor(model: AgentModel, options: RuntimeOptions<Limits>);
  readonly limits: Readonly<Limits>;
  /** A non-function `observer` (other than undefined/null) throws AGENT_INVALID_OPTIONS at once. */
  start(input: ExecutionInput, observer?: ((event: Readonly<ExecutionEvent>) => void) | null): AgentExecution;
  free(): void;
}

// ---------------------------------------------------------------------------------------------------------------
// Controller

export type ControllerStatus = 'idle' | 'loading' | 'running' | 'awaiting-confirmation' | 'saving' | 'destroyed';

/** A block of the in-flight draft (tool calls show their raw argument text until sealed). */
export type DraftBlock =
  | { type: 'text' | 'reasoning'; text: string; complete: boolean }
  | { type: 'tool-call'; callId: string; name: string; argumentsText: string; complete: boolean };

export interface ConversationInfo {
  id: string;
  title: string;
  revision: number;
}

/** A stored conversation as the relay lists it (docs/protocol.md §6). */
export interface ConversationSummary {
  id: string;
  title: string;
  revision: number;
  /** RFC 3339. */
  createdAt: string;
  /** RFC 3339. */
  updatedAt: string;
}

/** One page of `listConversations`: newest `updatedAt` first. */
export interface ConversationPage {
  items: ReadonlyArray<Readonly<ConversationSummary>>;
  /** Opaque; pass it as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

export interface ListConversationsOptions {
  /** 1..100 (relay default 20). */
  limit?: number;
  cursor?: string | null;
}

export interface NewConversationOptions {
  /**
   * Keep the current stable messages (without their ModelState) in the new, not yet stored conversation. The way
   * forward when the relay refuses a conversation's stored provider state (`details.relayCode ===
   * 'MODEL_STATE_MISMATCH'`, with `details.messageId`). Default false: start empty.
   */
  keepMessages?: boolean;
}

/** A deep-frozen snapshot: a new object per change; `messages` keeps its identity while unchanged. */
export interface AgentState {
  status: ControllerStatus;
  messages: ReadonlyArray<Readonly<Message>>;
  draft: { id: string; role: 'assistant'; blocks: DraftBlock[] } | null;
  /** Validated results of the running tool batch (before its tool message is stable). */
  toolResults: ReadonlyArray<Readonly<ToolCallResult>>;
  pendingConfirmation: Readonly<Interrupt> | null;
  lastOutcome: Outcome | null;
  error: AgentError | null;
  conversation: Readonly<ConversationInfo> | null;
  toolRevision: number;
}

export interface ControllerOptions {
  /** The relay base URL: model stream at `${endpoint}/model`, conversations at `${endpoint}/conversations`. */
  endpoint?: string;
  /** Auth for the relay: an object, or a (possibly async) function called before every request. */
  headers?: Record<string, string> | (() => Record<string, string> | Headers | Promise<Record<string, string> | Headers>);
  /** A custom model object (used instead of the relay's model stream), or with `endpoint` a relay model id. */
  model?: AgentModel | string;
  tools?: AnyAgentTool[];
  /** Load this stored conversation right away (failures appear in `state.error`). */
  conversationId?: string;
  runtime?: Partial<Omit<RuntimeOptions<Partial<Limits>>, 'limits'>> & { limits?: Partial<Limits> };
}

/** `current-execution` while a turn runs (its frozen snapshot), else `current-registry`. */
export type InspectionSource = 'current-execution' | 'current-registry';

export interface ToolInspection {
  /** `current-execution` while a turn runs (its frozen snapshot), else `current-registry`. */
  source: InspectionSource;
  snapshot: {
    revision: number;
    tools: ReadonlyArray<Readonly<{ name: string; description: string; inputSchema: JsonObject; readOnly: boolean; requireConfirmation: boolean; validateInput: boolean }>>;
  };
}

export declare class AgentController {
  private constructor();
  /** Listener gets coalesced snapshots (at most one per microtask); returns the unsubscribe function. */
  subscribe(listener: (state: AgentState) => void): () => void;
  getState(): AgentState;
  /** Runs one turn; resolves with the outcome, rejects with an AgentError (also in `state.error`). */
  send(input: string | Array<TextBlock | ImageBlock>): Promise<Outcome>;
  /**
   * Runs the turn again from the stable messages without adding a user message (after a failed turn whose last
   * stable message is the person's or a tool result); AGENT_INVALID_INPUT when the model has already answered.
   */
  retry(): Promise<Outcome>;
  /**
   * Answers the last user message again: the messages after it are dropped, the turn runs, and the rewritten
   * conversation is saved whole as the next revision. AGENT_BUSY while a turn runs; AGENT_INVALID_INPUT without a
   * user message.
   */
  regenerate(): Promise<Outcome>;
  /** Replaces the last user message (and everything after it) with a new one and runs the turn, like `regenerate`. */
  editLastMessage(input: string | Array<TextBlock | ImageBlock>): Promise<Outcome>;
  /** Same shape as `runtime` of createAgentController; applies from the next turn (a running turn keeps its own). */
  setRuntimeOptions(runtime: ControllerOptions['runtime']): void;
  /** Cancels the running turn (nothing of it is saved); true if one was cancelled. */
  abort(): boolean;
  approveTool(): void;
  rejectTool(reason?: string): void;
  /** Affects the next turn only; returns the registry revision. */
  registerTool<Args = JsonObject>(tool: AgentTool<Args>): number;
  unregisterTool(name: string): boolean;
  getToolInspectionSource(): ToolInspection;
  loadConversation(id: string): Promise<void>;
  /** Idle only (AGENT_BUSY otherwise); nothing is stored until the next completed turn creates the conversation. */
  newConversation(options?: NewConversationOptions): void;
  /** GET {endpoint}/conversations. AGENT_INVALID_INPUT for a bad limit/cursor; relay failures as AGENT_RELAY_ERROR. */
  listConversations(options?: ListConversationsOptions): Promise<Readonly<ConversationPage>>;
  /**
   * Reads the snapshot and writes it back with the new title (revision + 1). For the open conversation the status
   * is `saving` meanwhile and `state.conversation` takes the new title and revision; AGENT_BUSY while a turn of it
   * runs or saves (or any conversation loads); AGENT_REVISION_CONFLICT when it changed elsewhere.
   */
  renameConversation(id: string, title: string): Promise<Readonly<ConversationInfo>>;
  /**
   * DELETE; resolves only on the relay's 204 (anything else rejects). Deleting the open conversation is refused
   * with AGENT_BUSY while its turn runs (abort first); once deleted the controller starts a new empty conversation.
   */
  deleteConversation(id: string): Promise<void>;
  /** The ModelState that goes with the stable messages. */
  getModelState(): Readonly<ModelState> | null;
  destroy(): void;
  free(): void;
}

export declare function createAgentController(options: ControllerOptions): AgentController;
