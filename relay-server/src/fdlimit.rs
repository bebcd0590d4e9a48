//! The open-file limit. Every client connection holds one descriptor and every model stream one more to its
//! upstream, plus the database pool and the listener; the common default soft limit (1024) is far below what
//! `limits.maxConnections` allows. At start the relay raises its soft `RLIMIT_NOFILE` to the hard limit (no
//! privilege needed) and warns when even that cannot cover the configured connection limit.

/// Descriptors reserved for the listener, the database pool, log files, static files and the runtime.
pub const RESERVED_DESCRIPTORS: u64 = 128;

/// Descriptors the configured connection limit needs: one per client connection and one per upstream
/// connection (a streaming model call holds both).
pub fn needed_descriptors(max_connections: u64, database_connections: u32) -> u64 {
    max_connections
        .saturating_mul(2)
        .saturating_add(u64::from(database_connections))
        .saturating_add(RESERVED_DESCRIPTORS)
}

/// The soft and hard limits before and after raising.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raised {
    pub before: u64,
    pub after: u64,
    pub hard: u64,
}

/// Raises the soft limit to the hard one. An infinite hard limit is capped at `/proc/sys/fs/nr_open` (the
/// kernel refuses a soft limit above it), else 1 048 576.
#[allow(clippy::unnecessary_cast)] // `rlim_t` is u64 on Linux, not on every Unix.
pub fn raise_to_hard_limit() -> std::io::Result<Raised> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    #[allow(unsafe_code)]
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    if read != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let before = limit.rlim_cur as u64;
    let hard = limit.rlim_max as u64;
    let target = if limit.rlim_max == libc::RLIM_INFINITY {
        std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(1 << 20)
    } else {
        hard
    };
    if target <= before {
        return Ok(Raised {
            before,
            after: before,
            hard,
        });
    }
    limit.rlim_cur = target as libc::rlim_t;
    // SAFETY: setrlimit reads the struct we own.
    #[allow(unsafe_code)]
    let written = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    if written != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Raised {
        before,
        after: target,
        hard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unnecessary_cast)]
    fn soft_limit_is_raised_to_the_hard_limit() {
        let raised = raise_to_hard_limit().unwrap();
        assert!(raised.after >= raised.before);
        let mut now = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        #[allow(unsafe_code)]
        let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) };
        assert_eq!(read, 0);
        assert_eq!(now.rlim_cur as u64, raised.after);
        if now.rlim_max != libc::RLIM_INFINITY {
            assert_eq!(now.rlim_cur, now.rlim_max, "soft equals hard after raising");
        }
    }

    #[test]
    fn sizing_counts_two_descriptors_per_connection() {
        assert_eq!(needed_descriptors(1024, 8), 2048 + 8 + RESERVED_DESCRIPTORS);
        assert_eq!(needed_descriptors(u64::MAX, 8), u64::MAX);
    }
}
