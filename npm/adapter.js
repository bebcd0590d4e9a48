// Host adapters used by the WebAssembly bindings (imported by the wasm-bindgen glue in pkg/ as "../adapter.js").
// Nothing here decides agent behaviour: these helpers only move values between JavaScript's world (async
// iterators, fetch, frozen objects) and the Rust core, which validates and decides everything.
//
// - Pump: drains a model's async iterable into a batch (one string plus lengths) that Rust takes at once, so the
//   hot path costs one copy into wasm memory and one promise per batch instead of one per event.
// - iterableFromRust: the reverse direction, a Rust event stream as an async iterable (interceptors' `next`).
// - toJson / parseFrozen: strict JSON conversion out of JavaScript, deep-frozen values into it.
// - relayStream / relayRequest: fetch + SSE framing for the relay protocol (docs/protocol.md §2, §6); status codes
//   and error bodies are handed to Rust unchanged.
// - defineMembers: the public methods and getters of the runtime's classes over their one `__call` export.
// - compileRegex / regexTest: tool schemas' `pattern`s as the page's own RegExp (JSON Schema patterns are ECMA-262).

import { AgentError } from './errors.js';

/** @typedef {import('./errors.js').AgentErrorCode} AgentErrorCode */
/** @typedef {import('./errors.js').LimitName} LimitName */

/**
 * Builds the error class instance for the Rust side (details arrive as JSON text).
 * @param {string} code one of the core's codes
 * @param {string} message
 * @param {string | null | undefined} limit
 * @param {string | null | undefined} detailsJson
 * @param {unknown} cause
 */
export function makeAgentError(code, message, limit, detailsJson, cause) {
  /** @type {{ limit?: LimitName; details?: unknown; cause?: unknown }} */
  const options = {};
  if (limit !== undefined && limit !== null) options.limit = /** @type {LimitName} */ (limit);
  if (detailsJson !== undefined && detailsJson !== null) options.details = parseFrozen(detailsJson);
  if (cause !== undefined && cause !== null) options.cause = cause;
  return new AgentError(/** @type {AgentErrorCode} */ (code), message, options);
}

/**
 * Describes a thrown value for Rust: `[code|null, message, limit|null, detailsJson|null]`.
 * @param {unknown} error
 * @returns {[string | null, string, string | null, string | null]}
 */
export function describeError(error) {
  if (error instanceof AgentError) {
    /** @type {string | null} */
    let details = null;
    try { details = error.details == null ? null : JSON.stringify(error.details); } catch { details = null; }
    return [error.code, String(error.message), error.limit ?? null, details];
  }
  if (error instanceof Error) return [null, `${error.name}: ${error.message}`, null, null];
  let text;
  try { text = String(error); } catch { text = 'non-printable thrown value'; }
  return [null, text, null, null];
}

/**
 * Freezes `value` and everything reachable through its own enumerable keys; returns it.
 * @template T
 * @param {T} value
 * @returns {T}
 */
export function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    const record = /** @type {Record<string, unknown>} */ (value);
    for (const key of Object.keys(record)) deepFreeze(record[key]);
  }
  return value;
}

/**
 * JSON text from Rust as a deep-frozen value (hook data, tool results, state snapshots).
 * @param {string} text
 * @returns {unknown}
 */
export function parseFrozen(text) {
  return freezeParsed(JSON.parse(text));
}

/**
 * deepFreeze for a value JSON.parse just made: nothing in it is frozen or shared yet, so the `isFrozen` checks
 * are skipped, and arrays are walked by index (`Object.keys` of an array allocates one string per element; the
 * execution result holds the whole history).
 * @param {unknown} value
 * @returns {unknown}
 */
function freezeParsed(value) {
  if (value !== null && typeof value === 'object') {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i += 1) freezeParsed(value[i]);
    } else {
      const record = /** @type {Record<string, unknown>} */ (value);
      const keys = Object.keys(record);
      for (let i = 0; i < keys.length; i += 1) freezeParsed(record[keys[i]]);
    }
    Object.freeze(value);
  }
  return value;
}

/**
 * JSON text from Rust as a fresh mutable value (requests handed to models and interceptors).
 * @param {string} text
 * @returns {unknown}
 */
export function parseJson(text) {
  return JSON.parse(text);
}

/**
 * @param {string} key
 * @param {unknown} value
 */
function strictReplacer(key, value) {
  switch (typeof value) {
    case 'undefined':
      throw new TypeError(`${key === '' ? 'value' : `"${key}"`} is undefined, which is not JSON`);
    case 'function': case 'symbol': case 'bigint':
      throw new TypeError(`"${key}" is a ${typeof value}, which is not JSON`);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`"${key}" is ${String(value)}, which is not JSON`);
      return value;
    default:
      return value;
  }
}

/**
 * Strict JSON text of a host value, or throws TypeError: `undefined` members, functions and non-finite numbers
 * are refused instead of being silently dropped, so Rust's exact-shape validation sees what the host returned.
 * @param {unknown} value
 * @returns {string | undefined} `undefined` only where JSON.stringify gives it (a bare symbol, say)
 */
export function toJson(value) {
  return JSON.stringify(value, strictReplacer);
}

/**
 * JSON text of a value a tool (or tool interceptor) returned, for Rust's exact-shape ToolCallResult check, or
 * `undefined` when it cannot be read. JSON.stringify alone would let loose values through (it unboxes String and
 * Boolean objects, calls toJSON, so a Date becomes a string, and skips symbol-keyed and non-enumerable
 * properties); here every own key is kept (a symbol as its description text) and a member that is not a JSON
 * primitive becomes `null`, which no field of a valid result accepts, so Rust rejects it with the field's name.
 * @param {unknown} value
 * @returns {string | undefined}
 */
export function toolResultJson(value) {
  return ownMembersJson(value, false);
}

/**
 * JSON text of an object's own members for Rust's exact-shape checks, or `undefined` when it cannot be read:
 * every own key is kept (a symbol as its description text) and a member that is not a JSON primitive (string,
 * boolean, finite number) becomes `null`, which none of the checked fields accepts, so Rust names the field.
 * With `skipUndefined`, an `undefined` member counts as not written. Anything but a plain object is strict JSON.
 * @param {unknown} value
 * @param {boolean} skipUndefined
 * @returns {string | undefined}
 */
function ownMembersJson(value, skipUndefined) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return tryToJson(value);
  try {
    /** @type {Record<string, unknown>} */
    const plain = {};
    const record = /** @type {Record<string | symbol, unknown>} */ (value);
    for (const key of Reflect.ownKeys(record)) {
      const member = record[key];
      if (member === undefined && skipUndefined) continue;
      const primitive = typeof member === 'string' || typeof member === 'boolean'
        || (typeof member === 'number' && Number.isFinite(member));
      plain[typeof key === 'symbol' ? String(key) : key] = primitive ? member : null;
    }
    return JSON.stringify(plain);
  } catch {
    return undefined;
  }
}

/**
 * Like toJson but returns `undefined` on failure (callers turn that into a typed error).
 * @param {unknown} value
 * @returns {string | undefined}
 */
export function tryToJson(value) {
  try { return toJson(value); } catch { return undefined; }
}

// Flushing a partially filled batch waits for the event loop to be idle (a macrotask), so a producer that yields
// synchronously-available events fills whole batches while a network stream is still delivered without delay.
// A full batch or a message-stop (nothing may follow it) is handed over at once.
/** Node's setImmediate where there is one (not in browsers). */
const nodeSetImmediate = /** @type {((fn: () => void) => unknown) | undefined} */ (
  /** @type {{ setImmediate?: unknown }} */ (globalThis).setImmediate);
/** @type {(fn: () => void) => void} */
const scheduleIdle = typeof nodeSetImmediate === 'function'
  ? (fn) => { nodeSetImmediate(fn); }
  : (() => {
    const channel = new MessageChannel();
    /** @type {Array<() => void>} */
    const queue = [];
    channel.port1.onmessage = () => { const fn = queue.shift(); if (fn) fn(); };
    return (/** @type {() => void} */ fn) => { queue.push(fn); channel.port2.postMessage(0); };
  })();

const BATCH = 512;        // events per batch handed to Rust when the producer is fast
const HIGH_WATER = 4096;  // the producer pauses above this many buffered events (backpressure)
/** Writes a taken batch's text as UTF-8 straight into wasm memory (`Pump.takenText`). */
const utf8 = new TextEncoder();

// The batch format shared with Rust (controller-wasm/src/core/batch.rs, where a test checks these values).
/** Numbers per event in a batch's meta: kind, block index, payload length in UTF-16 units. */
export const META_FIELDS = 3;
/** Payload kind: a stream event as JSON text. */
export const PAYLOAD_JSON = 0;
/** Payload kind: the raw text of a plain block-delta (the block index is the triple's second number). */
export const PAYLOAD_BLOCK_DELTA = 1;
/** `Pump.state()` once the batch is empty: more events may come. */
export const PUMP_OPEN = 0;
/** `Pump.state()`: the iterable finished normally. */
export const PUMP_ENDED = 1;
/** `Pump.state()`: the iterable threw (see `failure()`). */
export const PUMP_FAILED = 2;

/**
 * A block-delta whose `delta` is a string and `index` a valid block index, read as own data properties. Other keys
 * are ignored, as the protocol ignores unknown keys in events (docs/protocol.md, forward compatibility).
 * @param {{ index?: unknown; delta?: unknown }} value
 * @returns {value is { index: number; delta: string }}
 */
function isPlainDelta(value) {
  const index = /** @type {number} */ (value.index);
  return typeof value.delta === 'string' && Number.isInteger(index) && index >= 0 && index <= 0xffffffff
    && Object.hasOwn(value, 'index') && Object.hasOwn(value, 'delta');
}

const isHighSurrogate = (/** @type {number} */ code) => code >= 0xd800 && code <= 0xdbff;

/**
 * Drains an async (or sync) iterable into one batch for Rust: `text` (all payloads concatenated) plus `meta`,
 * META_FIELDS numbers per event: kind (PAYLOAD_JSON or PAYLOAD_BLOCK_DELTA), block index (block deltas) and the
 * payload's length in UTF-16 units. Block deltas — the hot path — are passed as their raw text, without
 * JSON.stringify (which costs more than everything else per event); every other value is JSON text that Rust
 * parses strictly. `raw` means the iterable yields JSON text already (the relay's SSE `data:` payloads).
 *
 * Rust calls `take()` (how many meta numbers the buffered batch has, 0 when empty), then at once, before any other
 * JS runs, `takenMeta(out)` and `takenText(out)` to copy the batch into its own memory; when empty it calls `state()`
 * and `wait()` (a promise settled when a batch is ready, the stream ended or failed); a new pump has nothing yet
 * (the iterator is always read asynchronously), so Rust starts with `wait()`. `failure()` reports a thrown value
 * after the buffer is drained; `stop()` abandons the iterator (its late results and exceptions are ignored) and
 * is not needed once `state()` reported the end or a failure.
 */
export class Pump {
  /**
   * @param {unknown} iterable an async (or sync) iterable of events, or of JSON text when `raw`
   * @param {boolean} raw
   */
  constructor(iterable, raw) {
    this.raw = raw;
    this.text = '';
    // The meta numbers live in one reused typed array (`count` of them are filled): a plain array grown by
    // `push` and copied into a fresh Uint32Array per batch showed in profiles of long streams. It starts with
    // room for a short model call's events (small enough to live in the JS heap) and doubles when needed.
    this.meta = new Uint32Array(5 * META_FIELDS);
    this.count = 0;
    /** The text of the batch `take()` moved aside, until `takenText` copies it. */
    this.taken = '';
    this.done = false;
    this.failed = false;
    /** @type {unknown} */
    this.error = undefined;
    this.stopped = false;
    /** @type {((value: void) => void) | null} */
    this.waiter = null;
    /** @type {((value: void) => void) | null} */
    this.resume = null;
    this.idleScheduled = false;
    /** @type {{ index: number; text: string } | null} */
    this.held = null;
    const source = /** @type {any} */ (iterable);
    /** @type {AsyncIterator<any> | Iterator<any>} */
    let iterator;
    if (source != null && typeof source[Symbol.asyncIterator] === 'function') {
      iterator = source[Symbol.asyncIterator]();
    } else if (source != null && typeof source[Symbol.iterator] === 'function' && typeof source !== 'string') {
      iterator = source[Symbol.iterator]();
    } else {
      throw new TypeError('model stream is not an async iterable');
    }
    this.iterator = iterator;
    this.run();
  }

  async run() {
    const it = this.iterator;
    try {
      for (;;) {
        const step = await it.next();
        if (this.stopped) return;
        if (step === null || typeof step !== 'object') throw new TypeError('iterator result is not an object');
        if (step.done) break;
        const value = step.value;
        // `last`: a message-stop ends the message, so the batch is complete and Rust should have it now.
        let last = false;
        if (this.raw) {
          this.text += value;
          this.push(PAYLOAD_JSON, 0, value.length);
          last = value.startsWith('{"type":"message-stop"');
        } else if (value !== null && typeof value === 'object' && value.type === 'block-delta' && isPlainDelta(value)) {
          this.pushDelta(value.index, value.delta);
        } else {
          this.releaseHeld();
          const json = JSON.stringify(value);
          if (json === undefined) throw new TypeError('model stream yielded a value that is not JSON');
          this.text += json;
          this.push(PAYLOAD_JSON, 0, json.length);
          last = value.type === 'message-stop';
        }
        const n = this.count;
        if (this.waiter !== null) {
          if (n >= BATCH * META_FIELDS || last) this.wake();
          else if (!this.idleScheduled) { this.idleScheduled = true; scheduleIdle(() => { this.idleScheduled = false; this.wake(); }); }
        }
        if (n >= HIGH_WATER * META_FIELDS) await /** @type {Promise<void>} */ (new Promise((resolve) => { this.resume = resolve; }));
        if (this.stopped) return;
      }
      this.releaseHeld();
      this.done = true;
    } catch (error) {
      if (this.stopped) return;
      this.failed = true;
      this.error = error;
    }
    this.wake();
  }

  /**
   * A model that slices text by JavaScript string length can cut a surrogate pair in two. A delta ending in a
   * high surrogate keeps it back and puts it in front of the next delta of the same block, so the pair travels
   * whole (split across two batches it would otherwise become two U+FFFD, or misalign the batch lengths).
   * @param {number} index
   * @param {string} delta
   */
  pushDelta(index, delta) {
    let text = delta;
    if (this.held !== null) {
      if (this.held.index === index) {
        text = this.held.text + text;
        this.held = null;
      } else {
        this.releaseHeld();
      }
    }
    if (text.length > 0 && isHighSurrogate(text.charCodeAt(text.length - 1))) {
      this.held = { index, text: text.slice(-1) };
      text = text.slice(0, -1);
      if (text.length === 0) return;
    }
    // A surrogate still unpaired inside the text becomes U+FFFD at the string crossing (one UTF-16 unit, so the
    // lengths stay aligned), as at any UTF-8 boundary.
    this.text += text;
    this.push(PAYLOAD_BLOCK_DELTA, index, text.length);
  }

  /**
   * Appends one event's meta numbers, growing the array when a slow consumer let more events accumulate.
   * @param {number} kind
   * @param {number} index
   * @param {number} length
   */
  push(kind, index, length) {
    let meta = this.meta;
    const n = this.count;
    if (n + META_FIELDS > meta.length) {
      const grown = new Uint32Array(meta.length * 2);
      grown.set(meta);
      this.meta = meta = grown;
    }
    meta[n] = kind;
    meta[n + 1] = index;
    meta[n + 2] = length;
    this.count = n + META_FIELDS;
  }

  /** A held high surrogate whose pair never came: sent alone, so Rust fails the stream on it. */
  releaseHeld() {
    const held = this.held;
    if (held === null) return;
    this.held = null;
    const json = JSON.stringify({ type: 'block-delta', index: held.index, delta: held.text });
    this.text += json;
    this.push(PAYLOAD_JSON, 0, json.length);
  }

  wake() {
    const waiter = this.waiter;
    if (waiter !== null) { this.waiter = null; waiter(); }
  }

  /**
   * Moves the buffered batch aside for `takenMeta` and `takenText`; returns how many meta numbers it has (0 when
   * nothing is buffered). The meta numbers stay in place: the caller copies them before any JS runs again
   * (resuming a paused producer only schedules it).
   * @returns {number}
   */
  take() {
    const n = this.count;
    if (n === 0) return 0;
    this.taken = this.text;
    this.text = '';
    this.count = 0;
    const resume = this.resume;
    if (resume !== null) { this.resume = null; resume(); }
    return n;
  }

  /**
   * Copies the taken batch's meta numbers into `out` (a view of wasm memory, as long as `take()` said).
   * @param {Uint32Array} out
   */
  takenMeta(out) {
    out.set(this.meta.subarray(0, out.length));
  }

  /**
   * Writes the taken batch's text as UTF-8 into `out` (a view of wasm memory with room for 3 bytes per UTF-16
   * unit, which any text fits) and returns the number of bytes written.
   * @param {Uint8Array} out
   * @returns {number}
   */
  takenText(out) {
    const text = this.taken;
    this.taken = '';
    return utf8.encodeInto(text, out).written;
  }

  /** PUMP_OPEN, PUMP_ENDED or PUMP_FAILED (see failure()). Only meaningful once take() returned 0. */
  state() {
    return this.failed ? PUMP_FAILED : this.done ? PUMP_ENDED : PUMP_OPEN;
  }

  failure() {
    return this.error;
  }

  /** @returns {Promise<void>} */
  wait() {
    return new Promise((resolve) => {
      if (this.count > 0 || this.done || this.failed) resolve();
      else this.waiter = resolve;
    });
  }

  stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.text = '';
    this.count = 0;
    const resume = this.resume;
    if (resume !== null) { this.resume = null; resume(); }
    const it = this.iterator;
    if (!this.done && !this.failed && typeof it.return === 'function') {
      try {
        const pending = /** @type {any} */ (it.return());
        if (pending && typeof pending.then === 'function') pending.then(undefined, () => {});
      } catch { /* a late exception of an abandoned stream is isolated by design */ }
    }
  }
}

/**
 * A Rust event stream as an async iterable of fresh event objects (the `next` given to model interceptors).
 * `handle.next()` resolves to JSON text or undefined at the end; `handle.close()` drops the Rust stream.
 * @param {{ next(): Promise<string | undefined>; close(): void }} handle a `RustEventStream`
 * @returns {AsyncIterableIterator<unknown>}
 */
export function iterableFromRust(handle) {
  let closed = false;
  const close = () => { if (!closed) { closed = true; handle.close(); } };
  /** @type {AsyncIterableIterator<unknown>} */
  const iterator = {
    [Symbol.asyncIterator]() { return iterator; },
    async next() {
      if (closed) return { done: true, value: undefined };
      let text;
      try { text = await handle.next(); } catch (error) { close(); throw error; }
      if (text === undefined) { close(); return { done: true, value: undefined }; }
      return { done: false, value: JSON.parse(text) };
    },
    async return(/** @type {unknown} */ value) { close(); return { done: true, value }; },
  };
  return iterator;
}

/** @typedef {Record<string, string> | Headers} HeaderValues */

/**
 * The host's `headers` option for one request: an object, or a (possibly async) function returning one.
 * @param {HeaderValues | (() => HeaderValues | Promise<HeaderValues>) | null | undefined} provider
 * @returns {Promise<Record<string, string>>}
 */
async function resolveHeaders(provider) {
  if (provider == null) return {};
  const value = typeof provider === 'function' ? await provider() : provider;
  if (value == null) return {};
  if (typeof value !== 'object') throw new AgentError('AGENT_INVALID_OPTIONS', 'headers provider must return an object of header values');
  return value instanceof Headers ? Object.fromEntries(value.entries()) : { ...value };
}

/**
 * One JSON request to the relay. Resolves to `[status, bodyText]` for any HTTP status (Rust maps statuses and
 * error bodies to codes); rejects only when the request could not be made at all.
 * @param {string} method
 * @param {string} url
 * @param {Parameters<typeof resolveHeaders>[0]} headersProvider
 * @param {string | null | undefined} bodyText
 * @param {AbortSignal | null | undefined} signal
 * @returns {Promise<[number, string]>}
 */
export async function relayRequest(method, url, headersProvider, bodyText, signal) {
  const headers = await resolveHeaders(headersProvider);
  /** @type {Record<string, string>} */
  const requestHeaders = { accept: 'application/json', ...headers };
  /** @type {RequestInit} */
  const init = { method, headers: requestHeaders, signal: signal ?? undefined };
  if (bodyText !== undefined && bodyText !== null) {
    requestHeaders['content-type'] = 'application/json';
    init.body = bodyText;
  }
  const response = await fetch(url, init);
  return [response.status, await response.text()];
}

/**
 * POST {endpoint}/model and frame its text/event-stream body into JSON payloads. Resolves to
 * `[status, body]`: for 2xx `body` is an async iterable of `data:` payloads (JSON text, for a raw Pump); for any
 * other status it is the error body text.
 * @param {string} url
 * @param {Parameters<typeof resolveHeaders>[0]} headersProvider
 * @param {string} bodyText
 * @param {AbortSignal | null | undefined} signal
 * @param {string | null | undefined} [traceparent] the execution's W3C trace context (docs/protocol.md §7); a
 *   `traceparent` of the host's headers wins
 * @returns {Promise<[number, string | AsyncGenerator<string>]>}
 */
export async function relayStream(url, headersProvider, bodyText, signal, traceparent) {
  const headers = await resolveHeaders(headersProvider);
  /** @type {Record<string, string>} */
  const trace = traceparent ? { traceparent } : {};
  const response = await fetch(url, {
    method: 'POST',
    headers: { accept: 'text/event-stream', ...trace, ...headers, 'content-type': 'application/json' },
    body: bodyText,
    signal: signal ?? undefined,
  });
  if (response.status < 200 || response.status > 299) return [response.status, await response.text()];
  return [response.status, sseData(/** @type {ReadableStream<BufferSource>} */ (response.body))];
}

/**
 * The `data:` payloads of a text/event-stream body, one string per event.
 * @param {ReadableStream<BufferSource>} body
 * @returns {AsyncGenerator<string>}
 */
async function* sseData(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  /** @type {string[]} */
  let data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let start = 0;
      for (;;) {
        const nl = buffer.indexOf('\n', start);
        if (nl < 0) break;
        let line = buffer.slice(start, nl);
        start = nl + 1;
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length > 0) { yield data.join('\n'); data = []; }
        } else if (line.startsWith('data:')) {
          data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
        }
        // `event:`, `id:`, `retry:` and comments carry nothing the JSON payload does not (docs/protocol.md §3).
      }
      buffer = buffer.slice(start);
    }
    if (data.length > 0) yield data.join('\n');
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** A fresh AbortController (one per execution, mirrored from the core's signal). */
export function newAbortController() {
  return new AbortController();
}

let idCounter = 0;
/** A fresh id for executions and unnamed messages: crypto.randomUUID where available (secure contexts). */
export function newId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  idCounter += 1;
  return `${Date.now().toString(36)}-${idCounter.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * JSON text of a `limits` object for Rust, which names the offending key. Every own key is kept (a symbol as its
 * description text); an `undefined` member counts as not written (a partial override leaves it at the default,
 * a full one reports it missing); any other member that is not a primitive becomes `null`, which no limit
 * accepts. Plain JSON.stringify would unbox `new Number(5)` and call toJSON, passing loose values as integers.
 * @param {unknown} value
 * @returns {string | undefined}
 */
export function limitsJson(value) {
  return ownMembersJson(value, true);
}

/**
 * Observer call for the hot event (a block-delta) without a JSON round trip.
 * @param {(event: unknown) => unknown} observer
 * @param {number} index
 * @param {string} delta
 */
export function emitDelta(observer, index, delta) {
  observer(Object.freeze({ type: 'block-delta', index, delta }));
}

/**
 * Marks a promise handled and logs its rejection to console.error with `label` and `subject`.
 * @param {unknown} promise a thenable
 * @param {string} label
 * @param {unknown} subject
 */
export function logRejection(promise, label, subject) {
  Promise.resolve(promise).then(undefined, (error) => console.error(label, subject, error));
}

/**
 * Marks a promise as handled (it still rejects for whoever awaits it) and returns it.
 * @template {Promise<unknown>} P
 * @param {P} promise
 * @returns {P}
 */
export function quiet(promise) {
  promise.then(undefined, () => {});
  return promise;
}

/**
 * The request a custom model receives: a frozen object whose fields are materialised from Rust on first access
 * (one JSON parse for the whole request). A model that never reads the history does not pay for copying it.
 * @param {{ json(): string; free(): void }} handle a `RequestHandle`
 */
export function lazyRequest(handle) {
  /** @type {Record<string, unknown> | null} */
  let data = null;
  const load = () => {
    if (data === null) { data = /** @type {Record<string, unknown>} */ (parseFrozen(handle.json())); handle.free(); }
    return data;
  };
  return Object.freeze({
    get model() { return load().model; },
    get messages() { return load().messages; },
    get modelState() { return load().modelState; },
    get tools() { return load().tools; },
    get conversationId() { return load().conversationId; },
  });
}

/**
 * Calls a tool: `execute.call(object, args, { signal, callId })` with a fresh mutable copy of the arguments
 * (parsed from `argsJson`) and the frozen context. One crossing from Rust per tool call instead of four (parse,
 * context, argument array, apply); a throw propagates to Rust's `catch`.
 * @param {unknown} object the tool definition (`this` for execute)
 * @param {Function} execute
 * @param {string} argsJson
 * @param {AbortSignal} signal
 * @param {string} callId
 * @returns {unknown} whatever execute returned
 */
export function callTool(object, execute, argsJson, signal, callId) {
  return execute.call(object, JSON.parse(argsJson), toolContext(signal, callId));
}

/**
 * What `await` would assimilate: a promise, or an object or function with a callable `then`. A `then` getter
 * that throws counts as no `then`. One crossing instead of up to four checks from Rust.
 * @param {unknown} value
 * @returns {boolean}
 */
export function isThenable(value) {
  if (value instanceof Promise) return true;
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  try {
    return typeof (/** @type {{ then?: unknown }} */ (value)).then === 'function';
  } catch {
    return false;
  }
}

/**
 * A tool schema's `pattern` (or a checked `format`'s generated pattern) as the page's RegExp with flag `u`: JSON Schema defines
 * patterns as ECMA-262 regular expressions, which is this engine. Compiled once, when the tool is registered; the
 * Rust side keeps the returned object and matches with `regexTest`. A pattern the engine refuses gives its reason
 * (a string) instead, which refuses the tool.
 * @param {string} source
 * @returns {RegExp | string}
 */
export function compileRegex(source) {
  try {
    return new RegExp(source, 'u');
  } catch (error) {
    return String(error instanceof Error ? error.message : error);
  }
}

/**
 * Whether `text` matches `regex` anywhere (JSON Schema patterns are not anchored): one crossing per check. The
 * regex has neither `g` nor `y`, so `test` keeps no state between calls.
 * @param {RegExp} regex from `compileRegex`
 * @param {string} text
 * @returns {boolean}
 */
export function regexTest(regex, text) {
  return regex.test(text);
}

/**
 * A tool's context `{ signal, callId }` (frozen; the signal itself stays live).
 * @param {AbortSignal} signal
 * @param {string} callId
 */
function toolContext(signal, callId) {
  return Object.freeze({ signal, callId });
}

/**
 * Frozen data plus a live AbortSignal (which must stay unfrozen to be abortable).
 * @param {object} data
 * @param {AbortSignal} signal
 */
export function withSignal(data, signal) {
  return Object.freeze({ ...data, signal });
}

// Each class the wasm exports has one method, `__call(op, a, b)`, for all its public getters and methods: one wasm
// entry and one glue wrapper instead of one per member (docs/adr/002-json-text-across-the-boundary.md). The public
// members are defined on the glue's own classes (constructor, `free()` and `instanceof` stay the glue's) as that
// call with their index in the lists below, which is the operation code of controller-wasm/src/bindings/
// controller.rs and runtime.rs. `get x` is a getter, anything else a method.
const CONTROLLER_MEMBERS = ['subscribe', 'getState', 'send', 'retry', 'regenerate', 'editLastMessage',
  'setRuntimeOptions', 'abort', 'approveTool', 'rejectTool', 'registerTool', 'unregisterTool',
  'getToolInspectionSource', 'loadConversation', 'newConversation', 'listConversations', 'renameConversation',
  'deleteConversation', 'getModelState', 'destroy'];
const RUNTIME_MEMBERS = ['get limits', 'start'];
const EXECUTION_MEMBERS = ['get id', 'get result', 'get settled', 'get pendingInterrupt', 'cancel', 'respond'];

/**
 * Defines the members on the class's prototype as non-enumerable methods and getters (as class syntax would),
 * each calling `this.__call(op, a, b)` with its index.
 * @param {{ prototype: object }} cls
 * @param {string[]} members
 */
function defineCalls(cls, members) {
  members.forEach((member, op) => {
    const getter = member.startsWith('get ');
    /** @type {(this: { __call(op: number, a?: unknown, b?: unknown): unknown }, a?: unknown, b?: unknown) => unknown} */
    const call = getter ? function () { return this.__call(op); } : function (a, b) { return this.__call(op, a, b); };
    Object.defineProperty(call, 'name', { value: member });
    Object.defineProperty(cls.prototype, getter ? member.slice(4) : member,
      getter ? { get: call, configurable: true } : { value: call, writable: true, configurable: true });
  });
}

/**
 * Called once by the wasm-bindgen glue as it loads (scripts/build-wasm.sh appends the call), so every way of
 * loading the runtime (the package entry, the widget's own import of the glue) gets the same classes.
 * @param {{ prototype: object }} controller `AgentController`
 * @param {{ prototype: object }} runtime `DefaultAgentRuntime`
 * @param {{ prototype: object }} execution `AgentExecution`
 */
export function defineMembers(controller, runtime, execution) {
  defineCalls(controller, CONTROLLER_MEMBERS);
  defineCalls(runtime, RUNTIME_MEMBERS);
  defineCalls(execution, EXECUTION_MEMBERS);
}
