//! The counters of one relay process, in memory: per user, each counter slice length as a ring of slices (a
//! sliding window's sixty, a fixed window's one; windows of the same slice length share their ring), and the
//! user's running calls by model. An admission reads and counts under one lock (of the user's shard), so a
//! decision and the count it makes cannot be separated; nothing on that path touches a database.
//!
//! What changed since the last [`Counters::take_pending`] is kept as deltas, which the relay writes behind
//! ([`super::Spending`], every [`super::FLUSH_INTERVAL`]) and loads back at start ([`Counters::load`]), so a
//! restart keeps what was counted. Running calls are not persisted: they end with the process.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use super::counts::{SliceRow, Snapshot};
use super::policy::{slice_start, Policy, Refusal};

/// Independent locks: one user's admission never waits for another's unless they share a shard.
const SHARDS: usize = 16;

/// One slice's counts not yet written: `(user, scope, slice length, slice start)` → `[calls, input, output]`.
pub type Delta = ((String, String, i64, i64), [i64; 3]);

#[derive(Default)]
struct Shard {
    users: HashMap<String, User>,
    pending: HashMap<(String, String, i64, i64), [i64; 3]>,
}

#[derive(Default)]
struct User {
    rings: Vec<Ring>,
    running: Vec<(String, i64)>,
}

struct Ring {
    scope: String,
    slice_seconds: i64,
    /// `(slice start, [calls, input, output])`; a cell whose start is not the one its index stands for now is
    /// stale (counts zero).
    cells: Vec<(i64, [i64; 3])>,
}

impl Ring {
    fn new(scope: &str, slice_seconds: i64, slots: usize) -> Ring {
        Ring {
            scope: scope.to_owned(),
            slice_seconds,
            cells: vec![(i64::MIN, [0; 3]); slots.max(1)],
        }
    }

    fn add(&mut self, start: i64, counts: [i64; 3]) {
        let n = self.cells.len() as i64;
        let cell = &mut self.cells[(start / self.slice_seconds).rem_euclid(n) as usize];
        if cell.0 != start {
            if cell.0 > start {
                return; // Older than anything the ring holds: no window reads it any more.
            }
            *cell = (start, [0; 3]);
        }
        for (c, d) in cell.1.iter_mut().zip(counts) {
            *c = c.saturating_add(d);
        }
    }

    /// Whether any cell can still be read at `now`.
    fn live(&self, now: i64) -> bool {
        let oldest = slice_start(now, self.slice_seconds)
            - self.slice_seconds * (self.cells.len() as i64 - 1);
        self.cells.iter().any(|(start, _)| *start >= oldest)
    }
}

impl User {
    fn ring(&mut self, policy: &Policy, scope: &str, slice_seconds: i64) -> &mut Ring {
        let at = match self
            .rings
            .iter()
            .position(|r| r.scope == scope && r.slice_seconds == slice_seconds)
        {
            Some(at) => at,
            None => {
                self.rings.push(Ring::new(
                    scope,
                    slice_seconds,
                    policy.slots(scope, slice_seconds),
                ));
                self.rings.len() - 1
            }
        };
        &mut self.rings[at]
    }

    fn snapshot(&self, now: i64) -> Snapshot {
        let mut slices = Vec::new();
        for ring in &self.rings {
            let oldest = slice_start(now, ring.slice_seconds)
                - ring.slice_seconds * (ring.cells.len() as i64 - 1);
            for (start, [calls, input, output]) in &ring.cells {
                if *start >= oldest {
                    slices.push(SliceRow {
                        scope: ring.scope.clone(),
                        slice_seconds: ring.slice_seconds,
                        slice_start: *start,
                        calls: *calls,
                        input_tokens: *input,
                        output_tokens: *output,
                    });
                }
            }
        }
        Snapshot {
            slices,
            running: self.running.clone(),
        }
    }
}

/// Every user's counters in this process.
pub struct Counters {
    shards: Vec<Mutex<Shard>>,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl Counters {
    fn shard(&self, user: &str) -> std::sync::MutexGuard<'_, Shard> {
        let mut h = DefaultHasher::new();
        user.hash(&mut h);
        self.shards[(h.finish() as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Admits one call of `model` by `user` at `now` and counts it (one call in each of its slices, one more
    /// running), or refuses it and changes nothing.
    pub fn admit(&self, policy: &Policy, user: &str, model: &str, now: i64) -> Result<(), Refusal> {
        let mut shard = self.shard(user);
        let Shard { users, pending } = &mut *shard;
        let counts = users.entry(user.to_owned()).or_default();
        if let Some(refusal) = policy.refusal(model, &counts.snapshot(now), now) {
            return Err(refusal);
        }
        for (scope, len) in policy.slices(model) {
            let start = slice_start(now, len);
            counts.ring(policy, &scope, len).add(start, [1, 0, 0]);
            add_pending(pending, user, &scope, len, start, [1, 0, 0]);
        }
        match counts.running.iter_mut().find(|(m, _)| m == model) {
            Some((_, n)) => *n += 1,
            None => counts.running.push((model.to_owned(), 1)),
        }
        Ok(())
    }

    /// Ends a call admitted by [`Counters::admit`]: adds its tokens to the slices `now` falls in and counts it
    /// as running no more.
    pub fn settle(&self, policy: &Policy, user: &str, model: &str, tokens: [i64; 2], now: i64) {
        let mut shard = self.shard(user);
        let Shard { users, pending } = &mut *shard;
        let counts = users.entry(user.to_owned()).or_default();
        if tokens != [0, 0] {
            let delta = [0, tokens[0], tokens[1]];
            for (scope, len) in policy.slices(model) {
                let start = slice_start(now, len);
                counts.ring(policy, &scope, len).add(start, delta);
                add_pending(pending, user, &scope, len, start, delta);
            }
        }
        if let Some(at) = counts.running.iter().position(|(m, _)| m == model) {
            counts.running[at].1 -= 1;
            if counts.running[at].1 <= 0 {
                counts.running.swap_remove(at);
            }
        }
    }

    /// `user`'s counted usage at `now`.
    pub fn snapshot(&self, user: &str, now: i64) -> Snapshot {
        self.shard(user)
            .users
            .get(user)
            .map(|u| u.snapshot(now))
            .unwrap_or_default()
    }

    /// Adds stored slices (read at start) to the counters; slices no window reads any more are skipped.
    pub fn load(&self, policy: &Policy, rows: Vec<(String, SliceRow)>) {
        for (user, row) in rows {
            let mut shard = self.shard(&user);
            let counts = shard.users.entry(user).or_default();
            counts.ring(policy, &row.scope, row.slice_seconds).add(
                row.slice_start,
                [row.calls, row.input_tokens, row.output_tokens],
            );
        }
    }

    /// What changed since the last call, to be written; also forgets users with nothing left to count at `now`.
    pub fn take_pending(&self, now: i64) -> Vec<Delta> {
        let mut out = Vec::new();
        for shard in &self.shards {
            let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
            out.extend(shard.pending.drain());
            shard
                .users
                .retain(|_, u| !u.running.is_empty() || u.rings.iter().any(|r| r.live(now)));
        }
        out
    }

    /// Puts back deltas whose write failed, so the next write carries them.
    pub fn restore_pending(&self, deltas: Vec<Delta>) {
        for ((user, scope, len, start), counts) in deltas {
            let mut shard = self.shard(&user);
            add_pending(&mut shard.pending, &user, &scope, len, start, counts);
        }
    }

    /// Calls running now, all users together.
    pub fn running(&self) -> i64 {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap_or_else(|e| e.into_inner());
                s.users
                    .values()
                    .flat_map(|u| u.running.iter().map(|(_, n)| *n))
                    .sum::<i64>()
            })
            .sum()
    }
}

fn add_pending(
    pending: &mut HashMap<(String, String, i64, i64), [i64; 3]>,
    user: &str,
    scope: &str,
    len: i64,
    start: i64,
    counts: [i64; 3],
) {
    let entry = pending
        .entry((user.to_owned(), scope.to_owned(), len, start))
        .or_default();
    for (c, d) in entry.iter_mut().zip(counts) {
        *c = c.saturating_add(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spending::config::SpendingConfig;

    fn policy(value: serde_json::Value) -> Policy {
        let config: SpendingConfig = serde_json::from_value(value).unwrap();
        config.validate(&[("m".into(), None)], 60).unwrap()
    }

    #[test]
    fn a_sliding_window_admits_again_once_its_oldest_slices_left_the_ring() {
        // 60 s sliding: slices of 1 s, a ring of 60.
        let p = policy(
            serde_json::json!({ "windows": [ { "windowSeconds": 60, "sliding": true, "calls": 2 } ] }),
        );
        let c = Counters::default();
        c.admit(&p, "u", "m", 1_000).unwrap();
        c.settle(&p, "u", "m", [0, 0], 1_000);
        c.admit(&p, "u", "m", 1_030).unwrap();
        c.settle(&p, "u", "m", [0, 0], 1_030);
        let refusal = c.admit(&p, "u", "m", 1_059).unwrap_err();
        assert_eq!(refusal.retry_after_seconds, 1);
        // At 1,060 the call of second 1,000 has left the window; its ring cell is reused for 1,060.
        c.admit(&p, "u", "m", 1_060).unwrap();
        assert!(c.admit(&p, "u", "m", 1_061).is_err());
        let calls: i64 = c.snapshot("u", 1_061).slices.iter().map(|r| r.calls).sum();
        assert_eq!(calls, 2);
    }

    #[test]
    fn running_calls_count_until_settled_and_tokens_land_in_the_slice_of_the_end() {
        let p = policy(
            serde_json::json!({ "windows": [ { "windowSeconds": 3600, "inputTokens": 100 } ],
            "maxConcurrentCalls": 1 }),
        );
        let c = Counters::default();
        c.admit(&p, "u", "m", 10).unwrap();
        assert_eq!(c.running(), 1);
        assert!(c.admit(&p, "u", "m", 11).is_err(), "one at a time");
        assert!(
            c.admit(&p, "v", "m", 11).is_ok(),
            "another user's calls are their own"
        );
        c.settle(&p, "u", "m", [100, 5], 12);
        assert_eq!(c.running(), 1);
        let refusal = c.admit(&p, "u", "m", 13).unwrap_err();
        assert_eq!(
            refusal.kind,
            patchbridge_protocol::SpendingLimitKind::InputTokens
        );
        // What was counted is pending for the write, once; a failed write puts it back.
        let pending = c.take_pending(13);
        let input: i64 = pending.iter().map(|(_, d)| d[1]).sum();
        assert_eq!(input, 100);
        assert!(c.take_pending(13).is_empty());
        c.restore_pending(pending);
        assert_eq!(c.take_pending(13).len(), 2);
    }

    #[test]
    fn loaded_slices_count_and_slices_older_than_the_ring_are_skipped() {
        let p = policy(serde_json::json!({ "windows": [ { "windowSeconds": 3600, "calls": 2 } ] }));
        let c = Counters::default();
        let row = |start: i64, calls: i64| SliceRow {
            scope: String::new(),
            slice_seconds: 3600,
            slice_start: start,
            calls,
            input_tokens: 0,
            output_tokens: 0,
        };
        c.load(
            &p,
            vec![("u".into(), row(7_200, 2)), ("u".into(), row(3_600, 9))],
        );
        assert!(
            c.admit(&p, "u", "m", 7_300).is_err(),
            "the loaded hour counts"
        );
        c.admit(&p, "u", "m", 10_800).unwrap();
    }
}
