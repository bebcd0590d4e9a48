//! The per-user bound on open MCP exchanges: a count per user id, taken before an exchange is forwarded and
//! given back when its answer ends (the [`Permit`] travels with the streamed body).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Open exchanges per user.
#[derive(Debug, Default)]
pub struct UserPermits {
    open: Mutex<HashMap<String, usize>>,
}

/// One open exchange of one user; dropping it ends it.
#[derive(Debug)]
pub struct Permit {
    permits: Arc<UserPermits>,
    user: String,
}

impl UserPermits {
    /// A permit for `user`, or `None` when they already have `max` exchanges open.
    pub fn try_acquire(self: &Arc<Self>, user: &str, max: usize) -> Option<Permit> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(user.to_owned()).or_insert(0);
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(Permit {
            permits: self.clone(),
            user: user.to_owned(),
        })
    }

    /// Exchanges `user` has open now.
    pub fn open(&self, user: &str) -> usize {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.get(user).copied().unwrap_or(0)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut open = self.permits.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.user) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_at_the_bound_is_refused_until_one_exchange_ends() {
        let permits = Arc::new(UserPermits::default());
        let first = permits.try_acquire("mia", 2).unwrap();
        let _second = permits.try_acquire("mia", 2).unwrap();
        assert!(permits.try_acquire("mia", 2).is_none());
        assert!(
            permits.try_acquire("noah", 2).is_some(),
            "other users are not affected"
        );
        drop(first);
        assert_eq!(permits.open("mia"), 1);
        assert!(permits.try_acquire("mia", 2).is_some());
    }
}
