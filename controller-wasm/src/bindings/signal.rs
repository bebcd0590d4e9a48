//! The execution's abort signal as a JS `AbortSignal` (the core signal stays the source of truth).

use wasm_bindgen::prelude::*;

use super::js;
use crate::core::AbortSignal;

/// The execution's JS `AbortSignal`: one JS `AbortController` per core signal (so per execution), created on
/// first use and cached on the core signal, so the model, every interceptor and every tool of one execution see
/// the SAME `AbortSignal` object, as the contract says. It aborts when the core signal does (the core signal is
/// the source of truth).
pub fn mirror_signal(signal: &AbortSignal) -> JsValue {
    signal.host_value(|signal| {
        let controller = js::new_abort_controller();
        let js_signal = controller.signal();
        signal.on_abort(Box::new(move || {
            let _ = controller.abort();
        }));
        js_signal
    })
}
