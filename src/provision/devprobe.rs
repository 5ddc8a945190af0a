//! The device probe: the service times that price a phase's device work on the target's
//! own device ([`DeviceProbe`], `--price-on measured`), measured right after the cold-read
//! calibration ([`super::calibrate`]) over the region it wrote, so every read finds data.
//!
//! Three timed series of [`SAMPLES`] requests each, every one O_DIRECT and 4 KiB at a
//! random 4 KiB-aligned offset of the region, one request in flight: reads, writes (of
//! the random bytes already there, so the data stays as written), and flushes
//! (`fdatasync` of the device node: with nothing dirty in its page cache the block layer
//! sends one flush). Each service time is the median of its series, so that one stall of
//! a shared disk does not set it. Then [`PARALLEL_READERS`] threads read the same way
//! together for [`SAMPLES`] requests each: their rate over the first one's service time
//! says how many requests the device serves at once. On this machine's loop images the
//! probe takes well under a second; on a 7200 rpm disk about 8 ms a request, 3–4 s.

use super::calibrate::AlignedBuf;
use crate::result::DeviceProbe;
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Instant;

/// Requests timed in each series.
pub const SAMPLES: u32 = 200;
/// Readers of the parallel read series.
pub const PARALLEL_READERS: u32 = 4;
/// Size of one probe request.
const REQUEST: u64 = 4096;

/// Probes `device` over its first `bytes` (written by the calibration); `seq_read` and
/// `seq_write` are the calibration's sequential rates (10^6 bytes/s).
pub(crate) fn measure(
    device: &str,
    bytes: u64,
    seq_read: f64,
    seq_write: f64,
) -> Result<DeviceProbe> {
    let slots = bytes / REQUEST;
    anyhow::ensure!(slots > 0, "no region to probe");
    let started = Instant::now();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(device)
        .with_context(|| format!("opening {device} with O_DIRECT"))?;
    let mut buf = AlignedBuf::new(REQUEST as usize);
    let mut rng = Offsets::new(0x5eed, slots);
    let read = median(series(|| {
        let t = Instant::now();
        f.read_exact_at(buf.as_mut(), rng.next())?;
        Ok(t.elapsed().as_secs_f64())
    })?);
    let write = median(series(|| {
        // Read untimed first, then write the same bytes back timed.
        let at = rng.next();
        f.read_exact_at(buf.as_mut(), at)?;
        let t = Instant::now();
        f.write_all_at(buf.as_mut(), at)?;
        Ok(t.elapsed().as_secs_f64())
    })?);
    f.sync_data()?;
    let flush = median(series(|| {
        let t = Instant::now();
        f.sync_data()?;
        Ok(t.elapsed().as_secs_f64())
    })?);
    let iops = parallel_reads(device, slots)?;
    Ok(DeviceProbe {
        read_4k_us: read * 1e6,
        write_4k_us: write * 1e6,
        flush_us: flush * 1e6,
        read_4k_parallel_iops: iops,
        parallel_readers: PARALLEL_READERS,
        seq_read_mb_per_s: seq_read,
        seq_write_mb_per_s: seq_write,
        samples: SAMPLES,
        probe_s: started.elapsed().as_secs_f64(),
    })
}

/// Calls `op` [`SAMPLES`] times (after one unrecorded call), each returning the seconds
/// of what it timed.
fn series(mut op: impl FnMut() -> Result<f64>) -> Result<Vec<f64>> {
    op()?;
    let mut out = Vec::with_capacity(SAMPLES as usize);
    for _ in 0..SAMPLES {
        crate::signals::check_stop()?;
        out.push(op()?);
    }
    Ok(out)
}

/// The median of `xs`.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => xs[n / 2],
        _ => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// 4 KiB random O_DIRECT reads per second of [`PARALLEL_READERS`] threads, each with one
/// request in flight and [`SAMPLES`] requests.
fn parallel_reads(device: &str, slots: u64) -> Result<f64> {
    let t = Instant::now();
    std::thread::scope(|s| -> Result<()> {
        let readers: Vec<_> = (0..PARALLEL_READERS)
            .map(|i| {
                s.spawn(move || -> Result<()> {
                    let f: File = OpenOptions::new()
                        .read(true)
                        .custom_flags(libc::O_DIRECT)
                        .open(device)?;
                    let mut buf = AlignedBuf::new(REQUEST as usize);
                    let mut rng = Offsets::new(0x9e37 + i as u64, slots);
                    for _ in 0..SAMPLES {
                        crate::signals::check_stop()?;
                        f.read_exact_at(buf.as_mut(), rng.next())?;
                    }
                    Ok(())
                })
            })
            .collect();
        for r in readers {
            r.join()
                .map_err(|_| anyhow::anyhow!("probe reader panicked"))??;
        }
        Ok(())
    })?;
    Ok((PARALLEL_READERS * SAMPLES) as f64 / t.elapsed().as_secs_f64())
}

/// Random 4 KiB-aligned offsets below `slots` × 4 KiB (xorshift64: the same offsets each
/// run, none cached by an earlier series more than chance makes it).
struct Offsets {
    x: u64,
    slots: u64,
}

impl Offsets {
    fn new(seed: u64, slots: u64) -> Self {
        Self { x: seed | 1, slots }
    }
    fn next(&mut self) -> u64 {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        (self.x % self.slots) * REQUEST
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_aligned_and_inside_the_region() {
        let mut o = Offsets::new(7, 100);
        let seen: Vec<u64> = (0..1000).map(|_| o.next()).collect();
        assert!(seen.iter().all(|&x| x % REQUEST == 0 && x < 100 * REQUEST));
        // Not stuck on a few slots.
        let distinct: std::collections::BTreeSet<_> = seen.iter().collect();
        assert!(distinct.len() > 90, "{}", distinct.len());
    }

    #[test]
    fn the_median_is_the_middle_value() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn a_probe_of_a_file_measures_every_figure() {
        // A regular file takes the device's place (O_DIRECT works on it where the
        // filesystem allows; tmpfs does not, and then the test says so and ends).
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("dev");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let p = match measure(path.to_str().unwrap(), 1 << 20, 100.0, 50.0) {
            Ok(p) => p,
            Err(e) => return eprintln!("SKIP: O_DIRECT not available here: {e:#}"),
        };
        for v in [
            p.read_4k_us,
            p.write_4k_us,
            p.flush_us,
            p.read_4k_parallel_iops,
        ] {
            assert!(v.is_finite() && v > 0.0, "{p:?}");
        }
        assert_eq!((p.seq_read_mb_per_s, p.seq_write_mb_per_s), (100.0, 50.0));
        assert!((1.0..=PARALLEL_READERS as f64).contains(&p.parallelism()));
        // The data is as it was.
        assert_eq!(std::fs::read(&path).unwrap(), vec![7u8; 1 << 20]);
    }
}
