// Declarations of the MCP client chunk (built from npm/mcp/chunk.js with the SDK bundled in): internal to the
// package, imported on demand by index.js and the widget. Its public face is in index.d.ts.
export declare function attachMcp(controller: unknown, entries: readonly unknown[], options: { AgentError: new (code: any, message: string, options?: { details?: unknown, cause?: unknown }) => Error, maxCharacters: () => number }): { source: any, close(): void };
export declare function withMcpServers(controller: any, servers: unknown, options: { load: () => Promise<any>, AgentError: new (code: any, message: string, options?: { details?: unknown, cause?: unknown }) => Error, limits?: { maxToolResultCharacters?: number }, defaultMaxCharacters: number }): any;
export declare function checkMcpServers(servers: unknown, AgentError: new (code: any, message: string) => Error, what?: string): readonly any[];
export declare class McpToolSource {
  constructor(entries: readonly unknown[], options: { AgentError: new (code: any, message: string, options?: { details?: unknown, cause?: unknown }) => Error, maxCharacters: () => number, onTools?: () => void });
  servers(): readonly any[];
  subscribe(listener: (servers: readonly any[]) => void): () => void;
  waiting(timeoutMs?: number): Promise<void> | null;
  definitions(): any[];
  describe(name: string): any;
  skip(name: string, reason: string): void;
  close(): void;
}
export declare const LISTING_WAIT_MS: number;
export declare const TOOLS_CACHE_MS: number;
export declare const RETRY_AFTER_MS: number;
export declare function toToolCallResult(callId: string, result: unknown, maxCharacters: number): { toolCallId: string, content: string, isError: boolean };
