// Host adapters used by the WebAssembly bindings: the one module the wasm-bindgen glue imports (as "./adapter.js"
// from pkg/, where scripts/minify-js.mjs bundles this file and npm/adapter/ into one minified pkg/adapter.js).
// Nothing here decides agent behaviour: these helpers only move values between JavaScript's world (async
// iterators, fetch, frozen objects) and the Rust core, which validates and decides everything. One concern per
// file of npm/adapter/:
//
// - streams.js: model streams into Rust in batches (`Pump`), and a Rust stream as an async iterable.
// - relay.js, headers.js: fetch and SSE framing for the relay protocol; the host's headers option per request.
// - json.js: strict JSON text of host values (tool results, limits) for Rust's exact-shape checks.
// - freezing.js: JSON text from Rust as deep-frozen (or fresh) values, and the lazily read model request.
// - errors.js: `AgentError` instances for core errors; thrown values described without throwing again.
// - host-calls.js: tool calls, thenables, promises, option arrays and keys: page code called so that a throw
//   never unwinds through the wasm.
// - regex.js: schema patterns as the page's RegExp. platform.js: AbortControllers and ids.
// - members.js: the public members of the runtime's classes over their one `__call` export.
export { makeAgentError, describeError } from './adapter/errors.js';
export { deepFreeze, parseFrozen, parseJson, withSignal, lazyRequest } from './adapter/freezing.js';
export { toJson, tryToJson, toolResultJson, limitsJson } from './adapter/json.js';
export {
  Pump, iterableFromRust, META_FIELDS, PAYLOAD_JSON, PAYLOAD_BLOCK_DELTA, PUMP_OPEN, PUMP_ENDED, PUMP_FAILED,
} from './adapter/streams.js';
export { relayRequest, relayStream } from './adapter/relay.js';
export {
  emitDelta, logRejection, quiet, callTool, isThenable, arrayCopy, isArray, ownKeys, toPromise,
} from './adapter/host-calls.js';
export { newAbortController, newId } from './adapter/platform.js';
export { compileRegex, regexTest } from './adapter/regex.js';
export { defineMembers } from './adapter/members.js';
