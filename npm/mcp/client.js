//! The MCP client chunk: one connection to one server over the Streamable HTTP transport, on the official SDK
//! (`Client` + `StreamableHTTPClientTransport`, which negotiate protocol versions 2025-11-25 and 2025-06-18 as
//! the specification says: the client offers the latest, accepts what the server answers if it is supported).
//! Built on its own with the SDK bundled in (`npm/mcp-client.js`, `npm/dist/patchbridge-mcp.js`,
//! widget/build.mjs) and imported only when a page sets `mcpServers` (./source.js), so a page without MCP
//! servers never downloads it. It hands plain data back: errors that must end a turn carry a `failure`
//! (`{ reason, message }`) that ./source.js turns into an AgentError (this chunk shares no class with the page).
import './zod-jitless.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';

import {
  CallToolResultSchema, ElicitRequestSchema, ErrorCode, McpError, ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { toToolCallResult } from './results.js';

/**
 * Longest wait for one tools/call answer without progress (the SDK's own default; a progress notification
 * restarts it). It bounds a silent server only: the whole call stays bounded by the execution's deadline, whose
 * AbortSignal the call carries and which no notification extends.
 */
export const CALL_TIMEOUT_MS = 60_000;
/** A progress message longer than this is cut (a server's text on the person's tool card). */
const MAX_PROGRESS_MESSAGE = 500;
/** Listing pages read at most (a server that pages forever is cut off here). */
const MAX_LIST_PAGES = 50;

/** A failure of the page's `headers` function (caught at the boundary, reported as such). */
class HeadersFailed extends Error {}

/**
 * A failure as the status and the turn report it: `reason` is one of `unreachable` (network or CORS: a browser
 * cannot tell them apart), `unauthorized` (401: needs sign-in), `http` (another status), `headers` (the page's
 * headers function threw), `timeout`, `protocol` (a malformed or refused answer, an unsupported version).
 * @param {unknown} error
 * @returns {{ reason: string, message: string }}
 */
export function failureOf(error) {
  if (error instanceof HeadersFailed) return { reason: 'headers', message: `the page's headers for this server failed: ${error.message}` };
  if (error instanceof UnauthorizedError) return { reason: 'unauthorized', message: 'needs sign-in (the server answered 401)' };
  if (error instanceof StreamableHTTPError) {
    if (error.code === 401) return { reason: 'unauthorized', message: 'needs sign-in (the server answered 401)' };
    if (typeof error.code === 'number' && error.code > 0) return { reason: 'http', message: `answered HTTP ${error.code}` };
    return { reason: 'protocol', message: error.message };
  }
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return { reason: 'timeout', message: 'did not answer in time' };
  if (error instanceof TypeError) return { reason: 'unreachable', message: 'could not be reached (network or CORS)' };
  return { reason: 'protocol', message: error instanceof Error ? error.message : String(error) };
}

/**
 * @param {Error & { failure?: { reason: string, message: string } }} error
 * @param {unknown} cause
 */
function withFailure(error, cause) {
  error.failure = failureOf(cause);
  return error;
}

/**
 * The page's header values for one request (an object, a Headers, or a function returning either).
 * @param {import('./options.js').McpServerEntry['headers']} provider
 * @returns {Promise<[string, string][]>}
 */
async function headerPairs(provider) {
  if (provider == null) return [];
  let value;
  try {
    value = typeof provider === 'function' ? await provider() : provider;
  } catch (error) {
    throw new HeadersFailed(error instanceof Error ? error.message : String(error));
  }
  if (value == null) return [];
  if (typeof value !== 'object') throw new HeadersFailed('it must give an object of header values');
  return value instanceof Headers ? [...value.entries()] : Object.entries(value).map(([k, v]) => [k, String(v)]);
}

/**
 * The fetch every request of `entry` goes through: the page's headers added per request.
 * @param {import('./options.js').McpServerEntry} entry
 * @returns {(url: string | URL, init?: RequestInit) => Promise<Response>}
 */
function fetchFor(entry) {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [key, value] of await headerPairs(entry.headers)) headers.set(key, value);
    return fetch(url, { ...init, headers });
  };
}

/** @param {import('./options.js').McpServerEntry} entry */
function transportFor(entry) {
  return new StreamableHTTPClientTransport(new URL(entry.url), {
    fetch: fetchFor(entry), authProvider: /** @type {any} */ (entry.auth ?? undefined),
  });
}

/**
 * Completes the MCP authorization flow of `entry` with the code the authorization server sent to the page's
 * redirect URL (the SDK exchanges it, with the PKCE verifier, and saves the tokens through the page's `auth`
 * provider). The server is then connected again by the caller.
 * @param {import('./options.js').McpServerEntry} entry
 * @param {string} code
 */
export async function finishAuth(entry, code) {
  try {
    await transportFor(entry).finishAuth(code);
  } catch (error) {
    throw withFailure(new Error('authorization failed'), error);
  }
}

/**
 * Connects to one server (initialize, then the tool listing is up to the caller).
 * @param {import('./options.js').McpServerEntry} entry
 * @param {{ onToolsChanged: () => void, signal?: AbortSignal, timeoutMs: number }} options
 */
export async function connect(entry, { onToolsChanged, signal, timeoutMs }) {
  const transport = transportFor(entry);
  // The SDK checks a tool's structuredContent against its outputSchema. Its default validator (Ajv) compiles
  // schemas with `new Function`, which the widget's strict CSP (no 'unsafe-eval') refuses; @cfworker/json-schema
  // (the SDK's own eval-free provider) interprets them instead.
  const client = new Client({ name: 'patchbridge-agent', version: '0.1.0' }, {
    capabilities: { elicitation: { form: {}, url: {} } },
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { onToolsChanged(); });
  /** @type {((request: any) => Promise<any>)[]} the `elicit` of each tools/call in flight, newest last */
  const asking = [];
  // A server's question during a call goes to the person through the runtime (an elicitation interrupt of the
  // call's execution). Without a call in flight, or once the execution ended, the answer is decline / cancel.
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const ask = asking.at(-1);
    if (!ask) return { action: 'decline' };
    const params = /** @type {any} */ (request.params);
    const mode = params.mode === 'url' ? 'url' : 'form';
    /** @type {Record<string, unknown>} */
    const question = { mode, message: String(params.message ?? ''), source: entry.name };
    if (mode === 'form') question.requestedSchema = params.requestedSchema;
    else { question.url = params.url; if (typeof params.elicitationId === 'string') question.elicitationId = params.elicitationId; }
    try {
      const answer = await ask(question);
      return answer.action === 'accept' ? { action: 'accept', content: { ...(answer.content ?? {}) } } : { action: answer.action };
    } catch {
      return { action: 'cancel' };
    }
  });
  // Errors of the background SSE stream (a server without GET support answers 405) are not the turn's.
  client.onerror = () => {};
  try {
    await client.connect(transport, { signal, timeout: timeoutMs });
  } catch (error) {
    client.close().catch(() => {});
    throw withFailure(new Error('connect failed'), error);
  }

  return {
    protocolVersion: transport.protocolVersion ?? null,

    /** Every tool the server lists (all pages). */
    async listTools() {
      /** @type {any[]} */
      const tools = [];
      /** @type {string | undefined} */
      let cursor;
      try {
        for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
          const answer = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
          tools.push(...answer.tools);
          cursor = answer.nextCursor;
          if (cursor === undefined) break;
        }
      } catch (error) {
        throw withFailure(new Error('tools/list failed'), error);
      }
      return tools;
    },

    /**
     * One tools/call. A JSON-RPC error the server answers (unknown tool, invalid params, its own failure) is an
     * error result the model sees; a transport failure, a malformed answer or a timeout throws with `failure`.
     * The execution's signal aborts the HTTP request and the SDK sends `notifications/cancelled`.
     *
     * Every call sends a progress token (the SDK's `onprogress`): the server's `notifications/progress` for it
     * reach `onProgress` as `{ progress, total?, message? }` (numbers checked, the message cut), never once the
     * call ended or its signal aborted. `onResult` gets the raw CallToolResult the ToolCallResult was made of.
     * @param {string} tool the server's own tool name
     * @param {Record<string, unknown>} args
     * @param {{ callId: string, signal: AbortSignal, maxCharacters: number, elicit?: (request: any) => Promise<any>,
     *   onProgress?: (progress: { progress: number, total?: number, message?: string }) => void,
     *   onResult?: (raw: any) => void }} call
     */
    async call(tool, args, { callId, signal, maxCharacters, elicit, onProgress, onResult }) {
      let result;
      let ended = false;
      /** @param {any} p */
      const onprogress = (p) => {
        if (ended || signal.aborted || !onProgress || typeof p?.progress !== 'number' || !Number.isFinite(p.progress)) return;
        /** @type {{ progress: number, total?: number, message?: string }} */
        const update = { progress: p.progress };
        if (typeof p.total === 'number' && Number.isFinite(p.total)) update.total = p.total;
        if (typeof p.message === 'string') update.message = p.message.slice(0, MAX_PROGRESS_MESSAGE);
        try { onProgress(update); } catch { /* a progress listener's failure is not the call's */ }
      };
      if (elicit) asking.push(elicit);
      try {
        result = await client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, CallToolResultSchema, {
          signal, timeout: CALL_TIMEOUT_MS, resetTimeoutOnProgress: true, onprogress,
        });
      } catch (error) {
        if (signal.aborted) throw error;
        if (error instanceof McpError && error.code !== ErrorCode.RequestTimeout && error.code !== ErrorCode.ConnectionClosed) {
          const refused = {
            content: [{ type: 'text', text: `The MCP server "${entry.name}" refused the call of ${tool}: ${error.message}` }],
            isError: true,
          };
          onResult?.(refused);
          return toToolCallResult(callId, refused, maxCharacters);
        }
        throw withFailure(new Error(`tools/call ${tool} failed`), error);
      } finally {
        ended = true;
        if (elicit) asking.splice(asking.lastIndexOf(elicit), 1);
      }
      onResult?.(result);
      return toToolCallResult(callId, result, maxCharacters);
    },

    /**
     * One resources/read (the caller bounds and caches it). A JSON-RPC error the server answers throws with
     * `failure.reason` `refused`; a transport failure, a malformed answer or a timeout as for a call.
     * @param {string} uri
     */
    async readResource(uri) {
      try {
        return await client.readResource({ uri }, { timeout: timeoutMs });
      } catch (error) {
        if (error instanceof McpError && error.code !== ErrorCode.RequestTimeout && error.code !== ErrorCode.ConnectionClosed) {
          const refused = /** @type {Error & { failure?: { reason: string, message: string } }} */ (new Error('resources/read refused'));
          refused.failure = { reason: 'refused', message: `the server refused the read: ${error.message}` };
          throw refused;
        }
        throw withFailure(new Error('resources/read failed'), error);
      }
    },

    /** Ends the session (DELETE where the server keeps one) and the connection. */
    async close() {
      try { await transport.terminateSession(); } catch { /* a server without sessions refuses DELETE */ }
      await client.close().catch(() => {});
    },
  };
}
