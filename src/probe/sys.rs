//! Readings from the kernel taken around a phase: CPU time, device counters, free space,
//! dirty page-cache bytes; and the cache controls (sync, drop_caches).

use anyhow::{Context, Result};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// CPU seconds, user and system.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTimes {
    pub user_s: f64,
    pub sys_s: f64,
}

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: getrusage fills the struct we pass; a zeroed rusage is a valid value.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    }
}

fn tv_s(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6
}

fn cpu_of(who: libc::c_int) -> CpuTimes {
    let ru = rusage(who);
    CpuTimes {
        user_s: tv_s(ru.ru_utime),
        sys_s: tv_s(ru.ru_stime),
    }
}

impl CpuTimes {
    /// What was spent from `earlier` to `self`.
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: self.user_s - earlier.user_s,
            sys_s: self.sys_s - earlier.sys_s,
        }
    }

    /// What a thread spent from `earlier` to `self` (both [`thread_cpu_times`]): the exact
    /// total, its system part within it.
    pub fn window(self, earlier: CpuTimes) -> CpuTimes {
        let total = ((self.user_s + self.sys_s) - (earlier.user_s + earlier.sys_s)).max(0.0);
        let sys_s = (self.sys_s - earlier.sys_s).clamp(0.0, total);
        CpuTimes {
            user_s: total - sys_s,
            sys_s,
        }
    }

    /// `self` and `other` together.
    pub fn plus(self, other: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: self.user_s + other.user_s,
            sys_s: self.sys_s + other.sys_s,
        }
    }
}

/// CPU time used so far by the calling thread alone: a phase's worker, without
/// fsarena's other threads (the progress display, the disturbance watch). The sum is the
/// scheduler's exact runtime (`CLOCK_THREAD_CPUTIME_ID`); the system part is getrusage's
/// (RUSAGE_THREAD), which is sampled at scheduler ticks and lags the running thread by up
/// to one, so take a window of it with [`CpuTimes::window`].
pub fn thread_cpu_times() -> CpuTimes {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    let total = ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9;
    let sys_s = cpu_of(libc::RUSAGE_THREAD).sys_s.min(total);
    CpuTimes {
        user_s: total - sys_s,
        sys_s,
    }
}

/// CPU time used so far by the waited-for children alone (getrusage RUSAGE_CHILDREN):
/// every descendant that was reaped, by us or by a descendant we reaped.
pub fn children_cpu_times() -> CpuTimes {
    cpu_of(libc::RUSAGE_CHILDREN)
}

/// Peak resident set size of this process in bytes since the last [`reset_peak_rss`]
/// (`VmHWM` of /proc/self/status; getrusage's maxrss, which cannot be reset, as fallback).
///
/// Not getrusage alone: `ru_maxrss` is the peak over the process's whole life, so in a run
/// of many trials every trial after the hungriest would report that trial's peak, and a
/// leak could not be told from one big trial. VmHWM, reset per trial, is the trial's own
/// peak (it still includes what the process held when the trial started: the binary, the
/// store, earlier results).
pub fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or_else(|| rusage(libc::RUSAGE_SELF).ru_maxrss as u64 * 1024)
}

/// Resets the peak RSS to the current RSS (`echo 5 > /proc/self/clear_refs`, Linux ≥ 4.0),
/// so that [`peak_rss_bytes`] measures one trial.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", b"5");
}

/// A block device's request counters at one instant, from `/sys/block/<dev>/stat`
/// (Documentation/block/stat.rst): requests completed, and sectors always in 512-byte units
/// whatever the device's sector size. Discards (kernel 4.18) and flushes (5.5) are `None`
/// on kernels whose file lacks their fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub read_ios: u64,
    /// Read requests merged into others before reaching the device: the reads the
    /// filesystem sent are `read_ios + read_merges` (likewise for writes).
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_bytes: u64,
    pub write_ios: u64,
    pub write_bytes: u64,
    pub discard_ios: Option<u64>,
    pub discard_bytes: Option<u64>,
    pub flush_ios: Option<u64>,
}

impl DiskStat {
    /// Parses the text of a `stat` file; `None` when it has fewer than the 7 first fields.
    pub fn parse(text: &str) -> Option<Self> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        Some(Self {
            read_ios: *f.first()?,
            read_merges: *f.get(1)?,
            write_merges: *f.get(5)?,
            read_bytes: *f.get(2)? * 512,
            write_ios: *f.get(4)?,
            write_bytes: *f.get(6)? * 512,
            discard_ios: f.get(11).copied(),
            discard_bytes: f.get(13).map(|s| s * 512),
            flush_ios: f.get(15).copied(),
        })
    }

    /// The counters of `sysfs_stat` now.
    pub fn read(sysfs_stat: &Path) -> Option<Self> {
        Self::parse(&std::fs::read_to_string(sysfs_stat).ok()?)
    }

    /// The sum of two windows' counts.
    pub fn plus(&self, other: &Self) -> Self {
        let opt = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        Self {
            read_ios: self.read_ios + other.read_ios,
            read_merges: self.read_merges + other.read_merges,
            write_merges: self.write_merges + other.write_merges,
            read_bytes: self.read_bytes + other.read_bytes,
            write_ios: self.write_ios + other.write_ios,
            write_bytes: self.write_bytes + other.write_bytes,
            discard_ios: opt(self.discard_ios, other.discard_ios),
            discard_bytes: opt(self.discard_bytes, other.discard_bytes),
            flush_ios: opt(self.flush_ios, other.flush_ios),
        }
    }

    /// What the device did from `before` to `self` (counters only grow; a reset reads 0).
    pub fn since(&self, before: &Self) -> Self {
        let opt = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?));
        Self {
            read_ios: self.read_ios.saturating_sub(before.read_ios),
            read_merges: self.read_merges.saturating_sub(before.read_merges),
            write_merges: self.write_merges.saturating_sub(before.write_merges),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_ios: self.write_ios.saturating_sub(before.write_ios),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
            discard_ios: opt(self.discard_ios, before.discard_ios),
            discard_bytes: opt(self.discard_bytes, before.discard_bytes),
            flush_ios: opt(self.flush_ios, before.flush_ios),
        }
    }
}

/// Bytes read and written by a block device so far ([`DiskStat`]).
pub fn device_bytes(sysfs_stat: &Path) -> Option<(u64, u64)> {
    DiskStat::read(sysfs_stat).map(|d| (d.read_bytes, d.write_bytes))
}

/// CPU seconds that kernel threads (the children of `kthreadd`: writeback and journal
/// threads, filesystem and block workqueues, the loop devices' workers) have run so far,
/// machine-wide: the sum of the first field of `/proc/<pid>/task/<tid>/schedstat`
/// (nanoseconds on a CPU) over every kernel thread. `None` when the kernel keeps no
/// schedstat. A thread that exits between two readings takes its time with it, and
/// the kernel work other processes cause meanwhile is included.
pub fn kernel_threads_cpu_s() -> Option<f64> {
    let mut ns: u64 = 0;
    let mut any = false;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        // Kernel threads have no memory map and kthreadd (pid 2) as parent, or are it.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(after) = stat.rsplit_once(") ").map(|(_, a)| a) else {
            continue;
        };
        let ppid = after.split_whitespace().nth(1).unwrap_or("");
        if pid != "2" && ppid != "2" {
            continue;
        }
        if let Ok(t) = std::fs::read_to_string(format!("/proc/{pid}/schedstat")) {
            if let Some(x) = t
                .split_whitespace()
                .next()
                .and_then(|x| x.parse::<u64>().ok())
            {
                ns += x;
                any = true;
            }
        }
    }
    any.then_some(ns as f64 / 1e9)
}

/// The sysfs `stat` file of the block device holding `path` (a partition's own file when
/// it is a partition), or `None` for filesystems without one (tmpfs, overlay, FUSE).
pub fn sysfs_stat_for_path(path: &Path) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let p = std::path::PathBuf::from(format!("/sys/dev/block/{maj}:{min}/stat"));
    p.exists().then_some(p)
}

/// Bytes in `Dirty:` plus `Writeback:` of `/proc/meminfo`: what the page cache still owes
/// the disk.
pub fn dirty_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("Dirty:") || l.starts_with("Writeback:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

/// A figure of `/proc/meminfo` (`MemAvailable`, `SwapFree`, …) in bytes; `None` when
/// absent or unreadable.
pub fn meminfo_bytes(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.split(':').next() == Some(key))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// Space of the filesystem holding `path`, from statvfs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Space {
    pub capacity_bytes: u64,
    pub free_bytes: u64,
    /// Free to an unprivileged user (what `df` shows as available).
    pub avail_bytes: u64,
    /// Mounted read-only (`ST_RDONLY`).
    pub read_only: bool,
}

impl Space {
    /// capacity − free.
    pub fn used_bytes(&self) -> u64 {
        self.capacity_bytes.saturating_sub(self.free_bytes)
    }
}

fn cpath(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).context("path contains NUL")
}

/// statvfs of the filesystem holding `path`.
pub fn space(path: &Path) -> Result<Space> {
    let c = cpath(path)?;
    // SAFETY: statvfs fills the struct; c is a valid NUL-terminated path.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("statvfs {}", path.display()));
        }
        st
    };
    let f = st.f_frsize;
    Ok(Space {
        capacity_bytes: st.f_blocks * f,
        free_bytes: st.f_bfree * f,
        avail_bytes: st.f_bavail * f,
        read_only: st.f_flag & libc::ST_RDONLY != 0,
    })
}

/// Free inodes of the filesystem holding `path` (statvfs f_favail); `None` when unknown
/// or when the filesystem does not count inodes (btrfs reports 0 total).
pub fn inodes_free(path: &Path) -> Option<u64> {
    let c = cpath(path).ok()?;
    // SAFETY: statvfs fills the struct; c is a valid NUL-terminated path.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        st
    };
    (st.f_files > 0).then_some(st.f_favail)
}

/// syncfs(2) on the filesystem holding `path`.
pub fn syncfs(path: &Path) -> std::io::Result<()> {
    syncfs_of(&std::fs::File::open(path)?)
}

/// syncfs(2) on the filesystem holding the open file `f` (which may have been removed
/// since it was opened).
pub fn syncfs_of(f: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: syncfs takes an open descriptor, which `f` keeps alive for the call.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// sync(2): flush every filesystem.
pub fn sync_all() {
    // SAFETY: sync has no arguments and cannot fail.
    unsafe { libc::sync() }
}

/// Whether this process runs with effective uid 0.
pub fn is_root() -> bool {
    euid() == 0
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// sync, then drop the page cache, dentries and inodes (`echo 3 > drop_caches`).
pub fn drop_caches() -> Result<()> {
    sync_all();
    std::fs::write("/proc/sys/vm/drop_caches", b"3\n")
        .context("writing /proc/sys/vm/drop_caches (needs root)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_are_sane() {
        let t = thread_cpu_times();
        let mut x = 0u64;
        for i in 0..10_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i * i));
        }
        std::hint::black_box(x);
        let t2 = thread_cpu_times();
        let w = t2.window(t);
        assert!(w.user_s > 0.0 && w.sys_s >= 0.0, "{w:?}");
        let s = space(Path::new("/")).unwrap();
        assert!(s.capacity_bytes > 0 && s.free_bytes <= s.capacity_bytes);
        assert!(peak_rss_bytes() > 1 << 20);
        assert!(space(Path::new("/no/such/dir")).is_err());
    }

    #[test]
    fn parses_diskstat_fields() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stat");
        std::fs::write(&p, "  100 0 2048 5 200 0 4096 9 0 1 2\n").unwrap();
        assert_eq!(device_bytes(&p), Some((2048 * 512, 4096 * 512)));
        assert_eq!(device_bytes(&dir.path().join("none")), None);
        let old = DiskStat::read(&p).unwrap();
        assert_eq!((old.read_ios, old.write_ios), (100, 200));
        assert_eq!((old.discard_ios, old.flush_ios), (None, None));
        // A 5.5+ kernel's 17 fields: discards 3 (16 sectors), flushes 7.
        let new = "100 0 2048 5 200 0 4096 9 0 1 2 3 0 16 1 7 4\n";
        let d = DiskStat::parse(new).unwrap();
        assert_eq!(
            (d.discard_ios, d.discard_bytes, d.flush_ios),
            (Some(3), Some(16 * 512), Some(7))
        );
        let later = DiskStat::parse("150 0 2048 5 260 0 5000 9 0 1 2 3 0 16 1 9 4").unwrap();
        let delta = later.since(&d);
        assert_eq!(
            (delta.read_ios, delta.write_ios, delta.flush_ios),
            (50, 60, Some(2))
        );
        assert_eq!(delta.write_bytes, (5000 - 4096) * 512);
    }

    #[test]
    fn kernel_threads_have_cpu_time() {
        // kthreadd and its children exist on every Linux; their time only grows.
        let a = kernel_threads_cpu_s().expect("schedstat readable");
        let b = kernel_threads_cpu_s().unwrap();
        assert!(a > 0.0 && b >= a * 0.99, "{a} {b}");
    }
}
