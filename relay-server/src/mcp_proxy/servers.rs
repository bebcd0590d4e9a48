//! [`McpProxy`]: what the relay's state keeps for the MCP passthrough, the validated servers and the open
//! exchanges per user. Apart from the handler (`mod.rs`), which needs the state, so that the state can hold this
//! without an import circle.

use std::sync::Arc;

use super::config::ValidatedMcp;
use super::permits::UserPermits;

/// The configured servers and the open exchanges.
#[derive(Debug)]
pub struct McpProxy {
    pub(super) config: ValidatedMcp,
    pub(super) permits: Arc<UserPermits>,
}

impl McpProxy {
    pub fn new(config: ValidatedMcp) -> Self {
        McpProxy {
            config,
            permits: Arc::default(),
        }
    }
}
