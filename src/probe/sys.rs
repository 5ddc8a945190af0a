//! Readings from the kernel taken around a phase: CPU time, device counters, free space,
//! dirty page-cache bytes; and the cache controls (sync, drop_caches).

use anyhow::{Context, Result};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// CPU seconds of this process and its waited-for children (getrusage SELF + CHILDREN).
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

/// CPU time used so far by the process (all threads) and its children.
pub fn cpu_times() -> CpuTimes {
    let (me, ch) = (cpu_of(libc::RUSAGE_SELF), children_cpu_times());
    CpuTimes {
        user_s: me.user_s + ch.user_s,
        sys_s: me.sys_s + ch.sys_s,
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

/// Sectors read and written by a block device, from `/sys/block/<dev>/stat`
/// (fields 3 and 7; always in 512-byte units whatever the device's sector size).
pub fn device_bytes(sysfs_stat: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(sysfs_stat).ok()?;
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    Some((*f.get(2)? * 512, *f.get(6)? * 512))
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
    let f = std::fs::File::open(path)?;
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
        let t = cpu_times();
        let mut x = 0u64;
        for i in 0..10_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        let t2 = cpu_times();
        assert!(t2.user_s + t2.sys_s > t.user_s + t.sys_s);
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
    }
}
