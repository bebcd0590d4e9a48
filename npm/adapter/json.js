// Values from JavaScript into Rust: strict JSON text of host values (no `undefined` members, functions or
// non-finite numbers), and the own-members text of tool results and `limits` for Rust's exact-shape checks. The
// readers catch what a page's getters, `toJSON` or Proxy traps throw and answer `undefined` (a typed error in
// Rust).

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
  try {
    // `Array.isArray` throws for a revoked Proxy, so it is inside the `try` too.
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return tryToJson(value);
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
