//! Whether something else competed with a trial while it ran: the `busy` flag (mark `b`).
//!
//! Parallel runs on one machine measured ext4 smallfiles create 24% slower than alone
//! (issue 30). A trial is watched from just after its filesystem is made until its
//! workload ends, and flagged `busy` when, during that time:
//!
//! * (a) **another fsarena run was live** on this machine: seen through the runs' locked
//!   entries in the machine-wide [`registry`], at the start, every
//!   [`SAMPLE_INTERVAL`] and at the end;
//! * (b) **other processes used more than [`OTHERS_CPU_SHARE`] of all CPUs**: the busy
//!   time of `/proc/stat` (user + nice + system) minus this process's own and its reaped
//!   children's (`/proc/self/stat` utime + stime + cutime + cstime) and minus kernel
//!   threads' (which do this run's I/O: loop workers, journal and write-back threads),
//!   over the total time of all CPUs. A quarter of the machine is one CPU of four, half a
//!   CPU of two: enough to take a CPU from a workload's worker, far above an idle
//!   machine's daemons (a few percent); irq and softirq time, mostly this run's own I/O
//!   completions, is left out;
//! * (c) **others moved much data on the device under a loop image**: the backing
//!   device's bytes (`/sys/.../stat`) minus what the loop device moved, when that is over
//!   [`OTHERS_DEVICE_MIN_BYTES`] and over [`OTHERS_DEVICE_SHARE`] of the device's
//!   traffic. Not checked on tmpfs, directory, device and network targets, whose device
//!   counters cannot tell this run's I/O from others' (the trial's notes say so).

pub mod registry;
#[cfg(test)]
mod tests;
mod untimed;

pub use crate::result::Disturbance;
pub use registry::LiveRun;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
pub use untimed::untimed;

/// (b): other processes' share of all CPUs' time above which a trial is busy.
pub const OTHERS_CPU_SHARE: f64 = 0.25;
/// (c): others' share of the backing device's bytes above which a trial is busy …
pub const OTHERS_DEVICE_SHARE: f64 = 0.25;
/// … when they are also at least this many bytes (below, a host journal commit or a state
/// file rewrite, no competition).
pub const OTHERS_DEVICE_MIN_BYTES: u64 = 16 << 20;
/// How often other runs are looked for during a trial.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// One reading of the CPU counters, in clock ticks (USER_HZ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// All CPUs' time: user nice system idle iowait irq softirq steal.
    pub total: u64,
    /// user + nice + system of all CPUs.
    pub busy: u64,
    /// This process and its reaped children.
    pub own: u64,
}

/// `(total, busy)` from the text of `/proc/stat` (its `cpu` line, proc(5)).
pub fn parse_proc_stat(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    if f.len() < 4 {
        return None;
    }
    let total = f.iter().take(8).sum();
    Some((total, f[0] + f[1] + f[2]))
}

/// Fields of `/proc/PID/stat` after the command name (which may hold `)`): index 0 is
/// field 3 (state) of proc(5).
fn stat_fields(text: &str) -> Option<Vec<u64>> {
    let rest = text.get(text.rfind(')')? + 1..)?;
    Some(
        rest.split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect(),
    )
}

/// utime + stime + cutime + cstime (fields 14–17) of a `/proc/PID/stat` text.
pub fn parse_own_ticks(text: &str) -> Option<u64> {
    let f = stat_fields(text)?;
    Some(f.get(11)? + f.get(12)? + f.get(13)? + f.get(14)?)
}

/// CPU seconds process `pid` and its children have used so far: its own, its reaped
/// children's (both in its `/proc/PID/stat`) and its living children's own (a server's
/// backends). `None` when the process is gone.
pub fn tree_cpu_s(pid: u32) -> Option<f64> {
    let mut ticks = parse_own_ticks(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)?;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = e.file_name();
        let Some(child) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        if stat_fields(&text).and_then(|f| f.get(1).copied()) == Some(u64::from(pid)) {
            ticks += parse_own_ticks(&text).unwrap_or(0);
        }
    }
    // SAFETY: sysconf(3) reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| ticks as f64 / hz as f64)
}

/// The kernel's flag of kernel threads in field 9 of `/proc/PID/stat`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// `(starttime, utime + stime)` of a kernel thread's `/proc/PID/stat` text; `None` for
/// a process that is no kernel thread.
pub fn parse_kthread(text: &str) -> Option<(u64, u64)> {
    let f = stat_fields(text)?;
    (f.get(6)? & PF_KTHREAD != 0).then_some((*f.get(19)?, f.get(11)? + f.get(12)?))
}

/// Kernel threads' CPU ticks: pid → (starttime, ticks).
pub type Kthreads = std::collections::HashMap<u32, (u64, u64)>;

fn read_kthreads() -> Kthreads {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Kthreads::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let text = std::fs::read_to_string(e.path().join("stat")).ok()?;
            Some((pid, parse_kthread(&text)?))
        })
        .collect()
}

/// Ticks kernel threads used between two readings (a thread new in `after` from zero; one
/// gone meanwhile is lost, and counts as others').
pub fn kthread_delta(before: &Kthreads, after: &Kthreads) -> u64 {
    after
        .iter()
        .map(|(pid, (start, ticks))| match before.get(pid) {
            Some((s, t)) if s == start => ticks.saturating_sub(*t),
            _ => *ticks,
        })
        .sum()
}

fn read_cpu() -> Option<CpuTicks> {
    let (total, busy) = parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
    let own = parse_own_ticks(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    Some(CpuTicks { total, busy, own })
}

/// (b): others' share of all CPUs' time between two readings, given the kernel threads'
/// ticks meanwhile; `None` when no time passed.
pub fn others_cpu_share(before: CpuTicks, after: CpuTicks, kthread_ticks: u64) -> Option<f64> {
    let total = after.total.checked_sub(before.total).filter(|t| *t > 0)?;
    let busy = after.busy.saturating_sub(before.busy);
    let own = after.own.saturating_sub(before.own);
    let others = busy.saturating_sub(own).saturating_sub(kthread_ticks);
    Some(others as f64 / total as f64)
}

/// (c): `(others' bytes, their share)` of the backing device's bytes `backing` when the
/// loop device moved `ours`; `None` when the device moved nothing.
pub fn others_device(backing: u64, ours: u64) -> Option<(u64, f64)> {
    (backing > 0).then(|| {
        let others = backing.saturating_sub(ours);
        (others, others as f64 / backing as f64)
    })
}

/// The verdict from the figures: fills `busy` and `reasons`.
pub fn judge(d: &mut Disturbance) {
    d.reasons.clear();
    if !d.other_runs.is_empty() {
        d.reasons.push("other-run".into());
    }
    if d.others_cpu_share.is_some_and(|s| s > OTHERS_CPU_SHARE) {
        d.reasons.push("cpu".into());
    }
    if let (Some(b), Some(s)) = (d.others_device_bytes, d.others_device_share) {
        if b >= OTHERS_DEVICE_MIN_BYTES && s > OTHERS_DEVICE_SHARE {
            d.reasons.push("device".into());
        }
    }
    d.busy = !d.reasons.is_empty();
}

/// The loop device's and its backing device's sysfs `stat` files, for a target of `kind`
/// whose device counters are `stat`; `Err` says why (c) cannot be checked.
fn device_pair(kind: &str, stat: Option<PathBuf>) -> Result<(PathBuf, PathBuf), String> {
    let why = match kind {
        "loop" => "",
        "tmpfs" => "device not checked: tmpfs has no device",
        "dir" => "device not checked: a directory's device counts this run's I/O with others'",
        _ => "device not checked: only a loop image's device can be told from others'",
    };
    if !why.is_empty() {
        return Err(why.into());
    }
    let stat = stat.ok_or("device not checked: the loop device has no counters")?;
    let name = stat
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let backing = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
        .map_err(|_| format!("device not checked: no backing file for {name}"))?;
    let backing = crate::probe::sys::sysfs_stat_for_path(Path::new(backing.trim()))
        .ok_or("device not checked: the loop image lies on a filesystem without a device")?;
    Ok((stat, backing))
}

fn bytes_of(stat: &Path) -> Option<u64> {
    crate::probe::sys::device_bytes(stat).map(|(r, w)| r + w)
}

/// A trial being watched: started before its workload, finished after it.
pub struct Watch {
    cpu: Option<CpuTicks>,
    kthreads: Kthreads,
    devices: Result<(PathBuf, PathBuf, u64, u64), String>,
    notes: Vec<String>,
    stop: mpsc::Sender<()>,
    sampler: std::thread::JoinHandle<Vec<LiveRun>>,
}

impl Watch {
    /// Starts watching a trial on a target of `kind` whose device counters are `stat`.
    /// `cpu_shared` (MPI ranks of this run on this machine): (b) is not checked.
    pub fn start(kind: &str, stat: Option<PathBuf>, cpu_shared: bool) -> Watch {
        let mut notes = Vec::new();
        let devices = device_pair(kind, stat).and_then(|(ours, backing)| {
            match (bytes_of(&ours), bytes_of(&backing)) {
                (Some(o), Some(b)) => Ok((ours, backing, o, b)),
                _ => Err("device not checked: its counters cannot be read".into()),
            }
        });
        if cpu_shared {
            notes.push("cpu not checked: other ranks of this run share the machine".into());
        }
        untimed::begin(devices.as_ref().ok().map(|d| (d.0.clone(), d.1.clone())));
        let (stop, stopped) = mpsc::channel::<()>();
        let sampler = std::thread::spawn(move || {
            // At the start, every interval, and once more at the end.
            let mut seen: Vec<LiveRun> = Vec::new();
            let add = |seen: &mut Vec<LiveRun>| {
                for r in registry::other_live_runs() {
                    if !seen.contains(&r) {
                        seen.push(r);
                    }
                }
            };
            loop {
                add(&mut seen);
                if !matches!(
                    stopped.recv_timeout(SAMPLE_INTERVAL),
                    Err(mpsc::RecvTimeoutError::Timeout)
                ) {
                    add(&mut seen);
                    break;
                }
            }
            seen
        });
        Watch {
            cpu: (!cpu_shared).then(read_cpu).flatten(),
            kthreads: if cpu_shared {
                Kthreads::new()
            } else {
                read_kthreads()
            },
            devices,
            notes,
            stop,
            sampler,
        }
    }

    /// Ends the watch: what competed with the trial.
    pub fn finish(self) -> Disturbance {
        let mut d = Disturbance {
            notes: self.notes,
            ..Default::default()
        };
        let ex = untimed::end();
        if ex.stretches > 0 {
            d.notes
                .push("untimed work of the trial's own (crash states) not counted".into());
        }
        if let (Some(before), Some(after)) = (self.cpu, read_cpu()) {
            let k = kthread_delta(&self.kthreads, &read_kthreads());
            let k = k.saturating_sub(ex.kthread_ticks);
            d.others_cpu_share = others_cpu_share(before, untimed::less(after, &ex), k);
        }
        match self.devices {
            Ok((ours, backing, o0, b0)) => {
                if let (Some(o1), Some(b1)) = (bytes_of(&ours), bytes_of(&backing)) {
                    let backing_moved = b1.saturating_sub(b0).saturating_sub(ex.backing);
                    let ours_moved = o1.saturating_sub(o0).saturating_sub(ex.ours);
                    let moved = others_device(backing_moved, ours_moved);
                    d.others_device_bytes = moved.map(|m| m.0);
                    d.others_device_share = moved.map(|m| m.1);
                }
            }
            Err(why) => d.notes.push(why),
        }
        let _ = self.stop.send(());
        d.other_runs = self.sampler.join().unwrap_or_default();
        judge(&mut d);
        d
    }
}

/// Marks a busy trial's phases `busy` (the flag every report shows as `b`).
pub fn mark(trial: &mut crate::result::Trial) {
    if trial.disturbance.as_ref().is_some_and(|d| d.busy) {
        for p in &mut trial.phases {
            if !p.flags.iter().any(|f| f == "busy") {
                p.flags.push("busy".into());
            }
        }
    }
}

/// One line per busy trial of `run`: `ext4 smallfiles rep 2: another fsarena run: …`.
pub fn busy_lines(run: &crate::result::RunResult) -> Vec<String> {
    busy_trials(run)
        .map(|(t, d)| format!("{t}: {}", d.describe()))
        .collect()
}

/// The busy trials of `run`: (`target label rep N`, what competed with it).
pub fn busy_trials(run: &crate::result::RunResult) -> impl Iterator<Item = (String, &Disturbance)> {
    run.trials.iter().filter_map(|t| {
        let d = t.disturbance.as_ref().filter(|d| d.busy)?;
        Some((format!("{} {} rep {}", t.target, t.label, t.rep), d))
    })
}

/// What the run header and `doctor` say about other live runs: one line per run.
pub fn live_lines(runs: &[LiveRun]) -> Vec<String> {
    runs.iter()
        .map(|r| {
            format!(
                "another fsarena run is live on this machine: {}:\n  runs side by side \
                 slow each other down; trials measured meanwhile are marked b (busy)",
                r.describe()
            )
        })
        .collect()
}
