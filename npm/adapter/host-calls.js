// Calls into page code and reads of page values, each shaped so that a throw never unwinds through the wasm: a
// tool's `execute` (its throw reaches Rust's `catch`), the observer's hot event, thenable checks and promise
// handling, and the arrays and keys of option objects.

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
  // `Promise.resolve` reads a promise's `constructor`, which a page's subclass may make throw.
  try {
    Promise.resolve(promise).then(undefined, (error) => console.error(label, subject, error));
  } catch (error) {
    try { console.error(label, subject, error); } catch { /* nowhere else to report */ }
  }
}

/**
 * Marks a promise as handled (it still rejects for whoever awaits it) and returns it.
 * @template {Promise<unknown>} P
 * @param {P} promise
 * @returns {P}
 */
export function quiet(promise) {
  try { promise.then(undefined, () => {}); } catch { /* a page's replaced Promise.prototype.then */ }
  return promise;
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
 * @param {(request: unknown) => Promise<unknown>} elicit the call's way to ask the person (an elicitation)
 * @returns {unknown} whatever execute returned
 */
export function callTool(object, execute, argsJson, signal, callId, elicit) {
  return execute.call(object, JSON.parse(argsJson), toolContext(signal, callId, elicit));
}

/**
 * A tool's context `{ signal, callId, elicit }` (frozen; the signal itself stays live).
 * @param {AbortSignal} signal
 * @param {string} callId
 * @param {(request: unknown) => Promise<unknown>} elicit
 */
function toolContext(signal, callId, elicit) {
  return Object.freeze({ signal, callId, elicit });
}

/**
 * What `await` would assimilate: a promise, or an object or function with a callable `then`. A `then` getter
 * that throws counts as no `then`. One crossing instead of up to four checks from Rust.
 * @param {unknown} value
 * @returns {boolean}
 */
export function isThenable(value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  try {
    // `instanceof` runs a Proxy's `getPrototypeOf` trap, which may throw like the `then` getter.
    return value instanceof Promise || typeof (/** @type {{ then?: unknown }} */ (value)).then === 'function';
  } catch {
    return false;
  }
}

/**
 * A dense copy of an array option (`undefined` when `value` is not an array). Reading an element may run a
 * page's getter or a Proxy's trap: a throw reaches Rust's `catch` (bindings/js.rs), which names the option.
 * @param {unknown} value
 * @returns {unknown[] | undefined}
 */
export function arrayCopy(value) {
  if (!Array.isArray(value)) return undefined;
  const out = [];
  for (let i = 0; i < value.length; i += 1) out.push(value[i]);
  return out;
}

/**
 * `Array.isArray(value)`, or false where it throws (a revoked Proxy).
 * @param {unknown} value
 * @returns {boolean}
 */
export function isArray(value) {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * `Object.keys(value)` of an options object (a Proxy's `ownKeys` trap may throw into Rust's `catch`).
 * @param {object} value
 * @returns {string[]}
 */
export function ownKeys(value) {
  return Object.keys(value);
}

/**
 * `Promise.resolve(value)` that never throws: for a promise, `Promise.resolve` reads its `constructor`, which a
 * page's subclass or own property may make throw; that throw becomes the rejection instead.
 * @param {unknown} value a thenable
 * @returns {Promise<unknown>}
 */
export function toPromise(value) {
  try {
    return Promise.resolve(value);
  } catch (error) {
    return Promise.reject(error);
  }
}
