// The host side of one app's JSON-RPC 2.0 channel over postMessage (SEP-1865 "Transport"), through the sandbox
// proxy: messages are posted to the proxy's window with the sandbox origin as target, and a message is taken
// only when its source is that window and its origin the sandbox origin (the caller checks both before
// `receive`). Requests from the app go to `onRequest` (its result or an error `{ code, message }` answers);
// notifications to `onNotification`; the host's own requests get their answer back through `request`.
//
// Containment: more than FLOOD_MESSAGES messages within FLOOD_WINDOW_MS, or more than MAX_PENDING requests
// unanswered at once, calls `onFlood` (the host then stops the app). Nothing here throws at the caller: a
// handler that throws answers the app with an internal error.

/** Messages an app may send within FLOOD_WINDOW_MS. */
export const FLOOD_MESSAGES = 100;
export const FLOOD_WINDOW_MS = 1000;
/** Requests of the app the host may be working on at once (tool calls wait for a person). */
export const MAX_PENDING = 16;

/** JSON-RPC error codes the host answers with. */
export const RPC = Object.freeze({ METHOD_NOT_FOUND: -32601, INVALID_PARAMS: -32602, INTERNAL: -32603, INVALID_REQUEST: -32600 });

export class AppChannel {
  #next = 1;
  /** @type {Map<number, { resolve: (value: any) => void, reject: (error: any) => void }>} */
  #waiting = new Map();
  #pending = 0;
  /** @type {number[]} arrival times within the flood window */
  #arrivals = [];
  #closed = false;

  /**
   * @param {() => Window | null} target the proxy's window
   * @param {string} origin the sandbox origin
   * @param {{ onRequest: (method: string, params: any) => Promise<any>, onNotification: (method: string, params: any) => void,
   *           onFlood: () => void }} handlers
   */
  constructor(target, origin, handlers) {
    this.target = target;
    this.origin = origin;
    this.handlers = handlers;
  }

  /** @param {object} message */
  post(message) {
    if (this.#closed) return;
    try { this.target()?.postMessage({ jsonrpc: '2.0', ...message }, this.origin); } catch { /* the frame is gone */ }
  }

  /** @param {string} method @param {object} [params] */
  notify(method, params = {}) { this.post({ method, params }); }

  /**
   * A request of the host; resolves with the result, rejects with the error (or when the channel closes).
   * @param {string} method
   * @param {object} [params]
   */
  request(method, params = {}) {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.post({ id, method, params });
    });
  }

  /** A message from the app (source and origin already checked). @param {any} data */
  receive(data) {
    if (this.#closed || !data || typeof data !== 'object' || data.jsonrpc !== '2.0') return;
    const now = performance.now();
    this.#arrivals.push(now);
    while (this.#arrivals.length && now - this.#arrivals[0] > FLOOD_WINDOW_MS) this.#arrivals.shift();
    if (this.#arrivals.length > FLOOD_MESSAGES) { this.handlers.onFlood(); return; }
    const method = typeof data.method === 'string' ? data.method : null;
    const hasId = typeof data.id === 'string' || typeof data.id === 'number';
    if (method && hasId) { void this.#answer(data.id, method, data.params); return; }
    if (method) {
      try { this.handlers.onNotification(method, data.params); } catch (error) { console.error('patchbridge-agent: an MCP App notification failed:', error); }
      return;
    }
    if (hasId && typeof data.id === 'number') {
      const waiter = this.#waiting.get(data.id);
      if (!waiter) return;
      this.#waiting.delete(data.id);
      if (data.error) waiter.reject(data.error);
      else waiter.resolve(data.result);
    }
  }

  /**
   * @param {string | number} id
   * @param {string} method
   * @param {unknown} params
   */
  async #answer(id, method, params) {
    if (this.#pending >= MAX_PENDING) { this.handlers.onFlood(); return; }
    this.#pending += 1;
    try {
      const result = await this.handlers.onRequest(method, params ?? {});
      this.post({ id, result: result ?? {} });
    } catch (error) {
      const rpc = /** @type {any} */ (error);
      const code = typeof rpc?.rpcCode === 'number' ? rpc.rpcCode : RPC.INTERNAL;
      this.post({ id, error: { code, message: String(rpc?.message ?? rpc) } });
    } finally {
      this.#pending -= 1;
    }
  }

  /** No more messages either way; the host's open requests reject. */
  close() {
    this.#closed = true;
    for (const waiter of this.#waiting.values()) waiter.reject(new Error('closed'));
    this.#waiting.clear();
  }
}

/**
 * An error the channel answers with its JSON-RPC code.
 * @param {number} code
 * @param {string} message
 */
export function rpcError(code, message) {
  return Object.assign(new Error(message), { rpcCode: code });
}
