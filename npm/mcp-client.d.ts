// Declarations of the MCP client chunk (built from npm/mcp/chunk.js with the SDK bundled in): internal to the
// package, imported on demand by index.js and the widget. Its public face is in index.d.ts.
export declare function attachMcp(controller: unknown, entries: readonly unknown[], options: { AgentError: new (code: any, message: string, options?: { details?: unknown, cause?: unknown }) => Error, maxCharacters: () => number, Runtime?: unknown, defaultLimits?: object, runtimeOptions?: () => unknown, emit?: (kind: 'progress' | 'appCall', value: unknown) => void }): { source: any, apps: any, members: Record<string, Function>, close(): void };
export declare function withMcpServers(controller: any, servers: unknown, options: { load: () => Promise<any>, AgentError: new (code: any, message: string, options?: { details?: unknown, cause?: unknown }) => Error, limits?: { maxToolResultCharacters?: number }, defaultMaxCharacters: number, Runtime?: unknown, defaultLimits?: object, runtime?: unknown }): any;
export declare function checkMcpServers(servers: unknown, AgentError: new (code: any, message: string) => Error, what?: string): readonly any[];
export declare class McpToolSource {
  constructor(entries: readonly unknown[], options: { AgentError: new (code: any, message: string, options?: { details?: unknown, cause?: unknown }) => Error, maxCharacters: () => number, onTools?: () => void });
  servers(): readonly any[];
  subscribe(listener: (servers: readonly any[]) => void): () => void;
  waiting(timeoutMs?: number): Promise<void> | null;
  definitions(): any[];
  describe(name: string): any;
  readResource(server: string, uri: string, options?: { signal?: AbortSignal }): Promise<any>;
  callResult(callId: string): any;
  appDefinition(server: string, tool: string): { definition: any, name: string, readOnly: boolean };
  progress(): Readonly<Record<string, any>>;
  subscribeProgress(listener: (progress: Readonly<Record<string, any>>) => void): () => void;
  skip(name: string, reason: string): void;
  close(): void;
}
export declare const LISTING_WAIT_MS: number;
export declare const TOOLS_CACHE_MS: number;
export declare const RETRY_AFTER_MS: number;
export declare const MCP_APP_MIME_TYPE: 'text/html;profile=mcp-app';
export declare const MCP_RESOURCE_MAX_BYTES: number;
export declare const MCP_CALL_RESULTS_KEPT: number;
export declare class McpAppCalls {
  constructor(source: McpToolSource, options: { AgentError: unknown, Runtime: unknown, runtimeOptions: () => unknown, controller: unknown });
  current(): any;
  running(): boolean;
  subscribe(listener: (call: any) => void): () => void;
  cancel(): boolean;
  respond(response: unknown): void;
  call(request: unknown): Promise<any>;
}
export declare function toToolCallResult(callId: string, result: unknown, maxCharacters: number): { toolCallId: string, content: string, isError: boolean };
