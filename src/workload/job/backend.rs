//! The I/O path of the `job` engine: the [`IoBackend`] trait and its synchronous engines
//! — `psync` (pread/pwrite), `mmap` (memcpy to and from a shared mapping) and `null` (no
//! I/O at all: what is left is the cost of the tool, like fio's null engine). `io_uring`
//! lives in `uring.rs`.
//!
//! Modelled on fio's `ioengine_ops` (`queue`, `commit`, `getevents`, `event`): a request
//! is queued with the buffer of its slot; a synchronous engine does it at once and returns
//! its result, an asynchronous one returns `None` and reports it from [`IoBackend::reap`].
//! The job loop is generic over the backend, so there is no virtual call per operation.

#[cfg(doc)]
use crate::probe::Stamp;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// What an engine can do.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// Can do O_DIRECT I/O.
    pub direct: bool,
    /// Most requests in flight (`iodepth`).
    pub max_depth: usize,
    /// Touches the files at all (`null` does not: no layout).
    pub uses_files: bool,
}

/// One request: `len` bytes at `offset` of file `file`, with the buffer of slot `slot`.
#[derive(Clone, Copy, Debug)]
pub struct Io {
    pub file: u32,
    pub slot: u32,
    pub write: bool,
    pub offset: u64,
    pub len: u32,
}

/// An I/O engine as the job loop sees it.
pub trait IoBackend {
    /// The engine's requests are system calls, or nothing at all (`null`): the job loop may
    /// read its start and completion stamps with [`Stamp::now_unordered`], which the call
    /// between them keeps in order. False where a completion is seen without a call (a
    /// memory copy for `mmap`, a completion already in io_uring's ring): ordered reads.
    const BARE_STAMPS: bool = false;

    /// Makes file `file` ready for a request before the request's clock starts: an engine
    /// that opens files on demand (`openfiles`) opens it here and returns when it began,
    /// for the loop to record an `open`; the others have nothing to do.
    #[inline]
    fn ready(&mut self, _file: u32) -> anyhow::Result<Option<std::time::Instant>> {
        Ok(None)
    }

    /// Starts `io` on `buf` (exactly `io.len` bytes). A synchronous engine does it now and
    /// returns the bytes moved; an asynchronous one returns `None`.
    fn queue(&mut self, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>>;

    /// Hands the queued requests to the kernel without waiting (asynchronous engines).
    fn submit(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Waits for at least `min` completions, calling `done(slot, result)` for each.
    fn reap(
        &mut self,
        _min: usize,
        _done: &mut dyn FnMut(u32, io::Result<usize>),
    ) -> io::Result<()> {
        Ok(())
    }

    /// fsync (or fdatasync when `data_only`) file `file`.
    fn sync(&mut self, file: u32, data_only: bool) -> io::Result<()>;

    /// Drops file `file`'s pages from the page cache, as fio does when a time-based job
    /// goes round a file again (`loop_invalidate`); an engine without a descriptor for it
    /// does nothing.
    fn invalidate(&mut self, _file: u32) -> io::Result<()> {
        Ok(())
    }
}

/// A zeroed heap buffer aligned to 4 KiB, as O_DIRECT needs.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is owned memory like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Alignment of every buffer.
    pub const ALIGN: usize = 4096;

    /// `len` zero bytes (at least one).
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), Self::ALIGN).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory for a {len}-byte buffer");
        Self { ptr, len }
    }

    /// The bytes.
    pub fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr points to len initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len.max(1), Self::ALIGN).expect("layout");
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr, layout) }
    }
}

/// posix_fadvise(POSIX_FADV_DONTNEED) over all of `f`: Linux starts the write-back of its
/// dirty pages and drops the clean ones (fio's `file_invalidate_cache`).
pub(super) fn drop_cached(f: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: an advice on a descriptor we own, with plain integer arguments.
    match unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// fsync, or fdatasync when `data_only`.
pub(super) fn sync_file(f: &File, data_only: bool) -> io::Result<()> {
    if data_only {
        f.sync_data()
    } else {
        f.sync_all()
    }
}

/// `io` on `f` with one pwrite(2) or pread(2); the bytes moved.
///
/// The system call is made through `syscall(2)`, not glibc's `pread`/`pwrite`: those are
/// cancellation points, and in a process with more than one thread (fsarena always has
/// some) glibc brackets each call with two atomic read-modify-writes of the thread's
/// cancellation state (`__pthread_enable_asynccancel`/`disable`), ~2% of a cached 4 KiB
/// read's time in a profile (docs/performance/2026-11-job-vs-fio.md). fio's jobs are
/// single-threaded processes, for which glibc skips them; fsarena never cancels threads.
///
/// On 64-bit targets only: there the offset is one register; a 32-bit kernel takes it split
/// in two, and the std wrappers (glibc's) are used.
#[cfg(target_pointer_width = "64")]
#[inline]
pub(super) fn pread_or_pwrite(f: &File, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>> {
    let nr = if io.write {
        libc::SYS_pwrite64
    } else {
        libc::SYS_pread64
    };
    // SAFETY: `buf` is valid for `buf.len()` bytes, read (pwrite) or written (pread) by
    // the kernel only during the call; the descriptor is `f`'s, open for the call.
    let n = unsafe {
        libc::syscall(
            nr,
            f.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
            io.offset as libc::off_t,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Some(n as usize))
}

/// `io` on `f` with one pwrite(2) or pread(2); the bytes moved (see the 64-bit version).
#[cfg(not(target_pointer_width = "64"))]
#[inline]
pub(super) fn pread_or_pwrite(f: &File, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>> {
    use std::os::unix::fs::FileExt;
    let n = if io.write {
        f.write_at(buf, io.offset)?
    } else {
        f.read_at(buf, io.offset)?
    };
    Ok(Some(n))
}

/// `psync`: one pread(2) or pwrite(2) per request.
pub struct Psync<'a> {
    files: &'a [File],
}

impl<'a> Psync<'a> {
    pub const CAPS: Caps = Caps {
        direct: true,
        max_depth: 1,
        uses_files: true,
    };

    pub fn new(files: &'a [File]) -> Self {
        Self { files }
    }
}

impl IoBackend for Psync<'_> {
    const BARE_STAMPS: bool = true;

    #[inline]
    fn queue(&mut self, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>> {
        pread_or_pwrite(&self.files[io.file as usize], io, buf)
    }

    fn sync(&mut self, file: u32, data_only: bool) -> io::Result<()> {
        sync_file(&self.files[file as usize], data_only)
    }

    fn invalidate(&mut self, file: u32) -> io::Result<()> {
        drop_cached(&self.files[file as usize])
    }
}

/// `null`: completes every request at once without touching anything.
pub struct Null;

impl Null {
    pub const CAPS: Caps = Caps {
        direct: true,
        max_depth: 1,
        uses_files: false,
    };
}

impl IoBackend for Null {
    const BARE_STAMPS: bool = true;

    #[inline]
    fn queue(&mut self, io: &Io, _buf: &mut [u8]) -> io::Result<Option<usize>> {
        Ok(Some(io.len as usize))
    }

    fn sync(&mut self, _file: u32, _data_only: bool) -> io::Result<()> {
        Ok(())
    }
}

/// `mmap`: each file mapped shared once (before the loop); a read copies from the
/// mapping, a write copies into it, fsync is msync(MS_SYNC) of the whole mapping.
pub struct Mmap {
    maps: Vec<(*mut u8, usize)>,
}

// SAFETY: the mappings are owned by this value and used by one thread.
unsafe impl Send for Mmap {}

impl Mmap {
    pub const CAPS: Caps = Caps {
        direct: false,
        max_depth: 1,
        uses_files: true,
    };

    /// Maps the first `len` bytes of each file (the layout made them that long).
    pub fn new(files: &[File], len: u64) -> io::Result<Self> {
        let mut maps = Vec::with_capacity(files.len());
        for f in files {
            // SAFETY: a fresh shared mapping of an open file; unmapped in Drop.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    f.as_raw_fd(),
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            maps.push((p as *mut u8, len as usize));
        }
        Ok(Self { maps })
    }
}

impl IoBackend for Mmap {
    #[inline]
    fn queue(&mut self, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let (base, len) = self.maps[io.file as usize];
        let off = io.offset as usize;
        if off + buf.len() > len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "mmap: request past the end of the mapping",
            ));
        }
        // SAFETY: off + len is inside the mapping; buf does not overlap it.
        unsafe {
            if io.write {
                std::ptr::copy_nonoverlapping(buf.as_ptr(), base.add(off), buf.len());
            } else {
                std::ptr::copy_nonoverlapping(base.add(off), buf.as_mut_ptr(), buf.len());
            }
        }
        Ok(Some(buf.len()))
    }

    fn sync(&mut self, file: u32, _data_only: bool) -> io::Result<()> {
        let (base, len) = self.maps[file as usize];
        // SAFETY: a mapping owned by self.
        if unsafe { libc::msync(base as *mut libc::c_void, len, libc::MS_SYNC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        for &(p, len) in &self.maps {
            // SAFETY: mapped in new() with this length.
            unsafe { libc::munmap(p as *mut libc::c_void, len) };
        }
    }
}

/// Makes room for `per_job` files open at once in each of `jobs` jobs (a job's files stay
/// open for its run, or `openfiles` of them, plus one for a sync): raises the soft limit
/// of open files (`RLIMIT_NOFILE`, often 1024 by default) as far as needed, up to the hard
/// limit the administrator set. Fails, before anything is laid out, when even the hard
/// limit is too low, saying which `openfiles` would fit.
pub fn room_for_files(per_job: u64, jobs: u64) -> anyhow::Result<()> {
    let needed = per_job.saturating_mul(jobs);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Ok(()); // unknown limit: the open itself will say
    }
    // Descriptors the process holds besides the files: stdio, the database, a ring.
    const OTHERS: u64 = 64;
    let want = needed.saturating_add(OTHERS);
    if lim.rlim_cur >= want {
        return Ok(());
    }
    if lim.rlim_max < want {
        let fits = (lim.rlim_max.saturating_sub(OTHERS) / jobs.max(1)).saturating_sub(1);
        return Err(anyhow::anyhow!(
            "job: the run keeps {per_job} files open in each of {jobs} job(s) ({needed} in \
             all), but this process may open at most {} (the hard limit of open files, \
             `ulimit -Hn`): give openfiles={fits} or fewer (files open at once per job; \
             engine=psync), raise the limit, or use fewer files",
            lim.rlim_max
        ));
    }
    lim.rlim_cur = want;
    // SAFETY: setrlimit reads the struct we pass; the soft limit stays under the hard one.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(anyhow::anyhow!(
            "job: cannot raise the limit of open files to {want}: {}",
            io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod limit_tests {
    use super::room_for_files;

    #[test]
    fn room_for_files_raises_the_soft_limit_or_says_why_not() {
        room_for_files(10, 2).unwrap();
        let e = room_for_files(u64::MAX / 4, 2).unwrap_err().to_string();
        assert!(
            e.contains("ulimit -Hn") && e.contains("give openfiles="),
            "{e}"
        );
    }
}
