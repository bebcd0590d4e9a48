//! The checks of `models[].fallbacks` and `models[].stateGroup`, run after every model was validated on its
//! own. A call fails over along the fallback graph (`model/failover.rs`): the requested model, then each of its
//! fallbacks in order, each followed by its own fallbacks (depth first, every model once). So the graph must be
//! finite and small: no unknown id, no self-reference, no repeated entry, no cycle, and at most
//! [`MAX_CHAIN`] models in any model's chain.

use std::collections::HashMap;

use super::{err, ConfigError, ModelConfig};

/// Models one call may try, the requested one included.
pub const MAX_CHAIN: usize = 4;

pub(super) fn check(models: &[ModelConfig]) -> Result<(), ConfigError> {
    let index: HashMap<&str, usize> = models
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    for (i, m) in models.iter().enumerate() {
        for (j, id) in m.fallbacks.iter().enumerate() {
            let at = format!("models[{i}].fallbacks[{j}]");
            if id == &m.id {
                return Err(err(at, format!("model `{id}` cannot be its own fallback")));
            }
            if !index.contains_key(id.as_str()) {
                return Err(err(
                    at,
                    format!("`{id}` is not one of the configured models"),
                ));
            }
            if m.fallbacks[..j].contains(id) {
                return Err(err(at, format!("`{id}` is listed twice")));
            }
        }
        if let Some(group) = &m.state_group {
            let at = format!("models[{i}].stateGroup");
            if group.trim().is_empty() || group.len() > 200 {
                return Err(err(at, "must be 1..200 characters"));
            }
            // One group, one ModelState format: a group spanning providers would hand one adapter's state to
            // another, which refuses it.
            if let Some((k, other)) = models[..i]
                .iter()
                .enumerate()
                .find(|(_, o)| o.state_group.as_ref() == Some(group) && o.provider != m.provider)
            {
                return Err(err(
                    at,
                    format!(
                        "group `{group}` already has models[{k}] (`{}`) of provider `{}`; a group holds models of one provider",
                        other.id,
                        other.provider.as_str()
                    ),
                ));
            }
        }
    }
    let mut done = vec![false; models.len()];
    for i in 0..models.len() {
        let mut path = Vec::new();
        if let Some(cycle) = find_cycle(models, &index, i, &mut path, &mut done) {
            let names: Vec<&str> = cycle.iter().map(|&k| models[k].id.as_str()).collect();
            return Err(err(
                format!("models[{}].fallbacks", cycle[0]),
                format!("fallbacks form a cycle: {}", names.join(" → ")),
            ));
        }
    }
    for (i, m) in models.iter().enumerate() {
        let length = chain(models, &index, i).len();
        if length > MAX_CHAIN {
            return Err(err(
                format!("models[{i}].fallbacks"),
                format!(
                    "model `{}` would try {length} models; a call tries at most {MAX_CHAIN} (the model and its fallbacks, theirs included)",
                    m.id
                ),
            ));
        }
    }
    Ok(())
}

/// A cycle reachable from model `i` (depth first; `path` is the models on the way, `done` those already known
/// to reach no cycle), as the models along it back to the first repeated one.
fn find_cycle(
    models: &[ModelConfig],
    index: &HashMap<&str, usize>,
    i: usize,
    path: &mut Vec<usize>,
    done: &mut [bool],
) -> Option<Vec<usize>> {
    if done[i] {
        return None;
    }
    if let Some(start) = path.iter().position(|&p| p == i) {
        let mut cycle = path[start..].to_vec();
        cycle.push(i);
        return Some(cycle);
    }
    path.push(i);
    for id in &models[i].fallbacks {
        if let Some(cycle) = find_cycle(models, index, index[id.as_str()], path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done[i] = true;
    None
}

/// Model `i`'s fallback chain (indexes, `i` first): depth first along the fallbacks, every model once. The graph
/// has no cycle when this is called.
pub(crate) fn chain(models: &[ModelConfig], index: &HashMap<&str, usize>, i: usize) -> Vec<usize> {
    fn visit(models: &[ModelConfig], index: &HashMap<&str, usize>, i: usize, out: &mut Vec<usize>) {
        if out.contains(&i) {
            return;
        }
        out.push(i);
        for id in &models[i].fallbacks {
            visit(models, index, index[id.as_str()], out);
        }
    }
    let mut out = Vec::new();
    visit(models, index, i, &mut out);
    out
}
