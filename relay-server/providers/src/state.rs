//! ModelState helpers shared by the adapters.
//!
//! Every adapter's `data` has the shape `{ "messages": { "<message id>": <entry> } }`: one entry per assistant
//! message that has provider-private state, keyed by the id the decoder gave in `message-start`. Encoders look
//! entries up by message id; decoders build the FULL next state: the previous entries still referenced by the
//! request's messages plus the new message's entry (null when no entry remains).
//!
//! Anthropic and Responses entries are lists of [`Part`]s: the provider's content items of that message in
//! their original order, each either a verbatim provider item (`raw`) or a pointer to the neutral blocks it
//! produced. That is how a thinking block, a redacted thinking block or an encrypted reasoning item goes back
//! at exactly its original position.

use std::collections::{BTreeMap, HashSet};

use patchbridge_protocol::{Block, Message, ModelRequest, ModelState};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::AdapterError;

/// The `data` of every adapter's ModelState.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateData<E> {
    pub messages: BTreeMap<String, E>,
}

/// Reads the request's ModelState for an adapter owning `format`. A state of another format is an error
/// (never dropped); a `data` that does not have this format's shape is an invalid request.
pub(crate) fn read<E: DeserializeOwned>(
    format: &'static str,
    request: &ModelRequest,
) -> Result<BTreeMap<String, E>, AdapterError> {
    let Some(state) = &request.model_state else {
        return Ok(BTreeMap::new());
    };
    if state.format != format {
        return Err(AdapterError::ModelStateFormatMismatch {
            expected: format,
            found: state.format.clone(),
        });
    }
    let data: StateData<E> = serde_json::from_value(state.data.clone()).map_err(|e| {
        AdapterError::InvalidRequest(format!(
            "modelState data is not valid \"{format}\" state: {e}"
        ))
    })?;
    Ok(data.messages)
}

/// What a decoder keeps from the request to build the full next state: the previous entries of messages
/// still in the request (pruned up front, so an orphan entry is never carried) and the request's message ids
/// (to keep the new id unique). The request itself is not kept: a stream holds only what it needs.
#[derive(Debug)]
pub(crate) struct Continuation<E> {
    format: &'static str,
    previous: BTreeMap<String, E>,
    used_ids: HashSet<String>,
    message_count: usize,
}

impl<E: Serialize + DeserializeOwned> Continuation<E> {
    pub(crate) fn new(format: &'static str, request: &ModelRequest) -> Result<Self, AdapterError> {
        let used_ids: HashSet<String> = request.messages.iter().map(|m| m.id.clone()).collect();
        let mut previous = read::<E>(format, request)?;
        previous.retain(|id, _| used_ids.contains(id));
        Ok(Continuation {
            format,
            previous,
            used_ids,
            message_count: request.messages.len(),
        })
    }

    /// The id for the new assistant message (see [`unique_id`]).
    pub(crate) fn message_id(&self, provider_id: Option<&str>) -> String {
        unique_id(provider_id, &self.used_ids, self.message_count)
    }

    /// The full next state: the previous entries plus the new message's entry; `None` when empty.
    pub(crate) fn next_state(
        &mut self,
        new_entry: Option<(String, E)>,
    ) -> Result<Option<ModelState>, AdapterError> {
        let mut messages = std::mem::take(&mut self.previous);
        if let Some((id, entry)) = new_entry {
            messages.insert(id, entry);
        }
        if messages.is_empty() {
            return Ok(None);
        }
        let data = serde_json::to_value(StateData { messages }).map_err(|e| {
            AdapterError::InvalidRequest(format!("model state could not be serialised: {e}"))
        })?;
        Ok(Some(ModelState {
            format: self.format.to_owned(),
            data,
        }))
    }
}

/// The id for a new assistant message of `request` (see [`unique_id`]).
pub(crate) fn unique_message_id(provider_id: Option<&str>, request: &ModelRequest) -> String {
    let used: HashSet<String> = request.messages.iter().map(|m| m.id.clone()).collect();
    unique_id(provider_id, &used, request.messages.len())
}

/// The provider's id unless it is missing or already used in this conversation (some OpenAI-compatible
/// servers send constant ids), in which case a deterministic suffix makes it unique, because ModelState entries
/// are keyed by message id.
fn unique_id(provider_id: Option<&str>, used: &HashSet<String>, message_count: usize) -> String {
    let base = match provider_id {
        Some(id) if !id.trim().is_empty() => id.to_owned(),
        _ => "assistant".to_owned(),
    };
    if !used.contains(&base) {
        return base;
    }
    let mut n = message_count;
    loop {
        let candidate = format!("{base}-{n}");
        if !used.contains(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

/// One provider content item of an assistant message, in provider order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Part {
    /// The provider item verbatim; when present it is sent instead of encoding `blocks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
    /// Indexes of the neutral blocks this item produced (shown reasoning for a raw thinking item).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<u32>,
}

/// Records the parts of the message being decoded.
#[derive(Debug, Default)]
pub(crate) struct PartsBuilder {
    parts: Vec<Part>,
    has_raw: bool,
}

impl PartsBuilder {
    pub(crate) fn block(&mut self, index: u32) {
        self.parts.push(Part {
            raw: None,
            blocks: vec![index],
        });
    }

    pub(crate) fn raw(&mut self, raw: Value, blocks: Vec<u32>) {
        self.has_raw = true;
        self.parts.push(Part {
            raw: Some(raw),
            blocks,
        });
    }

    /// The entry to store, or `None` when the message has nothing private (plain text and tool calls need no
    /// state: the neutral blocks say everything).
    pub(crate) fn finish(self) -> Option<Vec<Part>> {
        self.has_raw.then_some(self.parts)
    }
}

/// What to send for one assistant message, in order.
#[derive(Debug)]
pub(crate) enum Planned<'a> {
    Raw(&'a Value),
    Block(&'a Block),
}

/// Lays out an assistant message for encoding: with an entry, its parts in order (raw items verbatim, neutral
/// blocks where they were); without one, the neutral blocks. Fails when the entry does not describe exactly
/// this message's blocks, because sending private state at the wrong place corrupts the conversation.
pub(crate) fn plan<'a>(
    message: &'a Message,
    parts: Option<&'a Vec<Part>>,
) -> Result<Vec<Planned<'a>>, AdapterError> {
    let Some(parts) = parts else {
        return Ok(message.blocks.iter().map(Planned::Block).collect());
    };
    let mismatch = || {
        AdapterError::InvalidRequest(format!(
            "modelState entry for message {} does not match its blocks (was the message edited?)",
            message.id
        ))
    };
    let mut planned = Vec::with_capacity(parts.len());
    let mut expected = 0u32;
    for part in parts {
        for &index in &part.blocks {
            if index != expected {
                return Err(mismatch());
            }
            let block = message.blocks.get(index as usize).ok_or_else(mismatch)?;
            if part.raw.is_some() {
                if !matches!(block, Block::Reasoning { .. }) {
                    return Err(mismatch());
                }
            } else {
                planned.push(Planned::Block(block));
            }
            expected += 1;
        }
        if let Some(raw) = &part.raw {
            planned.push(Planned::Raw(raw));
        }
    }
    if expected as usize != message.blocks.len() {
        return Err(mismatch());
    }
    Ok(planned)
}
