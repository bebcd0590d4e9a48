//! Imports from JavaScript, and nothing else: the host adapters of `npm/adapter.js` (the build writes its
//! minified form beside the generated glue in `npm/pkg/`, hence `raw_module = "./adapter.js"`; see
//! `scripts/minify-js.mjs`) and the few globals the bindings use.
//!
//! One `extern` block per JS module, so everything the bindings need from a module is read in one place.
//! (wasm-bindgen still gives each function the wasm imports directly its own namespace import of that module;
//! `scripts/build-wasm.sh` merges them into one import-object key, so bundlers see no duplicate key.)
//! Rust values exported to JS (`RustEventStream`, `RequestHandle`) cross as `JsValue`, so this file depends on
//! no other module of the bindings.

use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(raw_module = "./adapter.js")]
extern "C" {
    /// Drains a model's async iterable into batches (payload text + per-event lengths; see `adapter.js`).
    pub type Pump;
    #[wasm_bindgen(constructor, catch)]
    pub fn new(iterable: &JsValue, raw: bool) -> Result<Pump, JsValue>;
    /// Moves the buffered batch aside; how many meta numbers it has (0: nothing buffered). Its meta and text
    /// must be copied with `taken_meta` and `taken_text` right after, before any JS runs.
    #[wasm_bindgen(method)]
    pub fn take(this: &Pump) -> u32;
    /// Copies the taken batch's meta numbers into `out` (as many as `take` said).
    #[wasm_bindgen(method, js_name = takenMeta)]
    pub fn taken_meta(this: &Pump, out: &mut [u32]);
    /// Writes the taken batch's text as UTF-8 into `out` (3 bytes per UTF-16 unit fit any text); the number of
    /// bytes written. One native `TextEncoder.encodeInto` into wasm memory instead of a per-character JS loop.
    #[wasm_bindgen(method, js_name = takenText)]
    pub fn taken_text(this: &Pump, out: &mut [u8]) -> u32;
    #[wasm_bindgen(method)]
    pub fn state(this: &Pump) -> u32;
    #[wasm_bindgen(method)]
    pub fn failure(this: &Pump) -> JsValue;
    #[wasm_bindgen(method)]
    pub fn wait(this: &Pump) -> Promise;
    #[wasm_bindgen(method)]
    pub fn stop(this: &Pump);

    #[wasm_bindgen(js_name = makeAgentError)]
    pub fn make_agent_error(
        code: &str,
        message: &str,
        limit: Option<String>,
        details: Option<String>,
        cause: &JsValue,
    ) -> JsValue;
    /// `[code | null, message, limit | null, detailsJson | null]` of any thrown value.
    #[wasm_bindgen(js_name = describeError)]
    pub fn describe_error(error: &JsValue) -> Array;
    #[wasm_bindgen(js_name = parseFrozen)]
    pub fn parse_frozen(text: &str) -> JsValue;
    #[wasm_bindgen(js_name = parseJson)]
    pub fn parse_json(text: &str) -> JsValue;
    #[wasm_bindgen(js_name = deepFreeze)]
    pub fn deep_freeze(value: &JsValue) -> JsValue;
    /// Strict JSON text of a host value; `None` when it is not representable (undefined members, functions…).
    #[wasm_bindgen(js_name = tryToJson)]
    pub fn try_to_json(value: &JsValue) -> Option<String>;
    /// JSON text of a returned tool result with every own key and no coercion (`toJSON`, boxed primitives);
    /// `None` when it cannot be read.
    #[wasm_bindgen(js_name = toolResultJson)]
    pub fn tool_result_json(value: &JsValue) -> Option<String>;
    #[wasm_bindgen(js_name = iterableFromRust)]
    /// `handle` is a `RustEventStream` (bindings/interceptors.rs) as a JS value.
    pub fn iterable_from_rust(handle: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = relayStream)]
    pub fn relay_stream(url: &str, headers: &JsValue, body: String, signal: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = relayRequest)]
    pub fn relay_request(
        method: &str,
        url: &str,
        headers: &JsValue,
        body: Option<String>,
        signal: &JsValue,
    ) -> Promise;

    pub type JsAbortController;
    #[wasm_bindgen(js_name = newAbortController)]
    pub fn new_abort_controller() -> JsAbortController;
    #[wasm_bindgen(method, getter)]
    pub fn signal(this: &JsAbortController) -> JsValue;
    /// `catch`: whatever `abort` listeners throw must not unwind through the core's abort callbacks.
    #[wasm_bindgen(method, catch)]
    pub fn abort(this: &JsAbortController) -> Result<(), JsValue>;

    #[wasm_bindgen(js_name = newId)]
    pub fn new_id() -> String;
    #[wasm_bindgen(js_name = limitsJson)]
    pub fn limits_json(value: &JsValue) -> Option<String>;

    #[wasm_bindgen(js_name = emitDelta, catch)]
    pub fn emit_delta(observer: &Function, index: u32, delta: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = quiet)]
    pub fn quiet(promise: &Promise) -> Promise;
    /// Marks a thenable handled; a rejection goes to `console.error(label, subject, error)`.
    #[wasm_bindgen(js_name = logRejection)]
    pub fn log_rejection(thenable: &JsValue, label: &str, subject: &JsValue);

    #[wasm_bindgen(js_name = lazyRequest)]
    /// `handle` is a `RequestHandle` (bindings/host.rs) as a JS value.
    pub fn lazy_request(handle: JsValue) -> JsValue;

    /// `Object.freeze({ ...data, signal })`.
    #[wasm_bindgen(js_name = withSignal)]
    pub fn with_signal(data: &JsValue, signal: &JsValue) -> JsValue;
    /// `execute.call(object, JSON.parse(argsJson), toolContext(signal, callId, elicit))`: one crossing per tool
    /// call.
    #[wasm_bindgen(js_name = callTool, catch)]
    pub fn call_tool(
        object: &JsValue,
        execute: &Function,
        args_json: &str,
        signal: &JsValue,
        call_id: &str,
        elicit: &JsValue,
    ) -> Result<JsValue, JsValue>;
    /// `Promise.resolve(value)`, a throw (a promise's `constructor` getter) turned into the rejection.
    #[wasm_bindgen(js_name = toPromise)]
    pub fn to_promise(value: &JsValue) -> Promise;
    /// A promise, or an object or function with a callable `then` (a throwing `then` getter counts as none).
    #[wasm_bindgen(js_name = isThenable)]
    pub fn is_thenable(value: &JsValue) -> bool;

    /// A dense copy of an array (`None` when `value` is not one); `catch`: its getters and a Proxy's traps are
    /// page code.
    #[wasm_bindgen(js_name = arrayCopy, catch)]
    pub fn array_copy(value: &JsValue) -> Result<Option<Array>, JsValue>;
    /// `Array.isArray(value)`, false for a revoked Proxy (where `Array.isArray` throws).
    #[wasm_bindgen(js_name = isArray)]
    pub fn is_array(value: &JsValue) -> bool;
    /// `Object.keys(value)`; `catch`: a Proxy's `ownKeys` trap is page code.
    #[wasm_bindgen(js_name = ownKeys, catch)]
    pub fn own_keys(value: &JsValue) -> Result<Array, JsValue>;

    /// `new RegExp(source, 'u')`, or the engine's reason (a string) when it refuses the pattern.
    #[wasm_bindgen(js_name = compileRegex)]
    pub fn compile_regex(source: &str) -> JsValue;
    /// `regex.test(text)` for a regex from `compile_regex`; `catch`: a `RegExp` that throws while matching must
    /// not unwind through the schema check (the core ends the execution with the reason instead).
    #[wasm_bindgen(js_name = regexTest, catch)]
    pub fn regex_test(regex: &JsValue, text: &str) -> Result<bool, JsValue>;
}

#[wasm_bindgen]
extern "C" {
    /// `catch`: a page's replaced `console.error` that throws must not unwind through the runtime (the caller
    /// has nowhere else to report, so the throw is dropped).
    #[wasm_bindgen(js_namespace = console, js_name = error, catch)]
    pub fn console_error2(label: &str, value: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(js_namespace = console, js_name = error, catch)]
    pub fn console_error3(label: &str, first: &JsValue, second: &JsValue) -> Result<(), JsValue>;

    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn performance_now() -> f64;

    #[wasm_bindgen(js_name = queueMicrotask)]
    pub fn queue_microtask(callback: &JsValue);
}
