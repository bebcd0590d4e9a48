//! Stream aggregation (pure): validates one model call's events against the protocol of
//! `docs/protocol.md` §3 and builds the draft, then seals it.
//!
//! Cost per event is O(size of the event): a delta is appended to its block's buffer ([`Draft::apply`]) and its
//! characters are counted (Unicode scalar values) — no copy of the draft, no per-delta allocation beyond buffer
//! growth. Tool-call arguments are parsed to a JSON object once, when the message is sealed; a parse failure is
//! recorded and reported by the batch precheck (so a batch with bad arguments executes zero tools).

use patchbridge_protocol::{BlockKind, ModelState, Source, StopReason, StreamEvent, Usage};
use serde_json::{Map, Value};

use super::draft::{Draft, DraftBlock};
use super::error::{relay_error_details, AgentError, ErrorCode, LimitName};

/// A block of a sealed message. Tool-call arguments carry their parse outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum SealedBlock {
    /// Text and its sources.
    Text(String, Vec<Source>),
    /// Shown reasoning.
    Reasoning(String),
    /// A tool call; `input` is the parsed object or why it is not one.
    ToolCall {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Parsed arguments, or the parse problem.
        input: Result<Map<String, Value>, String>,
    },
}

/// A message after `message-stop`, before the precheck turns it into a stable message.
#[derive(Debug, Clone, PartialEq)]
pub struct SealedMessage {
    /// Message id (from `message-start`, or the generated fallback).
    pub id: String,
    /// Blocks in produced order.
    pub blocks: Vec<SealedBlock>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// The call's usage.
    pub usage: Usage,
    /// The full next ModelState (verbatim).
    pub model_state: Option<ModelState>,
    /// Characters counted against `maxModelOutputCharacters`.
    pub output_characters: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    AwaitingStart,
    Open,
    Stopped,
}

/// What an accepted event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepted {
    /// `message-start`: the message id is now known.
    MessageStarted,
    /// A block event (start/delta/stop) was applied to the draft.
    Block,
    /// `message-stop`: the message can be sealed.
    MessageStopped,
}

/// The per-call aggregator.
#[derive(Debug)]
pub struct Aggregator {
    phase: Phase,
    /// The message so far; its id is the fallback until `message-start` names one.
    draft: Draft,
    open: Option<usize>,
    characters: u64,
    max_characters: u64,
    stop: Option<(StopReason, Usage, Option<ModelState>)>,
}

fn protocol(message: impl Into<String>) -> AgentError {
    AgentError::new(ErrorCode::ProtocolError, message)
}

impl Aggregator {
    /// A fresh aggregator: `fallback_id` names the message if `message-start` carries no id.
    pub fn new(fallback_id: String, max_characters: u64) -> Self {
        Aggregator {
            phase: Phase::AwaitingStart,
            draft: Draft::new(fallback_id),
            open: None,
            characters: 0,
            max_characters,
            stop: None,
        }
    }

    /// The message id once `message-start` arrived.
    pub fn id(&self) -> Option<&str> {
        (self.phase != Phase::AwaitingStart).then_some(self.draft.id.as_str())
    }

    /// The draft blocks so far.
    pub fn blocks(&self) -> &[DraftBlock] {
        &self.draft.blocks
    }

    /// Characters counted so far.
    pub fn characters(&self) -> u64 {
        self.characters
    }

    /// Whether `message-stop` arrived.
    pub fn is_stopped(&self) -> bool {
        self.phase == Phase::Stopped
    }

    /// Validates and applies one event. Errors: `AGENT_PROTOCOL_ERROR` for order violations,
    /// `AGENT_LIMIT_EXCEEDED` (`maxModelOutputCharacters`), `AGENT_RELAY_ERROR` for an `error` event.
    pub fn accept(&mut self, event: &StreamEvent) -> Result<Accepted, AgentError> {
        if self.phase == Phase::Stopped {
            return Err(protocol("event after message-stop"));
        }
        match event {
            StreamEvent::Error {
                code,
                message,
                retryable,
            } => Err(AgentError::new(
                ErrorCode::RelayError,
                format!("model call failed: {code}: {message}"),
            )
            .with_details(relay_error_details(code, None, *retryable, None, None))),
            StreamEvent::MessageStart { id, .. } => {
                if self.phase != Phase::AwaitingStart {
                    return Err(protocol("second message-start in one model call"));
                }
                match id {
                    Some(id) if !id.is_empty() => self.draft.id.clone_from(id),
                    Some(_) => return Err(protocol("message-start id must not be empty")),
                    None => {}
                }
                self.phase = Phase::Open;
                Ok(Accepted::MessageStarted)
            }
            _ if self.phase == Phase::AwaitingStart => {
                Err(protocol("the first event must be message-start"))
            }
            StreamEvent::BlockStart { index, block } => {
                if let Some(open) = self.open {
                    return Err(protocol(format!(
                        "block-start {index} while block {open} is open"
                    )));
                }
                if *index as usize != self.draft.blocks.len() {
                    return Err(protocol(format!(
                        "block-start index {index}, expected {}",
                        self.draft.blocks.len()
                    )));
                }
                if let BlockKind::ToolCall { call_id, name } = block {
                    if call_id.is_empty() || name.is_empty() {
                        return Err(protocol(
                            "tool-call block-start needs a non-empty callId and name",
                        ));
                    }
                }
                self.draft.apply(event);
                self.open = Some(*index as usize);
                Ok(Accepted::Block)
            }
            StreamEvent::BlockDelta { index, delta } => {
                self.open_block(*index, "block-delta")?;
                // O(delta): count scalar values, compare, append.
                self.count(delta.chars().count() as u64)?;
                self.draft.apply(event);
                Ok(Accepted::Block)
            }
            StreamEvent::BlockStop { index, sources } => {
                self.open_block(*index, "block-stop")?;
                if !sources.is_empty() {
                    if self.draft.blocks[*index as usize].kind != BlockKind::Text {
                        return Err(protocol(format!(
                            "block-stop {index} carries sources, but only text blocks have sources"
                        )));
                    }
                    self.count(sources.iter().map(Source::characters).sum())?;
                }
                self.draft.apply(event);
                self.open = None;
                Ok(Accepted::Block)
            }
            StreamEvent::MessageStop {
                stop_reason,
                usage,
                model_state,
            } => {
                if let Some(open) = self.open {
                    return Err(protocol(format!("message-stop while block {open} is open")));
                }
                self.stop = Some((*stop_reason, *usage, model_state.clone()));
                self.phase = Phase::Stopped;
                Ok(Accepted::MessageStopped)
            }
        }
    }

    /// Counts `added` output characters against `maxModelOutputCharacters`.
    fn count(&mut self, added: u64) -> Result<(), AgentError> {
        let total = self.characters.saturating_add(added);
        if total > self.max_characters {
            return Err(AgentError::limit_exceeded(
                LimitName::MaxModelOutputCharacters,
                format!(
                    "model output exceeded maxModelOutputCharacters ({}): {total} characters",
                    self.max_characters
                ),
            ));
        }
        self.characters = total;
        Ok(())
    }

    /// Checks that `index` is the open block.
    fn open_block(&self, index: u32, what: &str) -> Result<(), AgentError> {
        match self.open {
            Some(open) if open == index as usize => Ok(()),
            Some(open) => Err(protocol(format!(
                "{what} for block {index} while block {open} is open"
            ))),
            None => Err(protocol(format!(
                "{what} for block {index}, which is not open"
            ))),
        }
    }

    /// Ends the call: the stream finished. Fails if `message-stop` never came.
    pub fn seal(self) -> Result<SealedMessage, AgentError> {
        let Some((stop_reason, usage, model_state)) = self.stop else {
            return Err(protocol(if self.phase == Phase::AwaitingStart {
                "the model stream ended without any event"
            } else {
                "the model stream ended without message-stop"
            }));
        };
        let blocks = self
            .draft
            .blocks
            .into_iter()
            .map(|block| match block.kind {
                BlockKind::Text => SealedBlock::Text(block.buffer, block.sources),
                BlockKind::Reasoning => SealedBlock::Reasoning(block.buffer),
                BlockKind::ToolCall { call_id, name } => SealedBlock::ToolCall {
                    call_id,
                    name,
                    input: parse_arguments(&block.buffer),
                },
            })
            .collect();
        Ok(SealedMessage {
            id: self.draft.id,
            blocks,
            stop_reason,
            usage,
            model_state,
            output_characters: self.characters,
        })
    }
}

/// Parses tool-call arguments: they must be one complete JSON object, without repeated keys (any depth); key
/// order and number text are kept.
pub fn parse_arguments(raw: &str) -> Result<Map<String, Value>, String> {
    match patchbridge_protocol::unique::from_str(raw) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "arguments are JSON but not an object: {}",
            json_kind(&other)
        )),
        Err(error) => Err(format!("arguments are not complete JSON: {error}")),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
