// Generated from the Rust types by controller-wasm/src/typescript/; do not edit.
// After changing a type: PATCHBRIDGE_WRITE_TYPES=1 cargo test -p patchbridge-agent --lib typescript
import type { JsonObject, JsonValue } from '../index.js';
import type { AgentError } from '../errors.js';

/**
 * Who produced a message. `Tool` messages carry the `tool-result` blocks answering the previous assistant
 * message's tool calls.
 */
export type Role = "user" | "assistant" | "tool";

/**
 * Where an image comes from.
 */
export type ImageSource =
  | { "type": "url"; url: string }
  | { "type": "base64"; mediaType: string; data: string };

/**
 * How a document's content travels: `base64` for PDF, `text` for the text types.
 */
export type DocumentSource =
  | { "type": "base64"; mediaType: string; data: string }
  | { "type": "text"; mediaType: string; text: string };

/**
 * One source of a text block (`docs/protocol.md` §1): `{ url?, title?, citedText? }`, at least `url` or `title`,
 * none empty; `url` is an absolute http(s) URL, `citedText` at most 500 characters. Provider-private citation data
 * is never part of it.
 */
export type Source = { url?: string; title?: string; citedText?: string };

/**
 * A content block (closed set).
 */
export type Block =
  | {
    "type": "text";
    text: string;
    /**
     * What the text cites (assistant text only); empty for most text, and then not written.
     */
    sources?: Array<Source>;
  }
  | { "type": "image"; source: ImageSource }
  | { "type": "reasoning"; text: string }
  | {
    "type": "tool-call";
    callId: string;
    name: string;
    /**
     * Always a complete JSON object: the runtime validated it before the block became stable.
     */
    input: JsonObject;
  }
  | { "type": "tool-result"; callId: string; content: string; isError: boolean }
  | {
    "type": "document";
    /**
     * The file name as the person picked it (no path).
     */
    name: string;
    source: DocumentSource;
  };

/**
 * One stable message: `{ id, role, blocks }`, blocks in produced order.
 */
export type Message = { id: string; role: Role; blocks: Array<Block> };

/**
 * Provider-private continuation state. The runtime passes it through verbatim and never reads `data`.
 */
export type ModelState = { format: string; data: JsonValue };

/**
 * Token usage of one model call (or the sum over an execution). Absent fields are zero; keys this version does
 * not know are ignored (a newer relay may report more kinds of tokens).
 */
export type Usage = {
  inputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
};

/**
 * A tool as the model sees it.
 */
export type ToolDefinition = { name: string; description: string; inputSchema: JsonObject };

/**
 * The whole conversation so far plus this turn's tools: the relay keeps no session.
 */
export type ModelRequest = {
  model?: string;
  messages: ReadonlyArray<Readonly<Message>>;
  /**
   * Required key, null allowed.
   */
  modelState: Readonly<ModelState> | null;
  tools: ReadonlyArray<Readonly<ToolDefinition>>;
  conversationId?: string;
};

/**
 * Why the model stopped (closed set; see the provider mapping in `docs/protocol.md`).
 */
export type StopReason =
  | "end-turn"
  | "tool-use"
  | "max-tokens"
  | "stop-sequence"
  | "pause-turn"
  | "refusal"
  | "other";

/**
 * What kind of block a `block-start` opens.
 */
export type BlockKind =
  | { "type": "text" }
  | { "type": "reasoning" }
  | { "type": "tool-call"; callId: string; name: string };

/**
 * One event of a model stream: what the relay sends as SSE and what a custom model yields.
 */
export type StreamEvent =
  | {
    "type": "message-start";
    id?: string;
    /**
     * Relay only: the id of the model that serves the message, when it is not the one the request named
     * (the relay failed over to a fallback, `docs/protocol.md` §4).
     */
    model?: string;
  }
  | { "type": "block-start"; index: number; block: BlockKind }
  | { "type": "block-delta"; index: number; delta: string }
  | {
    "type": "block-stop";
    index: number;
    /**
     * The sources of a text block (`docs/protocol.md` §1), sent when it ends.
     */
    sources?: Array<Source>;
  }
  | {
    "type": "message-stop";
    stopReason: StopReason;
    usage?: Usage;
    /**
     * Required key (null allowed): the full next state; non-null replaces, null clears.
     */
    modelState: ModelState | null;
  }
  | { "type": "error"; code: string; message: string; retryable?: boolean };

/**
 * `ConversationSummary { "id", "title", "revision", "createdAt", "updatedAt" }` (RFC 3339 times;
 * `docs/protocol.md` §6).
 */
export type ConversationSummary = {
  id: string;
  title: string;
  revision: number;
  createdAt: string;
  updatedAt: string;
};

/**
 * `GET {base}/conversations?limit=N&cursor=C` → `{ "items": [ConversationSummary], "nextCursor": string | null }`:
 * newest `updatedAt` first; `nextCursor` is opaque (pass it as `cursor` for the next page) and null on the last
 * page (`docs/protocol.md` §6).
 */
export type ConversationPage = {
  items: ReadonlyArray<Readonly<ConversationSummary>>;
  /**
   * Always serialised (null on the last page).
   */
  nextCursor: string | null;
};

/**
 * The `limit` of a `SPENDING_LIMIT_REACHED` error. `kind` is kept as text when read, so a client still reports a
 * kind newer than it knows.
 */
export type SpendingLimit = {
  /**
   * A spending limit kind's text: `calls`, `inputTokens`, `outputTokens` or `concurrentCalls` (a newer relay
   * may add kinds).
   */
  kind: string;
  /**
   * The configured maximum.
   */
  max: number;
  /**
   * The window's length in seconds (absent for `concurrentCalls`).
   */
  windowSeconds?: number;
  /**
   * Whether the window slides (usage of the last `windowSeconds`) or is fixed (resets at multiples of
   * `windowSeconds` since the Unix epoch, UTC). Absent for `concurrentCalls`.
   */
  sliding?: boolean;
  /**
   * Set when the limit is one model's own (`spending.models`), absent for the limits of all models together.
   */
  model?: string;
};

/**
 * `details` of every relay failure (AGENT_RELAY_ERROR, and the relay's AGENT_REVISION_CONFLICT /
 * AGENT_CONVERSATION_CORRUPT / AGENT_SPENDING_LIMIT_REACHED), the same shape whether the relay answered with an
 * HTTP error or sent an `error` event inside the model stream.
 */
export type RelayErrorDetails = {
  /**
   * The relay's stable code (docs/protocol.md §4), e.g. 'UPSTREAM_RATE_LIMITED'; '' when an HTTP error body was
   * not a relay error.
   */
  relayCode: string;
  /**
   * The HTTP status; present only for HTTP error answers (an in-stream error arrives on a 200 stream).
   */
  status?: number;
  /**
   * Present only when the relay said whether retrying may help (in-stream error events carry it).
   */
  retryable?: boolean;
  /**
   * Present only for AGENT_REVISION_CONFLICT: the stored revision.
   */
  currentRevision?: number;
  /**
   * Present only for relayCode 'MODEL_STATE_MISMATCH': the message whose stored provider state the relay
   * refused. `controller.newConversation({ keepMessages: true })` continues from the messages without that
   * state.
   */
  messageId?: string;
  /**
   * Present only for AGENT_SPENDING_LIMIT_REACHED: whole seconds until a model call may be admitted again.
   */
  retryAfterSeconds?: number;
  /**
   * Present only for AGENT_SPENDING_LIMIT_REACHED: the relay's limit that refused the call.
   */
  limit?: SpendingLimit;
};

/**
 * Stable error codes of @patchbridge/agent (compare `error.code` against these).
 */
export type AgentErrorCode =
  | "AGENT_EXECUTION_TIMEOUT"
  | "AGENT_LIMIT_EXCEEDED"
  | "AGENT_INVALID_LIMITS"
  | "AGENT_INVALID_OPTIONS"
  | "AGENT_PROTOCOL_ERROR"
  | "AGENT_TOOL_PRECHECK_FAILED"
  | "AGENT_INVALID_TOOL_RESULT"
  | "AGENT_TOOL_FAILED"
  | "AGENT_MODEL_FAILED"
  | "AGENT_INTERCEPTOR_FAILED"
  | "AGENT_NEXT_CALLED_TWICE"
  | "AGENT_HOOK_FAILED"
  | "AGENT_NO_PENDING_INTERRUPT"
  | "AGENT_INTERRUPT_MISMATCH"
  | "AGENT_INTERRUPT_ALREADY_RESOLVED"
  | "AGENT_BUSY"
  | "AGENT_DESTROYED"
  | "AGENT_REVISION_CONFLICT"
  | "AGENT_CONVERSATION_CORRUPT"
  | "AGENT_RELAY_ERROR"
  | "AGENT_SPENDING_LIMIT_REACHED"
  | "AGENT_INVALID_TOOL"
  | "AGENT_INVALID_INPUT"
  | "AGENT_ATTACHMENT_TYPE"
  | "AGENT_ATTACHMENT_INVALID"
  | "AGENT_ATTACHMENT_TOO_LARGE"
  | "AGENT_MESSAGE_TOO_LARGE"
  | "AGENT_CONVERSATION_TOO_LARGE"
  | "AGENT_RUNTIME_LOAD_FAILED"
  | "AGENT_MCP_RESOURCE_TOO_LARGE"
  | "AGENT_MCP_RESOURCE_FAILED";

/**
 * The five limit names (`AgentError.limit` for AGENT_LIMIT_EXCEEDED / AGENT_INVALID_LIMITS).
 */
export type LimitName =
  | "maxModelCalls"
  | "maxToolCalls"
  | "maxDurationMs"
  | "maxModelOutputCharacters"
  | "maxToolResultCharacters";

/**
 * The five per-execution limits. `DefaultAgentRuntime` requires all; `createAgentController` takes a partial
 * override of the defaults.
 */
export type Limits = {
  /**
   * `maxModelCalls`: model calls per execution (default 16).
   */
  maxModelCalls: number;
  /**
   * `maxToolCalls`: tool calls accepted per execution, cumulative over all batches (default 32).
   */
  maxToolCalls: number;
  /**
   * `maxDurationMs`: wall time of the whole execution (model, tools and confirmation waits), in ms, at most
   * 2147483647 (default 300000).
   */
  maxDurationMs: number;
  /**
   * `maxModelOutputCharacters`: text + shown reasoning + tool-argument characters aggregated from one model
   * call, counted as Unicode scalar values (default 100000).
   */
  maxModelOutputCharacters: number;
  /**
   * `maxToolResultCharacters`: Unicode scalar values of one tool result's `content` (default 100000).
   */
  maxToolResultCharacters: number;
};

/**
 * A validated tool result (what the model will see).
 */
export type ToolCallResult = {
  /**
   * The call it answers.
   */
  toolCallId: string;
  /**
   * Result text.
   */
  content: string;
  /**
   * Whether it is an error result (the loop continues either way).
   */
  isError: boolean;
};

/**
 * How an execution ended without an error.
 */
export type Outcome = "completed" | "max-tokens" | "cancelled";

/**
 * A stable lifecycle event (closed set), serialised as `{ "type": "...", ...camelCase fields }`.
 */
export type HookEvent =
  | {
    "type": "execution-started";
    /**
     * Registry revision of the tool snapshot frozen for this turn.
     */
    toolRevision: number;
    /**
     * Number of input messages.
     */
    messageCount: number;
  }
  | {
    "type": "model-call-started";
    /**
     * 1-based index of the model call within the execution.
     */
    modelCall: number;
  }
  | {
    "type": "model-call-completed";
    /**
     * 1-based index of the model call.
     */
    modelCall: number;
    /**
     * The sealed assistant message's id.
     */
    messageId: string;
    /**
     * Why the model stopped.
     */
    stopReason: StopReason;
    /**
     * This call's usage.
     */
    usage: Required<Usage>;
    /**
     * Milliseconds from the call's start to its first `block-delta` (null when it produced none).
     */
    timeToFirstTokenMs: number | null;
    /**
     * Milliseconds from the first `block-delta` to `message-stop` (0 when there was no delta).
     */
    outputDurationMs: number;
    /**
     * Characters counted against `maxModelOutputCharacters` for this call.
     */
    outputCharacters: number;
  }
  | {
    "type": "tool-call-started";
    /**
     * The call id.
     */
    callId: string;
    /**
     * The tool name.
     */
    tool: string;
    /**
     * The validated arguments (a copy: hooks cannot change what the tool receives).
     */
    arguments: JsonObject;
  }
  | {
    "type": "tool-call-completed";
    /**
     * The call id.
     */
    callId: string;
    /**
     * The tool name.
     */
    tool: string;
    /**
     * Whether the result is an error result.
     */
    isError: boolean;
    /**
     * Characters of the result content.
     */
    contentCharacters: number;
    /**
     * Whether the result came from a user rejection rather than running the tool.
     */
    rejected: boolean;
    /**
     * Whether the runtime refused the call because its arguments do not match the tool's `inputSchema`
     * (the tool was neither confirmed nor run; the result starts with `[invalid arguments] `).
     */
    invalidArguments: boolean;
  }
  | {
    "type": "confirmation-requested";
    /**
     * Stable interrupt id.
     */
    interruptId: string;
    /**
     * The call awaiting confirmation.
     */
    callId: string;
    /**
     * The tool name.
     */
    tool: string;
    /**
     * The validated arguments.
     */
    arguments: JsonObject;
  }
  | {
    "type": "confirmation-resolved";
    /**
     * Stable interrupt id.
     */
    interruptId: string;
    /**
     * The call it was about.
     */
    callId: string;
    /**
     * Whether the user approved.
     */
    approved: boolean;
  }
  | {
    "type": "execution-completed";
    /**
     * `completed` or `max-tokens`.
     */
    outcome: Exclude<Outcome, 'cancelled'>;
    /**
     * Usage summed over all model calls.
     */
    usage: Required<Usage>;
    /**
     * Model calls made.
     */
    modelCalls: number;
    /**
     * Tool calls accepted.
     */
    toolCalls: number;
  }
  | {
    "type": "execution-cancelled";
    /**
     * Usage summed over the model calls that completed.
     */
    usage: Required<Usage>;
  }
  | {
    "type": "execution-failed";
    /**
     * The error `result` rejects with.
     */
    error: {
      /**
       * The stable code.
       */
      code: AgentErrorCode;
      /**
       * Human-readable text (not stable; do not match on it).
       */
      message: string;
      /**
       * For `AGENT_LIMIT_EXCEEDED` and `AGENT_INVALID_LIMITS`: which limit.
       */
      limit?: LimitName;
      /**
       * Structured extra facts (JSON), e.g. the offending call id or the relay's error code.
       */
      details?: JsonValue;
    };
  };

/**
 * Facts about where an event comes from.
 */
export type HookContext = {
  /**
   * The execution's id.
   */
  executionId: string;
  /**
   * Trace id (the input's, or the execution id).
   */
  traceId: string;
  /**
   * 1-based sequence number of the event within the execution.
   */
  sequence: number;
  /**
   * Platform clock at dispatch, in milliseconds.
   */
  timestampMs: number;
};

/**
 * A hook threw on the terminal event: reported to `onHookError` (or the console), never changes the outcome.
 */
export type HookFailure = {
  /**
   * Index of the hook in registration order.
   */
  hookIndex: number;
  /**
   * The event type it failed on.
   */
  eventType: HookEvent['type'];
  /**
   * The execution's id.
   */
  executionId: string;
  /**
   * What the hook threw.
   */
  error: AgentError;
};

/**
 * Facts about the model call being intercepted.
 */
export type ModelCallContext = {
  /**
   * The execution's id.
   */
  executionId: string;
  /**
   * Trace id (the input's, or the execution id).
   */
  traceId: string;
  /**
   * 1-based index of this model call within the execution.
   */
  modelCall: number;
};

/**
 * The kinds of interrupt: a tool confirmation, a running tool's question.
 */
export type InterruptKind = "tool-confirmation" | "elicitation";

/**
 * A pending human-in-the-loop question.
 */
export type Interrupt = {
  /**
   * Stable id to pass to `respond`.
   */
  interruptId: string;
  /**
   * Always `tool-confirmation`.
   */
  kind: InterruptKind;
  /**
   * The tool call awaiting approval.
   */
  callId: string;
  /**
   * The tool name.
   */
  tool: string;
  /**
   * The validated arguments.
   */
  arguments: JsonObject;
};

/**
 * How the person answers an elicitation: a small form, or a link to open.
 */
export type ElicitationMode = "form" | "url";

/**
 * The person's answer to an elicitation.
 */
export type ElicitationAction = "accept" | "decline" | "cancel";

/**
 * A pending elicitation: the question of a running tool call, awaiting the person.
 */
export type Elicitation = {
  /**
   * Stable id to pass to `respond`.
   */
  interruptId: string;
  /**
   * Always `elicitation`.
   */
  kind: InterruptKind;
  /**
   * The tool call that asks.
   */
  callId: string;
  /**
   * The tool name.
   */
  tool: string;
  /**
   * `form` or `url`.
   */
  mode: ElicitationMode;
  /**
   * The question.
   */
  message: string;
  /**
   * Form mode: the fields asked for.
   */
  requestedSchema: JsonObject | null;
  /**
   * URL mode: the link to open.
   */
  url: string | null;
  /**
   * URL mode: the server's id of this elicitation.
   */
  elicitationId: string | null;
  /**
   * Who asks (an MCP tool's server), when the tool said.
   */
  source: string | null;
};

/**
 * What the observer passed to `start` sees, in order (block events are the draft).
 */
export type ExecutionEvent =
  | {
    "type": "message-started";
    /**
     * The message id.
     */
    id: string;
    /**
     * 1-based model call index.
     */
    modelCall: number;
  }
  | { "type": "block-start"; index: number; block: BlockKind }
  | { "type": "block-delta"; index: number; delta: string }
  | {
    "type": "block-stop";
    index: number;
    /**
     * A text block's sources (absent when it has none).
     */
    sources?: Array<Source>;
  }
  | { "type": "message-completed"; message: Message }
  | { "type": "tool-result"; result: ToolCallResult }
  | { "type": "interrupt" } & Interrupt
  | { "type": "interrupt-resolved"; interruptId: string; callId: string; approved: boolean }
  | { "type": "elicitation" } & Elicitation
  | {
    "type": "elicitation-resolved";
    interruptId: string;
    callId: string;
    action: ElicitationAction;
  };

/**
 * What `result` resolves with.
 */
export type ExecutionResult = {
  /**
   * The outcome.
   */
  outcome: Outcome;
  /**
   * The whole conversation: input messages plus every message that became stable (never a draft). A
   * `cancelled` result that stopped between an assistant message's tool calls and their tool message ends with
   * a closing tool message: the results already published, and a not-run result (`isError: true`, content
   * starting with `[not run] `) for each call that never ran, so these messages are a valid next input.
   */
  messages: Array<Message>;
  /**
   * The provider state after the last stable message (verbatim).
   */
  modelState: ModelState | null;
  /**
   * Usage summed over the model calls that completed.
   */
  usage: Required<Usage>;
};

/**
 * What the controller is doing.
 */
export type ControllerStatus =
  | "idle"
  | "loading"
  | "running"
  | "awaiting-confirmation"
  | "saving"
  | "destroyed";

/**
 * A block of the in-flight draft (tool calls show their raw argument text until sealed).
 */
export type DraftBlock =
  | {
    "type": "text";
    text: string;
    complete: boolean;
    /**
     * The block's sources once it is complete (absent when it has none).
     */
    sources?: Array<Source>;
  }
  | { "type": "reasoning"; text: string; complete: boolean }
  | {
    "type": "tool-call";
    callId: string;
    name: string;
    /**
     * The raw JSON argument text so far.
     */
    argumentsText: string;
    complete: boolean;
  };

/**
 * The stored conversation this controller is attached to.
 */
export type ConversationInfo = {
  /**
   * Conversation id.
   */
  id: string;
  /**
   * Title.
   */
  title: string;
  /**
   * The revision the in-memory state corresponds to.
   */
  revision: number;
};

/**
 * A deep-frozen snapshot: a new object per change; `messages` keeps its identity while unchanged.
 */
export type AgentState = {
  status: ControllerStatus;
  messages: ReadonlyArray<Readonly<Message>>;
  /**
   * The assistant message being streamed, if any.
   */
  draft: { id: string; role: 'assistant'; blocks: Array<DraftBlock> } | null;
  /**
   * Validated results of the running tool batch (before its tool message is stable).
   */
  toolResults: ReadonlyArray<Readonly<ToolCallResult>>;
  pendingConfirmation: Readonly<Interrupt> | null;
  /**
   * A running tool's question to the person (answer with `answerElicitation`).
   */
  pendingElicitation: Readonly<Elicitation> | null;
  lastOutcome: Outcome | null;
  /**
   * The last error (cleared when a new turn or load starts).
   */
  error: AgentError | null;
  conversation: Readonly<ConversationInfo> | null;
  toolRevision: number;
};

/**
 * `current-execution` while a turn runs (its frozen snapshot), else `current-registry`.
 */
export type InspectionSource = "current-execution" | "current-registry";
