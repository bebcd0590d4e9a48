//! What the benchmark reads about the proxies from `/proc`: resident memory (`VmRSS`) and CPU time consumed
//! (`schedstat`, nanoseconds, summed over threads), for a process and its children (nginx's workers).

use std::fs;

/// A process and its direct children at the time [`Group::of`] ran (nginx: master and workers).
#[derive(Debug, Clone)]
pub struct Group {
    pub pids: Vec<u32>,
}

impl Group {
    pub fn of(pid: u32) -> Group {
        let mut pids = vec![pid];
        pids.extend(children(pid));
        Group { pids }
    }

    /// Sum of `VmRSS` in KiB.
    pub fn rss_kib(&self) -> Result<u64, String> {
        self.pids.iter().map(|&p| rss_kib(p)).sum()
    }

    /// CPU time consumed so far by every thread of every process, in nanoseconds.
    pub fn cpu_ns(&self) -> Result<u64, String> {
        self.pids.iter().map(|&p| cpu_ns(p)).sum()
    }
}

pub fn rss_kib(pid: u32) -> Result<u64, String> {
    let status = fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    parse_vm_rss(&status).ok_or_else(|| format!("/proc/{pid}/status has no VmRSS"))
}

/// `VmRSS:   12345 kB` → 12345.
fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line["VmRSS:".len()..]
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()
}

/// Sum of the first `schedstat` field (time on CPU, ns) over the threads of `pid`. Unlike `utime`/`stime`
/// (10 ms ticks) this resolves the short phases of the benchmark.
pub fn cpu_ns(pid: u32) -> Result<u64, String> {
    let dir = format!("/proc/{pid}/task");
    let mut total = 0;
    for entry in fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))? {
        let path = entry.map_err(|e| e.to_string())?.path().join("schedstat");
        // A thread that exited between listing and reading took its time with it; nothing to add.
        if let Ok(text) = fs::read_to_string(&path) {
            total += text
                .split_whitespace()
                .next()
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Ok(total)
}

/// Direct children of `pid`, found by the parent field of every `/proc/<n>/stat`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&n| {
            fs::read_to_string(format!("/proc/{n}/stat"))
                .ok()
                .and_then(|s| parent_of(&s))
                == Some(pid)
        })
        .collect()
}

/// The ppid field of a `/proc/<n>/stat` line (the command name may contain spaces and parentheses).
fn parent_of(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_vm_rss_and_parent_fields() {
        assert_eq!(
            parse_vm_rss("Name:\tx\nVmPeak:\t 9 kB\nVmRSS:\t   12345 kB\n"),
            Some(12345)
        );
        assert_eq!(parse_vm_rss("Name:\tx\n"), None);
        assert_eq!(
            parent_of("42 (nginx: worker) process) S 17 42 42 0"),
            Some(17)
        );
    }

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        assert!(rss_kib(me).unwrap() > 0);
        let before = cpu_ns(me).unwrap();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(
            cpu_ns(me).unwrap() > before,
            "schedstat must advance while we compute"
        );
    }
}
