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

/// The id for a new assistant message of `request`: the provider's id unless it is missing or already used in
/// the conversation, in which case a deterministic suffix makes it unique (ModelState entries are keyed by
/// message id).
pub fn unique_message_id(provider_id: Option<&str>, request: &ModelRequest) -> String {
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
    /// Indexes of the neutral blocks this item produced (shown reasoning for a raw thinking item; the text parts
    /// of one Responses output message).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<u32>,
    /// OpenAI Responses only: the `phase` of an output message item, sent back with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<MessagePhase>,
}

/// The `phase` OpenAI Responses puts on assistant message items (closed set of its spec, `MessagePhase`); the
/// spec asks clients to preserve it and send it back. A value outside the set is not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MessagePhase {
    Commentary,
    FinalAnswer,
}

/// Records the parts of the message being decoded, keyed by the provider's position of each item (Responses
/// `output_index`, Anthropic content `index`), so the entry follows the provider's order whatever order the
/// items finish in.
#[derive(Debug, Default)]
pub(crate) struct PartsBuilder {
    parts: BTreeMap<u64, Part>,
    /// Whether the entry says something the neutral blocks do not: a raw item, a phase, or an item made of
    /// several blocks.
    needed: bool,
}

impl PartsBuilder {
    /// The item at `position` produced the neutral blocks `blocks` (nothing is recorded for an item without
    /// blocks: it has nothing to send back).
    pub(crate) fn blocks(&mut self, position: u64, blocks: Vec<u32>, phase: Option<MessagePhase>) {
        if blocks.is_empty() {
            return;
        }
        self.needed |= phase.is_some() || blocks.len() > 1;
        self.parts.insert(
            position,
            Part {
                raw: None,
                blocks,
                phase,
            },
        );
    }

    pub(crate) fn raw(&mut self, position: u64, raw: Value, blocks: Vec<u32>) {
        self.needed = true;
        self.parts.insert(
            position,
            Part {
                raw: Some(raw),
                blocks,
                phase: None,
            },
        );
    }

    /// The entry to store, or `None` when the message has nothing private (plain text and tool calls, one block
    /// per item, need no state: the neutral blocks say everything).
    pub(crate) fn finish(self) -> Option<Vec<Part>> {
        self.needed.then(|| self.parts.into_values().collect())
    }
}

/// What to send for one assistant message, in order: one entry per provider item.
#[derive(Debug)]
pub(crate) enum Planned<'a> {
    /// A provider item kept verbatim.
    Raw(&'a Value),
    /// Neutral blocks forming one provider item: a single block without an entry; with one, the blocks of one
    /// recorded item (the text parts of one Responses output message, with its phase).
    Blocks {
        blocks: Vec<&'a Block>,
        phase: Option<MessagePhase>,
    },
}

/// The `MODEL_STATE_MISMATCH` error for `message`.
pub(crate) fn mismatch(message: &Message, detail: impl Into<String>) -> AdapterError {
    AdapterError::ModelStateMismatch {
        message_id: message.id.clone(),
        detail: detail.into(),
    }
}

/// Lays out an assistant message for encoding: with an entry, its parts in order (raw items verbatim, neutral
/// blocks where they were); without one, each neutral block as its own item. Fails with
/// `MODEL_STATE_MISMATCH` when the entry does not describe exactly this message's blocks (every block named
/// once, raw items covering only reasoning), because sending private state at the wrong place corrupts the
/// conversation. The parts may name the blocks in another order than the blocks have: a provider may finish
/// its items out of order, and the parts follow the provider's order.
pub(crate) fn plan<'a>(
    message: &'a Message,
    parts: Option<&'a Vec<Part>>,
) -> Result<Vec<Planned<'a>>, AdapterError> {
    let Some(parts) = parts else {
        return Ok(message
            .blocks
            .iter()
            .map(|b| Planned::Blocks {
                blocks: vec![b],
                phase: None,
            })
            .collect());
    };
    let mut seen = vec![false; message.blocks.len()];
    let mut planned = Vec::with_capacity(parts.len());
    for part in parts {
        let mut blocks = Vec::with_capacity(part.blocks.len());
        for &index in &part.blocks {
            let block = message.blocks.get(index as usize).ok_or_else(|| {
                mismatch(
                    message,
                    format!("it names block {index}, which the message does not have"),
                )
            })?;
            if std::mem::replace(&mut seen[index as usize], true) {
                return Err(mismatch(message, format!("it names block {index} twice")));
            }
            if part.raw.is_some() && !matches!(block, Block::Reasoning { .. }) {
                return Err(mismatch(
                    message,
                    format!("block {index} is no longer the reasoning its provider item produced"),
                ));
            }
            blocks.push(block);
        }
        match &part.raw {
            Some(raw) => planned.push(Planned::Raw(raw)),
            None if blocks.is_empty() => {
                return Err(mismatch(message, "it has an empty part"));
            }
            None => planned.push(Planned::Blocks {
                blocks,
                phase: part.phase,
            }),
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(mismatch(
            message,
            format!("block {missing} of the message is not in it (was the message edited?)"),
        ));
    }
    Ok(planned)
}
