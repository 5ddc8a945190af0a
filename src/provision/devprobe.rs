//! The device probe: the service times that price a phase's device work on the target's
//! own device ([`DeviceProbe`], `--price-on measured`), measured right after the cold-read
//! calibration ([`super::calibrate`]) over the region it wrote, so every read finds data.
//!
//! Three timed series, every request O_DIRECT and 4 KiB at a random 4 KiB-aligned offset
//! of the region, one in flight: reads, writes (of the random bytes already there, so the
//! data stays as written), and flushes (`fdatasync` of the device node: with nothing dirty
//! in its page cache the block layer sends one flush). Then [`PARALLEL_READERS`] threads
//! read the same way together: their rate over the reads' service time says how many
//! requests the device serves at once.
//!
//! Each series first runs [`WARM_S`] untimed, then is timed for at least [`SERIES_S`] and
//! [`MIN_REQUESTS`] requests, and its service time is the *mean* over that window: a
//! device that lets a burst through and then holds to a rate (a cloud volume's credits,
//! Linux's blkio throttle, which passes a tenth of a second's allowance at once) shows its
//! sustained rate, not its burst. A stall of a shared disk during the window counts too.
//! The probe takes about 2.8 s (four series of 0.7 s); on a 7200 rpm disk likewise, its
//! series then being about 40 requests each.

use super::calibrate::AlignedBuf;
use crate::result::DeviceProbe;
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Instant;

/// Untimed time at the start of each series, seconds.
pub const WARM_S: f64 = 0.2;
/// Least timed time of each series, seconds.
pub const SERIES_S: f64 = 0.5;
/// Least requests timed in each series.
pub const MIN_REQUESTS: u32 = 20;
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
    let read = series(|| {
        let t = Instant::now();
        f.read_exact_at(buf.as_mut(), rng.next())?;
        Ok(t.elapsed().as_secs_f64())
    })?;
    let write = series(|| {
        // Read untimed first, then write the same bytes back timed.
        let at = rng.next();
        f.read_exact_at(buf.as_mut(), at)?;
        let t = Instant::now();
        f.write_all_at(buf.as_mut(), at)?;
        Ok(t.elapsed().as_secs_f64())
    })?;
    f.sync_data()?;
    let flush = series(|| {
        let t = Instant::now();
        f.sync_data()?;
        Ok(t.elapsed().as_secs_f64())
    })?;
    let iops = parallel_reads(device, slots)?;
    Ok(DeviceProbe {
        read_4k_us: read.0 * 1e6,
        write_4k_us: write.0 * 1e6,
        flush_us: flush.0 * 1e6,
        read_4k_parallel_iops: iops,
        parallel_readers: PARALLEL_READERS,
        seq_read_mb_per_s: seq_read,
        seq_write_mb_per_s: seq_write,
        samples: read.1.min(write.1).min(flush.1),
        probe_s: started.elapsed().as_secs_f64(),
    })
}

/// Calls `op` untimed for [`WARM_S`], then until [`SERIES_S`] and [`MIN_REQUESTS`] have
/// passed; each call returns the seconds of what it timed. The mean of those seconds, and
/// how many calls were timed.
fn series(mut op: impl FnMut() -> Result<f64>) -> Result<(f64, u32)> {
    let warm = Instant::now();
    while warm.elapsed().as_secs_f64() < WARM_S {
        crate::signals::check_stop()?;
        op()?;
    }
    let (start, mut sum, mut n) = (Instant::now(), 0.0, 0u32);
    while n < MIN_REQUESTS || start.elapsed().as_secs_f64() < SERIES_S {
        crate::signals::check_stop()?;
        sum += op()?;
        n += 1;
    }
    Ok((sum / f64::from(n), n))
}

/// 4 KiB random O_DIRECT reads per second of [`PARALLEL_READERS`] threads, each with one
/// request in flight, over the [`SERIES_S`] after their [`WARM_S`] together.
fn parallel_reads(device: &str, slots: u64) -> Result<f64> {
    let start = Instant::now();
    let counted = std::thread::scope(|s| -> Result<u64> {
        let readers: Vec<_> = (0..PARALLEL_READERS)
            .map(|i| {
                s.spawn(move || -> Result<u64> {
                    let f: File = OpenOptions::new()
                        .read(true)
                        .custom_flags(libc::O_DIRECT)
                        .open(device)?;
                    let mut buf = AlignedBuf::new(REQUEST as usize);
                    let mut rng = Offsets::new(0x9e37 + u64::from(i), slots);
                    let mut n = 0;
                    loop {
                        crate::signals::check_stop()?;
                        let at = start.elapsed().as_secs_f64();
                        if at >= WARM_S + SERIES_S {
                            return Ok(n);
                        }
                        f.read_exact_at(buf.as_mut(), rng.next())?;
                        // Counted when it ends inside the window.
                        let end = start.elapsed().as_secs_f64();
                        n += u64::from(end > WARM_S && end <= WARM_S + SERIES_S);
                    }
                })
            })
            .collect();
        let mut total = 0;
        for r in readers {
            total += r
                .join()
                .map_err(|_| anyhow::anyhow!("probe reader panicked"))??;
        }
        Ok(total)
    })?;
    Ok(counted as f64 / SERIES_S)
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
    fn a_series_is_the_mean_of_its_timed_window() {
        let mut calls = 0;
        let (mean, n) = series(|| {
            calls += 1;
            Ok(0.25)
        })
        .unwrap();
        assert_eq!(mean, 0.25);
        // At least the least requests, and the warm-up's calls not among them.
        assert!(n >= MIN_REQUESTS && calls > n, "{n} of {calls}");
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
