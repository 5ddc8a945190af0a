//! The device's cold read rates, measured once per loop image or block device before its
//! first trial: the ceiling a cold read on it can reach, shown beside the target and used
//! by the cache-suspect rule ([`crate::context::cache_suspect`]).
//!
//! Two rates, because workloads read two ways and the device serves them differently:
//! * **direct**: O_DIRECT, four sequential streams of 1 MiB requests at once;
//! * **buffered**: one sequential stream of 1 MiB `read`s through the page cache with the
//!   device's normal readahead (the window a filesystem on it gets too) — how a cold
//!   buffered read reaches the device. Neither is always the faster: a cold bonnie
//!   `read_block` on xfs ran at 1.5–1.7× the direct rate and 0.9–1.0× the buffered one,
//!   while elsewhere the buffered rate came out lower (docs/validation.md, "the device's
//!   buffered cold read rate"), so only the faster of the two is an honest ceiling.
//!
//! The data is written once (256 MiB, random, O_DIRECT: a preallocated but unwritten image
//! would read as holes, without touching the disk), then read cold twice each way, half of
//! it per pass, the passes alternating (direct over the first half, buffered over the
//! second, then the other way round) so that a slow spell of the shared disk does not fall
//! on one way only. Each rate is its faster pass (the virtual disks here vary by 2× from
//! pass to pass; the faster pass is what the device can do). The four half passes read as
//! much as the two whole O_DIRECT passes did before the buffered rate was measured: the
//! calibration costs about 0.2 s more than it did (two more cache drops, and buffered
//! passes that often ran slower than the direct ones; measured in docs/validation.md with
//! `examples/calibrate.rs`). Before each pass the page cache is dropped (`drop_caches`, and
//! `POSIX_FADV_DONTNEED` on the device for the buffered one), and a buffered pass drops
//! what it read, so that no calibration data stays in the cache.

use crate::probe::sys;
use crate::result::TargetInfo;
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Instant;

/// Bytes written and read back to measure the device's cold read rates.
pub(crate) const CALIBRATE_BYTES: u64 = 256 << 20;
/// Size of one calibration request: large enough that the block layer splits it into many
/// requests in flight.
const CALIBRATE_REQUEST: usize = 1 << 20;
/// Concurrent sequential O_DIRECT readers.
const CALIBRATE_STREAMS: u64 = 4;

/// A device's cold sequential read rates, in 10^6 bytes/s.
#[derive(Clone, Debug, PartialEq)]
pub struct ColdRates {
    /// O_DIRECT, four concurrent streams of 1 MiB requests.
    pub direct_mb_per_s: f64,
    /// Buffered, one stream of 1 MiB reads with the device's readahead.
    pub buffered_mb_per_s: f64,
    /// The device's service times, probed after the rates over the same data
    /// ([`super::devprobe`]); `None` when the probe failed (the rates still stand).
    pub probe: Option<crate::result::DeviceProbe>,
}

impl ColdRates {
    /// Records the rates in the target's description.
    pub fn record(self, info: &mut TargetInfo) {
        info.device_read_mb_per_s = Some(self.direct_mb_per_s);
        info.device_buffered_read_mb_per_s = Some(self.buffered_mb_per_s);
        info.device_probe = self.probe;
    }
}

/// Writes the first `bytes` of `device` (rounded down to whole requests per direct stream
/// and half) with random data and measures its cold read rates over them ([`ColdRates`]).
pub(crate) fn measure(device: &str, bytes: u64) -> Result<ColdRates> {
    let unit = 2 * CALIBRATE_STREAMS * CALIBRATE_REQUEST as u64;
    let bytes = bytes / unit * unit;
    anyhow::ensure!(bytes > 0, "image too small to calibrate");
    let write_mb_per_s = timed_mb_per_s(bytes, || write_random(device, bytes))?;
    let half = bytes / 2;
    let mut rates = ColdRates {
        direct_mb_per_s: 0.0,
        buffered_mb_per_s: 0.0,
        probe: None,
    };
    for (direct_at, buffered_at) in [(0, half), (half, 0)] {
        sys::drop_caches()?;
        let direct = timed_mb_per_s(half, || read_direct(device, direct_at, half))?;
        rates.direct_mb_per_s = rates.direct_mb_per_s.max(direct);
        sys::drop_caches()?;
        let buffered = read_buffered(device, buffered_at, half)?;
        rates.buffered_mb_per_s = rates.buffered_mb_per_s.max(buffered);
    }
    // The probe's own failure (a device refusing 4 KiB O_DIRECT requests) leaves it
    // unmeasured; the rates above stand.
    rates.probe =
        super::devprobe::measure(device, bytes, rates.direct_mb_per_s, write_mb_per_s).ok();
    Ok(rates)
}

/// 10^6 bytes/s of moving `bytes` with `read` (a read or a write).
fn timed_mb_per_s(bytes: u64, read: impl FnOnce() -> Result<()>) -> Result<f64> {
    let t = Instant::now();
    read()?;
    Ok(bytes as f64 / t.elapsed().as_secs_f64() / 1e6)
}

/// Writes `bytes` of random data at the start of `device` with O_DIRECT, synced.
fn write_random(device: &str, bytes: u64) -> Result<()> {
    let mut buf = AlignedBuf::new(CALIBRATE_REQUEST);
    let pool = crate::data::DataPool::new(crate::policy::DataPolicy::Random, 1);
    let mut src = pool.source(0);
    let mut w = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(device)
        .with_context(|| format!("opening {device} with O_DIRECT"))?;
    // A stop request (SIGINT/SIGTERM) ends the calibration within one request.
    for _ in 0..bytes / CALIBRATE_REQUEST as u64 {
        crate::signals::check_stop()?;
        src.fill(buf.as_mut());
        w.write_all(buf.as_mut())?;
    }
    w.sync_all()?;
    Ok(())
}

/// Reads `bytes` of `device` from offset `at` with O_DIRECT in [`CALIBRATE_STREAMS`]
/// concurrent sequential streams, one per equal region.
fn read_direct(device: &str, at: u64, bytes: u64) -> Result<()> {
    let per = bytes / CALIBRATE_STREAMS;
    std::thread::scope(|s| -> Result<()> {
        let streams: Vec<_> = (0..CALIBRATE_STREAMS)
            .map(|i| s.spawn(move || read_region(device, at + i * per, per)))
            .collect();
        for h in streams {
            h.join()
                .map_err(|_| anyhow::anyhow!("calibration reader panicked"))??;
        }
        Ok(())
    })
}

/// Reads `bytes` (whole requests) of `device` from offset `at` sequentially with O_DIRECT.
fn read_region(device: &str, at: u64, bytes: u64) -> Result<()> {
    let mut buf = AlignedBuf::new(CALIBRATE_REQUEST);
    let r = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(device)
        .with_context(|| format!("opening {device} with O_DIRECT"))?;
    for off in (at..at + bytes).step_by(CALIBRATE_REQUEST) {
        crate::signals::check_stop()?;
        r.read_exact_at(buf.as_mut(), off)?;
    }
    Ok(())
}

/// Reads `bytes` (whole requests) of `device` from offset `at` cold through the page
/// cache, sequentially in 1 MiB `read`s with the device's own readahead; returns the rate
/// in 10^6 bytes/s. The device's cached pages are dropped before (on top of the caller's
/// `drop_caches`) and after.
fn read_buffered(device: &str, at: u64, bytes: u64) -> Result<f64> {
    let mut r = File::open(device).with_context(|| format!("opening {device}"))?;
    dont_need(&r).with_context(|| format!("dropping {device}'s cached pages"))?;
    r.seek(SeekFrom::Start(at))?;
    let mut buf = vec![0u8; CALIBRATE_REQUEST];
    let rate = timed_mb_per_s(bytes, || {
        for _ in 0..bytes / CALIBRATE_REQUEST as u64 {
            crate::signals::check_stop()?;
            r.read_exact(&mut buf)?;
        }
        Ok(())
    });
    dont_need(&r).ok();
    rate
}

/// `POSIX_FADV_DONTNEED` over the whole of `f`: its clean cached pages leave the cache.
fn dont_need(f: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fadvise on an open descriptor; offset 0 and length 0 mean all of it.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// A 4096-aligned buffer for O_DIRECT.
pub(crate) struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    pub(crate) fn new(len: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align(len, 4096).expect("valid layout");
        // SAFETY: layout has non-zero size; the pointer is checked below.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "allocation of {len} bytes failed");
        Self { ptr, layout }
    }
    pub(crate) fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}
