//! The deep-frozen state snapshots of `AgentController` (`getState()` and what subscribers get): the core's
//! projection of the state as JSON text, with the messages array cached by the core's `Rc`, so an unchanged
//! message list keeps its identity across snapshots and message objects already shown are reused when messages
//! are appended, and the error as an `AgentError` instance.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Function, Reflect};
use patchbridge_protocol::Message;
use wasm_bindgen::prelude::*;

use super::error::to_js;
use super::js;
use super::values::frozen;
use crate::core::json::to_text;
use crate::core::ControllerState;

/// The frozen messages array last built: the core's `Rc` it came from, the array, and its frozen elements.
type MessagesCache = Option<(Rc<Vec<Message>>, JsValue, Vec<JsValue>)>;

/// The JS-side view of the state: the last snapshot, whether it is stale, the cached messages, listeners.
#[derive(Default)]
pub struct View {
    pub snapshot: RefCell<Option<JsValue>>,
    pub stale: Cell<bool>,
    pub scheduled: Cell<bool>,
    messages: RefCell<MessagesCache>,
    pub listeners: RefCell<Vec<(u32, Function)>>,
    pub next_listener: Cell<u32>,
}

thread_local! {
    static NO_MESSAGES: Rc<Vec<Message>> = Rc::new(Vec::new());
}

impl View {
    /// The frozen messages array for `messages`, reusing the cached array when the core's `Rc` is unchanged and
    /// the cached message objects for an unchanged prefix.
    fn messages_js(&self, messages: &Rc<Vec<Message>>) -> JsValue {
        let mut cache = self.messages.borrow_mut();
        if let Some((rc, array, _)) = &*cache {
            if Rc::ptr_eq(rc, messages) {
                return array.clone();
            }
        }
        let mut elements = Vec::with_capacity(messages.len());
        let reusable = cache.as_ref();
        for (i, message) in messages.iter().enumerate() {
            let reused =
                reusable.and_then(|(old, _, objects)| match (old.get(i), objects.get(i)) {
                    (Some(previous), Some(object)) if previous == message => Some(object.clone()),
                    _ => None,
                });
            elements.push(reused.unwrap_or_else(|| frozen(message)));
        }
        let array = Array::new();
        for element in &elements {
            array.push(element);
        }
        let array = js::deep_freeze(&array);
        *cache = Some((messages.clone(), array.clone(), elements));
        array
    }

    pub fn build(&self, state: &ControllerState) -> JsValue {
        // The core's projection for everything but the messages (which are cached above) and the error (an
        // AgentError instance rather than plain data).
        let mut light = state.clone();
        light.messages = NO_MESSAGES.with(Rc::clone);
        light.error = None;
        let object = js::parse_json(&to_text(&light.to_json()));
        let _ = Reflect::set(
            &object,
            &JsValue::from_str("messages"),
            &self.messages_js(&state.messages),
        );
        if let Some(error) = &state.error {
            let _ = Reflect::set(&object, &JsValue::from_str("error"), &to_js(error));
        }
        js::deep_freeze(&object)
    }
}
