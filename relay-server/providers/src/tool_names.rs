//! Neutral tool names (`local.device_get`, `todo.add`) may contain characters that OpenAI and Anthropic reject
//! in function names (both allow only `[A-Za-z0-9_-]`, at most 64 characters). This maps each name of a
//! request to a provider-safe name and back, deterministically from the request alone, so the encoder and the
//! decoder of one call agree without sharing state.

use std::collections::{HashMap, HashSet};

use patchbridge_protocol::{Block, ModelRequest};

const MAX_LEN: usize = 64;

#[derive(Debug, Default)]
pub(crate) struct ToolNames {
    to_provider: HashMap<String, String>,
    to_neutral: HashMap<String, String>,
}

fn is_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        s.push_str("tool");
    }
    s.truncate(MAX_LEN);
    s
}

impl ToolNames {
    /// Names of this turn's tools first, then names used by earlier tool calls (tools may have been
    /// unregistered since, but their calls are still in the history). Safe names keep themselves; the others get
    /// a sanitised name, with a numeric suffix when that is taken.
    pub(crate) fn new(request: &ModelRequest) -> Self {
        let mut names: Vec<&str> = Vec::new();
        let mut seen = HashSet::new();
        let history = request
            .messages
            .iter()
            .flat_map(|m| m.blocks.iter())
            .filter_map(|b| match b {
                Block::ToolCall { name, .. } => Some(name.as_str()),
                _ => None,
            });
        for name in request.tools.iter().map(|t| t.name.as_str()).chain(history) {
            if seen.insert(name) {
                names.push(name);
            }
        }
        let mut map = ToolNames::default();
        let mut taken: HashSet<String> = names
            .iter()
            .filter(|n| is_safe(n))
            .map(|n| n.to_string())
            .collect();
        for name in names {
            let provider = if is_safe(name) {
                name.to_owned()
            } else {
                let base = sanitize(name);
                let mut candidate = base.clone();
                let mut n = 2;
                while taken.contains(&candidate) {
                    let suffix = format!("_{n}");
                    let mut b = base.clone();
                    b.truncate(MAX_LEN - suffix.len());
                    candidate = format!("{b}{suffix}");
                    n += 1;
                }
                taken.insert(candidate.clone());
                candidate
            };
            map.to_neutral.insert(provider.clone(), name.to_owned());
            map.to_provider.insert(name.to_owned(), provider);
        }
        map
    }

    pub(crate) fn provider<'a>(&'a self, neutral: &'a str) -> &'a str {
        self.to_provider
            .get(neutral)
            .map(String::as_str)
            .unwrap_or(neutral)
    }

    /// Unknown names pass through: the runtime rejects tools that are not in the turn's snapshot.
    pub(crate) fn neutral<'a>(&'a self, provider: &'a str) -> &'a str {
        self.to_neutral
            .get(provider)
            .map(String::as_str)
            .unwrap_or(provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use patchbridge_protocol::ToolDefinition;
    use serde_json::json;

    fn request(names: &[&str]) -> ModelRequest {
        ModelRequest {
            model: None,
            messages: vec![],
            model_state: None,
            tools: names
                .iter()
                .map(|n| ToolDefinition {
                    name: n.to_string(),
                    description: String::new(),
                    input_schema: json!({}),
                })
                .collect(),
            conversation_id: None,
        }
    }

    #[test]
    fn dotted_names_map_to_safe_names_and_back() {
        let names = ToolNames::new(&request(&["local.device_get", "todo_add"]));
        assert_eq!(names.provider("local.device_get"), "local_device_get");
        assert_eq!(names.neutral("local_device_get"), "local.device_get");
        assert_eq!(names.provider("todo_add"), "todo_add");
        assert_eq!(names.neutral("todo_add"), "todo_add");
    }

    #[test]
    fn sanitised_name_never_steals_an_existing_safe_name() {
        let names = ToolNames::new(&request(&["a.b", "a_b"]));
        assert_eq!(names.provider("a_b"), "a_b");
        assert_eq!(names.provider("a.b"), "a_b_2");
        assert_eq!(names.neutral("a_b_2"), "a.b");
        assert_eq!(names.neutral("a_b"), "a_b");
    }

    #[test]
    fn long_names_are_truncated_to_64_and_unique() {
        let long_a = format!("x.{}", "a".repeat(80));
        let long_b = format!("x:{}", "a".repeat(80));
        let names = ToolNames::new(&request(&[&long_a, &long_b]));
        let pa = names.provider(&long_a).to_owned();
        let pb = names.provider(&long_b).to_owned();
        assert!(pa.len() <= 64 && pb.len() <= 64);
        assert_ne!(pa, pb);
        assert_eq!(names.neutral(&pb), long_b);
    }
}
