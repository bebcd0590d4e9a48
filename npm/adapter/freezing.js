// Values from Rust into JavaScript: JSON text as deep-frozen values (hook data, tool results, state snapshots) or
// as fresh mutable ones (requests handed to models and interceptors), frozen data beside a live AbortSignal, and
// the model request read lazily.

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
 * Frozen data plus a live AbortSignal (which must stay unfrozen to be abortable).
 * @param {object} data
 * @param {AbortSignal} signal
 */
export function withSignal(data, signal) {
  return Object.freeze({ ...data, signal });
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
