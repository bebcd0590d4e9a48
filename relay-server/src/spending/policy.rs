//! The spending rules as data, and the pure decisions on them: which counter slices a call touches, whether a
//! user's recorded usage admits one more call, and when a refused user may try again. No I/O and no clock (the
//! time is an argument), so every rule is tested here without a database.
//!
//! Usage is recorded per user in slices: a fixed window is one slice (aligned to multiples of its length since
//! the Unix epoch), a sliding window sixty slices of a sixtieth of its length, the last of them the one `now`
//! falls in. Windows of the same slice length share their slices.

use std::collections::{BTreeMap, HashMap};

use patchbridge_protocol::{SpendingLimit, SpendingLimitKind};

use super::counts::{SliceRow, Snapshot};

/// A sliding window is counted in this many slices (its length must divide by it).
pub const SLICES_PER_SLIDING_WINDOW: u64 = 60;

/// One window's limits (at least one is set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub seconds: u64,
    pub sliding: bool,
    pub calls: Option<u64>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

impl Window {
    /// The length of one slice in seconds.
    pub fn slice_seconds(&self) -> i64 {
        let n = if self.sliding {
            SLICES_PER_SLIDING_WINDOW
        } else {
            1
        };
        i64::try_from(self.seconds / n).unwrap_or(i64::MAX)
    }

    /// The start of the oldest slice that counts at `now`.
    pub fn oldest_slice(&self, now: i64) -> i64 {
        let slice = self.slice_seconds();
        let current = slice_start(now, slice);
        let seconds = i64::try_from(self.seconds).unwrap_or(i64::MAX);
        current - (seconds - slice)
    }

    /// `(kind, max)` of each limit set on this window.
    pub fn limits(&self) -> impl Iterator<Item = (SpendingLimitKind, u64)> + '_ {
        [
            (SpendingLimitKind::Calls, self.calls),
            (SpendingLimitKind::InputTokens, self.input_tokens),
            (SpendingLimitKind::OutputTokens, self.output_tokens),
        ]
        .into_iter()
        .filter_map(|(kind, max)| max.map(|m| (kind, m)))
    }
}

/// The start of the slice of length `slice` that `now` falls in.
pub fn slice_start(now: i64, slice: i64) -> i64 {
    now - now.rem_euclid(slice)
}

/// The limits of all models together (`model: None`), or one model's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub model: Option<String>,
    pub windows: Vec<Window>,
    pub max_concurrent: Option<u64>,
}

impl Scope {
    /// The text of the scope in the counter tables: `""` for all models, else the model id (never empty).
    pub fn key(&self) -> &str {
        self.model.as_deref().unwrap_or("")
    }
}

/// Why a call was refused: the limit, and in how many seconds a call may be admitted again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub limit: SpendingLimit,
    pub kind: SpendingLimitKind,
    pub retry_after_seconds: u64,
}

/// One line of [`Policy::usage`]: a limit, what the user used of it now, and the maximum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageLine {
    /// `None`: all models.
    pub model: Option<String>,
    pub kind: SpendingLimitKind,
    /// `None` for concurrent calls.
    pub window_seconds: Option<u64>,
    pub sliding: bool,
    pub used: i64,
    pub max: u64,
}

/// How long a refused user is told to wait when too many of their calls are running: calls end at any moment.
pub const CONCURRENT_RETRY_SECONDS: u64 = 5;

/// Every limit of the relay, checked at each call's start.
#[derive(Debug, Clone)]
pub struct Policy {
    global: Scope,
    models: BTreeMap<String, Scope>,
    /// By model id: the output tokens counted for a call that ended without reported usage.
    fallback_output: HashMap<String, u64>,
    default_output_tokens: u64,
    /// How long a call counts as running when its relay died before settling it.
    pub lease_seconds: u64,
}

impl Policy {
    pub fn new(
        global: Scope,
        models: BTreeMap<String, Scope>,
        fallback_output: HashMap<String, u64>,
        default_output_tokens: u64,
        lease_seconds: u64,
    ) -> Self {
        Policy {
            global,
            models,
            fallback_output,
            default_output_tokens,
            lease_seconds,
        }
    }

    /// The scopes a call of `model` is checked against: all models, then the model's own when it has one.
    pub fn scopes<'a>(&'a self, model: &str) -> impl Iterator<Item = &'a Scope> + 'a {
        std::iter::once(&self.global).chain(self.models.get(model))
    }

    /// Output tokens counted for a call of `model` that ended without usage.
    pub fn fallback_output_tokens(&self, model: &str) -> u64 {
        self.fallback_output
            .get(model)
            .copied()
            .unwrap_or(self.default_output_tokens)
    }

    /// The counter slices a call of `model` records into: `(scope, slice length)`, each once.
    pub fn slices(&self, model: &str) -> Vec<(String, i64)> {
        let mut out: Vec<(String, i64)> = Vec::new();
        for scope in self.scopes(model) {
            for window in &scope.windows {
                let key = (scope.key().to_owned(), window.slice_seconds());
                if !out.contains(&key) {
                    out.push(key);
                }
            }
        }
        out
    }

    /// The oldest slice start any check of `model` reads at `now`.
    pub fn oldest_needed(&self, model: &str, now: i64) -> i64 {
        self.scopes(model)
            .flat_map(|s| s.windows.iter())
            .map(|w| w.oldest_slice(now))
            .min()
            .unwrap_or(now)
    }

    /// Slices older than this, of any user, no window reads any more at `now`.
    pub fn forget_before(&self, now: i64) -> i64 {
        std::iter::once(&self.global)
            .chain(self.models.values())
            .flat_map(|s| s.windows.iter())
            .map(|w| w.oldest_slice(now))
            .min()
            .unwrap_or(now)
    }

    /// How many slices of length `slice_seconds` the windows of `scope` (`""` or a model id) read at most:
    /// sixty for a sliding window, one for a fixed one.
    pub fn slots(&self, scope: &str, slice_seconds: i64) -> usize {
        std::iter::once(&self.global)
            .chain(self.models.values())
            .filter(|s| s.key() == scope)
            .flat_map(|s| s.windows.iter())
            .filter(|w| w.slice_seconds() == slice_seconds)
            .map(|w| {
                if w.sliding {
                    SLICES_PER_SLIDING_WINDOW as usize
                } else {
                    1
                }
            })
            .max()
            .unwrap_or(1)
    }

    /// Per slice length, the oldest slice start any window of that length reads at `now`: what the stored
    /// counters must keep (older slices are deleted) and what a start loads.
    pub fn horizons(&self, now: i64) -> Vec<(i64, i64)> {
        let mut out: Vec<(i64, i64)> = Vec::new();
        for w in std::iter::once(&self.global)
            .chain(self.models.values())
            .flat_map(|s| s.windows.iter())
        {
            let (len, oldest) = (w.slice_seconds(), w.oldest_slice(now));
            match out.iter_mut().find(|(l, _)| *l == len) {
                Some((_, o)) => *o = (*o).min(oldest),
                None => out.push((len, oldest)),
            }
        }
        out
    }

    /// Whether any scope of `model` limits concurrent calls.
    pub fn limits_running(&self, model: &str) -> bool {
        self.scopes(model).any(|s| s.max_concurrent.is_some())
    }

    /// The refusal for one more call of `model` by a user whose usage is `snapshot`, or `None` when it is
    /// admitted. When several limits refuse, the one that clears last is named (the user must wait for it).
    pub fn refusal(&self, model: &str, snapshot: &Snapshot, now: i64) -> Option<Refusal> {
        let mut worst: Option<Refusal> = None;
        let mut consider = |refusal: Refusal| {
            if worst
                .as_ref()
                .is_none_or(|w| refusal.retry_after_seconds > w.retry_after_seconds)
            {
                worst = Some(refusal);
            }
        };
        for scope in self.scopes(model) {
            if let Some(max) = scope.max_concurrent {
                if u64::try_from(running(snapshot, scope)).unwrap_or(0) >= max {
                    consider(Refusal {
                        limit: limit(SpendingLimitKind::ConcurrentCalls, max, None, scope),
                        kind: SpendingLimitKind::ConcurrentCalls,
                        retry_after_seconds: CONCURRENT_RETRY_SECONDS,
                    });
                }
            }
            for window in &scope.windows {
                let mut rows: Vec<&SliceRow> = counted(snapshot, scope, window, now).collect();
                rows.sort_by_key(|r| r.slice_start);
                for (kind, max) in window.limits() {
                    let max_i = i64::try_from(max).unwrap_or(i64::MAX);
                    let mut used: i64 = rows.iter().map(|r| value(r, kind)).sum();
                    if used < max_i {
                        continue;
                    }
                    // The call is admitted once enough of the oldest slices have left the window.
                    let window_seconds = i64::try_from(window.seconds).unwrap_or(i64::MAX);
                    let mut clears_at = slice_start(now, window.slice_seconds()) + window_seconds;
                    for r in &rows {
                        used -= value(r, kind);
                        if used < max_i {
                            clears_at = r.slice_start + window_seconds;
                            break;
                        }
                    }
                    consider(Refusal {
                        limit: limit(kind, max, Some(window), scope),
                        kind,
                        retry_after_seconds: u64::try_from(clears_at - now).unwrap_or(0).max(1),
                    });
                }
            }
        }
        worst
    }
}

impl Policy {
    /// Every limit (all models first, then each model's own) with what `snapshot` used of it at `now`.
    pub fn usage(&self, snapshot: &Snapshot, now: i64) -> Vec<UsageLine> {
        let mut out = Vec::new();
        for scope in std::iter::once(&self.global).chain(self.models.values()) {
            if let Some(max) = scope.max_concurrent {
                out.push(UsageLine {
                    model: scope.model.clone(),
                    kind: SpendingLimitKind::ConcurrentCalls,
                    window_seconds: None,
                    sliding: false,
                    used: running(snapshot, scope),
                    max,
                });
            }
            for window in &scope.windows {
                for (kind, max) in window.limits() {
                    let used = counted(snapshot, scope, window, now)
                        .map(|r| value(r, kind))
                        .sum();
                    out.push(UsageLine {
                        model: scope.model.clone(),
                        kind,
                        window_seconds: Some(window.seconds),
                        sliding: window.sliding,
                        used,
                        max,
                    });
                }
            }
        }
        out
    }
}

/// The calls of `scope` running in `snapshot` (all models' for the limits of all models).
fn running(snapshot: &Snapshot, scope: &Scope) -> i64 {
    snapshot
        .running
        .iter()
        .filter(|(m, _)| scope.model.as_ref().is_none_or(|own| own == m))
        .map(|(_, n)| *n)
        .sum()
}

/// The slices of `snapshot` that count for `window` of `scope` at `now`.
fn counted<'a>(
    snapshot: &'a Snapshot,
    scope: &'a Scope,
    window: &'a Window,
    now: i64,
) -> impl Iterator<Item = &'a SliceRow> + 'a {
    snapshot.slices.iter().filter(move |r| {
        r.scope == scope.key()
            && r.slice_seconds == window.slice_seconds()
            && r.slice_start >= window.oldest_slice(now)
            && r.slice_start <= now
    })
}

/// What `row` counted of `kind` (a window kind: never `concurrentCalls`).
fn value(row: &SliceRow, kind: SpendingLimitKind) -> i64 {
    match kind {
        SpendingLimitKind::Calls => row.calls,
        SpendingLimitKind::InputTokens => row.input_tokens,
        SpendingLimitKind::OutputTokens | SpendingLimitKind::ConcurrentCalls => row.output_tokens,
    }
}

fn limit(
    kind: SpendingLimitKind,
    max: u64,
    window: Option<&Window>,
    scope: &Scope,
) -> SpendingLimit {
    SpendingLimit {
        kind: kind.as_str().to_owned(),
        max,
        window_seconds: window.map(|w| w.seconds),
        sliding: window.map(|w| w.sliding),
        model: scope.model.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(seconds: u64, sliding: bool, calls: u64) -> Window {
        Window {
            seconds,
            sliding,
            calls: Some(calls),
            input_tokens: None,
            output_tokens: None,
        }
    }

    fn policy(global: Vec<Window>, model: Option<Scope>) -> Policy {
        Policy::new(
            Scope {
                model: None,
                windows: global,
                max_concurrent: Some(2),
            },
            model
                .into_iter()
                .map(|s| (s.model.clone().unwrap(), s))
                .collect(),
            HashMap::new(),
            100,
            60,
        )
    }

    fn row(scope: &str, slice_seconds: i64, slice_start: i64, calls: i64, output: i64) -> SliceRow {
        SliceRow {
            scope: scope.into(),
            slice_seconds,
            slice_start,
            calls,
            input_tokens: 0,
            output_tokens: output,
        }
    }

    #[test]
    fn a_fixed_window_is_one_slice_aligned_to_the_epoch_and_refuses_until_it_ends() {
        let p = policy(vec![window(3600, false, 2)], None);
        let now = 7 * 3600 + 100;
        let snapshot = Snapshot {
            slices: vec![row("", 3600, 7 * 3600, 2, 0)],
            running: vec![],
        };
        let refusal = p.refusal("m", &snapshot, now).expect("refused");
        assert_eq!(refusal.kind, SpendingLimitKind::Calls);
        assert_eq!(refusal.retry_after_seconds, 3600 - 100);
        assert_eq!(refusal.limit.window_seconds, Some(3600));
        // The previous hour's slice does not count.
        let earlier = Snapshot {
            slices: vec![row("", 3600, 6 * 3600, 2, 0)],
            running: vec![],
        };
        assert_eq!(p.refusal("m", &earlier, now), None);
    }

    #[test]
    fn a_sliding_window_admits_again_when_enough_of_its_oldest_slices_have_left_it() {
        let p = policy(vec![window(600, true, 3)], None);
        // Slices of 10 s; now falls in the slice starting at 1000, so slices from 410 on count.
        let now = 1005;
        let snapshot = Snapshot {
            slices: vec![
                row("", 10, 400, 5, 0),
                row("", 10, 420, 1, 0),
                row("", 10, 700, 1, 0),
                row("", 10, 1000, 1, 0),
            ],
            running: vec![],
        };
        let refusal = p.refusal("m", &snapshot, now).expect("refused");
        // Once the slice at 420 leaves (at 1020), two calls remain: one more is allowed.
        assert_eq!(refusal.retry_after_seconds, 1020 - 1005);
        assert_eq!(refusal.limit.sliding, Some(true));
    }

    #[test]
    fn token_limits_refuse_once_reached_and_a_model_scope_names_its_model() {
        let own = Scope {
            model: Some("big".into()),
            windows: vec![Window {
                seconds: 60,
                sliding: false,
                calls: None,
                input_tokens: None,
                output_tokens: Some(50),
            }],
            max_concurrent: None,
        };
        let p = policy(vec![window(60, false, 100)], Some(own));
        let snapshot = Snapshot {
            slices: vec![row("", 60, 0, 1, 50), row("big", 60, 0, 1, 50)],
            running: vec![],
        };
        assert_eq!(p.refusal("small", &snapshot, 30), None);
        let refusal = p.refusal("big", &snapshot, 30).expect("refused");
        assert_eq!(refusal.kind, SpendingLimitKind::OutputTokens);
        assert_eq!(refusal.limit.model.as_deref(), Some("big"));
        assert_eq!(refusal.retry_after_seconds, 30);
        assert_eq!(
            p.slices("big"),
            [("".to_owned(), 60), ("big".to_owned(), 60)]
        );
    }

    #[test]
    fn running_calls_of_every_model_count_against_the_concurrency_limit() {
        let p = policy(vec![window(60, false, 100)], None);
        let snapshot = Snapshot {
            slices: vec![],
            running: vec![("a".into(), 1), ("b".into(), 1)],
        };
        let refusal = p.refusal("a", &snapshot, 0).expect("refused");
        assert_eq!(refusal.kind, SpendingLimitKind::ConcurrentCalls);
        assert_eq!(refusal.limit.window_seconds, None);
        assert_eq!(refusal.retry_after_seconds, CONCURRENT_RETRY_SECONDS);
    }
}
