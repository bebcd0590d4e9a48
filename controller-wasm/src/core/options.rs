//! [`RuntimeOptions`] (limits, hooks, interceptors) and the parts every execution of one runtime shares.

use std::rc::Rc;

use super::hooks::{AgentHook, OnHookError};
use super::host::{Model, Platform};
use super::intercept::{ModelInterceptor, ToolInterceptor};
use super::limits::Limits;

/// Runtime options. `limits` must be complete (no defaults are merged at this level).
#[derive(Clone)]
pub struct RuntimeOptions {
    /// The five limits (validated when the runtime is built).
    pub limits: Limits,
    /// Lifecycle hooks, called in this order.
    pub hooks: Vec<Rc<dyn AgentHook>>,
    /// Receives hook failures on the terminal event (else [`Platform::console_error`]).
    pub on_hook_error: Option<OnHookError>,
    /// Model interceptors, outermost first.
    pub model_interceptors: Vec<Rc<dyn ModelInterceptor>>,
    /// Tool interceptors, outermost first.
    pub tool_interceptors: Vec<Rc<dyn ToolInterceptor>>,
}

impl RuntimeOptions {
    /// Options with the given limits and no hooks or interceptors.
    pub fn new(limits: Limits) -> Self {
        RuntimeOptions {
            limits,
            hooks: Vec::new(),
            on_hook_error: None,
            model_interceptors: Vec::new(),
            tool_interceptors: Vec::new(),
        }
    }
}

/// What every execution of one runtime shares: the model, the validated options and the platform.
pub(crate) struct RuntimeParts {
    pub model: Rc<dyn Model>,
    pub options: RuntimeOptions,
    pub platform: Rc<dyn Platform>,
}
