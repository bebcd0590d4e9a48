//! The neutral model stream (`docs/protocol.md` §3).

use serde::de;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{ModelState, Usage};
use crate::source::Source;
use crate::value::{unexpected, FromValue};

crate::wire! {
    lenient, ts(feature = "ts");
    /// One event of a model stream: what the relay sends as SSE and what a custom model yields.
    #[derive(Debug, Clone, PartialEq)]
    pub enum StreamEvent {
        MessageStart = "message-start" {
            id: Option<String> = "id" optional,
            /// Relay only: the id of the model that serves the message, when it is not the one the request named
            /// (the relay failed over to a fallback, `docs/protocol.md` §4).
            model: Option<String> = "model" optional,
        },
        BlockStart = "block-start" {
            index: u32 = "index",
            block: BlockKind = "block",
        },
        BlockDelta = "block-delta" {
            index: u32 = "index",
            delta: String = "delta",
        },
        BlockStop = "block-stop" {
            index: u32 = "index",
            /// The sources of a text block (`docs/protocol.md` §1), sent when it ends.
            sources: Vec<Source> = "sources" omit_empty,
        },
        MessageStop = "message-stop" {
            stop_reason: StopReason = "stopReason",
            #[cfg_attr(feature = "ts", ts(optional = nullable))]
            usage: Usage = "usage" default,
            /// Required key (null allowed): the full next state; non-null replaces, null clears.
            model_state: Option<ModelState> = "modelState",
        },
        /// Relay only: the call failed; nothing follows.
        Error = "error" {
            code: String = "code",
            message: String = "message",
            retryable: Option<bool> = "retryable" optional,
        },
    }
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

crate::wire! {
    lenient, ts(feature = "ts");
    /// What kind of block a `block-start` opens.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum BlockKind {
        Text = "text",
        Reasoning = "reasoning",
        ToolCall = "tool-call" {
            call_id: String = "callId",
            name: String = "name",
        },
    }
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

impl crate::ToValue for StopReason {
    fn to_value(&self) -> Value {
        Value::String(self.as_str().to_owned())
    }
}

/// `stopReason` as serde's derived enum reads it from a `Value`: a variant name, or an object whose one key is
/// a variant name and whose value is `null` (the externally tagged form of a unit variant).
impl FromValue for StopReason {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        let (name, content) = match value {
            Value::String(name) => (name, Value::Null),
            Value::Object(map) if map.len() == 1 => map.into_iter().next().unwrap_or_default(),
            Value::Object(_) => {
                return Err(E::invalid_value(
                    de::Unexpected::Map,
                    &"map with a single key",
                ))
            }
            other => return Err(E::invalid_type(unexpected(&other), &"string or map")),
        };
        let Some(i) = StopReason::NAMES.iter().position(|n| *n == name) else {
            return Err(E::unknown_variant(&name, StopReason::NAMES));
        };
        if !content.is_null() {
            return Err(E::invalid_type(unexpected(&content), &"unit"));
        }
        Ok(StopReason::ALL[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stop reasons' table (`StopReason::ALL` / `NAMES`) is written out; it must stay the derive's.
    #[test]
    fn the_stop_reason_table_is_the_derived_enum() {
        for (reason, name) in StopReason::ALL.iter().zip(StopReason::NAMES) {
            assert_eq!(reason.as_str(), *name);
            let value = Value::String((*name).into());
            assert_eq!(
                StopReason::from_value::<serde_json::Error>(value).unwrap(),
                *reason
            );
        }
        assert_eq!(StopReason::ALL.len(), StopReason::NAMES.len());
        for value in [
            serde_json::json!("finished"),
            serde_json::json!({"tool-use": 1}),
            serde_json::json!({}),
            serde_json::json!(7),
        ] {
            let derived = serde_json::from_value::<StopReason>(value.clone()).unwrap_err();
            let by_hand = StopReason::from_value::<serde_json::Error>(value).unwrap_err();
            assert_eq!(by_hand.to_string(), derived.to_string());
        }
    }
}
