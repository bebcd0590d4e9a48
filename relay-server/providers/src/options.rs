//! What an adapter needs from configuration ([`ModelOptions`]) and what it hands back for I/O
//! ([`UpstreamRequest`]). No secrets and no URLs live here: the relay adds base URL and auth headers.

use serde::Deserialize;

/// Per-model settings the translation needs. Deserialisable (strictly, with the camelCase keys of the relay's
/// configuration file) so the relay can embed these types in its configuration instead of mirroring them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelOptions {
    /// The provider's model name, e.g. `gpt-4.1-mini` or `claude-sonnet-4-5`.
    pub upstream_model: String,
    /// Output token cap. Anthropic requires one: [`DEFAULT_ANTHROPIC_MAX_TOKENS`] is used when absent.
    #[serde(default)]
    pub max_output_tokens: Option<u32>,
    /// Reasoning settings; absent means the provider's default (no thinking for Anthropic).
    #[serde(default)]
    pub reasoning: Option<ReasoningOptions>,
    /// Optional system prompt sent before the conversation.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Ask the provider to cache the stable prefix of each request (on by default): Anthropic `cache_control`
    /// breakpoints on the tools, the system prompt and the conversation so far; OpenAI `prompt_cache_key`.
    #[serde(default = "default_prompt_caching")]
    pub prompt_caching: bool,
}

fn default_prompt_caching() -> bool {
    true
}

impl ModelOptions {
    /// Options with only the upstream model name set.
    pub fn new(upstream_model: impl Into<String>) -> Self {
        ModelOptions {
            upstream_model: upstream_model.into(),
            max_output_tokens: None,
            reasoning: None,
            system_prompt: None,
            prompt_caching: true,
        }
    }
}

/// Anthropic's Messages API rejects requests without `max_tokens`; this is used when none is configured.
pub const DEFAULT_ANTHROPIC_MAX_TOKENS: u32 = 8192;

/// Reasoning settings. Each provider reads the fields it understands: OpenAI Chat and Responses use
/// `effort` (and Responses `summary`), Anthropic uses `budget_tokens` (extended thinking).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReasoningOptions {
    /// OpenAI `reasoning_effort` / `reasoning.effort`.
    #[serde(default)]
    pub effort: Option<ReasoningEffort>,
    /// Anthropic `thinking.budget_tokens` (at least 1024 by Anthropic's rules; must be below max tokens).
    #[serde(default)]
    pub budget_tokens: Option<u32>,
    /// OpenAI Responses `reasoning.summary`; defaults to `auto` when reasoning is configured.
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
}

patchbridge_protocol::string_enum! {
    /// OpenAI `reasoning_effort` / `reasoning.effort` (closed set).
    pub enum ReasoningEffort {
        /// `minimal`.
        Minimal = "minimal",
        /// `low`.
        Low = "low",
        /// `medium`.
        Medium = "medium",
        /// `high`.
        High = "high",
    }
}

patchbridge_protocol::string_enum! {
    /// OpenAI Responses `reasoning.summary` (closed set).
    pub enum ReasoningSummary {
        /// `auto`.
        Auto = "auto",
        /// `concise`.
        Concise = "concise",
        /// `detailed`.
        Detailed = "detailed",
    }
}

/// A request ready to send: the relay joins `path` to its configured base URL, adds auth headers and
/// `content-type: application/json`, and does the I/O. The body always has `"stream": true`.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamRequest {
    /// `/chat/completions`, `/responses` or `/messages`: [`crate::ProviderKind::path`].
    pub path: &'static str,
    /// Non-secret headers the provider needs, e.g. `anthropic-version`.
    pub headers: Vec<(&'static str, String)>,
    pub body: serde_json::Value,
}
