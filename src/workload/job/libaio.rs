//! The `libaio` engine of the `job` workload: Linux native AIO through its raw system calls
//! (io_setup, io_submit, io_getevents, io_destroy; no C library), one context per job and
//! `iodepth` requests in flight — fio's `libaio` engine with its defaults (completions read
//! with io_getevents, not from the ring in user memory).
//!
//! Queued requests go to the kernel with one io_submit (timed as an
//! [`Op::Submit`](crate::probe::recorder::Op::Submit) part, as for io_uring), and
//! completions are read with io_getevents, as many as are there, waiting for at least one.
//! Linux AIO is asynchronous only with O_DIRECT: on buffered files the kernel does each
//! request inside io_submit, and its completion is ready when the call returns (so is it
//! with fio's libaio).
//!
//! The control blocks and events are those of `linux/aio_abi.h`.

use super::backend::{sync_file, Caps, Io, IoBackend};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Deepest queue accepted, as for io_uring (each request in flight is one of the
/// system-wide `fs.aio-max-nr` events while its context lives).
pub const MAX_DEPTH: usize = 4096;

/// `IOCB_CMD_PREAD` of `linux/aio_abi.h`.
const IOCB_CMD_PREAD: u16 = 0;
/// `IOCB_CMD_PWRITE`.
const IOCB_CMD_PWRITE: u16 = 1;

/// `struct iocb` of `linux/aio_abi.h` (64 bytes): `aio_key` and `aio_rw_flags` swap
/// places on big-endian machines.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    #[cfg(target_endian = "little")]
    aio_key: u32,
    aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    aio_key: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` of `linux/aio_abi.h` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    /// The request's `aio_data`: its slot.
    data: u64,
    /// The address of its iocb.
    obj: u64,
    /// Bytes moved, or a negated errno.
    res: i64,
    res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);

/// `aio_context_t`.
type Ctx = libc::c_ulong;

/// io_setup(2): a context for `nr` requests in flight.
fn setup(nr: usize) -> io::Result<Ctx> {
    let mut ctx: Ctx = 0;
    // SAFETY: io_setup writes the new context into `ctx`, which must be zero before.
    let rc = unsafe { libc::syscall(libc::SYS_io_setup, nr as libc::c_uint, &mut ctx) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ctx)
}

/// io_destroy(2): waits for the context's requests in flight, then frees it.
fn destroy(ctx: Ctx) {
    // SAFETY: a context made by io_setup, destroyed once.
    unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
}

/// Linux AIO with a context for `iodepth` requests.
pub struct Libaio<'a> {
    ctx: Ctx,
    /// One control block per slot: its address stays valid until the request completes.
    iocbs: Vec<Iocb>,
    /// The queued blocks, in order, for the next io_submit.
    queued: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// Completions seen before `reap` asked (read to make room when io_submit said EAGAIN,
    /// or requests io_submit refused): (slot, result).
    early: Vec<(u32, i64)>,
    /// Requests the kernel has and whose completion was not read yet.
    inflight: usize,
    files: &'a [File],
}

impl<'a> Libaio<'a> {
    pub const CAPS: Caps = Caps {
        direct: true,
        max_depth: MAX_DEPTH,
        uses_files: true,
    };

    /// A context for `depth` requests on `files`.
    pub fn new(files: &'a [File], depth: usize) -> io::Result<Self> {
        let depth = depth.max(1);
        Ok(Self {
            ctx: setup(depth)?,
            iocbs: vec![Iocb::default(); depth],
            queued: Vec::with_capacity(depth),
            events: vec![IoEvent::default(); depth],
            early: Vec::with_capacity(depth),
            inflight: 0,
            files,
        })
    }

    /// Reads at least `min` completions (at most as many as there are slots), returning
    /// how many; `EINTR` is retried.
    fn get_events(&mut self, min: usize) -> io::Result<usize> {
        loop {
            // SAFETY: `events` has room for `events.len()` events; no timeout (NULL).
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    self.events.len() as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if n >= 0 {
                self.inflight -= n as usize;
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }
}

/// Checks that this kernel lets the process make an AIO context; the error says why not
/// and what to do.
pub fn probe() -> Result<(), String> {
    setup(1).map(destroy).map_err(|e| unavailable(&e))
}

/// What an io_setup error means here.
pub fn unavailable(e: &io::Error) -> String {
    let why = match e.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no Linux AIO (built without CONFIG_AIO)",
        Some(libc::EAGAIN) => {
            "the system's AIO events are used up: the contexts of all processes may hold \
             fs.aio-max-nr requests (/proc/sys/fs/aio-max-nr, in use: /proc/sys/fs/aio-nr); \
             raise it (sysctl -w fs.aio-max-nr=1048576), or give fewer numjobs or a \
             smaller iodepth"
        }
        Some(libc::EPERM) => "AIO is forbidden to this process (a seccomp filter of a container?)",
        Some(libc::ENOMEM) => "the kernel could not allocate the context",
        _ => "the kernel refused to set up a context",
    };
    format!("engine=libaio is unavailable: {why} ({e}); use engine=io_uring or engine=psync")
}

/// A completion's result: bytes moved, or the error of a negated errno.
fn result(res: i64) -> io::Result<usize> {
    if res < 0 {
        Err(io::Error::from_raw_os_error(-res as i32))
    } else {
        Ok(res as usize)
    }
}

impl IoBackend for Libaio<'_> {
    /// Every completion is read by io_getevents, a system call after the io_submit that
    /// followed the request's start (see [`IoBackend::BARE_STAMPS`]).
    const BARE_STAMPS: bool = true;

    #[inline]
    fn queue(&mut self, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let cb = &mut self.iocbs[io.slot as usize];
        *cb = Iocb {
            aio_data: io.slot as u64,
            aio_lio_opcode: if io.write {
                IOCB_CMD_PWRITE
            } else {
                IOCB_CMD_PREAD
            },
            aio_fildes: self.files[io.file as usize].as_raw_fd() as u32,
            aio_buf: buf.as_mut_ptr() as u64,
            aio_nbytes: io.len as u64,
            aio_offset: io.offset as i64,
            ..Iocb::default()
        };
        self.queued.push(cb);
        Ok(None)
    }

    fn submit(&mut self) -> io::Result<()> {
        let mut at = 0;
        while at < self.queued.len() {
            let rest = &mut self.queued[at..];
            // SAFETY: each pointer is the iocb of a slot, whose buffer stays untouched
            // until the request's completion is read; the iocbs outlive the requests
            // (io_destroy in Drop waits for any left).
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    rest.len() as libc::c_long,
                    rest.as_mut_ptr(),
                )
            };
            if n > 0 {
                at += n as usize;
                self.inflight += n as usize;
                continue;
            }
            let e = match n {
                0 => io::Error::other("io_submit took no request"),
                _ => io::Error::last_os_error(),
            };
            match e.raw_os_error() {
                Some(libc::EINTR) => {}
                // No room: read completions (for the next reap) and try again.
                Some(libc::EAGAIN) if self.inflight > 0 => {
                    let got = self.get_events(1)?;
                    let events = self.events[..got].iter();
                    self.early
                        .extend(events.map(|ev| (ev.data as u32, ev.res)));
                }
                // The first request was refused (a bad descriptor, say): it completes
                // with that error, and the rest go on.
                Some(errno) if errno != libc::EAGAIN => {
                    // SAFETY: the pointer is to one of our iocbs.
                    let slot = unsafe { (*self.queued[at]).aio_data } as u32;
                    self.early.push((slot, -(errno as i64)));
                    at += 1;
                }
                _ => {
                    self.queued.clear();
                    return Err(e);
                }
            }
        }
        self.queued.clear();
        Ok(())
    }

    fn reap(&mut self, min: usize, done: &mut dyn FnMut(u32, io::Result<usize>)) -> io::Result<()> {
        let mut got = self.early.len();
        for (slot, res) in self.early.drain(..) {
            done(slot, result(res));
        }
        while got < min && self.inflight > 0 {
            let n = self.get_events((min - got).min(self.inflight))?;
            for ev in &self.events[..n] {
                done(ev.data as u32, result(ev.res));
            }
            got += n;
        }
        Ok(())
    }

    fn sync(&mut self, file: u32, data_only: bool) -> io::Result<()> {
        // Called with nothing in flight (as for io_uring): a plain fsync is what an
        // IOCB_CMD_FSYNC waited for would be, without the round trip.
        debug_assert!(self.inflight == 0 && self.early.is_empty());
        sync_file(&self.files[file as usize], data_only)
    }

    fn invalidate(&mut self, file: u32) -> io::Result<()> {
        super::backend::drop_cached(&self.files[file as usize])
    }
}

impl Drop for Libaio<'_> {
    fn drop(&mut self) {
        destroy(self.ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::backend::AlignedBuf;
    use std::os::unix::fs::FileExt;

    #[test]
    fn unavailable_says_why_and_what_to_do() {
        let m = unavailable(&io::Error::from_raw_os_error(libc::ENOSYS));
        assert!(m.contains("no Linux AIO") && m.contains("engine=io_uring"), "{m}");
        let m = unavailable(&io::Error::from_raw_os_error(libc::EAGAIN));
        assert!(m.contains("fs.aio-max-nr") && m.contains("sysctl"), "{m}");
    }

    /// Eight reads in flight at once, each completing into its own slot's buffer with
    /// its own block; a write then a read of one block through the same context.
    #[test]
    fn eight_requests_in_flight_complete_into_their_slots() {
        if let Err(why) = probe() {
            eprintln!("SKIP eight_requests_in_flight_complete_into_their_slots: {why}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("f"))
            .unwrap();
        for b in 0..8u8 {
            f.write_all_at(&[b + 1; 4096], b as u64 * 4096).unwrap();
        }
        let files = [f];
        let mut aio = Libaio::new(&files, 8).unwrap();
        let mut bufs: Vec<AlignedBuf> = (0..8).map(|_| AlignedBuf::new(4096)).collect();
        for (slot, buf) in bufs.iter_mut().enumerate() {
            let io = Io {
                file: 0,
                slot: slot as u32,
                write: false,
                offset: (7 - slot as u64) * 4096,
                len: 4096,
            };
            assert!(aio.queue(&io, buf.as_mut()).unwrap().is_none());
        }
        aio.submit().unwrap();
        assert_eq!(aio.inflight, 8);
        let mut seen = Vec::new();
        aio.reap(8, &mut |slot, res| seen.push((slot, res.unwrap())))
            .unwrap();
        seen.sort();
        assert_eq!(seen, (0..8).map(|s| (s, 4096)).collect::<Vec<_>>());
        for (slot, buf) in bufs.iter_mut().enumerate() {
            assert!(buf.as_mut().iter().all(|&x| x == 8 - slot as u8), "slot {slot}");
        }
        // A write, then a read of it.
        let mut w = AlignedBuf::new(4096);
        w.as_mut().fill(0xab);
        let io = Io {
            file: 0,
            slot: 3,
            write: true,
            offset: 4096,
            len: 4096,
        };
        aio.queue(&io, w.as_mut()).unwrap();
        aio.submit().unwrap();
        aio.reap(1, &mut |slot, res| assert_eq!((slot, res.unwrap()), (3, 4096)))
            .unwrap();
        aio.sync(0, true).unwrap();
        let mut back = [0u8; 4096];
        files[0].read_exact_at(&mut back, 4096).unwrap();
        assert!(back.iter().all(|&x| x == 0xab));
    }

    /// A request the kernel refuses at submission (a descriptor that is not open)
    /// completes with that error from `reap`.
    #[test]
    fn a_refused_request_completes_with_its_error() {
        if probe().is_err() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let files = [File::create(dir.path().join("f")).unwrap()];
        let mut aio = Libaio::new(&files, 2).unwrap();
        let mut buf = AlignedBuf::new(512);
        let io = Io {
            file: 0,
            slot: 1,
            write: false,
            offset: 0,
            len: 512,
        };
        aio.queue(&io, buf.as_mut()).unwrap();
        aio.iocbs[1].aio_fildes = u32::MAX >> 1;
        aio.submit().unwrap();
        let mut seen = None;
        aio.reap(1, &mut |slot, res| {
            seen = Some((slot, res.unwrap_err().raw_os_error()))
        })
        .unwrap();
        assert_eq!(seen, Some((1, Some(libc::EBADF))));
    }
}
