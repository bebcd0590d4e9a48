// Event streams across the boundary. `Pump` drains a model's async iterable into a batch (one string plus
// lengths) that Rust takes at once, so the hot path costs one copy into wasm memory and one promise per batch
// instead of one per event; `iterableFromRust` is the reverse direction, a Rust event stream as an async iterable
// (the `next` of model interceptors).

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
