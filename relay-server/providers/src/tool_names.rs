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

/// The first free `{stem}_{n}` (n from 2) for `base`, resuming each stem's search where it last stopped.
fn suffixed(
    base: &str,
    next: &mut HashMap<(usize, String), u64>,
    taken: &HashSet<String>,
    tries: &mut usize,
) -> String {
    let mut digits = 1usize;
    loop {
        // Numbers with `digits` digits: 2..=9 for one digit, then 10..=99, ...
        let low = if digits == 1 {
            2
        } else {
            10u64.pow(digits as u32 - 1)
        };
        let high = 10u64.saturating_pow(digits as u32);
        let mut stem = base.to_owned();
        stem.truncate(MAX_LEN - 1 - digits);
        let key = (digits, stem);
        let mut n = next.get(&key).copied().unwrap_or(low);
        while n < high {
            *tries += 1;
            let candidate = format!("{}_{n}", key.1);
            if !taken.contains(&candidate) {
                next.insert(key, n + 1);
                return candidate;
            }
            n += 1;
        }
        next.insert(key, high);
        digits += 1;
    }
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
        Self::assign(&names).0
    }

    /// Assigns provider names to `names` (in order) and counts the candidate names tried. Same result as
    /// trying `base`, `base_2`, `base_3`, ... against every name taken so far, but linear in the input: each
    /// run of candidates remembers where its last search stopped. That is exact because a candidate once taken
    /// stays taken, and every base whose candidates share a stem (the same truncation at the same suffix
    /// width) produces the same candidates. Without it, 8,000 colliding names cost 32 million tries.
    fn assign(names: &[&str]) -> (Self, usize) {
        let mut map = ToolNames::default();
        let mut taken: HashSet<String> = names
            .iter()
            .filter(|n| is_safe(n))
            .map(|n| n.to_string())
            .collect();
        // (suffix digits, stem) -> the next number to try for that stem.
        let mut next: HashMap<(usize, String), u64> = HashMap::new();
        let mut tries = 0usize;
        for &name in names {
            let provider = if is_safe(name) {
                name.to_owned()
            } else {
                let base = sanitize(name);
                tries += 1;
                let candidate = if taken.contains(&base) {
                    suffixed(&base, &mut next, &taken, &mut tries)
                } else {
                    base
                };
                taken.insert(candidate.clone());
                candidate
            };
            map.to_neutral.insert(provider.clone(), name.to_owned());
            map.to_provider.insert(name.to_owned(), provider);
        }
        (map, tries)
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

    /// The mapping of the former quadratic search, kept as the reference the fast one must equal.
    fn reference(names: &[&str]) -> Vec<String> {
        let mut taken: HashSet<String> = names
            .iter()
            .filter(|n| is_safe(n))
            .map(|n| n.to_string())
            .collect();
        let mut out = Vec::new();
        for name in names {
            if is_safe(name) {
                out.push(name.to_string());
                continue;
            }
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
            out.push(candidate);
        }
        out
    }

    fn assigned(names: &[&str]) -> (Vec<String>, usize) {
        let (map, tries) = ToolNames::assign(names);
        (
            names.iter().map(|n| map.provider(n).to_owned()).collect(),
            tries,
        )
    }

    #[test]
    fn colliding_names_get_the_same_names_as_the_exhaustive_search() {
        let long = "y".repeat(70);
        let sets: Vec<Vec<String>> = vec![
            vec![
                "a.b".into(),
                "a_b".into(),
                "a:b".into(),
                "a_b_2".into(),
                "a/b".into(),
            ],
            (0..30)
                .map(|i| format!("t.{i}"))
                .chain((0..30).map(|_| "t.x".into()))
                .collect(),
            (0..25).map(|i| format!("x{}", ".".repeat(i))).collect(),
            (0..120).map(|i| format!("{long}.{i}")).collect(),
            (0..15)
                .map(|i| format!("{}{}", "z".repeat(61), ".".repeat(i + 1)))
                .collect(),
        ];
        for set in sets {
            let mut seen = HashSet::new();
            let names: Vec<&str> = set
                .iter()
                .map(String::as_str)
                .filter(|n| seen.insert(*n))
                .collect();
            assert_eq!(assigned(&names).0, reference(&names), "{names:?}");
        }
    }

    /// 8,000 names that all sanitise to one base (400 KB of tool names) cost a number of tries linear in the
    /// count, not 32 million.
    #[test]
    fn eight_thousand_colliding_names_take_linear_work() {
        // 20 unsafe characters in each of 3 places: 8,000 distinct names, all sanitised to `tool____...`.
        let unsafe_chars: Vec<char> = ".:/!@#$%^&*()+=[]{};".chars().collect();
        let set: Vec<String> = (0..8000)
            .map(|i| {
                let pick = |k: usize| unsafe_chars[(i / 20usize.pow(k as u32)) % 20];
                format!("tool{}{}{}{}", pick(0), pick(1), pick(2), "_".repeat(40))
            })
            .collect();
        let names: Vec<&str> = set.iter().map(String::as_str).collect();
        assert_eq!(
            names
                .iter()
                .map(|n| sanitize(n))
                .collect::<HashSet<_>>()
                .len(),
            1
        );
        let (provided, tries) = assigned(&names);
        assert!(
            tries <= 2 * names.len() + 16,
            "{tries} tries for {} names",
            names.len()
        );
        assert_eq!(provided[..500], reference(&names[..500])[..]);
        let unique: HashSet<&String> = provided.iter().collect();
        assert_eq!(unique.len(), names.len());
        assert!(provided.iter().all(|p| is_safe(p)));

        // Long names that share their first 62 characters collide after truncation: still linear.
        let set: Vec<String> = (0..8000)
            .map(|i| format!("{}.{i}", "w".repeat(70)))
            .collect();
        let names: Vec<&str> = set.iter().map(String::as_str).collect();
        let (provided, tries) = assigned(&names);
        assert!(
            tries <= 2 * names.len() + 16,
            "{tries} tries for {} names",
            names.len()
        );
        assert_eq!(provided.iter().collect::<HashSet<_>>().len(), names.len());
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
