// Type declarations of @patchbridge/agent: the API surface (classes, functions, options). Every wire and state type
// (messages, stream and hook events, results, the controller's state, the closed sets of codes) is generated from
// the Rust types into generated/types.d.ts (controller-wasm/src/typescript/) and re-exported from here. Wire
// shapes follow docs/protocol.md; runtime behaviour follows the runtime contract (npm/README.md). Every value the
// runtime hands to JavaScript (results, hook data, state, events) is deep-frozen, hence the Readonly types.

import type { AgentError } from './errors.js';
import type {
  AgentState, Block, ConversationInfo, ConversationPage, Elicitation, ExecutionEvent, ExecutionResult, HookContext, HookEvent,
  HookFailure, InspectionSource, Interrupt, Limits, Message, ModelCallContext, ModelRequest, ModelState, Outcome,
  StreamEvent, ToolCallResult,
} from './generated/types.js';

export * from './errors.js';
export * from './generated/types.js';

// ---------------------------------------------------------------------------------------------------------------
// JSON passed through as it is (tool arguments and schemas, provider state, error details)

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
/** The same JSON, possibly deeply readonly: what a tool's schema may be (a literal written `as const`). */
export type ReadonlyJsonValue = null | boolean | number | string | readonly ReadonlyJsonValue[] | { readonly [key: string]: ReadonlyJsonValue };
export type ReadonlyJsonObject = { readonly [key: string]: ReadonlyJsonValue };

// ---------------------------------------------------------------------------------------------------------------
// The blocks of a message by kind (`Block` is generated)

export type TextBlock = Extract<Block, { type: 'text' }>;
export type ImageBlock = Extract<Block, { type: 'image' }>;
/**
 * A file the person attached (user messages only): a PDF as `{ type: 'base64', mediaType: 'application/pdf', data }`
 * (standard base64, no `data:` prefix), a text file as `{ type: 'text', mediaType, text }` with `mediaType` one of
 * `text/plain` (also source code), `text/markdown`, `text/csv`, `application/json`. `name` is the file name without
 * a path (1 to 255 characters). Checked on `send` (README "Attachments").
 */
export type DocumentBlock = Extract<Block, { type: 'document' }>;
/** What `send` and `editLastMessage` take: a string, or text, image and document blocks. */
export type UserInput = string | Array<TextBlock | ImageBlock | DocumentBlock>;
/** Reasoning the provider allows to be shown (private reasoning state lives in ModelState). */
export type ReasoningBlock = Extract<Block, { type: 'reasoning' }>;
/** A tool call whose `input` is a validated, complete JSON object. */
export type ToolCallBlock = Extract<Block, { type: 'tool-call' }>;
/** A tool result strictly tied to a tool call of the preceding assistant message. */
export type ToolResultBlock = Extract<Block, { type: 'tool-result' }>;

// ---------------------------------------------------------------------------------------------------------------
// Models

/** A custom model. `stream` returns an async iterable (or a promise of one) of stream events. */
export interface AgentModel {
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> | Iterable<StreamEvent> | Promise<AsyncIterable<StreamEvent>>;
}

// ---------------------------------------------------------------------------------------------------------------
// Limits (`Limits` is generated)

/** The factory defaults used by createAgentController for limits not overridden. */
export declare const DEFAULT_LIMITS: Readonly<Limits>;

// ---------------------------------------------------------------------------------------------------------------
// Tools

/** What a tool asks the person during its call (`context.elicit`): a small form, or a link to open. */
export type ElicitationRequest =
  | { mode?: 'form'; message: string; requestedSchema: ReadonlyJsonObject; source?: string }
  | { mode: 'url'; message: string; url: string; elicitationId?: string; source?: string };

/** The person's answer to an elicitation. */
export type ElicitationAnswer =
  | { action: 'accept'; content?: { [field: string]: string | number | boolean | string[] } }
  | { action: 'decline' }
  | { action: 'cancel' };

export interface ToolContext {
  /** The execution's AbortSignal (aborted on cancel, deadline or failure). */
  readonly signal: AbortSignal;
  readonly callId: string;
  /**
   * Asks the person during the call: an `elicitation` interrupt of the execution (`state.pendingElicitation`),
   * answered through `execution.respond` or `controller.answerElicitation`. Rejects once the execution ended
   * (cancel, deadline, failure consume the question as they consume a confirmation); one question at a time.
   */
  elicit(request: ElicitationRequest): Promise<Readonly<ElicitationAnswer>>;
}

/**
 * A tool. Tools not explicitly `readOnly: true`, and every tool with `requireConfirmation: true`, raise a
 * `tool-confirmation` interrupt before they run. Return `isError: true` for expected failures the model should
 * see; a throw or rejection ends the execution (`AGENT_TOOL_FAILED`).
 *
 * `Args` types what `execute` receives: `AgentTool<{ text: string }>`. The runtime checks the model's arguments
 * against `inputSchema` before confirmation or execution (see `validateInput`; the checked keywords are listed in
 * the package README, "Tool arguments"), so `execute` sees only arguments that match the checked keywords; a
 * schema that relies on ignored keywords (`oneOf`, `patternProperties`, …), or `validateInput: false`, leaves
 * those checks to the tool. The default is any JSON object.
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
   * `[invalid arguments] ` listing each violation, and may correct the call. A `pattern` whose `RegExp` throws
   * while matching ends the execution with `AGENT_TOOL_FAILED` (`details: { callId, tool, pattern }`), never
   * counted as a match or a mismatch. `false` for tools that validate their arguments themselves (their schema is
   * then not compiled, so any JSON object schema is accepted).
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

/** Observes lifecycle events synchronously, in registration order, with deep-frozen data. */
export interface AgentHook {
  /**
   * Called synchronously. Throwing on a non-terminal event fails the turn (AGENT_HOOK_FAILED); returning a promise
   * is the same failure (push asynchronous work to a host queue instead).
   */
  onEvent(event: Readonly<HookEvent>, context: Readonly<HookContext>): void;
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

/** `true`/`false`, `'approve'`/`'reject'`, or `{ approved, reason? }` (a reason only when rejecting). */
export type InterruptValue = boolean | 'approve' | 'reject' | { approved: boolean; reason?: string };

/**
 * A tool call the host adds to a running execution (an MCP App's call from its view): `callId` unique in the
 * conversation (the MCP client uses `app_` and 24 hex digits), `name` a tool of the execution's snapshot, or
 * `tool` (a definition as `registerTool` takes) for one it lacks (a tool meant for apps only).
 */
export interface HostToolCall {
  callId: string;
  name: string;
  arguments?: JsonObject;
  tool?: AnyAgentTool;
}

/** One independent execution: own signal, interrupt slot, budget and result. */
export declare class AgentExecution {
  private constructor();
  readonly id: string;
  /** Resolves with the outcome; rejects with an AgentError (limits, protocol, deadline, host failures). */
  readonly result: Promise<Readonly<ExecutionResult>>;
  readonly settled: boolean;
  /** A pending confirmation, or a running tool's question (`kind: 'elicitation'`). */
  readonly pendingInterrupt: Readonly<Interrupt> | Readonly<Elicitation> | null;
  /** Closes the terminal gate (outcome `cancelled`), then aborts the signal. True if this call decided it. */
  cancel(): boolean;
  /**
   * Throws AGENT_NO_PENDING_INTERRUPT, AGENT_INTERRUPT_MISMATCH or AGENT_INTERRUPT_ALREADY_RESOLVED. A rejection
   * is always accepted: its error tool result is cut to maxToolResultCharacters.
   */
  respond(response: { interruptId: string; value: InterruptValue | ElicitationAnswer }): void;
  /**
   * Adds the host's tool call to this execution: taken before the next model call (or before the execution
   * ends), then run as the model's calls are (arguments checked against the tool's schema, confirmation through
   * `pendingInterrupt` unless read-only, maxToolCalls, tool interceptors and hooks, deadline and cancellation).
   * Resolves with its ToolCallResult (`[invalid arguments] `, `[rejected] `, or `[not run] ` when the execution
   * ended first); no event or message carries it. Rejects with AGENT_LIMIT_EXCEEDED (maxToolCalls), the call's own
   * failure (AGENT_TOOL_FAILED, …: the execution goes on), AGENT_TOOL_PRECHECK_FAILED (no such tool),
   * AGENT_INVALID_INPUT (bad shape, an id already used), AGENT_BUSY (`details.reason: 'settled'`).
   */
  callTool(call: HostToolCall): Promise<Readonly<ToolCallResult>>;
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

// ---------------------------------------------------------------------------------------------------------------
// MCP servers (remote tool sources; the client chunk is loaded only when servers are set)

export type McpHeaderValues = Record<string, string> | Headers;

/**
 * A remote MCP server (Streamable HTTP, protocol 2025-06-18 or 2025-11-25). Its tools join the registry as
 * `mcp__<name>__<tool>`; every one asks for confirmation unless listed in `readOnly`.
 */
export interface McpServerOptions {
  /** 1 to 24 letters, digits or `-` (part of the tool names the model sees). */
  name: string;
  /** The server's MCP endpoint, http: or https:. */
  url: string | URL;
  /** Sent with every request: an object, or a (possibly async) function called per request. */
  headers?: McpHeaderValues | (() => McpHeaderValues | Promise<McpHeaderValues>);
  /** Which of the server's tools the agent gets: an allow-list (array or `{ allow }`) or `{ deny }`. Default all. */
  tools?: readonly string[] | { allow: readonly string[] } | { deny: readonly string[] };
  /** The server's tool names the page vouches for: they run without confirmation (server hints never count). */
  readOnly?: readonly string[];
  /**
   * For a server that answers 401 with the MCP authorization flow (protected-resource metadata, authorization
   * server metadata, dynamic client registration or a known client, authorization code with PKCE): the page's
   * OAuth client, the MCP SDK's `OAuthClientProvider` interface. The SDK calls `redirectToAuthorization(url)`;
   * the page opens it (a popup, a redirect) and hands the code its redirect URL receives to
   * `controller.finishMcpAuth(name, code)`. Tokens live where the provider keeps them (memory, sessionStorage),
   * never in the conversation.
   */
  auth?: McpOAuthClientProvider;
}

/** The MCP SDK's `OAuthClientProvider` (1.x), as the client chunk calls it. */
export interface McpOAuthClientProvider {
  readonly redirectUrl: string | URL | undefined;
  readonly clientMetadata: { redirect_uris: string[]; client_name?: string; grant_types?: string[]; response_types?: string[]; token_endpoint_auth_method?: string; scope?: string; [key: string]: unknown };
  state?(): string | Promise<string>;
  clientInformation(): { client_id: string; client_secret?: string; [key: string]: unknown } | undefined | Promise<{ client_id: string; client_secret?: string; [key: string]: unknown } | undefined>;
  saveClientInformation?(info: { client_id: string; [key: string]: unknown }): void | Promise<void>;
  tokens(): { access_token: string; token_type: string; refresh_token?: string; expires_in?: number; scope?: string } | undefined | Promise<{ access_token: string; token_type: string; refresh_token?: string; expires_in?: number; scope?: string } | undefined>;
  saveTokens(tokens: { access_token: string; token_type: string; refresh_token?: string; expires_in?: number; scope?: string }): void | Promise<void>;
  redirectToAuthorization(authorizationUrl: URL): void | Promise<void>;
  saveCodeVerifier(codeVerifier: string): void | Promise<void>;
  codeVerifier(): string | Promise<string>;
}

/** One server's status, on the JavaScript side of the controller (`getMcpServers()`, `subscribeMcp`). */
export interface McpServerStatus {
  readonly name: string;
  readonly url: string;
  readonly status: 'connecting' | 'ready' | 'failed';
  /** Why it failed: `unreachable` (network or CORS), `unauthorized` (401), `http`, `headers`, `timeout`, `protocol`, `client`. */
  readonly reason: 'unreachable' | 'unauthorized' | 'http' | 'headers' | 'timeout' | 'protocol' | 'client' | null;
  readonly message: string | null;
  /** The negotiated protocol version once connected. */
  readonly protocolVersion: string | null;
  /** The server's tool names the agent uses (after the allow/deny-list and the registry's checks). */
  readonly tools: readonly string[];
  /** Its tools only apps may call (`_meta.ui.visibility` without "model"): never in the model's snapshot. */
  readonly appTools: readonly string[];
  /** Tools the registry refused (a schema the validator cannot use, a name clash), with the reason. */
  readonly skipped: ReadonlyArray<{ readonly tool: string; readonly reason: string }>;
}

/** The server and tool behind a registry name, and the hints the server declares (shown, never trusted). */
export interface McpToolInfo {
  readonly server: string;
  readonly tool: string;
  readonly title: string | null;
  /** Whether the page listed it in `readOnly` (the only thing that skips the confirmation). */
  readonly readOnly: boolean;
  readonly annotations: Readonly<{ readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean }>;
  /** The tool's MCP Apps metadata (`_meta.ui`, SEP-1865), or null when it has none. */
  readonly ui: McpToolUi | null;
}

/**
 * A tool's `_meta.ui` (MCP Apps, SEP-1865 / ext-apps 2.0 `McpUiToolMeta`; the legacy `_meta["ui/resourceUri"]`
 * too). `csp`, `permissions`, `domain` and `prefersBorder` belong to the resource: `readMcpResource(...).meta`.
 */
export interface McpToolUi {
  /** The view's `ui://` resource (anything else is dropped: null). */
  readonly resourceUri: string | null;
  /** Who may call it; default both. Without "model" it stays out of the model's snapshot; without "app" apps cannot call it. */
  readonly visibility: ReadonlyArray<'model' | 'app'>;
}

/** A `ui://` resource as `readMcpResource` gives it (the spec's MIME type is `text/html;profile=mcp-app`). */
export interface McpUiResource {
  readonly uri: string;
  readonly mimeType: string | null;
  /** The HTML (a base64 `blob` is decoded as UTF-8); at most 2 MiB (2097152 bytes) of UTF-8. */
  readonly text: string;
  /** The content's `_meta.ui` (ext-apps 2.0 `McpUiResourceMeta`), known keys only; `{}` when none. */
  readonly meta: Readonly<{
    csp?: Readonly<{ connectDomains?: readonly string[]; resourceDomains?: readonly string[]; frameDomains?: readonly string[]; baseUriDomains?: readonly string[] }>;
    permissions?: Readonly<{ camera?: {}; microphone?: {}; geolocation?: {}; clipboardWrite?: {} }>;
    domain?: string;
    prefersBorder?: boolean;
  }>;
}

/** An MCP `CallToolResult` as the server sent it (deep-frozen copy). */
export interface McpCallToolResult {
  readonly content: ReadonlyArray<Readonly<{ type: string; [key: string]: JsonValue }>>;
  readonly structuredContent?: Readonly<JsonObject>;
  readonly _meta?: Readonly<JsonObject>;
  readonly isError?: boolean;
}

/** What `callToolFromApp` takes: the entry name, the server's own tool name, its arguments, the card's signal. */
export interface McpAppCallRequest {
  server: string;
  name: string;
  arguments?: JsonObject;
  signal?: AbortSignal;
}

/** The app call that runs (`getMcpAppCall()`), with its execution's pending confirmation or elicitation. */
export interface McpAppCall {
  /** `app_…`: its key in getMcpProgress() and getMcpCallResult(). */
  readonly callId: string;
  readonly server: string;
  readonly tool: string;
  /** `mcp__<server>__<tool>`, what the interrupt's `tool` names. */
  readonly name: string;
  readonly arguments: Readonly<JsonObject>;
  /** The page listed it in `readOnly` (no confirmation). */
  readonly readOnly: boolean;
  readonly pendingInterrupt: Readonly<Interrupt> | Readonly<Elicitation> | null;
}

/**
 * The latest `notifications/progress` of a running MCP call (every tools/call sends a progress token). `total`
 * and `message` only when the server sent them. Kept while the call runs; dropped when it ends (answer, failure,
 * stop, deadline); a notification after that is never published. Progress never extends the deadline.
 */
export interface McpProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** The progress of every running MCP call, keyed by its toolCallId (the `callId` of the tool-call block). */
export type McpProgressByCall = Readonly<Record<string, McpProgress>>;

/** The MCP members of a controller created with `mcpServers`. */
export interface McpControllerMembers {
  getMcpServers(): readonly McpServerStatus[];
  subscribeMcp(listener: (servers: readonly McpServerStatus[]) => void): () => void;
  /** The progress of the running MCP calls by toolCallId (frozen; a new object after each change; `{}` when none). */
  getMcpProgress(): McpProgressByCall;
  /** Called with the whole progress object on every change (a call's entry added, updated or dropped). */
  subscribeMcpProgress(listener: (progress: McpProgressByCall) => void): () => void;
  /**
   * `resources/read` of a `ui://` resource through the server's client: cached per server and URI until the
   * server's connection is replaced. AGENT_INVALID_INPUT (unknown server, not `ui://`), AGENT_MCP_RESOURCE_TOO_LARGE
   * (over 2 MiB of text; `details: { server, uri, bytes, limit }`), AGENT_MCP_RESOURCE_FAILED (`details: { server,
   * uri, reason }`: `not-connected`, `refused`, `empty`, `aborted`, or the transport's reason).
   */
  readMcpResource(server: string, uri: string, options?: { signal?: AbortSignal }): Promise<McpUiResource>;
  /** The raw CallToolResult of an MCP call of this page session (the last 50); null when unknown, and after a reload. */
  getMcpCallResult(toolCallId: string): McpCallToolResult | null;
  /**
   * An MCP App's own tool call, under the runtime's rules. While a turn runs, inside that turn's execution
   * (`callToolInTurn`: its snapshot, confirmation slot, maxToolCalls, deadline and cancellation; taken before its
   * next model call); otherwise in a bounded execution of its own (the controller's limits and tool interceptors,
   * its deadline) whose only step is this call. Either way: arguments checked against the tool's schema,
   * confirmation unless the page listed it in `readOnly` (`getMcpAppCall().pendingInterrupt`, answered with
   * `respondMcpAppCall`). Resolves with the raw CallToolResult, or when the runtime did not run it with its error
   * result (`[rejected] `, `[invalid arguments] `, `[not run] ` text, `isError: true`). Rejects with
   * AGENT_INVALID_INPUT (unknown server or tool, not callable by apps), AGENT_BUSY (another app call runs, a
   * conversation loads, the turn is ending; `details.reason` `app-call` / `loading` / `settled`), and as a turn
   * would (AGENT_EXECUTION_TIMEOUT, AGENT_LIMIT_EXCEEDED, AGENT_TOOL_FAILED, …). Nothing enters the conversation;
   * while one runs in its own execution the turn methods reject with AGENT_BUSY and `abort()` cancels it.
   */
  callToolFromApp(request: McpAppCallRequest): Promise<McpCallToolResult>;
  /** The app call that runs, or null. */
  getMcpAppCall(): McpAppCall | null;
  subscribeMcpAppCall(listener: (call: McpAppCall | null) => void): () => void;
  /** Answers the app call's pending interrupt, as `AgentExecution.respond` (confirmation value or ElicitationAnswer). */
  respondMcpAppCall(response: { interruptId: string; value: InterruptValue | ElicitationAnswer }): void;
  describeMcpTool(name: string): McpToolInfo | null;
  /** Replaces the servers (validated like the option); their tools change from the next turn. */
  setMcpServers(servers: McpServerOptions[]): void;
  /** Completes a server's OAuth flow with the code from the redirect URL; resolves once it was listed again. */
  finishMcpAuth(name: string, code: string): Promise<void>;
}

/** MCP servers as tools for `DefaultAgentRuntime.start({ tools })` (`await createMcpToolSource(servers)`). */
export interface McpToolSource {
  /** Waits for pending listings (at most 5 s), then the tools the runtime's validator accepts. */
  tools(): Promise<AnyAgentTool[]>;
  servers(): readonly McpServerStatus[];
  subscribe(listener: (servers: readonly McpServerStatus[]) => void): () => void;
  describe(name: string): McpToolInfo | null;
  /** As `readMcpResource` of a controller. */
  readResource(server: string, uri: string, options?: { signal?: AbortSignal }): Promise<McpUiResource>;
  /** As `getMcpCallResult` of a controller. */
  callResult(toolCallId: string): McpCallToolResult | null;
  /** As `getMcpProgress()` of a controller, for the calls of the tools this source gave. */
  progress(): McpProgressByCall;
  subscribeProgress(listener: (progress: McpProgressByCall) => void): () => void;
  close(): void;
}

export declare function createMcpToolSource(servers: McpServerOptions[], options?: { maxToolResultCharacters?: number }): Promise<McpToolSource>;

export interface ControllerOptions {
  /** Remote MCP servers whose tools join the registry (see McpServerOptions); adds McpControllerMembers. */
  mcpServers?: McpServerOptions[];
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
  /** The sizes `send` checks attached files and the conversation against (README "Attachments"). */
  attachments?: AttachmentLimits;
}

/** Sizes in bytes, each a safe positive integer; absent keys keep their defaults. */
export interface AttachmentLimits {
  /** One file: a PDF's or image's decoded bytes, a text file's UTF-8 bytes (default 3145728, 3 MiB). */
  maxFileBytes?: number;
  /** The files of one message together, counted the same way (default 4194304, 4 MiB). */
  maxMessageBytes?: number;
  /** The JSON text of `{ messages, modelState }` with the new message (default 16777216, 16 MiB). */
  maxConversationBytes?: number;
}

export interface ToolInspection {
  /** `current-execution` while a turn runs (its frozen snapshot), else `current-registry`. */
  source: InspectionSource;
  snapshot: {
    revision: number;
    /** `mcp`: the server and tool of an MCP tool (controllers created with `mcpServers`). */
    tools: ReadonlyArray<Readonly<{ name: string; description: string; inputSchema: JsonObject; readOnly: boolean; requireConfirmation: boolean; validateInput: boolean; mcp?: Readonly<{ server: string; tool: string }> }>>;
  };
}

export declare class AgentController {
  private constructor();
  /** Listener gets coalesced snapshots (at most one per microtask); returns the unsubscribe function. */
  subscribe(listener: (state: AgentState) => void): () => void;
  getState(): AgentState;
  /**
   * Runs one turn; resolves with the outcome, rejects with an AgentError (also in `state.error`). Attached files are
   * checked first (AGENT_ATTACHMENT_TYPE, AGENT_ATTACHMENT_INVALID, AGENT_ATTACHMENT_TOO_LARGE, AGENT_MESSAGE_TOO_LARGE,
   * AGENT_CONVERSATION_TOO_LARGE): a refusal sends and adds nothing.
   */
  send(input: UserInput): Promise<Outcome>;
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
  editLastMessage(input: UserInput): Promise<Outcome>;
  /** Same shape as `runtime` of createAgentController; applies from the next turn (a running turn keeps its own). */
  setRuntimeOptions(runtime: ControllerOptions['runtime']): void;
  /** Cancels the running turn (nothing of it is saved); true if one was cancelled. */
  abort(): boolean;
  approveTool(): void;
  rejectTool(reason?: string): void;
  /** Answers `state.pendingElicitation`; AGENT_NO_PENDING_INTERRUPT when none is pending. */
  answerElicitation(answer: ElicitationAnswer | 'decline' | 'cancel'): void;
  /**
   * `AgentExecution.callTool` on the running turn's execution (what `callToolFromApp` uses during a turn). Its
   * confirmation is `state.pendingConfirmation` with the call's own `callId` (in no message). AGENT_INVALID_INPUT
   * when no turn runs.
   */
  callToolInTurn(call: HostToolCall): Promise<Readonly<ToolCallResult>>;
  /** Answers the running turn's pending interrupt by id, as `AgentExecution.respond`. */
  respond(response: { interruptId: string; value: InterruptValue | ElicitationAnswer }): void;
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

export declare function createAgentController(options: ControllerOptions & { mcpServers: McpServerOptions[] }): AgentController & McpControllerMembers;
export declare function createAgentController(options: ControllerOptions): AgentController;
