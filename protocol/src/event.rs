//! The neutral model stream (`docs/protocol.md` §3).

use serde::{Deserialize, Serialize};

use crate::message::{ModelState, Usage};
use crate::source::Source;

/// One event of a model stream: what the relay sends as SSE and what a custom model yields.
// `Deserialize` is hand-written (`tagged.rs`) with the behaviour the attributes below describe.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum StreamEvent {
    MessageStart {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        id: Option<String>,
        /// Relay only: the id of the model that serves the message, when it is not the one the request named
        /// (the relay failed over to a fallback, `docs/protocol.md` §4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        model: Option<String>,
    },
    BlockStart {
        index: u32,
        block: BlockKind,
    },
    BlockDelta {
        index: u32,
        delta: String,
    },
    BlockStop {
        index: u32,
        /// The sources of a text block (`docs/protocol.md` §1), sent when it ends.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        sources: Vec<Source>,
    },
    #[serde(rename_all = "camelCase")]
    MessageStop {
        stop_reason: StopReason,
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        usage: Usage,
        /// Required key (null allowed): the full next state; non-null replaces, null clears.
        model_state: Option<ModelState>,
    },
    /// Relay only: the call failed; nothing follows.
    Error {
        code: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        retryable: Option<bool>,
    },
}

impl StreamEvent {
    /// A `block-stop` without sources.
    pub fn block_stop(index: u32) -> StreamEvent {
        StreamEvent::BlockStop {
            index,
            sources: Vec::new(),
        }
    }
}

/// What kind of block a `block-start` opens.
// `Deserialize` is hand-written (`tagged.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum BlockKind {
    Text,
    Reasoning,
    #[serde(rename_all = "camelCase")]
    ToolCall {
        call_id: String,
        name: String,
    },
}

/// Why the model stopped (closed set; see the provider mapping in `docs/protocol.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    PauseTurn,
    Refusal,
    Other,
}

impl StopReason {
    /// Every reason, in declaration order.
    pub const ALL: [StopReason; 7] = [
        StopReason::EndTurn,
        StopReason::ToolUse,
        StopReason::MaxTokens,
        StopReason::StopSequence,
        StopReason::PauseTurn,
        StopReason::Refusal,
        StopReason::Other,
    ];
    /// The wire names, in the order of [`StopReason::ALL`] (a static list, as serde's `unknown_variant` wants).
    pub const NAMES: &'static [&'static str] = &[
        "end-turn",
        "tool-use",
        "max-tokens",
        "stop-sequence",
        "pause-turn",
        "refusal",
        "other",
    ];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}
