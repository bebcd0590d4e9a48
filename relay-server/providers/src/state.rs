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

/// The full next state: previous entries of messages still in the request, plus the new message's entry.
pub(crate) fn next<E: Serialize>(
    format: &'static str,
    mut previous: BTreeMap<String, E>,
    request: &ModelRequest,
    new_entry: Option<(String, E)>,
) -> Result<Option<ModelState>, AdapterError> {
    let ids: HashSet<&str> = request.messages.iter().map(|m| m.id.as_str()).collect();
    previous.retain(|id, _| ids.contains(id.as_str()));
    if let Some((id, entry)) = new_entry {
        previous.insert(id, entry);
    }
    if previous.is_empty() {
        return Ok(None);
    }
    let data = serde_json::to_value(StateData { messages: previous }).map_err(|e| {
        AdapterError::InvalidRequest(format!("model state could not be serialised: {e}"))
    })?;
    Ok(Some(ModelState {
        format: format.to_owned(),
        data,
    }))
}

/// The id for the new assistant message: the provider's id unless it is missing or already used in this
/// conversation (some OpenAI-compatible servers send constant ids), in which case a deterministic suffix makes
/// it unique, because ModelState entries are keyed by message id.
pub(crate) fn unique_message_id(provider_id: Option<&str>, request: &ModelRequest) -> String {
    let used: HashSet<&str> = request.messages.iter().map(|m| m.id.as_str()).collect();
    let base = match provider_id {
        Some(id) if !id.trim().is_empty() => id.to_owned(),
        _ => "assistant".to_owned(),
    };
    if !used.contains(base.as_str()) {
        return base;
    }
    let mut n = request.messages.len();
    loop {
        let candidate = format!("{base}-{n}");
        if !used.contains(candidate.as_str()) {
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
