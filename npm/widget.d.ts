// Type declarations of `@patchbridge/agent/widget`: the <patchbridge-agent> custom element (widget/src/).
// Importing the module defines the element once where there is a DOM; the static script
// `@patchbridge/agent/patchbridge-agent.js` does the same for pages without a build step (these declarations
// describe both). Without a DOM (server-side rendering) importing is safe, defines nothing, and
// `PatchBridgeAgentElement` is undefined.

import type { AgentController, AgentError, AgentModel, AnyAgentTool, ConversationInfo, Interrupt, McpServerOptions, Outcome, RuntimeOptions, Limits } from './index.js';

/** `runtimeOptions`: the contract's shape; `limits` is a partial override of the factory defaults. */
export type WidgetRuntimeOptions = Partial<Omit<RuntimeOptions<Partial<Limits>>, 'limits'>> & { limits?: Partial<Limits> };

/** Event names (all bubble and are composed, so they cross shadow roots). */
export declare const EVENTS: Readonly<{
  ready: 'patchbridge-ready';
  outcome: 'patchbridge-outcome';
  error: 'patchbridge-error';
  confirmation: 'patchbridge-confirmation';
  conversation: 'patchbridge-conversation';
  unauthorized: 'patchbridge-unauthorized';
  feedback: 'patchbridge-feedback';
  viewError: 'patchbridge-view-error';
}>;

/** Why an MCP App fell back to the generic tool card (`patchbridge-app-error`). */
export type McpAppErrorCode = 'APP_NO_SANDBOX' | 'APP_SANDBOX_SAME_ORIGIN' | 'APP_RESOURCE_FAILED' | 'APP_RESOURCE_INVALID'
  | 'APP_INIT_TIMEOUT' | 'APP_FLOOD' | 'APP_RUNAWAY_SIZE' | 'APP_HOST_UNAVAILABLE';

/** What a custom tool-card view is drawn from (called again when `status` or `result` changes). */
export interface ToolCardView {
  name: string;
  callId: string;
  arguments: Record<string, unknown>;
  status: 'streaming' | 'waiting' | 'running' | 'done' | 'error' | 'rejected' | 'not-run' | 'invalid';
  result: { content: string; isError: boolean } | null;
}
/** What a custom confirmation view is drawn from. */
export interface ToolConfirmationView {
  name: string;
  callId: string;
  arguments: Record<string, unknown>;
  description: string | undefined;
}
/** Page views per tool name (`'*'`: the fallback). A function is a card view. */
export type ToolViews = Record<string, ((call: ToolCardView) => Node) | {
  card?: (call: ToolCardView) => Node;
  confirmation?: (call: ToolConfirmationView) => Node;
}>;

export interface PatchBridgeEventMap {
  'patchbridge-ready': CustomEvent<{ controller: AgentController }>;
  'patchbridge-outcome': CustomEvent<{ outcome: Outcome; conversation: ConversationInfo | null }>;
  'patchbridge-error': CustomEvent<{ error: AgentError }>;
  'patchbridge-confirmation': CustomEvent<{ pendingConfirmation: Interrupt }>;
  'patchbridge-conversation': CustomEvent<{ conversation: ConversationInfo | null }>;
  /** The relay answered 401; call `waitUntil` during dispatch with a promise settled once credentials are fresh. */
  'patchbridge-unauthorized': CustomEvent<{ error: AgentError; waitUntil(promise: Promise<unknown>): void }>;
  /** Thumbs up / down on an answer (only with the `feedback` attribute); `null` when the choice was cleared. */
  /** A custom tool view threw or returned no Node; the generic view is shown instead. */
  'patchbridge-view-error': CustomEvent<{ tool: string; view: 'card' | 'confirmation'; error: unknown }>;
  'patchbridge-feedback': CustomEvent<{ messageId: string; value: 'up' | 'down' | null; conversation: { id: string; revision: number } | null }>;
  /** An MCP App could not show (or stopped showing) its view; its card fell back to the generic one with a note. */
  'patchbridge-app-error': CustomEvent<{ code: McpAppErrorCode; tool?: string; server?: string; callId?: string; message: string }>;
}

/**
 * The element's attributes, for typing it in JSX (React 19: `@patchbridge/agent/react`; Preact, Solid, Vue and
 * Svelte: README.md of the package shows the declaration per framework). Properties such as `tools` and `headers`
 * are set on the element itself (a ref), not as attributes.
 */
export interface PatchBridgeAgentAttributes {
  /** The relay's base URL (`{endpoint}/model`, `{endpoint}/conversations`). */
  endpoint?: string;
  /** Open this stored conversation. */
  conversation?: string;
  /** `en` or `zh` (`zh-CN`, `zh-TW`, … map to `zh`); absent: the browser's languages decide. */
  lang?: string;
  theme?: 'auto' | 'light' | 'dark' | 'inherit';
  /** Distinguishes several widgets on one origin in localStorage. */
  'storage-key'?: string;
}

/**
 * `<patchbridge-agent endpoint="/api" conversation="c_…" lang="zh" theme="dark">`.
 * Attributes: `endpoint` (the relay), `conversation` (open this stored conversation), `lang` (`en`, `zh`, or
 * absent for the browser's language), `theme` (`auto` (default), `light`, `dark`, `inherit`), `storage-key`,
 * `suggestions` (a JSON array of starter prompts), `feedback` (boolean: thumbs under answers).
 */
export declare class PatchBridgeAgentElement extends HTMLElement {
  /** The live controller (null until the runtime has loaded). */
  readonly controller: AgentController | null;
  /** Resolves with the controller once it exists. */
  whenReady(): Promise<AgentController>;
  /** Honoured when set before the bundle loads or before connecting; set later, it applies from the next turn. */
  runtimeOptions: WidgetRuntimeOptions | undefined;
  /** Page tools; a change applies from the next turn. */
  tools: AnyAgentTool[];
  /** Remote MCP servers whose tools join the agent's; the MCP client loads only once some are set. */
  mcpServers: McpServerOptions[];
  /** MCP Apps, a tool's own view in its card: 'off', 'on' (default) or the servers whose apps may render (`mcp-apps`). */
  mcpApps: 'off' | 'on' | string[];
  /** The sandbox proxy page's URL, on an origin other than the page's (`app-sandbox`; docs/adr/018). */
  appSandbox: string | null;
  /** A custom model instead of the relay's, or a relay model id; a change restarts the element's controller. */
  model: AgentModel | string | undefined;
  /** Relay request headers: an object or a (possibly async) function, called per request. */
  headers: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>) | undefined;
  /** Overrides of the built-in strings (keys of widget/src/strings.js). */
  strings: Record<string, string | ((...args: any[]) => string)> | undefined;
  /** Largest attachable image in bytes (default 3 MiB). */
  maxImageBytes: number;
  /** Largest attachable document (PDF or text file) in bytes (default 3 MiB). */
  maxFileBytes: number;
  /** Files (images and documents) one message may carry (default 5). */
  maxFiles: number;
  /** Starter prompts for the empty state, each sent on click; `null` falls back to the `suggestions` attribute. */
  suggestions: string[] | null;
  /** Custom tool views (generative UI), slotted from the light DOM so the page's styles apply. */
  toolViews: ToolViews | null;
  /** Sends a message as if typed (queued until the runtime is ready), with images and documents. */
  send(text: string, attachments?: Array<AttachedImage | AttachedDocument>): void;
  addEventListener<K extends keyof PatchBridgeEventMap>(type: K, listener: (event: PatchBridgeEventMap[K]) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

/** An image a message carries (`send`). */
export type AttachedImage = { type: 'image'; source: { type: 'base64'; mediaType: string; data: string } };
/** A document a message carries (`send`; docs/protocol.md): a PDF as base64, a text file as its UTF-8 text. */
export type AttachedDocument = {
  type: 'document';
  name: string;
  source:
    | { type: 'base64'; mediaType: 'application/pdf'; data: string }
    | { type: 'text'; mediaType: 'text/plain' | 'text/markdown' | 'text/csv' | 'application/json'; text: string };
};

/** Loads the WebAssembly runtime once (the element does this itself when it connects). */
export declare function loadRuntime(): Promise<unknown>;

declare global {
  interface HTMLElementTagNameMap {
    'patchbridge-agent': PatchBridgeAgentElement;
  }
}
