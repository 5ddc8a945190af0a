//! What `fsarena doctor` reads from the machine, gathered into one plain struct so that the
//! verdict rules ([`super::checks`]) are pure functions of it and unit tests can feed any
//! machine's facts.
//!
//! Nothing here changes the machine: drop_caches is opened for writing and closed without
//! a write, `losetup -f` only prints the next free device.

use crate::probe::dirty::DirtyState;
use crate::provision::fs::{FsType, Support};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Kernel support and tools of one filesystem type.
#[derive(Clone, Debug)]
pub struct FsFacts {
    pub name: &'static str,
    /// The Debian package with its mkfs and checker.
    pub package: &'static str,
    /// Whether the default run (`fsarena run`, the quick suite) makes it.
    pub required: bool,
    /// [`FsType::support`]: kernel support and mkfs.
    pub mkfs: Support,
    /// [`FsType::fsck_support`]: the read-only checker.
    pub fsck: Support,
}

/// A process and the share of one CPU it used while doctor watched.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuUser {
    pub pid: u32,
    pub comm: String,
    /// Percent of one CPU (100 = one core busy all the time).
    pub cpu_pct: f64,
}

/// Free space where the images go.
#[derive(Clone, Debug, PartialEq)]
pub struct DirSpace {
    /// The directory statvfs looked at: the image directory, or its nearest existing
    /// ancestor when it does not exist yet.
    pub measured_at: PathBuf,
    /// Bytes fsarena may use there: statvfs `f_bavail`, as `run` counts them (root's
    /// reserved blocks are not for images).
    pub usable_bytes: u64,
    /// Its size (statvfs `f_blocks`); 0 on a filesystem that keeps no count (ramfs).
    pub capacity_bytes: u64,
    /// The filesystem there is mounted read-only.
    pub read_only: bool,
}

/// Everything the checks judge.
#[derive(Clone, Debug)]
pub struct Facts {
    pub root: bool,
    /// `/dev/loop-control` exists.
    pub loop_control: bool,
    /// `losetup -f`: the next free loop device, or why it failed.
    pub losetup: Result<String, String>,
    pub filesystems: Vec<FsFacts>,
    /// The kernel has tmpfs and `mount` is installed.
    pub tmpfs: Support,
    /// Opening `/proc/sys/vm/drop_caches` for writing: Ok, or the error.
    pub drop_caches: Result<(), String>,
    pub image_dir: PathBuf,
    pub space: Result<DirSpace, String>,
    /// Bytes of image the default run needs at once (one image at a time).
    pub need_bytes: u64,
    /// Size of the default run's tmpfs.
    pub tmpfs_bytes: u64,
    /// MemAvailable from /proc/meminfo, bytes.
    pub mem_available_bytes: Option<u64>,
    /// One `scaling_governor` per CPU that has cpufreq; empty when none has.
    pub governors: Vec<String>,
    /// The 1-minute load average.
    pub loadavg_1: Option<f64>,
    pub cores: usize,
    /// Other processes by CPU use over a short sample, busiest first.
    pub top_cpu: Vec<CpuUser>,
    /// Other fsarena runs live on this machine ([`crate::probe::disturb::registry`]).
    pub other_runs: Vec<crate::probe::disturb::LiveRun>,
    /// Text of /proc/swaps.
    pub swaps: String,
    pub dirty: Result<DirtyState, String>,
    /// Text of /sys/kernel/mm/transparent_hugepage/enabled, when present.
    pub thp: Option<String>,
    /// Kernel release (/proc/sys/kernel/osrelease).
    pub kernel: String,
    /// What guest runs (`run --kernel`) need.
    pub guest: GuestFacts,
    /// The programs workloads run that fsarena does not ship: (workload, program,
    /// package, installed here).
    pub engines: Vec<(String, String, String, bool)>,
}

/// What `run --kernel` needs: virtme-ng, QEMU, a static busybox, a kernel with its
/// modules, and whether KVM boots it here.
#[derive(Clone, Debug, Default)]
pub struct GuestFacts {
    pub vng: Option<PathBuf>,
    pub qemu: bool,
    pub busybox: bool,
    /// Releases under /boot with their modules installed.
    pub kernels: Vec<String>,
    /// The KVM check's outcome, when everything else was there to boot one.
    pub kvm: Option<Result<(), String>>,
}

impl GuestFacts {
    /// Reads them; boots a minimal KVM guest (up to 20 s) when all else is there.
    pub fn gather(image_dir: &Path) -> GuestFacts {
        let mut g = GuestFacts {
            vng: crate::guest::launch::find_vng(),
            qemu: crate::cmd::which("qemu-system-x86_64").is_some(),
            busybox: crate::cmd::which("busybox").is_some(),
            kernels: crate::guest::kernel::installed(),
            kvm: None,
        };
        if let (Some(vng), true, true, Some(k)) = (&g.vng, g.qemu, g.busybox, g.kernels.first()) {
            if let Ok(k) = crate::guest::kernel::resolve(k) {
                g.kvm = Some(crate::guest::check_kvm_once(vng, &k, image_dir));
            }
        }
        g
    }
}

/// How long the CPU consumers are watched.
pub const CPU_SAMPLE: Duration = Duration::from_millis(500);

/// Reads the facts of this machine for a run that would use `image_dir`.
pub fn gather(image_dir: &Path) -> Facts {
    let quick = crate::suite::find("quick").expect("the quick suite exists");
    let size = quick
        .size
        .and_then(|s| crate::size::parse_size(s).ok())
        .unwrap_or(1 << 30);
    let root = crate::probe::sys::is_root();
    let before = proc_cpu_ticks();
    let started = std::time::Instant::now();
    let facts = Facts {
        root,
        loop_control: Path::new("/dev/loop-control").exists(),
        losetup: losetup_f(),
        filesystems: FsType::ALL
            .iter()
            .map(|&f| FsFacts {
                name: f.name(),
                package: f.package(),
                required: quick.fs.contains(&f.name()),
                mkfs: f.support(),
                fsck: f.fsck_support(),
            })
            .collect(),
        tmpfs: crate::provision::fs::tmpfs_support(),
        drop_caches: std::fs::OpenOptions::new()
            .write(true)
            .open("/proc/sys/vm/drop_caches")
            .map(drop)
            .map_err(|e| e.to_string()),
        image_dir: image_dir.to_path_buf(),
        space: dir_space(image_dir),
        need_bytes: size,
        tmpfs_bytes: size,
        mem_available_bytes: crate::probe::sys::meminfo_bytes("MemAvailable"),
        governors: governors(Path::new("/sys/devices/system/cpu")),
        loadavg_1: std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|t| parse_loadavg(&t)),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        top_cpu: Vec::new(),
        other_runs: crate::probe::disturb::registry::other_live_runs(),
        swaps: std::fs::read_to_string("/proc/swaps").unwrap_or_default(),
        dirty: DirtyState::read().map_err(|e| format!("{e:#}")),
        thp: std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .ok()
            .map(|s| s.trim().to_string()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        guest: GuestFacts::gather(image_dir),
        engines: crate::workload::registry()
            .iter()
            .flat_map(|w| {
                w.programs.iter().map(|p| {
                    let here = (p.find)().is_some();
                    (w.name.into(), p.name.into(), p.package.into(), here)
                })
            })
            .collect(),
    };
    if let Some(rest) = CPU_SAMPLE.checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
    let after = proc_cpu_ticks();
    let hz = clock_ticks_per_s();
    let me = std::process::id();
    let mut top = top_consumers(&before, &after, started.elapsed().as_secs_f64(), hz);
    top.retain(|u| u.pid != me);
    Facts {
        top_cpu: top,
        ..facts
    }
}

fn losetup_f() -> Result<String, String> {
    // Found as `run` finds it (root's sbin directories even when PATH lacks them).
    let Some(losetup) = crate::cmd::which("losetup") else {
        return Err("losetup missing: apt-get install mount".into());
    };
    match std::process::Command::new(losetup).arg("-f").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
        Err(e) => Err(format!("losetup: {e}")),
    }
}

/// statvfs of `dir`, or of its nearest existing ancestor.
fn dir_space(dir: &Path) -> Result<DirSpace, String> {
    let at = crate::plan::room::existing_ancestor(dir);
    let s = crate::probe::sys::space(at).map_err(|e| format!("{e:#}"))?;
    Ok(DirSpace {
        measured_at: at.to_path_buf(),
        usable_bytes: s.avail_bytes,
        capacity_bytes: s.capacity_bytes,
        read_only: s.read_only,
    })
}

/// The `scaling_governor` of every `cpuN` under `cpu_dir` (`/sys/devices/system/cpu`).
pub fn governors(cpu_dir: &Path) -> Vec<String> {
    let mut found: Vec<(u32, String)> = std::fs::read_dir(cpu_dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let n: u32 = name.strip_prefix("cpu")?.parse().ok()?;
                    let g =
                        std::fs::read_to_string(e.path().join("cpufreq/scaling_governor")).ok()?;
                    Some((n, g.trim().to_string()))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.into_iter().map(|(_, g)| g).collect()
}

/// The 1-minute figure of `/proc/loadavg`.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// One process's CPU use so far, from `/proc/PID/stat`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcTicks {
    pub pid: u32,
    /// The command name; a kernel worker's changes with the work it does.
    pub comm: String,
    /// utime + stime, clock ticks.
    pub ticks: u64,
    /// Start time after boot, clock ticks: tells a reused pid from the same process.
    pub start: u64,
}

/// `(comm, utime + stime, starttime)` in clock ticks from the text of `/proc/PID/stat`.
/// The command name is in parentheses and may itself hold spaces and parentheses, so the
/// fields are counted from the last `)`: state is field 3, utime 14, stime 15, starttime
/// 22 (proc(5)).
pub fn parse_stat(text: &str) -> Option<(String, u64, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    let start: u64 = rest.get(19)?.parse().ok()?;
    Some((comm, utime + stime, start))
}

/// CPU ticks used so far by every process: (pid, comm, ticks).
fn proc_cpu_ticks() -> Vec<ProcTicks> {
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                    let text = std::fs::read_to_string(e.path().join("stat")).ok()?;
                    let (comm, ticks, start) = parse_stat(&text)?;
                    Some(ProcTicks {
                        pid,
                        comm,
                        ticks,
                        start,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn clock_ticks_per_s() -> f64 {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// Processes that used CPU between two samples `interval_s` apart, busiest first, as percent
/// of one CPU: Δticks / hz / interval · 100. Processes are matched by pid and start time (a
/// kernel worker's name changes with its work); one absent from `before` started during
/// the sample and is counted from zero.
pub fn top_consumers(
    before: &[ProcTicks],
    after: &[ProcTicks],
    interval_s: f64,
    hz: f64,
) -> Vec<CpuUser> {
    if interval_s <= 0.0 || hz <= 0.0 {
        return Vec::new();
    }
    let mut v: Vec<CpuUser> = after
        .iter()
        .filter_map(|a| {
            let was = before
                .iter()
                .find(|b| b.pid == a.pid && b.start == a.start)
                .map_or(0, |b| b.ticks);
            let d = a.ticks.saturating_sub(was);
            (d > 0).then(|| CpuUser {
                pid: a.pid,
                comm: a.comm.clone(),
                cpu_pct: d as f64 / hz / interval_s * 100.0,
            })
        })
        .collect();
    v.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_command_names() {
        let line =
            "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 5 0 0";
        assert_eq!(parse_stat(line), Some(("my (odd) cmd".into(), 300, 5)));
        assert_eq!(parse_stat("garbage"), None);
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(parse_stat(&own).is_some(), "{own}");
    }

    #[test]
    fn consumers_are_ranked_by_cpu_share() {
        let p = |pid, comm: &str, ticks, start| ProcTicks {
            pid,
            comm: comm.into(),
            ticks,
            start,
        };
        let before = vec![
            p(1, "a", 100, 1),
            p(2, "b", 10, 1),
            p(4, "kworker/0:1-events", 9000, 1),
            p(5, "old", 9000, 1),
        ];
        let after = vec![
            p(1, "a", 150, 1),
            p(2, "b", 10, 1),
            p(3, "new", 25, 900),
            p(4, "kworker/0:1-mm_percpu_wq", 9001, 1),
            p(5, "reused", 5, 950),
        ];
        let top = top_consumers(&before, &after, 0.5, 100.0);
        assert_eq!(top.len(), 4, "idle b left out: {top:?}");
        assert_eq!((top[0].pid, top[0].cpu_pct), (1, 100.0));
        assert_eq!((top[1].comm.as_str(), top[1].cpu_pct), ("new", 50.0));
        assert_eq!((top[2].comm.as_str(), top[2].cpu_pct), ("reused", 10.0));
        assert_eq!(
            top[3].cpu_pct, 2.0,
            "a renamed kernel worker is the same process"
        );
        assert!(top_consumers(&before, &after, 0.0, 100.0).is_empty());
    }

    #[test]
    fn reads_governors_and_loadavg() {
        let dir = tempfile::tempdir().unwrap();
        for (cpu, g) in [("cpu1", "powersave"), ("cpu0", "performance")] {
            let d = dir.path().join(cpu).join("cpufreq");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("scaling_governor"), format!("{g}\n")).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("cpu2")).unwrap(); // no cpufreq
        std::fs::create_dir_all(dir.path().join("cpuidle")).unwrap();
        assert_eq!(governors(dir.path()), ["performance", "powersave"]);
        assert!(governors(&dir.path().join("none")).is_empty());
        assert_eq!(parse_loadavg("0.52 0.40 0.30 1/123 4567\n"), Some(0.52));
        assert_eq!(parse_loadavg(""), None);
    }
}
