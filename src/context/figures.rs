//! A phase's figures: the result built from its workers' recorder, and the checks on a
//! cold read that flag it `cache-suspect` or say it cannot be verified.

use super::{PhaseSpec, Primary};
use crate::probe::recorder::{Op, Recorder};
use crate::result::{OpLatency, PhaseResult, TargetInfo};

/// Phases shorter than this are flagged `short`.
pub const SHORT_PHASE_S: f64 = 0.1;

/// A cold read faster than this multiple of the device's read ceiling (the faster of its
/// calibrated O_DIRECT and buffered cold rates) is flagged `cache-suspect`.
pub const CACHE_SUSPECT_FACTOR: f64 = 1.2;

/// Share of a cold MB/s read phase's bytes the device must have read for it not to be
/// cache-suspect (see [`cache_suspect`]).
pub const DEVICE_SHARE_MB: f64 = 0.9;

/// Whether a cold read phase looks served from cache. Two tests:
/// * the device's counters say it read under [`DEVICE_SHARE_MB`] (a phase judged in MB/s:
///   a bulk read, each byte read once) or under half (an ops/s phase, which may re-read:
///   Bonnie's seeks) of what the phase read (≥ 1 MiB). Measured on ext4 loop cold reads:
///   bulk reads got 1.00–1.24 of their bytes from the device, seeks 0.94, a cached read 0
///   (docs/validation.md, "cache-suspect"). Not when the data written was compressible
///   (`--data zeros|text|compress:PCT`): a compressing filesystem then reads fewer bytes
///   from its device than it returns, from a truly cold cache;
/// * the phase ran faster than [`CACHE_SUSPECT_FACTOR`] × `ceiling_mb_per_s`, the fastest
///   the device was calibrated to deliver a cold read
///   ([`TargetInfo::device_read_ceiling_mb_per_s`]: the faster of its O_DIRECT and its
///   buffered, readahead rate, so that a buffered read at the device's buffered rate
///   passes) — unless the counters show the device really delivered ≥ 90% of the bytes
///   (the calibration then underestimated the device).
pub fn cache_suspect(
    r: &PhaseResult,
    primary: Primary,
    ceiling_mb_per_s: Option<f64>,
    compressible: bool,
) -> bool {
    let read = r.bytes_read as f64;
    let from_dev = r.dev_read_bytes.map(|b| b as f64);
    let share = if primary == Primary::MbPerS {
        DEVICE_SHARE_MB
    } else {
        0.5
    };
    if let Some(dev) = from_dev.filter(|_| !compressible) {
        if read >= (1 << 20) as f64 && dev < share * read {
            return true;
        }
    }
    let too_fast = primary == Primary::MbPerS
        && ceiling_mb_per_s.is_some_and(|d| r.mb_per_s > CACHE_SUSPECT_FACTOR * d);
    let device_delivered = from_dev.is_some_and(|dev| read > 0.0 && dev >= 0.9 * read);
    too_fast && !device_delivered
}

/// Whether [`cache_suspect`] can tell a cold read phase `r` on the target `info` from a
/// cached one: not on tmpfs or ramfs (drop_caches does not evict them: a "cold" read there
/// is a memory read), and elsewhere only with the device's counters for the phase, or with
/// a measured device rate for a phase judged in MB/s. A `--dir` on a filesystem with no
/// block device of its own (btrfs, overlay, NFS, FUSE) has neither. On a loop image or a
/// device, whose rate fsarena measures, a phase judged in MB/s also needs that rate: when
/// the calibration failed, the rule that catches a read faster than the device (partly
/// from cache) cannot run, and the figure says so rather than only a progress line.
pub fn cold_verifiable(info: &TargetInfo, r: &PhaseResult, primary: Primary) -> bool {
    if matches!(info.fstype.as_str(), "tmpfs" | "ramfs") {
        return false;
    }
    let rate = info.device_read_ceiling_mb_per_s().is_some();
    let calibrates = matches!(info.kind.as_str(), "loop" | "device");
    if calibrates && primary == Primary::MbPerS && !rate {
        return false;
    }
    r.dev_read_bytes.is_some() || (primary == Primary::MbPerS && rate)
}

/// The figures of a phase `spec` that `workers` recorded in `rec` over `wall_s` seconds.
pub(super) fn phase_result(
    spec: &PhaseSpec,
    rec: &Recorder,
    wall_s: f64,
    workers: usize,
) -> PhaseResult {
    // Rates over the program's own time where it timed its work itself.
    let rate_s = rec.own_s.filter(|s| *s > 0.0).unwrap_or(wall_s);
    let per_s = |x: f64| if rate_s > 0.0 { x / rate_s } else { 0.0 };
    PhaseResult {
        name: spec.name.to_string(),
        wall_s,
        ops: rec.ops,
        bytes: rec.bytes,
        bytes_read: rec.bytes_of(&[Op::Read, Op::Stat, Op::Seek]),
        bytes_written: rec.bytes_of(&[Op::Write, Op::Append, Op::Create]),
        ops_per_s: per_s(rec.ops as f64),
        mb_per_s: per_s(rec.bytes as f64) / 1e6,
        lat_us: rec.latency().percentiles_us(),
        lat_by_op: rec
            .per_op()
            .map(|(op, count, h)| OpLatency {
                op: op.name().to_string(),
                count,
                samples: h.count(),
                lat_us: h.percentiles_us().unwrap_or_default(),
                buckets: h.buckets(),
            })
            .collect(),
        series: rec.series().finish((wall_s * 1e9) as u64),
        first_done_s: rec.done_s.map(|d| d.0),
        last_done_s: rec.done_s.map(|d| d.1),
        workers,
        primary: match spec.primary {
            Primary::MbPerS => "mb_per_s",
            Primary::OpsPerS => "ops_per_s",
            Primary::Seconds => "wall_s",
        }
        .to_string(),
        ops_unit: spec.ops_unit.to_string(),
        ..Default::default()
    }
}
