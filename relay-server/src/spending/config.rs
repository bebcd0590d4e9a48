//! The `spending` section of the configuration: per-user limits on model calls over windows, on concurrent
//! calls, and per model on top. Parsed strictly like the rest of the file; [`SpendingConfig::validate`] turns it
//! into the [`Policy`] the relay applies. Defaults protect an operator who never wrote the section, and no
//! bound can be switched off (zero is an error, as for `limits`).

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;

use super::policy::{Policy, Scope, Window, SLICES_PER_SLIDING_WINDOW};
use crate::config::error::ConfigError;

/// Longest window: 31 days.
pub const MAX_WINDOW_SECONDS: u64 = 31 * 86_400;
/// Largest count any limit may be (far beyond any real budget, and safe in a signed 64-bit column).
const MAX_COUNT: u64 = 1_000_000_000_000_000;

/// `spending`: every user's limits on the relay's model calls.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SpendingConfig {
    /// Limits over windows for all of a user's model calls together.
    pub windows: Vec<WindowConfig>,
    /// Model calls one user may have running at the same time.
    pub max_concurrent_calls: u64,
    /// Output tokens counted for a call whose stream ends without reported usage when its model sets no
    /// `maxOutputTokens` (with one, that is counted).
    pub default_output_tokens: u64,
    /// One model's own limits (by model id), checked on top of the limits for all models.
    pub models: BTreeMap<String, ModelSpendingConfig>,
}

impl Default for SpendingConfig {
    fn default() -> Self {
        SpendingConfig {
            windows: vec![
                WindowConfig {
                    window_seconds: 60,
                    sliding: true,
                    calls: Some(60),
                    input_tokens: None,
                    output_tokens: None,
                },
                WindowConfig {
                    window_seconds: 86_400,
                    sliding: true,
                    calls: Some(1_000),
                    input_tokens: Some(5_000_000),
                    output_tokens: Some(500_000),
                },
            ],
            max_concurrent_calls: 4,
            default_output_tokens: 4_096,
            models: BTreeMap::new(),
        }
    }
}

/// One window and the counts allowed in it (at least one of them).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WindowConfig {
    pub window_seconds: u64,
    /// `true`: the usage of the last `windowSeconds` (counted in sixtieths of the window); `false`: windows that
    /// start at multiples of `windowSeconds` since the Unix epoch (a day resets at 00:00 UTC).
    #[serde(default)]
    pub sliding: bool,
    #[serde(default)]
    pub calls: Option<u64>,
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
}

/// `spending.models.<id>`: a costlier model's own limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelSpendingConfig {
    #[serde(default)]
    pub windows: Vec<WindowConfig>,
    #[serde(default)]
    pub max_concurrent_calls: Option<u64>,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        path: path.into(),
        message: message.into(),
    }
}

fn positive(path: &str, value: u64, max: u64) -> Result<u64, ConfigError> {
    if value == 0 {
        return Err(err(
            path,
            "must be positive (spending limits cannot be switched off)",
        ));
    }
    if value > max {
        return Err(err(path, format!("must be at most {max}")));
    }
    Ok(value)
}

fn windows(path: &str, list: &[WindowConfig]) -> Result<Vec<Window>, ConfigError> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(list.len());
    for (i, w) in list.iter().enumerate() {
        let at = |f: &str| format!("{path}[{i}].{f}");
        let seconds = positive(&at("windowSeconds"), w.window_seconds, MAX_WINDOW_SECONDS)?;
        if w.sliding && seconds % SLICES_PER_SLIDING_WINDOW != 0 {
            return Err(err(
                at("windowSeconds"),
                format!(
                    "a sliding window must be a multiple of {SLICES_PER_SLIDING_WINDOW} seconds"
                ),
            ));
        }
        if !seen.insert((seconds, w.sliding)) {
            return Err(err(
                at("windowSeconds"),
                "another window of this list has the same length and kind; put its limits together",
            ));
        }
        let count = |field: &str, value: Option<u64>| {
            value
                .map(|v| positive(&at(field), v, MAX_COUNT))
                .transpose()
        };
        let window = Window {
            seconds,
            sliding: w.sliding,
            calls: count("calls", w.calls)?,
            input_tokens: count("inputTokens", w.input_tokens)?,
            output_tokens: count("outputTokens", w.output_tokens)?,
        };
        if window.calls.is_none() && window.input_tokens.is_none() && window.output_tokens.is_none()
        {
            return Err(err(
                format!("{path}[{i}]"),
                "must limit at least one of calls, inputTokens, outputTokens",
            ));
        }
        out.push(window);
    }
    Ok(out)
}

impl SpendingConfig {
    /// Checks every field against the configured models (`models`: each id with its `maxOutputTokens`).
    /// `call_lease_seconds`: how long a call counts as running if its relay died before settling it.
    pub fn validate(
        &self,
        models: &[(String, Option<u32>)],
        call_lease_seconds: u64,
    ) -> Result<Policy, ConfigError> {
        if self.windows.is_empty() {
            return Err(err(
                "spending.windows",
                "must list at least one window (spending limits cannot be switched off)",
            ));
        }
        let global = Scope {
            model: None,
            windows: windows("spending.windows", &self.windows)?,
            max_concurrent: Some(positive(
                "spending.maxConcurrentCalls",
                self.max_concurrent_calls,
                1_000_000,
            )?),
        };
        let default_output_tokens = positive(
            "spending.defaultOutputTokens",
            self.default_output_tokens,
            100_000_000,
        )?;
        let mut per_model = BTreeMap::new();
        for (id, m) in &self.models {
            let path = format!("spending.models.{id}");
            if !models.iter().any(|(known, _)| known == id) {
                return Err(err(
                    &path,
                    format!("`{id}` is not one of the configured models"),
                ));
            }
            let max_concurrent = m
                .max_concurrent_calls
                .map(|v| positive(&format!("{path}.maxConcurrentCalls"), v, 1_000_000))
                .transpose()?;
            let windows = windows(&format!("{path}.windows"), &m.windows)?;
            if windows.is_empty() && max_concurrent.is_none() {
                return Err(err(
                    &path,
                    "must set windows or maxConcurrentCalls (omit the model to use only the limits for all models)",
                ));
            }
            per_model.insert(
                id.clone(),
                Scope {
                    model: Some(id.clone()),
                    windows,
                    max_concurrent,
                },
            );
        }
        let fallback_output = models
            .iter()
            .map(|(id, max)| (id.clone(), max.map_or(default_output_tokens, u64::from)))
            .collect();
        Ok(Policy::new(
            global,
            per_model,
            fallback_output,
            default_output_tokens,
            call_lease_seconds,
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn validate(value: serde_json::Value) -> Result<Policy, ConfigError> {
        let config: SpendingConfig = serde_json::from_value(value).expect("parses");
        config.validate(&[("gpt".into(), Some(1000)), ("opus".into(), None)], 960)
    }

    #[test]
    fn an_absent_section_gives_limits_on_calls_tokens_and_concurrency() {
        let policy = SpendingConfig::default()
            .validate(&[("gpt".into(), None)], 960)
            .unwrap();
        let limits: Vec<_> = policy
            .usage(&Default::default(), 0)
            .into_iter()
            .map(|l| (l.kind.as_str(), l.window_seconds, l.max))
            .collect();
        assert_eq!(
            limits,
            [
                ("concurrentCalls", None, 4),
                ("calls", Some(60), 60),
                ("calls", Some(86_400), 1_000),
                ("inputTokens", Some(86_400), 5_000_000),
                ("outputTokens", Some(86_400), 500_000),
            ]
        );
        assert_eq!(policy.fallback_output_tokens("gpt"), 4_096);
    }

    #[test]
    fn zero_is_an_error_naming_the_field_as_for_the_other_bounds() {
        for (config, path) in [
            (
                json!({ "maxConcurrentCalls": 0 }),
                "spending.maxConcurrentCalls",
            ),
            (
                json!({ "defaultOutputTokens": 0 }),
                "spending.defaultOutputTokens",
            ),
            (
                json!({ "windows": [ { "windowSeconds": 60, "calls": 0 } ] }),
                "spending.windows[0].calls",
            ),
            (
                json!({ "windows": [ { "windowSeconds": 0, "calls": 1 } ] }),
                "spending.windows[0].windowSeconds",
            ),
            (
                json!({ "models": { "opus": { "maxConcurrentCalls": 0 } } }),
                "spending.models.opus.maxConcurrentCalls",
            ),
        ] {
            let e = validate(config.clone()).unwrap_err();
            assert_eq!(e.path, path, "{config}");
            assert!(e.message.contains("cannot be switched off"), "{e}");
        }
        let e = validate(json!({ "windows": [] })).unwrap_err();
        assert_eq!(e.path, "spending.windows");
    }

    #[test]
    fn windows_must_limit_something_fit_their_slices_and_not_repeat() {
        let e = validate(json!({ "windows": [ { "windowSeconds": 60 } ] })).unwrap_err();
        assert_eq!(e.path, "spending.windows[0]");
        let e = validate(
            json!({ "windows": [ { "windowSeconds": 90, "sliding": true, "calls": 1 } ] }),
        )
        .unwrap_err();
        assert_eq!(e.path, "spending.windows[0].windowSeconds");
        let e = validate(json!({ "windows": [
            { "windowSeconds": 60, "calls": 1 }, { "windowSeconds": 60, "inputTokens": 1 } ] }))
        .unwrap_err();
        assert_eq!(e.path, "spending.windows[1].windowSeconds");
        let e = validate(json!({ "windows": [ { "windowSeconds": 2_678_401, "calls": 1 } ] }))
            .unwrap_err();
        assert!(e.message.contains("at most"), "{e}");
        // A fixed and a sliding window of the same length are different windows.
        validate(json!({ "windows": [
            { "windowSeconds": 60, "calls": 1 }, { "windowSeconds": 60, "sliding": true, "calls": 1 } ] }))
        .unwrap();
    }

    #[test]
    fn a_models_own_limits_must_name_a_configured_model_and_set_something() {
        let e = validate(json!({ "models": { "nope": { "maxConcurrentCalls": 1 } } })).unwrap_err();
        assert_eq!(e.path, "spending.models.nope");
        let e = validate(json!({ "models": { "opus": {} } })).unwrap_err();
        assert_eq!(e.path, "spending.models.opus");
        let policy =
            validate(json!({ "models": { "opus": { "maxConcurrentCalls": 1 } } })).unwrap();
        assert_eq!(policy.scopes("opus").count(), 2);
        assert_eq!(policy.scopes("gpt").count(), 1);
        // Without usage, a model's maxOutputTokens is what a call may have cost in output.
        assert_eq!(policy.fallback_output_tokens("gpt"), 1000);
        assert_eq!(policy.fallback_output_tokens("opus"), 4096);
    }
}
