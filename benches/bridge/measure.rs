//! Measuring: closed-loop load phases, the latency statistics of a route's rounds, and the
//! CPU time of a process from `/proc`.

use std::time::{Duration, Instant};

use crate::calls::Caller;

pub(crate) struct Stats {
    pub(crate) calls: usize,
    pub(crate) errors: usize,
    pub(crate) first_error: Option<String>,
    pub(crate) per_sec: f64,
    pub(crate) p50: Duration,
    pub(crate) p99: Duration,
    /// The bridge's CPU time (user and system, all threads) per successful call.
    pub(crate) bridge_cpu: Duration,
    /// The part of `bridge_cpu` spent in the kernel (system time).
    pub(crate) bridge_system: Duration,
}

pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What the rounds of one route measured so far.
#[derive(Default)]
pub(crate) struct Tally {
    latencies: Vec<Duration>,
    errors: usize,
    first_error: Option<String>,
    elapsed: Duration,
    bridge_cpu: Cpu,
}

impl Tally {
    pub(crate) fn add(
        &mut self,
        (latencies, errors, first_error): Measured,
        elapsed: Duration,
        cpu: Cpu,
    ) {
        self.latencies.extend(latencies);
        self.bridge_cpu = self.bridge_cpu + cpu;
        self.errors += errors;
        self.first_error = self.first_error.take().or(first_error);
        self.elapsed += elapsed;
    }

    pub(crate) fn stats(mut self) -> Stats {
        self.latencies.sort_unstable();
        Stats {
            calls: self.latencies.len(),
            errors: self.errors,
            per_sec: self.latencies.len() as f64 / self.elapsed.as_secs_f64(),
            p50: percentile(&self.latencies, 0.50),
            p99: percentile(&self.latencies, 0.99),
            bridge_cpu: self.bridge_cpu.total() / self.latencies.len().max(1) as u32,
            bridge_system: self.bridge_cpu.system / self.latencies.len().max(1) as u32,
            first_error: self.first_error,
        }
    }
}

/// Latencies of the calls that succeeded, how many failed, and the first failure.
type Measured = (Vec<Duration>, usize, Option<String>);

/// CPU time of a process: in its own code (user) and in the kernel on its behalf (system).
#[derive(Clone, Copy, Default, PartialEq)]
pub(crate) struct Cpu {
    pub(crate) user: Duration,
    pub(crate) system: Duration,
}

impl Cpu {
    fn total(self) -> Duration {
        self.user + self.system
    }
}

impl std::ops::Add for Cpu {
    type Output = Cpu;

    fn add(self, other: Cpu) -> Cpu {
        Cpu {
            user: self.user + other.user,
            system: self.system + other.system,
        }
    }
}

impl std::ops::Sub for Cpu {
    type Output = Cpu;

    fn sub(self, before: Cpu) -> Cpu {
        Cpu {
            user: self.user.saturating_sub(before.user),
            system: self.system.saturating_sub(before.system),
        }
    }
}

/// The resident memory (VmRSS) of the process `pid`, in MiB.
pub(crate) fn rss_mib(pid: u32) -> f64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/<pid>/status");
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status");
    kib / 1024.0
}

/// CPU time process `pid` has used so far (every thread), from `/proc/<pid>/stat`.
pub(crate) fn cpu_of(pid: u32) -> Cpu {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid)).expect("/proc/<pid>/stat");
    // Fields after the command name (which may hold spaces): utime and stime are the 12th
    // and 13th, in clock ticks of 1/100 s (USER_HZ, fixed for /proc on Linux).
    let mut ticks = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().skip(11).take(2))
        .into_iter()
        .flatten()
        .map(|t| Duration::from_millis(t.parse::<u64>().expect("a tick count") * 10));
    Cpu {
        user: ticks.next().expect("utime"),
        system: ticks.next().expect("stime"),
    }
}

/// Runs calls from `concurrency` workers in a closed loop for `run`, each with a `Caller` of
/// its own from `caller`; every worker makes at least one call.
pub(crate) async fn phase(
    concurrency: usize,
    run: Duration,
    caller: impl Fn() -> Caller,
) -> Measured {
    let deadline = Instant::now() + run;
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let mut caller = caller();
            tokio::spawn(async move {
                let (mut latencies, mut errors, mut first) = (Vec::new(), 0, None);
                loop {
                    let sent = Instant::now();
                    match caller.call().await {
                        Ok(()) => latencies.push(sent.elapsed()),
                        Err(error) => {
                            errors += 1;
                            first.get_or_insert(error);
                        }
                    }
                    if Instant::now() >= deadline {
                        return (latencies, errors, first);
                    }
                }
            })
        })
        .collect();
    let mut all = (Vec::new(), 0, None);
    for worker in workers {
        let (latencies, errors, first) = worker.await.expect("a load worker");
        all.0.extend(latencies);
        all.1 += errors;
        all.2 = all.2.or(first);
    }
    all
}

/// Whether the comma-separated list in `variable` names `key` (an unset list names everything).
pub(crate) fn listed(variable: &str, key: &str) -> bool {
    let list = std::env::var(variable).unwrap_or_default();
    list.is_empty() || list.split(',').any(|k| k.trim() == key)
}
