//! The work a phase asked of the device and the CPU, per operation: what a filesystem
//! makes the hardware do, which is nearly the same from one repetition to the next where
//! the clock is not (a shared virtual disk's timing varies by a fifth; the bytes a phase
//! writes to it, by nothing).
//!
//! Every figure is a count of the phase (device requests, bytes, flushes, CPU seconds)
//! divided by the phase's operations: one file, one transaction, one seek — or one MB
//! (10^6 bytes) of payload for a phase whose headline is MB/s ([`per_what`]). All are
//! better lower. Each declares its counter's *resolution* (one request, one 512-byte
//! sector, one microsecond of CPU): the verdict adds it to every count so that a count of
//! zero has a logarithm, and floors a figure's spread at it ([`WorkFigure::log_sd_floor`]).

use super::PhaseResult;

/// A work figure: a count of the phase per operation.
#[derive(Clone, Copy, Debug)]
pub struct WorkFigure {
    /// The figure's name in exports (`dev_kib_written_per_op`).
    pub name: &'static str,
    /// What one unit of the count is, for reports: `KiB written`, `flushes`.
    pub what: &'static str,
    /// Its unit in exports (`KiB/op`).
    pub unit: &'static str,
    /// Whether the verdict judges it (the others are reported only).
    pub judged: bool,
    /// The count over the phase, in the figure's unit; `None` when not measured.
    pub count: fn(&PhaseResult) -> Option<f64>,
    /// The counter's resolution in the figure's unit (before dividing by operations).
    pub resolution: f64,
    /// The least spread of its repetitions on the log scale, besides the resolution:
    /// [`WORK_LOG_SD_FLOOR`] or [`CPU_LOG_SD_FLOOR`].
    pub floor: f64,
    /// Whether a side whose repetitions spread less than the floor is taken as known to
    /// within it (a device count: quiescing the filesystem bounds how much it varies) or
    /// its spread is still estimated from them (CPU time: the machine's load can make it
    /// vary by anything, and three repetitions of a 6% spread fall within 1% one time in
    /// forty).
    pub floor_known: bool,
    /// Words for a verdict: `the bytes written`.
    pub noun: &'static str,
    /// Its name in a verdict's work line: `written`, `flushes`, `CPU`.
    pub short: &'static str,
}

/// The spread a device count's repetitions are never assumed to have less of, on the log
/// scale, besides its counter's resolution: 0.5%. The same work is not done to the
/// byte each time: a journal commit or writeback that a timer starts falls inside a phase
/// or after it (docs/work.md measures how often).
pub const WORK_LOG_SD_FLOOR: f64 = 0.005;

/// The same for CPU time: 1%. The same work takes more or less CPU as caches, interrupts
/// and the other processes on the machine have it; at its steadiest (the median of
/// metascan's warm runs on a quiet machine) it varied 0.3–1.4% from one repetition to
/// the next, single phases 0.6% and more (docs/validation/2026-12-work-figures.md).
pub const CPU_LOG_SD_FLOOR: f64 = 0.01;

fn ios(x: Option<u64>) -> Option<f64> {
    x.map(|v| v as f64)
}

fn kib(x: Option<u64>) -> Option<f64> {
    x.map(|v| v as f64 / 1024.0)
}

/// The work figures, in report order.
pub const WORK: &[WorkFigure] = &[
    WorkFigure {
        name: "dev_kib_written_per_op",
        what: "KiB written",
        unit: "KiB/op",
        judged: true,
        count: |p| kib(p.dev_write_bytes.filter(|_| p.dev_write_ios.is_some())),
        resolution: 0.5,
        floor: WORK_LOG_SD_FLOOR,
        floor_known: true,
        noun: "the bytes written",
        short: "written",
    },
    WorkFigure {
        name: "dev_writes_per_op",
        what: "writes",
        unit: "requests/op",
        judged: false,
        count: |p| ios(p.dev_write_ios),
        resolution: 1.0,
        floor: WORK_LOG_SD_FLOOR,
        floor_known: true,
        noun: "the write requests",
        short: "writes",
    },
    WorkFigure {
        name: "dev_flushes_per_op",
        what: "flushes",
        unit: "flushes/op",
        judged: true,
        count: |p| ios(p.dev_flushes),
        resolution: 1.0,
        floor: WORK_LOG_SD_FLOOR,
        floor_known: true,
        noun: "the flushes",
        short: "flushes",
    },
    WorkFigure {
        name: "dev_reads_per_op",
        what: "reads",
        unit: "requests/op",
        judged: true,
        count: |p| ios(p.dev_read_ios),
        resolution: 1.0,
        floor: WORK_LOG_SD_FLOOR,
        floor_known: true,
        noun: "the device reads",
        short: "reads",
    },
    WorkFigure {
        name: "dev_kib_read_per_op",
        what: "KiB read",
        unit: "KiB/op",
        judged: false,
        count: |p| kib(p.dev_read_bytes.filter(|_| p.dev_read_ios.is_some())),
        resolution: 0.5,
        floor: WORK_LOG_SD_FLOOR,
        floor_known: true,
        noun: "the bytes read",
        short: "read",
    },
    WorkFigure {
        name: "cpu_ms_per_op",
        what: "CPU ms",
        unit: "ms/op",
        judged: true,
        count: |p| Some((p.cpu_user_s + p.cpu_sys_s) * 1e3),
        resolution: 1e-3,
        floor: CPU_LOG_SD_FLOOR,
        floor_known: false,
        noun: "the CPU time",
        short: "CPU",
    },
    WorkFigure {
        name: "kernel_cpu_ms_per_op",
        what: "kernel-thread ms",
        unit: "ms/op",
        judged: false,
        count: |p| p.kernel_cpu_s.map(|s| s * 1e3),
        resolution: 1e-3,
        floor: CPU_LOG_SD_FLOOR,
        floor_known: false,
        noun: "the kernel threads' CPU time",
        short: "kernel threads",
    },
];

/// The work figure named `name`.
pub fn find(name: &str) -> Option<&'static WorkFigure> {
    WORK.iter().find(|w| w.name == name)
}

/// What one operation of phase `p` is, and how many it did: (`file`, 20000) from its
/// `files/s` unit, (`MB`, 268.4) for a phase judged in MB/s. `None` when it did none.
pub fn per_what(p: &PhaseResult) -> Option<(String, f64)> {
    let (what, n) = if p.primary == "mb_per_s" {
        ("MB".to_string(), p.bytes as f64 / 1e6)
    } else {
        let unit = p.ops_unit.strip_suffix("/s").unwrap_or("op");
        (singular(unit), p.ops as f64)
    };
    (n > 0.0).then_some((what, n))
}

/// `files` → `file`, `entries` → `entry`, `ops` → `op`.
fn singular(unit: &str) -> String {
    let u = if unit.is_empty() { "op" } else { unit };
    match u.strip_suffix("ies") {
        Some(stem) => format!("{stem}y"),
        None => u.strip_suffix('s').unwrap_or(u).to_string(),
    }
}

impl WorkFigure {
    /// The unit the figure is shown in on phase `p`: `KiB/file`, `flushes/MB`,
    /// `writes/transaction`.
    pub fn unit_on(&self, p: &PhaseResult) -> String {
        let per = per_what(p).map_or("op".to_string(), |(w, _)| w);
        match self.unit.split_once('/') {
            Some(("requests", _)) => format!("{}/{per}", self.what),
            Some((u, _)) => format!("{u}/{per}"),
            None => self.unit.to_string(),
        }
    }

    /// The figure for phase `p`: its count per operation.
    pub fn per_op(&self, p: &PhaseResult) -> Option<f64> {
        let (_, n) = per_what(p)?;
        Some((self.count)(p)? / n)
    }

    /// The figure for phase `p` as the verdict takes it: (count + resolution) per
    /// operation, so that a count of zero has a logarithm. It differs from
    /// [`Self::per_op`] by less than the counter can tell.
    pub fn judged_value(&self, p: &PhaseResult) -> Option<f64> {
        let (_, n) = per_what(p)?;
        Some(((self.count)(p)? + self.resolution) / n)
    }

    /// The least spread (standard deviation of the log) a side whose mean count is
    /// `count` is assumed to have: its counter's resolution relative to the count, and
    /// its [`floor`](Self::floor), added in quadrature.
    pub fn log_sd_floor(&self, count: f64) -> f64 {
        let r = self.resolution / (count.max(0.0) + self.resolution);
        (r * r + self.floor * self.floor).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(primary: &str, ops: u64, bytes: u64) -> PhaseResult {
        PhaseResult {
            name: "create".into(),
            primary: primary.into(),
            ops_unit: "files/s".into(),
            ops,
            bytes,
            dev_write_bytes: Some(4096 * 1000),
            dev_write_ios: Some(500),
            dev_flushes: Some(0),
            cpu_user_s: 0.5,
            cpu_sys_s: 1.5,
            ..Default::default()
        }
    }

    #[test]
    fn per_operation_of_the_phase() {
        let p = phase("ops_per_s", 1000, 0);
        assert_eq!(per_what(&p), Some(("file".to_string(), 1000.0)));
        assert_eq!(singular("entries"), "entry");
        assert_eq!(singular("seeks"), "seek");
        let kib = find("dev_kib_written_per_op").unwrap();
        assert_eq!(kib.per_op(&p), Some(4.0));
        assert_eq!(find("cpu_ms_per_op").unwrap().per_op(&p), Some(2.0));
        assert_eq!(find("dev_flushes_per_op").unwrap().per_op(&p), Some(0.0));
        // Zero still has a logarithm, one flush in a thousand files.
        let fl = find("dev_flushes_per_op").unwrap();
        assert_eq!(fl.judged_value(&p), Some(0.001));
        // Per MB of payload for a phase judged in MB/s.
        let q = phase("mb_per_s", 10, 8_000_000);
        assert_eq!(per_what(&q), Some(("MB".to_string(), 8.0)));
        assert_eq!(kib.per_op(&q), Some(500.0));
        // No operations: no figure.
        assert_eq!(kib.per_op(&phase("ops_per_s", 0, 0)), None);
    }

    #[test]
    fn not_measured_is_none_never_zero() {
        let mut p = phase("ops_per_s", 1000, 0);
        p.dev_write_bytes = None;
        p.dev_write_ios = None;
        p.dev_flushes = None;
        for name in [
            "dev_kib_written_per_op",
            "dev_writes_per_op",
            "dev_flushes_per_op",
        ] {
            assert_eq!(find(name).unwrap().per_op(&p), None, "{name}");
        }
        // A directory target keeps its partition's byte counts, never as work.
        p.dev_write_bytes = Some(1 << 20);
        assert_eq!(find("dev_kib_written_per_op").unwrap().per_op(&p), None);
    }

    #[test]
    fn the_floor_is_the_resolution_for_small_counts() {
        let fl = find("dev_flushes_per_op").unwrap();
        // No flush at all: the counter cannot say less than one.
        assert!((fl.log_sd_floor(0.0) - (1.0f64 + 2.5e-5).sqrt()).abs() < 1e-12);
        // Ten thousand flushes: the relative floor.
        assert!((fl.log_sd_floor(1e4) - WORK_LOG_SD_FLOOR).abs() < 1e-4);
        // CPU time is never known better than 1%, however many microseconds it counts.
        let cpu = find("cpu_ms_per_op").unwrap();
        assert!((cpu.log_sd_floor(1e6) - CPU_LOG_SD_FLOOR).abs() < 1e-6);
    }
}
