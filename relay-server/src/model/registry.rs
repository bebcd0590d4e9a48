//! The models a relay offers: the configured upstream models, or the scripted demo model when the relay was
//! started for the demo with no model configured (never as a fallback for a broken configuration), and each
//! model's fallback chain (`model/failover.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use patchbridge_protocol::{
    Capabilities, InputKind, ModelInfo, ModelsDocument, RelayErrorCode, PROTOCOL_VERSION,
};

use crate::config::{Validated, ValidatedModel};
use crate::error::RelayError;

/// The id and provider name of the scripted demo model in `GET /models`.
pub const SCRIPTED_ID: &str = "scripted";
pub const SCRIPTED_PROVIDER: &str = "scripted-demo";

#[derive(Clone)]
pub enum ModelEntry {
    Upstream(Arc<ValidatedModel>),
    Scripted,
}

impl ModelEntry {
    pub fn id(&self) -> &str {
        match self {
            ModelEntry::Upstream(m) => &m.config.id,
            ModelEntry::Scripted => SCRIPTED_ID,
        }
    }
}

#[derive(Clone)]
pub struct ModelRegistry {
    entries: Vec<ModelEntry>,
    default_id: String,
    preview_only: bool,
    /// By model id: the models a call of it fails over to, in order (its fallbacks, theirs after each).
    fallbacks: HashMap<String, Vec<Arc<ValidatedModel>>>,
}

impl ModelRegistry {
    pub fn new(config: &Validated) -> Self {
        if config.demo_active {
            return ModelRegistry {
                entries: vec![ModelEntry::Scripted],
                default_id: SCRIPTED_ID.into(),
                preview_only: true,
                fallbacks: HashMap::new(),
            };
        }
        let models: Vec<Arc<ValidatedModel>> =
            config.models.iter().map(|m| Arc::new(m.clone())).collect();
        let configs: Vec<_> = config.models.iter().map(|m| m.config.clone()).collect();
        let index: HashMap<&str, usize> = configs
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.as_str(), i))
            .collect();
        let fallbacks = (0..models.len())
            .map(|i| {
                let chain = crate::config::fallbacks::chain(&configs, &index, i);
                let rest = chain[1..].iter().map(|&k| models[k].clone()).collect();
                (configs[i].id.clone(), rest)
            })
            .collect();
        let default_id = config.default_model.clone().unwrap_or_default();
        ModelRegistry {
            entries: models.into_iter().map(ModelEntry::Upstream).collect(),
            default_id,
            preview_only: false,
            fallbacks,
        }
    }

    /// The models a call of `id` fails over to, in order (empty without fallbacks).
    pub fn fallbacks(&self, id: &str) -> &[Arc<ValidatedModel>] {
        self.fallbacks.get(id).map_or(&[], Vec::as_slice)
    }

    /// The model a request names, or the default. Unknown ids fail before any upstream call.
    pub fn pick(&self, requested: Option<&str>) -> Result<&ModelEntry, RelayError> {
        let id = requested.unwrap_or(&self.default_id);
        self.entries.iter().find(|e| e.id() == id).ok_or_else(|| {
            RelayError::new(
                RelayErrorCode::UnknownModel,
                format!("unknown model `{id}`"),
            )
        })
    }

    /// The `GET {base}/models` document (`docs/protocol.md` §5).
    pub fn describe(&self) -> ModelsDocument {
        let models = self
            .entries
            .iter()
            .map(|e| match e {
                ModelEntry::Upstream(m) => ModelInfo {
                    id: m.config.id.clone(),
                    provider: m.config.provider.as_str().to_owned(),
                    label: m
                        .config
                        .label
                        .clone()
                        .unwrap_or_else(|| m.config.id.clone()),
                    preview_only: false,
                    capabilities: Capabilities {
                        tools: m.config.capabilities.tools,
                        images: m.inputs.contains(&InputKind::Image),
                        inputs: m.inputs.clone(),
                        reasoning: m.config.capabilities.reasoning,
                    },
                },
                ModelEntry::Scripted => ModelInfo {
                    id: SCRIPTED_ID.to_owned(),
                    provider: SCRIPTED_PROVIDER.to_owned(),
                    label: "Scripted demo (not AI)".to_owned(),
                    preview_only: true,
                    // The demo answers every message with a script and reads no file, so it refuses none: the
                    // widget's attach journeys can be tried against it.
                    capabilities: Capabilities {
                        tools: true,
                        inputs: InputKind::ALL.to_vec(),
                        images: true,
                        reasoning: false,
                    },
                },
            })
            .collect();
        ModelsDocument {
            protocol_version: PROTOCOL_VERSION,
            preview_only: self.preview_only,
            default_model: self.default_id.clone(),
            models,
        }
    }
}
