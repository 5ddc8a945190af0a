//! What the probe at the start of a run measured of a target's own block device: the
//! service times and rates that price a phase's device work on it (`--price-on measured`,
//! docs/pricing.md). Measured by `provision::devprobe` right after the cold-read
//! calibration, over the data that calibration wrote; on a loop image it is the loop
//! device over its backing file that is measured, host cache and all.

use serde::{Deserialize, Serialize};

/// A device's speed as probed: every service time is a mean over a timed window of the
/// probe's own requests (after an untimed warm-up, so that a burst allowance is spent),
/// taken once before the first trial.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceProbe {
    /// Mean service time of one 4 KiB O_DIRECT read at a random 4 KiB-aligned offset, one
    /// request in flight (queue depth 1), in microseconds.
    pub read_4k_us: f64,
    /// The same for a 4 KiB O_DIRECT write (no flush after it), in microseconds.
    pub write_4k_us: f64,
    /// Mean time of a cache flush (`fdatasync` of the device node with nothing dirty in
    /// the page cache: the block layer sends the device one flush), in microseconds.
    pub flush_us: f64,
    /// 4 KiB random O_DIRECT reads completed per second with [`Self::parallel_readers`]
    /// readers, each one request in flight: how many requests the device serves at once is
    /// this × `read_4k_us` (at most `parallel_readers`).
    pub read_4k_parallel_iops: f64,
    /// Readers in [`Self::read_4k_parallel_iops`].
    pub parallel_readers: u32,
    /// Sequential read rate, 10^6 bytes/s: the cold-read calibration's O_DIRECT rate (four
    /// streams of 1 MiB requests).
    pub seq_read_mb_per_s: f64,
    /// Sequential write rate, 10^6 bytes/s: the calibration's O_DIRECT write of its data
    /// (one stream of 1 MiB requests, then one flush).
    pub seq_write_mb_per_s: f64,
    /// Requests timed in the shortest of the three service-time series.
    pub samples: u32,
    /// Wall time the probe took, seconds (the calibration's own time not included).
    pub probe_s: f64,
}

impl DeviceProbe {
    /// How many requests the device served at once in the parallel read probe: at least 1,
    /// at most the readers it had.
    pub fn parallelism(&self) -> f64 {
        (self.read_4k_parallel_iops * self.read_4k_us / 1e6)
            .clamp(1.0, self.parallel_readers.max(1) as f64)
    }
}
