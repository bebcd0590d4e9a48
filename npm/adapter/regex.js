// Tool schemas' `pattern`s as the page's own RegExp (JSON Schema patterns are ECMA-262 regular expressions):
// compiled once when a tool is registered, matched per checked string. A throw while matching reaches Rust's
// `catch` (bindings/js.rs) and ends the execution as a typed failure, never "no match".

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
 * regex has neither `g` nor `y`, so `test` keeps no state between calls. A throw (a page's replaced
 * `RegExp.prototype.exec`, an engine out of stack) is caught by the import (`catch` in bindings/js.rs) and ends
 * the execution as a typed failure, never "no match".
 * @param {RegExp} regex from `compileRegex`
 * @param {string} text
 * @returns {boolean}
 */
export function regexTest(regex, text) {
  return regex.test(text);
}
