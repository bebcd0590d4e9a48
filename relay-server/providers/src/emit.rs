//! The neutral event builder shared by the three decoders.
//!
//! It owns the rules of `docs/protocol.md` §3 so each adapter cannot get them wrong: one `message-start`
//! first, block indexes 0, 1, 2… in order whatever the provider's own indexes are, one block open at a time,
//! every block stopped before `message-stop`, nothing after it. Text and reasoning stream live; tool calls are
//! emitted whole (start, one delta with the arguments, stop) once the provider has finished them, because a
//! tool call cut off by the token limit must be droppable and the runtime requires complete JSON at
//! `block-stop`.
//!
//! Sources (citations, search results; `docs/protocol.md` §1) go on the `block-stop` of the text block they
//! annotate: the decoders hand them over as they arrive, and those that arrive while no text block is open wait
//! for the next one.

use patchbridge_protocol::{BlockKind, Source, StopReason, StreamEvent, Usage};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::state::Continuation;
use crate::AdapterError;

/// Which streaming block is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LiveKind {
    Text,
    Reasoning,
}

#[derive(Debug, Default)]
pub(crate) struct Emitter {
    /// The id sent in `message-start`; `Some` once the message started.
    message_id: Option<String>,
    stopped: bool,
    next_index: u32,
    open: Option<(u32, LiveKind)>,
    /// Sources of the open text block, or held for the next text block while none is open.
    sources: Vec<Source>,
}

impl Emitter {
    pub(crate) fn started(&self) -> bool {
        self.message_id.is_some()
    }

    /// The id of the started message (it keys the message's ModelState entry).
    pub(crate) fn message_id(&self) -> Option<&str> {
        self.message_id.as_deref()
    }

    /// Whether `message-stop` went out: the stream is complete and later input is ignored.
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }

    pub(crate) fn start(
        &mut self,
        id: String,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        if self.started() {
            return Err(AdapterError::UpstreamProtocol(
                "the provider started a second message in one stream".into(),
            ));
        }
        self.message_id = Some(id.clone());
        out.push(StreamEvent::MessageStart {
            id: Some(id),
            model: None,
        });
        Ok(())
    }

    fn ensure_live(&mut self) -> Result<(), AdapterError> {
        if !self.started() {
            return Err(AdapterError::UpstreamProtocol(
                "content arrived before the message started".into(),
            ));
        }
        if self.stopped {
            return Err(AdapterError::UpstreamProtocol(
                "content arrived after the message ended".into(),
            ));
        }
        Ok(())
    }

    /// Appends streamed text or reasoning; opens a block of that kind when another (or none) is open.
    /// Empty deltas open nothing: an empty block would be sent back to providers that reject empty text.
    /// Returns the neutral index the delta went to, if any.
    pub(crate) fn live_delta(
        &mut self,
        kind: LiveKind,
        delta: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Option<u32>, AdapterError> {
        self.ensure_live()?;
        if delta.is_empty() {
            return Ok(None);
        }
        let index = match self.open {
            Some((index, open_kind)) if open_kind == kind => index,
            _ => {
                self.close(out);
                let index = self.next_index;
                self.next_index += 1;
                let block = match kind {
                    LiveKind::Text => BlockKind::Text,
                    LiveKind::Reasoning => BlockKind::Reasoning,
                };
                out.push(StreamEvent::BlockStart { index, block });
                self.open = Some((index, kind));
                index
            }
        };
        out.push(StreamEvent::BlockDelta {
            index,
            delta: delta.to_owned(),
        });
        Ok(Some(index))
    }

    /// Stops the open streaming block, if any (the provider's block ended). A text block takes its sources.
    pub(crate) fn close(&mut self, out: &mut Vec<StreamEvent>) {
        if let Some((index, kind)) = self.open.take() {
            let sources = match kind {
                LiveKind::Text => std::mem::take(&mut self.sources),
                LiveKind::Reasoning => Vec::new(),
            };
            out.push(StreamEvent::BlockStop { index, sources });
        }
    }

    /// Adds sources to the open text block, or holds them for the next text block of the message. A source the
    /// block already has is not repeated.
    pub(crate) fn sources(&mut self, sources: impl IntoIterator<Item = Source>) {
        for source in sources {
            if !self.sources.contains(&source) {
                self.sources.push(source);
            }
        }
    }

    /// Emits a finished tool call whole. `arguments` is the provider's JSON text; empty means `{}` (providers
    /// send nothing for tools without parameters). Anything but a JSON object is a protocol error.
    pub(crate) fn tool_call(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<u32, AdapterError> {
        self.ensure_live()?;
        let arguments = canonical_arguments(arguments).ok_or_else(|| {
            AdapterError::UpstreamProtocol(format!(
                "arguments of tool call {call_id} ({name}) are not a JSON object"
            ))
        })?;
        if call_id.is_empty() || name.is_empty() {
            return Err(AdapterError::UpstreamProtocol(
                "a tool call without id or name".into(),
            ));
        }
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        out.push(StreamEvent::BlockStart {
            index,
            block: BlockKind::ToolCall {
                call_id: call_id.to_owned(),
                name: name.to_owned(),
            },
        });
        out.push(StreamEvent::BlockDelta {
            index,
            delta: arguments,
        });
        out.push(StreamEvent::block_stop(index));
        Ok(index)
    }

    /// Seals the message. `entry` is the new message's private state, if any: the continuation keys it by this
    /// message's id and adds it to the previous entries, and that full next ModelState goes in `message-stop`.
    pub(crate) fn stop<E: Serialize + DeserializeOwned>(
        &mut self,
        stop_reason: StopReason,
        usage: Usage,
        continuation: &mut Continuation<E>,
        entry: Option<E>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), AdapterError> {
        self.ensure_live()?;
        let id = self.message_id.clone().expect("a live message has started");
        let model_state = continuation.next_state(entry.map(|entry| (id, entry)))?;
        self.close(out);
        // Sources no text block followed are dropped with the message's end.
        self.sources.clear();
        self.stopped = true;
        out.push(StreamEvent::MessageStop {
            stop_reason,
            usage,
            model_state,
        });
        Ok(())
    }
}

/// A [`Source`] from a provider's citation or search result object: the URL from the first of `url_keys` that
/// holds a string, the title likewise, and the snippet from `cited_text` (`Source::from_provider` drops what may
/// not be shown).
pub(crate) fn source_from(value: &Value, url_keys: &[&str], title_keys: &[&str]) -> Option<Source> {
    let first = |keys: &[&str]| {
        keys.iter()
            .find_map(|key| value.get(*key).and_then(Value::as_str))
    };
    Source::from_provider(
        first(url_keys),
        first(title_keys),
        value.get("cited_text").and_then(Value::as_str),
    )
}

/// The arguments to send on as the tool call's delta, or `None` when they are not a JSON object. Provider
/// text is kept as is when it parses (it is what the model wrote); empty or whitespace becomes `{}`.
pub(crate) fn canonical_arguments(arguments: &str) -> Option<String> {
    if arguments.trim().is_empty() {
        return Some("{}".to_owned());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(_)) => Some(arguments.to_owned()),
        _ => None,
    }
}
