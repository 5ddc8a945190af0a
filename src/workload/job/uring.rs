//! The `io_uring` engine of the `job` workload (the `io-uring` crate): one ring per job,
//! `iodepth` requests kept in flight. As fio's io_uring engine with its defaults (no
//! registered files or buffers, no SQ polling): queued requests go to the kernel with one
//! io_uring_enter (timed as an [`Op::Submit`](crate::probe::recorder::Op::Submit) part —
//! fio's "slat", here one sample per submit call rather than per request), completions are
//! read from the completion queue without a syscall while there are any, and only when
//! fewer than needed are there does the job wait in io_uring_enter(GETEVENTS).

use super::backend::{sync_file, Caps, Io, IoBackend};
use io_uring::{opcode, types, IoUring};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// Deepest queue accepted (the kernel allows 32768 SQ entries).
pub const MAX_DEPTH: usize = 4096;

/// `io_uring` with a ring of `iodepth` entries.
pub struct Uring<'a> {
    ring: IoUring,
    fds: Vec<RawFd>,
    files: &'a [File],
}

impl<'a> Uring<'a> {
    pub const CAPS: Caps = Caps {
        direct: true,
        max_depth: MAX_DEPTH,
        uses_files: true,
    };

    /// A ring for `depth` requests on `files`.
    pub fn new(files: &'a [File], depth: usize) -> io::Result<Self> {
        let ring = IoUring::new(depth.next_power_of_two() as u32)?;
        Ok(Self {
            ring,
            fds: files.iter().map(|f| f.as_raw_fd()).collect(),
            files,
        })
    }
}

/// Checks that this kernel lets the process make an io_uring; the error says why not
/// and what to do.
pub fn probe() -> Result<(), String> {
    IoUring::new(2).map(|_| ()).map_err(|e| unavailable(&e))
}

/// What an io_uring setup error means here.
pub fn unavailable(e: &io::Error) -> String {
    let why = match e.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no io_uring (built without CONFIG_IO_URING)",
        Some(libc::EPERM) => {
            "io_uring is disabled for this process (/proc/sys/kernel/io_uring_disabled, \
             or a seccomp filter of a container)"
        }
        Some(libc::ENOMEM) => "the kernel could not allocate the ring (locked-memory limit?)",
        _ => "the kernel refused to set up a ring",
    };
    format!(
        "engine=io_uring is unavailable: {why} ({e}); use engine=psync, or add fallback=psync \
         to run psync instead when io_uring is missing"
    )
}

impl IoBackend for Uring<'_> {
    #[inline]
    fn queue(&mut self, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let fd = types::Fd(self.fds[io.file as usize]);
        let entry = if io.write {
            opcode::Write::new(fd, buf.as_ptr(), io.len)
                .offset(io.offset)
                .build()
        } else {
            opcode::Read::new(fd, buf.as_mut_ptr(), io.len)
                .offset(io.offset)
                .build()
        }
        .user_data(io.slot as u64);
        // SAFETY: the buffer belongs to the slot, which stays untouched until the
        // request's completion is reaped; the ring has ≥ iodepth entries, so it has room.
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        Ok(None)
    }

    fn submit(&mut self) -> io::Result<()> {
        self.ring.submit().map(|_| ())
    }

    fn reap(&mut self, min: usize, done: &mut dyn FnMut(u32, io::Result<usize>)) -> io::Result<()> {
        let mut got = 0;
        loop {
            for cqe in self.ring.completion() {
                let res = cqe.result();
                let r = if res < 0 {
                    Err(io::Error::from_raw_os_error(-res))
                } else {
                    Ok(res as usize)
                };
                done(cqe.user_data() as u32, r);
                got += 1;
            }
            if got >= min {
                return Ok(());
            }
            match self.ring.submit_and_wait(min - got) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn sync(&mut self, file: u32, data_only: bool) -> io::Result<()> {
        // Called with nothing in flight: a plain fsync is what an IORING_OP_FSYNC waited
        // for would be, without the ring round trip.
        sync_file(&self.files[file as usize], data_only)
    }

    fn invalidate(&mut self, file: u32) -> io::Result<()> {
        super::backend::drop_cached(&self.files[file as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_says_why_and_what_to_do() {
        let m = unavailable(&io::Error::from_raw_os_error(libc::ENOSYS));
        assert!(
            m.contains("no io_uring") && m.contains("engine=psync"),
            "{m}"
        );
        let m = unavailable(&io::Error::from_raw_os_error(libc::EPERM));
        assert!(
            m.contains("io_uring_disabled") && m.contains("fallback=psync"),
            "{m}"
        );
    }
}
