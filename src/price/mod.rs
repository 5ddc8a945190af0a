//! Work priced on devices: each phase's predicted time on a named device profile
//! (`--price-on nvme,cloud-3000`, or `measured`: the target's own probed device), from the
//! work the phase measurably asked of its device and the CPU. A prediction, never a
//! measurement: reports keep it apart and say so (docs/pricing.md).
//!
//! **The model** ([`predict`]). For one phase, with R read and W write requests, B_r and
//! B_w bytes, F flushes, C CPU seconds of its processes (user + system) and n workers, on
//! a profile with 4 KiB service times t_r, t_w, t_f, sequential rates bw_r, bw_w and P
//! requests served at once:
//!
//! ```text
//! reads   S_r = R·t_r + max(0, B_r − 4 KiB·R) / bw_r      (a request: its first 4 KiB's
//! writes  S_w = W·t_w + max(0, B_w − 4 KiB·W) / bw_w       service time, the rest streamed)
//! device  D   = max( S_r / min(n, P) + S_w / P + F·t_f ,   (reads wait on their workers;
//!                    B_r / bw_r + B_w / bw_w )             writeback keeps P in flight;
//!                                                          flushes wait for the queue)
//! cap     K   = max( (R' + W' + F) / IOPS, (B_r + B_w) / BW )      combined, or
//!               max(R' / IOPS, B_r / BW) + max((W' + F) / IOPS, B_w / BW)  per direction,
//!               with R' = max(R, ⌈B_r / unit⌉), W' = max(W, ⌈B_w / unit⌉), R and W
//!               counted before the block layer's merges for a cap that counts so
//! time    T   = C / min(n, cores) + max(D, K)
//! ```
//!
//! CPU and device time are added, not overlapped: a phase's workers mostly wait for their
//! own I/O (a synchronous write, a cold read, an fsync) and compute between. Where they do
//! overlap (buffered writes that writeback sends while the workers go on), the model
//! overestimates by up to the smaller of the two. The model cannot see the device's own
//! internal work (an SSD's garbage collection and write amplification), caches in front of
//! the device (the host's page cache under a loop image without direct I/O), nor the
//! kernel threads' CPU time (counted as work, not priced: it includes the loop device's
//! own workers, which a real device does not need).

mod profiles;
mod render;
mod table;

pub use profiles::{find, from_probe, resolve, shipped, MEASURED};
pub use render::{render, render_width};
pub use table::{predictions, Predictions, PricedPhase, Range, NOTE};

use crate::result::PhaseResult;
use serde::{Deserialize, Serialize};

/// Bytes of the request a service time is quoted for.
const REQUEST_BYTES: f64 = 4096.0;

/// A device as the model sees it: service times, rates, parallelism and caps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Profile {
    /// `nvme`, `measured`, …
    pub name: String,
    /// What device it stands for.
    pub about: String,
    /// Service time of one 4 KiB random read at queue depth 1, microseconds.
    pub read_4k_us: f64,
    /// Of one 4 KiB random write at queue depth 1, microseconds.
    pub write_4k_us: f64,
    /// Of one cache flush, microseconds.
    pub flush_us: f64,
    /// Sequential read rate, 10^6 bytes/s.
    pub read_mb_per_s: f64,
    /// Sequential write rate, 10^6 bytes/s.
    pub write_mb_per_s: f64,
    /// Requests the device serves at once.
    pub parallelism: f64,
    /// Limits a provider sets (a cloud volume's), absent for a local device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<Cap>,
    /// Where the figures come from.
    pub source: String,
}

/// A provider's limits on a volume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cap {
    /// I/O operations per second.
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mb_per_s: f64,
    /// The largest I/O counted as one operation: a request moving more counts as several.
    pub io_unit_bytes: u64,
    /// Whether reads and writes each have the limits (Linux's blkio throttle) rather than
    /// sharing them (AWS EBS).
    pub per_direction: bool,
    /// Whether the cap counts the requests the filesystem sent, before the block layer
    /// merged adjacent ones (Linux's blkio throttle counts each bio), rather than the
    /// merged requests the device receives (a cloud volume's count).
    #[serde(default)]
    pub before_merge: bool,
}

/// The work of a phase the model prices.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    pub read_ios: f64,
    pub write_ios: f64,
    pub read_bytes: f64,
    pub write_bytes: f64,
    pub flushes: f64,
    /// Requests merged into others before the device saw them (0 when not counted).
    pub read_merges: f64,
    pub write_merges: f64,
    /// CPU seconds of the phase's processes (user + system).
    pub cpu_s: f64,
    /// Workers the phase ran (requests its reads keep in flight).
    pub workers: f64,
}

impl Work {
    /// The work phase `p` measured; `None` when its device work was not measured.
    pub fn of(p: &PhaseResult) -> Option<Work> {
        let f = |x: Option<u64>| x.map(|v| v as f64);
        Some(Work {
            read_ios: f(p.dev_read_ios)?,
            write_ios: f(p.dev_write_ios)?,
            read_bytes: f(p.dev_read_bytes)?,
            write_bytes: f(p.dev_write_bytes)?,
            // A kernel without flush counters: none counted, as the kernel says.
            flushes: f(p.dev_flushes).unwrap_or(0.0),
            // Runs made before merges were counted: none known.
            read_merges: f(p.dev_read_merges).unwrap_or(0.0),
            write_merges: f(p.dev_write_merges).unwrap_or(0.0),
            cpu_s: p.cpu_user_s + p.cpu_sys_s,
            workers: p.workers.max(1) as f64,
        })
    }
}

/// A phase's predicted time on a profile, in parts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// CPU seconds spread over the workers the cores can run at once.
    pub cpu_s: f64,
    /// The device's time for the phase's requests ([`predict`]'s D).
    pub service_s: f64,
    /// The least time the profile's caps allow (K); 0 without caps.
    pub cap_s: f64,
}

impl Prediction {
    /// The predicted wall time of the phase, seconds.
    pub fn total_s(&self) -> f64 {
        self.cpu_s + self.service_s.max(self.cap_s)
    }
    /// Whether the caps decide the device's part.
    pub fn capped(&self) -> bool {
        self.cap_s > self.service_s
    }
}

/// The model of the module docs: phase work `w` on profile `p`, on a machine of `cores`.
pub fn predict(w: &Work, p: &Profile, cores: usize) -> Prediction {
    let mb = |rate: f64| rate.max(1e-9) * 1e6;
    let extra = |bytes: f64, ios: f64| (bytes - REQUEST_BYTES * ios).max(0.0);
    let s_r =
        w.read_ios * p.read_4k_us * 1e-6 + extra(w.read_bytes, w.read_ios) / mb(p.read_mb_per_s);
    let s_w = w.write_ios * p.write_4k_us * 1e-6
        + extra(w.write_bytes, w.write_ios) / mb(p.write_mb_per_s);
    let par = p.parallelism.max(1.0);
    let queued = s_r / w.workers.clamp(1.0, par) + s_w / par + w.flushes * p.flush_us * 1e-6;
    let streamed = w.read_bytes / mb(p.read_mb_per_s) + w.write_bytes / mb(p.write_mb_per_s);
    let cap_s = p.cap.as_ref().map_or(0.0, |c| cap_time(w, c));
    Prediction {
        cpu_s: w.cpu_s / w.workers.clamp(1.0, cores.max(1) as f64),
        service_s: queued.max(streamed),
        cap_s,
    }
}

/// The least time cap `c` allows for work `w` (K in the module docs).
fn cap_time(w: &Work, c: &Cap) -> f64 {
    let unit = c.io_unit_bytes.max(1) as f64;
    let (r, wr) = match c.before_merge {
        true => (w.read_ios + w.read_merges, w.write_ios + w.write_merges),
        false => (w.read_ios, w.write_ios),
    };
    let reads = r.max((w.read_bytes / unit).ceil());
    let writes = wr.max((w.write_bytes / unit).ceil()) + w.flushes;
    let bw = c.mb_per_s.max(1e-9) * 1e6;
    let iops = c.iops.max(1e-9);
    if c.per_direction {
        // Each direction has its own budget; the phase's reads and writes are taken one
        // after the other, as the model takes CPU and device time (a phase mostly reads,
        // then syncs what it wrote).
        (reads / iops).max(w.read_bytes / bw) + (writes / iops).max(w.write_bytes / bw)
    } else {
        ((reads + writes) / iops).max((w.read_bytes + w.write_bytes) / bw)
    }
}

/// The profiles `specs` names (`nvme`, `measured`, `FILE.json`), checked: an unknown name
/// is an error that lists the known ones.
pub fn check(specs: &[String]) -> Result<(), String> {
    for s in specs.iter().filter(|s| *s != MEASURED) {
        resolve(s).map_err(|e| format!("--price-on: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
