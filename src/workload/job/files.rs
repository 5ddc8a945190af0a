//! A job's files for its run: opening them all (or the one shared file), or, when the job
//! may not keep them all open (`openfiles`, as in fio), the order in which the job loop
//! visits them, a fixed-size cache of open descriptors, and the `psync` engine on top of
//! that cache.
//!
//! fio (`io_u.c`, `get_next_file_rr`, `set_io_u_file`) serves the `openfiles` files it
//! has open round-robin until each has had its share of I/O, then closes it and opens the
//! next. The job does the same: its files are visited round-robin within a **window** of
//! `openfiles` files; when the window has had `openfiles × size/nrfiles` bytes, the next
//! window starts (wrapping after the last file, for time-based jobs). With `openfiles`
//! covering all files the window is all of them: today's plain round-robin.
//!
//! The cache holds at most `openfiles` descriptors; a file that is not open is opened
//! before its request, closing the descriptor opened longest ago (FIFO — with windows
//! visited in turn, LRU would pick the same one). Opening happens before the request's
//! clock starts (as in fio, where the file is opened in `get_io_u` before `start_time`):
//! it is recorded as an `open` part (the close of the replaced file included), inside the
//! phase's time but not in the request's latency. Paths are formatted into one reused
//! buffer: no allocation per open beyond what open(2) does in the kernel.
//!
//! Syncs: a written file that was closed is reopened for its fsync (fio's
//! `fio_file_fsync` does the same for `end_fsync`), through a temporary descriptor that is
//! closed at once — so a job holds at most `openfiles + 1` of its files open. Linux fsync
//! flushes the inode's dirty pages whichever descriptor wrote them.

use crate::workload::params::Params;
use super::backend::{pread_or_pwrite, sync_file, Io, IoBackend};
use super::{Engine, Job};
use anyhow::{anyhow, Result};
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

/// The name of file `file` of job `job` in the job's directory.
pub fn name(job: usize, file: usize) -> String {
    format!("job{job}.{file}")
}

/// The order in which one job visits its files: round-robin within a window of `width`
/// files, each window until it has had `width × file_size` bytes.
#[derive(Clone, Debug)]
pub struct Order {
    nrfiles: usize,
    /// Files visited at once: `openfiles`, or all of them.
    width: usize,
    file_size: u64,
    first: usize,
    /// Files of the current window (the last window may be narrower).
    span: usize,
    i: usize,
    bytes: u64,
}

impl Order {
    /// Visits `nrfiles` files of `file_size` bytes, `width` (≥ 1) at a time.
    pub fn new(nrfiles: usize, width: usize, file_size: u64) -> Self {
        let width = width.clamp(1, nrfiles.max(1));
        Self {
            nrfiles,
            width,
            file_size,
            first: 0,
            span: width,
            i: 0,
            bytes: 0,
        }
    }

    /// The file of the next request, which moves `len` bytes.
    #[inline]
    pub fn next(&mut self, len: u64) -> usize {
        let file = self.first + self.i;
        self.i += 1;
        if self.i == self.span {
            self.i = 0;
        }
        if self.width < self.nrfiles {
            self.bytes += len;
            if self.bytes >= self.span as u64 * self.file_size {
                self.next_window();
            }
        }
        file
    }

    /// The request [`Self::next`] counted moved `by` bytes less (fio's random map
    /// shortened it).
    pub fn shorten(&mut self, by: u64) {
        if self.width < self.nrfiles {
            self.bytes = self.bytes.saturating_sub(by);
        }
    }

    fn next_window(&mut self) {
        self.first += self.span;
        if self.first >= self.nrfiles {
            self.first = 0;
        }
        self.span = self.width.min(self.nrfiles - self.first);
        self.i = 0;
        self.bytes = 0;
    }
}

/// Opens one file of the job (with the job's flags and error messages).
pub type Opener<'a> = &'a dyn Fn(&Path) -> Result<File>;

/// At most `capacity` open descriptors of one job's files, opened on demand.
pub struct FileCache<'a> {
    open: Opener<'a>,
    /// `<dir>/`, then the name of the file last formatted.
    path: Vec<u8>,
    dir_len: usize,
    job: usize,
    /// Per file: its slot, or [`Self::CLOSED`].
    slot_of: Vec<u32>,
    /// The descriptor of each slot, and the file it is (or was last) of.
    slots: Vec<Option<File>>,
    owner: Vec<u32>,
    /// The slot to replace next (the one opened longest ago).
    hand: usize,
    capacity: usize,
}

impl<'a> FileCache<'a> {
    const CLOSED: u32 = u32::MAX;

    /// A cache for the `nrfiles` files of job `job` in `dir`, `capacity` (≥ 1) open at once.
    pub fn new(open: Opener<'a>, dir: &Path, job: usize, nrfiles: usize, capacity: usize) -> Self {
        let mut path = dir.as_os_str().as_bytes().to_vec();
        path.push(b'/');
        let dir_len = path.len();
        path.reserve(48);
        let capacity = capacity.max(1);
        Self {
            open,
            path,
            dir_len,
            job,
            slot_of: vec![Self::CLOSED; nrfiles],
            slots: Vec::with_capacity(capacity),
            owner: Vec::with_capacity(capacity),
            hand: 0,
            capacity,
        }
    }

    /// File `file`'s path, formatted into the reused buffer.
    fn path(&mut self, file: u32) -> &Path {
        self.path.truncate(self.dir_len);
        // As `name`, without its String.
        write!(self.path, "job{}.{file}", self.job).expect("writing to a Vec");
        Path::new(OsStr::from_bytes(&self.path))
    }

    /// File `file`'s descriptor when it is open.
    #[inline]
    pub fn get(&self, file: u32) -> Option<&File> {
        match self.slot_of[file as usize] {
            Self::CLOSED => None,
            s => self.slots[s as usize].as_ref(),
        }
    }

    /// Opens `file` unless it is open, closing the descriptor opened longest ago when the
    /// cache is full; returns whether it opened it.
    pub fn ensure(&mut self, file: u32) -> Result<bool> {
        if self.slot_of[file as usize] != Self::CLOSED {
            return Ok(false);
        }
        let slot = if self.slots.len() < self.capacity {
            self.slots.push(None);
            self.owner.push(file);
            self.slots.len() - 1
        } else {
            let s = self.hand;
            self.hand = (self.hand + 1) % self.capacity;
            // Close first: at no time more than `capacity` descriptors.
            self.slots[s] = None;
            let old = self.owner[s] as usize;
            if self.slot_of[old] == s as u32 {
                self.slot_of[old] = Self::CLOSED;
            }
            s
        };
        let open = self.open;
        let f = open(self.path(file))?;
        self.slots[slot] = Some(f);
        self.owner[slot] = file;
        self.slot_of[file as usize] = slot as u32;
        Ok(true)
    }

    /// fsync (or fdatasync) `file`: through its descriptor when open, else through a
    /// temporary one, closed at once.
    pub fn sync(&mut self, file: u32, data_only: bool) -> Result<()> {
        if let Some(f) = self.get(file) {
            return Ok(sync_file(f, data_only)?);
        }
        let open = self.open;
        let f = open(self.path(file))?;
        Ok(sync_file(&f, data_only)?)
    }

    /// Descriptors open now.
    #[cfg(test)]
    pub fn open_count(&self) -> usize {
        self.slots.iter().flatten().count()
    }
}

/// `psync` over a [`FileCache`]: the file of each request is opened (if it is not) by
/// [`IoBackend::ready`], before the request is timed.
pub struct CachedPsync<'c, 'a> {
    pub cache: &'c mut FileCache<'a>,
}

impl IoBackend for CachedPsync<'_, '_> {
    // Each request is a system call, as for `Psync`.
    const BARE_STAMPS: bool = true;

    #[inline]
    fn ready(&mut self, file: u32) -> Result<Option<Instant>> {
        if self.cache.get(file).is_some() {
            return Ok(None); // no clock read for a file already open
        }
        let t = Instant::now();
        self.cache.ensure(file)?;
        Ok(Some(t))
    }

    #[inline]
    fn queue(&mut self, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let Some(f) = self.cache.get(io.file) else {
            return Err(io::Error::other("file not opened before its request"));
        };
        pread_or_pwrite(f, io, buf)
    }

    fn sync(&mut self, file: u32, data_only: bool) -> io::Result<()> {
        self.cache
            .sync(file, data_only)
            .map_err(|e| io::Error::other(format!("{e:#}")))
    }

    fn invalidate(&mut self, file: u32) -> io::Result<()> {
        match self.cache.get(file) {
            Some(f) => super::backend::drop_cached(f),
            None => Ok(()),
        }
    }
}

/// A job's files for its run: all open, or opened on demand.
pub enum JobFiles<'a> {
    /// Every file open (or, with `shared_file`, the one shared file).
    All(Vec<File>),
    /// At most `openfiles` open at once.
    Cached(FileCache<'a>),
}

impl JobFiles<'_> {
    /// fsync file `file` (the end-of-job sync).
    pub fn sync_all(&mut self, file: u32) -> Result<()> {
        match self {
            Self::All(v) => Ok(v[file as usize].sync_all()?),
            Self::Cached(c) => c.sync(file, false),
        }
    }

    /// Drops file `file`'s pages from the page cache (a loop's start under
    /// `loop_invalidate`); a file not open now (`openfiles`) is left as it is.
    pub fn invalidate(&mut self, file: u32) -> Result<()> {
        let f = match self {
            Self::All(v) => v.get(file as usize),
            Self::Cached(c) => c.get(file),
        };
        match f {
            Some(f) => Ok(super::backend::drop_cached(f)?),
            None => Ok(()),
        }
    }
}

impl Job {
    /// Files a job has open at once during its run: `openfiles` when it is fewer than
    /// `nrfiles` (psync only; one shared file and the null engine open no more than one
    /// anyway), else all `nrfiles`.
    pub(super) fn open_files(&self, engine: Engine) -> usize {
        let lazy = self.openfiles > 0 && !self.shared && engine == Engine::Psync;
        if lazy {
            self.openfiles.min(self.nrfiles)
        } else {
            self.nrfiles
        }
    }

    /// Opens job `job`'s files (job 0's with `common_files`) for the run (before the job is ready, so outside the phase's
    /// clock; with `openfiles` the on-demand opens are inside it, as in fio); with
    /// `shared_file`, the one shared file; with `openfiles` under `nrfiles`, none yet: a
    /// cache of `openfiles` descriptors, filled on demand through `opener`.
    pub(super) fn open<'a>(
        &self,
        dir: &Path,
        job: usize,
        engine: Engine,
        opener: Opener<'a>,
    ) -> Result<JobFiles<'a>> {
        if !engine.caps().uses_files {
            return Ok(JobFiles::All(Vec::new()));
        }
        if self.shared {
            return Ok(JobFiles::All(vec![
                self.open_one(&super::shared::path(dir))?
            ]));
        }
        let job = self.owner(job);
        let width = self.open_files(engine);
        if width < self.nrfiles {
            return Ok(JobFiles::Cached(FileCache::new(
                opener,
                dir,
                job,
                self.nrfiles,
                width,
            )));
        }
        (0..self.nrfiles)
            .map(|file| self.open_one(&Self::path(dir, job, file)))
            .collect::<Result<_>>()
            .map(JobFiles::All)
    }

    /// Opens one file for the run (O_DIRECT with `direct`), saying what a refusal of
    /// O_DIRECT means.
    pub(super) fn open_one(&self, path: &Path) -> Result<File> {
        let mut o = OpenOptions::new();
        o.read(true).write(true);
        if self.direct {
            o.custom_flags(libc::O_DIRECT);
        }
        let f = o.open(path).map_err(|e| {
            if self.direct && e.raw_os_error() == Some(libc::EINVAL) {
                anyhow!(
                    "job: direct=true but the filesystem of {} refuses O_DIRECT \
                     (EINVAL; tmpfs did before Linux 6.6, FUSE often does): run \
                     without direct=true or on another filesystem",
                    path.display()
                )
            } else {
                anyhow::Error::new(e).context(format!("open {}", path.display()))
            }
        })?;
        if self.fadvise_hint {
            // As fio's fadvise_hint=1: no readahead for random jobs, more for sequential.
            let advice = match self.seq() {
                true => libc::POSIX_FADV_SEQUENTIAL,
                false => libc::POSIX_FADV_RANDOM,
            };
            use std::os::fd::AsRawFd;
            // SAFETY: an advice on a descriptor we own, with plain integer arguments.
            let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) };
            if rc != 0 {
                let e = std::io::Error::from_raw_os_error(rc);
                return Err(anyhow!("job: posix_fadvise of {}: {e}", path.display()));
            }
        }
        Ok(f)
    }
}

/// Whose files each of `numjobs` jobs works on: all job 0's with `common_files`; with
/// `file_sets` (`2,1,1`), each set of jobs its first job's, in order; else each its own.
pub(super) fn owners(p: &Params, numjobs: usize) -> Result<Vec<usize>, String> {
    let sets = p.counts("file_sets");
    if sets.is_empty() {
        let common = p.flag("common_files");
        return Ok((0..numjobs).map(|j| if common { 0 } else { j }).collect());
    }
    if p.flag("common_files") {
        return Err("give common_files=true or file_sets, not both".into());
    }
    let given: u64 = sets.iter().sum();
    if sets.contains(&0) || given != numjobs as u64 {
        return Err(format!(
            "file_sets: sizes of 1 or more that add up to numjobs={numjobs} (they add up \
             to {given})"
        ));
    }
    let mut owners = Vec::with_capacity(numjobs);
    for &n in sets {
        let first = owners.len();
        owners.extend(std::iter::repeat_n(first, n as usize));
    }
    Ok(owners)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_window_covering_every_file_is_plain_round_robin() {
        let mut o = Order::new(3, 3, 4096);
        let seq: Vec<usize> = (0..7).map(|_| o.next(4096)).collect();
        assert_eq!(seq, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn windows_give_each_file_its_share_then_move_on() {
        // 5 files of 2 blocks, 2 at a time: 0 1 0 1 | 2 3 2 3 | 4 4 | 0 1 …
        let mut o = Order::new(5, 2, 2 * 4096);
        let seq: Vec<usize> = (0..12).map(|_| o.next(4096)).collect();
        assert_eq!(seq, [0, 1, 0, 1, 2, 3, 2, 3, 4, 4, 0, 1]);
    }

    /// Descriptors of this process that point into `dir`.
    fn fds_into(dir: &Path) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|p| p.starts_with(dir))
            .count()
    }

    #[test]
    fn the_cache_never_holds_more_than_its_capacity_and_finds_each_file() {
        let dir = tempfile::tempdir().unwrap();
        for f in 0..10 {
            std::fs::write(dir.path().join(name(3, f)), [f as u8; 8]).unwrap();
        }
        let open = |p: &Path| Ok(File::open(p)?);
        let mut c = FileCache::new(&open, dir.path(), 3, 10, 2);
        let order = [0u32, 1, 2, 3, 3, 9, 0, 5, 5, 1, 8, 2, 7, 6, 4, 4, 0];
        let mut opened = 0;
        for &f in &order {
            opened += c.ensure(f).unwrap() as usize;
            let mut b = [0u8; 8];
            c.get(f).unwrap().read_exact_at(&mut b, 0).unwrap();
            assert_eq!(b, [f as u8; 8], "file {f} through the cache");
            assert!(c.open_count() <= 2);
            assert!(fds_into(dir.path()) <= 2, "{} open", fds_into(dir.path()));
            c.sync(9 - f, false).unwrap();
            assert!(fds_into(dir.path()) <= 2, "the sync's descriptor is closed");
        }
        // Hits: only the repeated 3, 5 and 4 (two slots, replaced in turn).
        assert_eq!(opened, order.len() - 3);
        drop(c);
        assert_eq!(fds_into(dir.path()), 0);
    }

    #[test]
    fn a_closed_file_is_reopened_for_its_sync_and_an_open_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        for f in 0..3 {
            std::fs::write(dir.path().join(name(0, f)), b"x").unwrap();
        }
        let opens = std::cell::Cell::new(0);
        let open = |p: &Path| {
            opens.set(opens.get() + 1);
            Ok(File::options().write(true).open(p)?)
        };
        let mut c = FileCache::new(&open, dir.path(), 0, 3, 2);
        for f in 0..3 {
            c.ensure(f).unwrap();
        }
        assert_eq!(opens.get(), 3);
        assert!(c.get(0).is_none(), "file 0 was replaced");
        c.sync(2, false).unwrap();
        assert_eq!(
            opens.get(),
            3,
            "file 2 is synced through its open descriptor"
        );
        c.sync(0, true).unwrap();
        assert_eq!(opens.get(), 4, "file 0 is reopened for its sync");
        assert!(c.get(0).is_none(), "and not kept");
    }
}
