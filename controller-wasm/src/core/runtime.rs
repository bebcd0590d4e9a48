//! [`DefaultAgentRuntime`]: holds the model, the options and the platform; every
//! [`DefaultAgentRuntime::start`] creates an independent [`AgentExecution`] (no "current run" singleton).

use std::rc::Rc;

use futures::future::FutureExt;

use super::driver;
use super::error::AgentError;
use super::events::Observer;
use super::execution::{AgentExecution, ExecutionInput};
use super::host::{Model, Platform};
use super::limits::Limits;
use super::messages::validate_messages;
use super::options::{RuntimeOptions, RuntimeParts};
use super::state::{ExecShared, Progress};

/// The agent runtime. Cloning shares the same model and options.
#[derive(Clone)]
pub struct DefaultAgentRuntime {
    inner: Rc<RuntimeParts>,
}

impl DefaultAgentRuntime {
    /// Validates the limits (`AGENT_INVALID_LIMITS` naming the bad key) and builds the runtime.
    pub fn new(
        model: Rc<dyn Model>,
        options: RuntimeOptions,
        platform: Rc<dyn Platform>,
    ) -> Result<Self, AgentError> {
        options.limits.validate()?;
        Ok(DefaultAgentRuntime {
            inner: Rc::new(RuntimeParts {
                model,
                options,
                platform,
            }),
        })
    }

    /// The same model and platform with other options (validated like [`DefaultAgentRuntime::new`]).
    pub fn with_options(&self, options: RuntimeOptions) -> Result<Self, AgentError> {
        DefaultAgentRuntime::new(
            self.inner.model.clone(),
            options,
            self.inner.platform.clone(),
        )
    }

    /// The limits every execution of this runtime gets.
    pub fn limits(&self) -> Limits {
        self.inner.options.limits
    }

    /// The platform.
    pub fn platform(&self) -> Rc<dyn Platform> {
        self.inner.platform.clone()
    }

    /// Starts an independent execution. Invalid input fails here with `AGENT_INVALID_INPUT`. The deadline
    /// starts now; the work happens when the returned execution's `driver()` (or `result()`) is polled.
    pub fn start(
        &self,
        input: ExecutionInput,
        observer: Observer,
    ) -> Result<AgentExecution, AgentError> {
        validate_messages(&input.messages)?;
        let platform = &self.inner.platform;
        let id = format!("exec_{}", platform.new_id());
        let trace_id = input.trace_id.clone().unwrap_or_else(|| id.clone());
        let progress = Progress {
            messages: input.messages.into_iter().map(Rc::new).collect(),
            model_state: input.model_state.map(Rc::new),
            ..Progress::default()
        };
        let shared = Rc::new(ExecShared::new(
            id,
            trace_id,
            self.inner.clone(),
            input.tools,
            input.model,
            input.conversation_id,
            progress,
            observer,
        ));
        // u64 -> u32 is lossless: validation caps maxDurationMs at 2^31 - 1.
        let deadline = platform.sleep(self.inner.options.limits.max_duration_ms as u32);
        let result = driver::drive(shared.clone(), deadline)
            .boxed_local()
            .shared();
        Ok(AgentExecution { shared, result })
    }
}
