//! The kernel's limits on dirty page-cache memory: the `vm.dirty_*` settings in force and
//! the global dirty limit the kernel derives from them, for the `writeback` workload (the
//! seed comment on "First benchmarks of the ext4 file system", 2006: "If you are going to
//! do sustained writes multiple times the size of the memory you have … a *very*
//! unresponsive system"; it suggests `vm.dirty_ratio = 2`, `vm.dirty_background_ratio = 1`).
//!
//! The limit follows `domain_dirty_limits()` in the kernel's `mm/page-writeback.c`, in pages:
//! * dirtyable = NR_FREE_PAGES − totalreserve_pages + NR_ACTIVE_FILE + NR_INACTIVE_FILE
//!   (`global_dirtyable_memory()`; highmem does not exist on 64-bit);
//! * limit = ⌈dirty_bytes / PAGE_SIZE⌉ when `vm.dirty_bytes` is set, else
//!   ⌊(⌊dirty_ratio · PAGE_SIZE / 100⌋ · dirtyable) / PAGE_SIZE⌋;
//! * background limit likewise from `dirty_background_bytes`/`dirty_background_ratio`,
//!   halved limit when it would reach the limit.
//!
//! **Approximation**: dirtyable memory is read from `/proc/meminfo` as MemFree +
//! Active(file) + Inactive(file). `totalreserve_pages` (the zones' high watermarks plus
//! their lowmem reserves) is not in meminfo and is not subtracted, so the computed limit is
//! a little high (by dirty_ratio % of the reserve: a few MiB on a 24 GiB machine). The
//! kernel's own figure for the same moment, `nr_dirty_threshold` in `/proc/vmstat`, is read
//! too and reported beside it. The boost real-time tasks get (+25%) is ignored.

use anyhow::{bail, Context, Result};
use std::path::Path;

/// The `vm.dirty_*` sysctls (`/proc/sys/vm/`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirtySettings {
    /// `vm.dirty_ratio`, percent of dirtyable memory (used when `dirty_bytes` is 0).
    pub ratio_pct: u64,
    /// `vm.dirty_background_ratio`, percent.
    pub background_ratio_pct: u64,
    /// `vm.dirty_bytes`; 0 when the ratio is in force.
    pub bytes: u64,
    /// `vm.dirty_background_bytes`; 0 when the ratio is in force.
    pub background_bytes: u64,
    /// `vm.dirty_expire_centisecs`: age at which dirty data is written back.
    pub expire_centisecs: u64,
    /// `vm.dirty_writeback_centisecs`: interval of the flusher threads' wake-ups.
    pub writeback_centisecs: u64,
}

impl DirtySettings {
    /// Reads the settings from `/proc/sys/vm`.
    pub fn read() -> Result<Self> {
        Self::read_from(Path::new("/proc/sys/vm"))
    }

    /// Reads the settings from a directory laid out like `/proc/sys/vm`.
    pub fn read_from(dir: &Path) -> Result<Self> {
        let get = |name: &str| -> Result<u64> {
            let p = dir.join(name);
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            text.trim()
                .parse()
                .with_context(|| format!("{}: '{}' is not a number", p.display(), text.trim()))
        };
        Ok(Self {
            ratio_pct: get("dirty_ratio")?,
            background_ratio_pct: get("dirty_background_ratio")?,
            bytes: get("dirty_bytes")?,
            background_bytes: get("dirty_background_bytes")?,
            expire_centisecs: get("dirty_expire_centisecs")?,
            writeback_centisecs: get("dirty_writeback_centisecs")?,
        })
    }
}

/// The figures of `/proc/meminfo` the dirty limit depends on, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemFigures {
    pub free_bytes: u64,
    pub active_file_bytes: u64,
    pub inactive_file_bytes: u64,
}

impl MemFigures {
    /// Parses the text of `/proc/meminfo` (values in kB, meaning KiB).
    pub fn parse(meminfo: &str) -> Result<Self> {
        let get = |key: &str| -> Result<u64> {
            let line = meminfo
                .lines()
                .find(|l| l.split(':').next() == Some(key))
                .with_context(|| format!("/proc/meminfo has no '{key}:' line"))?;
            let kib: u64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse().ok())
                .with_context(|| format!("/proc/meminfo: cannot read '{line}'"))?;
            Ok(kib * 1024)
        };
        Ok(Self {
            free_bytes: get("MemFree")?,
            active_file_bytes: get("Active(file)")?,
            inactive_file_bytes: get("Inactive(file)")?,
        })
    }

    /// Reads `/proc/meminfo`.
    pub fn read() -> Result<Self> {
        Self::parse(&std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?)
    }

    /// MemFree + Active(file) + Inactive(file): the kernel's dirtyable memory without the
    /// reserve (see the module docs).
    pub fn dirtyable_bytes(&self) -> u64 {
        self.free_bytes + self.active_file_bytes + self.inactive_file_bytes
    }
}

/// The global dirty limits, in bytes (whole pages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyLimits {
    /// The memory the ratios apply to.
    pub dirtyable_bytes: u64,
    /// Above this, writers are throttled to the writeback rate (`balance_dirty_pages`).
    pub limit_bytes: u64,
    /// Above this, the flusher threads start background writeback.
    pub background_bytes: u64,
}

/// Computes the limits as `domain_dirty_limits()` does (see the module docs).
pub fn limits(s: &DirtySettings, mem: &MemFigures, page_size: u64) -> Result<DirtyLimits> {
    if page_size == 0 {
        bail!("page size 0");
    }
    let available = mem.dirtyable_bytes() / page_size;
    let pages = |bytes: u64, ratio_pct: u64| {
        if bytes > 0 {
            bytes.div_ceil(page_size)
        } else {
            let ratio = ratio_pct * page_size / 100;
            // u128: ratio · pages overflows u64 beyond 2^52 pages only, but costs nothing.
            (u128::from(ratio) * u128::from(available) / u128::from(page_size)) as u64
        }
    };
    let thresh = pages(s.bytes, s.ratio_pct);
    let mut bg = pages(s.background_bytes, s.background_ratio_pct);
    if bg >= thresh {
        bg = thresh / 2;
    }
    Ok(DirtyLimits {
        dirtyable_bytes: available * page_size,
        limit_bytes: thresh * page_size,
        background_bytes: bg * page_size,
    })
}

/// The kernel's own `nr_dirty_threshold` and `nr_dirty_background_threshold` from the text
/// of `/proc/vmstat`, in bytes.
pub fn kernel_thresholds(vmstat: &str, page_size: u64) -> Option<(u64, u64)> {
    let get = |key: &str| -> Option<u64> {
        vmstat.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok())?
        })
    };
    Some((
        get("nr_dirty_threshold")? * page_size,
        get("nr_dirty_background_threshold")? * page_size,
    ))
}

/// The page size (sysconf `_SC_PAGESIZE`).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Everything about dirty memory at one moment: the settings, the computed limits and the
/// kernel's thresholds.
#[derive(Clone, Copy, Debug)]
pub struct DirtyState {
    pub settings: DirtySettings,
    pub limits: DirtyLimits,
    /// `nr_dirty_threshold`, `nr_dirty_background_threshold` in bytes, when readable.
    pub kernel: Option<(u64, u64)>,
}

impl DirtyState {
    /// Reads the settings, /proc/meminfo and /proc/vmstat now.
    pub fn read() -> Result<Self> {
        let settings = DirtySettings::read()?;
        let ps = page_size();
        let limits = limits(&settings, &MemFigures::read()?, ps)?;
        let vmstat = std::fs::read_to_string("/proc/vmstat").unwrap_or_default();
        Ok(Self {
            settings,
            limits,
            kernel: kernel_thresholds(&vmstat, ps),
        })
    }

    /// The figures as (name with unit, value), as workloads note them on a phase.
    pub fn figures(&self) -> Vec<(&'static str, f64)> {
        let s = &self.settings;
        let mut v = vec![
            ("dirty_ratio_pct", s.ratio_pct as f64),
            ("dirty_background_ratio_pct", s.background_ratio_pct as f64),
            ("dirty_bytes", s.bytes as f64),
            ("dirty_background_bytes", s.background_bytes as f64),
            ("dirty_expire_centisecs", s.expire_centisecs as f64),
            ("dirty_writeback_centisecs", s.writeback_centisecs as f64),
            ("dirtyable_bytes", self.limits.dirtyable_bytes as f64),
            ("dirty_limit_bytes", self.limits.limit_bytes as f64),
            (
                "dirty_background_limit_bytes",
                self.limits.background_bytes as f64,
            ),
        ];
        if let Some((t, bg)) = self.kernel {
            v.push(("kernel_dirty_threshold_bytes", t as f64));
            v.push(("kernel_dirty_background_threshold_bytes", bg as f64));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       24552448 kB
MemFree:        20000000 kB
MemAvailable:   22000000 kB
Buffers:           10000 kB
Cached:          2000000 kB
Active:          1500000 kB
Inactive:        1200000 kB
Active(anon):     500000 kB
Inactive(anon):   200000 kB
Active(file):    1000000 kB
Inactive(file):  1000000 kB
Dirty:               100 kB
";

    fn settings(ratio: u64, bg: u64, bytes: u64, bg_bytes: u64) -> DirtySettings {
        DirtySettings {
            ratio_pct: ratio,
            background_ratio_pct: bg,
            bytes,
            background_bytes: bg_bytes,
            expire_centisecs: 3000,
            writeback_centisecs: 500,
        }
    }

    #[test]
    fn parses_meminfo_without_confusing_file_and_anon() {
        let m = MemFigures::parse(MEMINFO).unwrap();
        assert_eq!(m.free_bytes, 20_000_000 * 1024);
        assert_eq!(m.active_file_bytes, 1_000_000 * 1024);
        assert_eq!(m.dirtyable_bytes(), 22_000_000 * 1024);
        assert!(MemFigures::parse("MemFree: 1 kB\n").is_err());
        assert!(
            MemFigures::parse("MemFree: x kB\nActive(file): 1 kB\nInactive(file): 1 kB").is_err()
        );
    }

    #[test]
    fn ratio_limits_follow_the_kernel_formula() {
        let m = MemFigures::parse(MEMINFO).unwrap();
        let l = limits(&settings(20, 10, 0, 0), &m, 4096).unwrap();
        // 22,000,000 KiB = 5,500,000 pages; ratio 20% → 819 (20·4096/100, truncated) / 4096.
        let pages = 5_500_000u64;
        assert_eq!(l.dirtyable_bytes, pages * 4096);
        assert_eq!(l.limit_bytes, 819 * pages / 4096 * 4096);
        assert_eq!(l.background_bytes, 409 * pages / 4096 * 4096);
        // About 20% and 10% of 21 GiB.
        let gib = (1u64 << 30) as f64;
        assert!((l.limit_bytes as f64 / gib - 4.19).abs() < 0.01, "{l:?}");
        assert!(
            (l.background_bytes as f64 / gib - 2.09).abs() < 0.01,
            "{l:?}"
        );
    }

    #[test]
    fn bytes_override_ratios_and_background_stays_below() {
        let m = MemFigures::parse(MEMINFO).unwrap();
        let l = limits(&settings(20, 10, 1_000_001, 0), &m, 4096).unwrap();
        assert_eq!(l.limit_bytes, 245 * 4096, "dirty_bytes rounds up to pages");
        // The ratio's background (2 GiB) would exceed the limit: it is halved limit.
        assert_eq!(l.background_bytes, 122 * 4096);
        let l = limits(&settings(20, 10, 0, 8192), &m, 4096).unwrap();
        assert_eq!(l.background_bytes, 8192);
        let l = limits(&settings(5, 50, 0, 0), &m, 4096).unwrap();
        assert_eq!(l.background_bytes, l.limit_bytes / 4096 / 2 * 4096);
        assert!(limits(&settings(5, 50, 0, 0), &m, 0).is_err());
    }

    #[test]
    fn reads_vmstat_thresholds_and_the_live_state() {
        let v = "nr_dirty 5\nnr_dirty_threshold 1000\nnr_dirty_background_threshold 500\n";
        assert_eq!(kernel_thresholds(v, 4096), Some((1000 * 4096, 500 * 4096)));
        assert_eq!(kernel_thresholds("nr_dirty 5\n", 4096), None);
        let dir = tempfile::tempdir().unwrap();
        for (k, v) in [
            ("dirty_ratio", "20\n"),
            ("dirty_background_ratio", "10\n"),
            ("dirty_bytes", "0\n"),
            ("dirty_background_bytes", "0\n"),
            ("dirty_expire_centisecs", "3000\n"),
            ("dirty_writeback_centisecs", "500\n"),
        ] {
            std::fs::write(dir.path().join(k), v).unwrap();
        }
        assert_eq!(
            DirtySettings::read_from(dir.path()).unwrap(),
            settings(20, 10, 0, 0)
        );
        std::fs::write(dir.path().join("dirty_bytes"), "lots").unwrap();
        assert!(DirtySettings::read_from(dir.path()).is_err());
        // On this machine: the computed limit is close to the kernel's (which also
        // subtracts the reserve), and never below it.
        let s = DirtyState::read().unwrap();
        if let Some((kernel, _)) = s.kernel {
            let ours = s.limits.limit_bytes as f64;
            assert!(ours >= kernel as f64 * 0.95, "{s:?}");
            assert!(ours <= kernel as f64 * 1.10 + (64 << 20) as f64, "{s:?}");
        }
        assert!(s.figures().iter().any(|(k, _)| *k == "dirty_limit_bytes"));
    }
}
