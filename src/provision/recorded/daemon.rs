//! The recorder's FUSE daemon (`fsarena record-serve`, hidden): a filesystem of two files,
//! `disk`, the live image passed through, and `position`, how many records the write log
//! holds. A loop device over `disk` carries the filesystem under test; every write, zero
//! range and flush that reaches `disk` is applied to the live image and appended to the
//! log ([`super::log`]) in the order it is served.
//!
//! Built on the `fuser` crate (its `passthrough` and `hello` examples). What makes the log
//! exact:
//! * one session thread: requests are served, and logged, one at a time in the order the
//!   kernel hands them over; what a workload learns from `position` after its `fsync`
//!   returned counts every record served before;
//! * both files are opened with `FOPEN_DIRECT_IO`: FUSE caches nothing and does not cut a
//!   write into pages (`max_write` is 1 MiB, the kernel's default `max_pages_limit`), so a
//!   loop device's write arrives as it was issued (split only above 1 MiB);
//! * `fsync` (what the loop device does for a cache flush, and after a FUA write) is a
//!   flush record; the live image itself is not synced (it is a result file, not a disk);
//! * `fallocate` punching a hole or zeroing a range (the loop device's discard and
//!   write-zeroes) is a zero record; plain preallocation changes no byte and is not logged.
//!
//! The daemon runs in its own process group and ignores SIGINT, SIGTERM and SIGHUP: a
//! Ctrl-C must leave it serving until the filesystem above it is unmounted and the loop
//! device detached, or that unmount would fail with I/O errors. It ends when its mount is
//! unmounted, finishing the log then, and marks itself an I/O flusher (`PR_SET_IO_FLUSHER`)
//! so that memory reclaim does not wait on the writeback it is serving.
//!
//! As root `fuser` mounts with mount(2) itself; only without the privilege does it fall
//! back to `fusermount3` (Debian package `fuse3`), which the recorder never needs: loop
//! devices need root anyway.

use super::log::LogWriter;
use anyhow::{bail, Context, Result};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, KernelConfig,
    LockOwner, MountOption, OpenAccMode, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

/// The hidden subcommand that runs the daemon.
pub const SUBCOMMAND: &str = "record-serve";
/// The line the daemon prints on standard output once its mount serves.
pub const READY: &str = "ready";
/// The name of the passed-through image in the daemon's mount.
pub const DISK: &str = "disk";
/// The name of the file that reads as the log's position.
pub const POSITION: &str = "position";
/// The largest write FUSE hands over in one request (the kernel's default limit of 256
/// pages).
const MAX_WRITE: u32 = 1 << 20;

const ROOT: INodeNo = INodeNo::ROOT;
const DISK_INO: INodeNo = INodeNo(2);
const POSITION_INO: INodeNo = INodeNo(3);
const TTL: Duration = Duration::from_secs(1);

/// The daemon's command line after the program: what `fsarena` runs to serve `image` and
/// log into `log` (paths the daemon opens, `/proc/self/fd/N` of inherited descriptors)
/// at `mountpoint`. The mount point is on the command line so that `cleanup` can tell
/// this daemon's process from any other.
pub fn args(image: &str, log: &str, mountpoint: &Path) -> Vec<String> {
    vec![
        SUBCOMMAND.to_string(),
        "--image".into(),
        image.into(),
        "--log".into(),
        log.into(),
        "--mountpoint".into(),
        mountpoint.to_string_lossy().into_owned(),
    ]
}

/// Whether `cmdline` (NUL-separated, from `/proc/PID/cmdline`) is a recorder daemon's
/// serving `mountpoint`.
pub fn is_daemon_of(cmdline: &[u8], mountpoint: &Path) -> bool {
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    let want = mountpoint.as_os_str().as_encoded_bytes();
    args.iter().any(|a| *a == SUBCOMMAND.as_bytes())
        && args
            .windows(2)
            .any(|w| w[0] == b"--mountpoint" && w[1] == want)
}

/// The served filesystem.
struct Recorder {
    image: File,
    size: u64,
    log: Mutex<Option<LogWriter>>,
    /// Set when the image or the log could not be written: the log is then incomplete,
    /// and the daemon exits non-zero.
    failed: Arc<AtomicBool>,
}

fn attr(ino: INodeNo, size: u64) -> FileAttr {
    let (kind, perm, nlink) = match ino {
        ROOT => (FileType::Directory, 0o755, 2),
        DISK_INO => (FileType::RegularFile, 0o600, 1),
        _ => (FileType::RegularFile, 0o444, 1),
    };
    FileAttr {
        ino,
        size,
        blocks: size.div_ceil(512),
        atime: UNIX_EPOCH,
        mtime: UNIX_EPOCH,
        ctime: UNIX_EPOCH,
        crtime: UNIX_EPOCH,
        kind,
        perm,
        nlink,
        // SAFETY: getuid/getgid cannot fail.
        uid: unsafe { libc::getuid() },
        gid: unsafe { libc::getgid() },
        rdev: 0,
        flags: 0,
        blksize: 4096,
    }
}

impl Recorder {
    /// The attributes of `ino` and how long the kernel may keep them (`position` changes
    /// all the time: never kept).
    fn attr_of(&self, ino: INodeNo) -> Option<(Duration, FileAttr)> {
        match ino {
            ROOT => Some((TTL, attr(ROOT, 0))),
            DISK_INO => Some((TTL, attr(DISK_INO, self.size))),
            POSITION_INO => Some((Duration::ZERO, attr(POSITION_INO, 0))),
            _ => None,
        }
    }

    /// Runs `f` on the log; an error (or a log already finished) fails the recording.
    fn logged(&self, f: impl FnOnce(&mut LogWriter) -> std::io::Result<()>) -> Result<(), Errno> {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let done = match log.as_mut() {
            Some(w) => f(w),
            None => Err(std::io::Error::other("the log was already finished")),
        };
        done.map_err(|e| self.fail(&format!("writing the log: {e}"), Errno::EIO))
    }

    /// Marks the recording failed, says why on stderr, and returns `errno` for the reply.
    fn fail(&self, why: &str, errno: Errno) -> Errno {
        self.failed.store(true, Ordering::SeqCst);
        let _ = writeln!(std::io::stderr(), "fsarena {SUBCOMMAND}: {why}");
        errno
    }

    fn position(&self) -> u64 {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.as_ref().map_or(0, |w| w.position())
    }

    /// `fallocate` of the loop device's discard or write-zeroes: applied to the image,
    /// logged as a zero range when it changes bytes.
    fn zero(&self, offset: u64, length: u64, mode: i32) -> Result<(), Errno> {
        const ZEROING: i32 = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE;
        const KNOWN: i32 = ZEROING | libc::FALLOC_FL_KEEP_SIZE;
        if mode & !KNOWN != 0 || offset.saturating_add(length) > self.size {
            return Err(Errno::EOPNOTSUPP);
        }
        // SAFETY: fallocate(2) on an open descriptor with a range inside the image.
        let rc = unsafe {
            libc::fallocate(
                self.image.as_raw_fd(),
                mode | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                length as libc::off_t,
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(self.fail(&format!("fallocate of the image: {e}"), e.into()));
        }
        if mode & ZEROING != 0 {
            self.logged(|w| w.zero(offset, length))?;
        }
        Ok(())
    }
}

impl Filesystem for Recorder {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // The kernel accepts what fits its page limit; a smaller cap is said by the error.
        if let Err(nearest) = config.set_max_write(MAX_WRITE) {
            let _ = config.set_max_write(nearest);
        }
        Ok(())
    }

    fn destroy(&mut self) {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(w) = log {
            if let Err(e) = w.finish() {
                self.fail(&format!("finishing the log: {e:#}"), Errno::EIO);
            }
        }
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let ino = match name.to_str() {
            Some(DISK) if parent == ROOT => DISK_INO,
            Some(POSITION) if parent == ROOT => POSITION_INO,
            _ => return reply.error(Errno::ENOENT),
        };
        match self.attr_of(ino) {
            Some((ttl, a)) => reply.entry(&ttl, &a, fuser::Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr_of(ino) {
            Some((ttl, a)) => reply.attr(&ttl, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    /// Nothing may change: only a truncation to the size the image has is accepted (an
    /// open with `O_TRUNC` of nothing), and timestamps are ignored.
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let Some((ttl, a)) = self.attr_of(ino) else {
            return reply.error(Errno::ENOENT);
        };
        if mode.is_some() || uid.is_some() || gid.is_some() || size.is_some_and(|s| s != a.size) {
            return reply.error(Errno::EPERM);
        }
        reply.attr(&ttl, &a)
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let writes = flags.acc_mode() != OpenAccMode::O_RDONLY;
        match ino {
            DISK_INO => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            POSITION_INO if !writes => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            POSITION_INO => reply.error(Errno::EACCES),
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match ino {
            DISK_INO => {
                let len = (size as u64).min(self.size.saturating_sub(offset)) as usize;
                let mut buf = vec![0u8; len];
                match self.image.read_exact_at(&mut buf, offset) {
                    Ok(()) => reply.data(&buf),
                    Err(e) => reply.error(e.into()),
                }
            }
            POSITION_INO => {
                let text = format!("{}\n", self.position());
                let from = (offset as usize).min(text.len());
                let to = (from + size as usize).min(text.len());
                reply.data(&text.as_bytes()[from..to])
            }
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino != DISK_INO {
            return reply.error(Errno::EBADF);
        }
        if offset.saturating_add(data.len() as u64) > self.size {
            return reply.error(Errno::ENOSPC);
        }
        if let Err(e) = self.image.write_all_at(data, offset) {
            return reply.error(self.fail(&format!("writing the image: {e}"), e.into()));
        }
        match self.logged(|w| w.write(offset, data)) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    /// A close: nothing reaches the disk by it.
    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok()
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        if ino != DISK_INO {
            return reply.ok();
        }
        match self.logged(|w| w.flush()) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if ino != DISK_INO {
            return reply.error(Errno::EBADF);
        }
        match self.zero(offset, length, mode) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (ROOT, FileType::Directory, "."),
            (ROOT, FileType::Directory, ".."),
            (DISK_INO, FileType::RegularFile, DISK),
            (POSITION_INO, FileType::RegularFile, POSITION),
        ];
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(ino, (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok()
    }
}

/// `fsarena record-serve`: serves `image` at `mountpoint`, logging into `log` (a new,
/// empty file); prints [`READY`] once mounted, returns once unmounted with the log
/// finished. Fails when the image or the log could not be written at some point (the log
/// is then incomplete).
pub fn serve(image: &Path, log: &Path, mountpoint: &Path) -> Result<()> {
    // SAFETY: signal(2) with SIG_IGN, before any thread starts; see the module docs.
    unsafe {
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(s, libc::SIG_IGN);
        }
        // Best effort (needs CAP_SYS_RESOURCE): PR_SET_IO_FLUSHER is 57 (Linux 5.6).
        libc::prctl(57, 1, 0, 0, 0);
    }
    let image_file = File::options()
        .read(true)
        .write(true)
        .open(image)
        .with_context(|| format!("opening the image {}", image.display()))?;
    let log_file = File::options()
        .write(true)
        .open(log)
        .with_context(|| format!("opening the log {}", log.display()))?;
    if log_file.metadata()?.len() != 0 {
        bail!("the log {} is not empty", log.display());
    }
    let size = image_file.metadata()?.len();
    let failed = Arc::new(AtomicBool::new(false));
    let fs = Recorder {
        image: image_file,
        size,
        log: Mutex::new(Some(LogWriter::new(log_file)?)),
        failed: Arc::clone(&failed),
    };
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        MountOption::FSName("fsarena-recorder".into()),
        MountOption::Subtype("fsarena".into()),
        MountOption::NoDev,
        MountOption::NoSuid,
        MountOption::NoExec,
        MountOption::NoAtime,
    ];
    config.n_threads = Some(1);
    let session = fuser::Session::new(fs, mountpoint, &config).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            " (no /dev/fuse: `modprobe fuse`)"
        } else {
            ""
        };
        anyhow::anyhow!(
            "mounting the recorder at {}: {e}{hint}",
            mountpoint.display()
        )
    })?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{READY}")
            .and_then(|_| out.flush())
            .context("telling fsarena the recorder is ready")?;
    }
    // Nothing more is said on standard output, and a parent gone must not matter: it
    // becomes /dev/null.
    if let Ok(null) = File::options().write(true).open("/dev/null") {
        // SAFETY: dup2(2) of an open descriptor onto 1, which only stdout uses.
        unsafe { libc::dup2(null.as_raw_fd(), 1) };
    }
    session
        .run()
        .with_context(|| format!("serving {}", mountpoint.display()))?;
    if failed.load(Ordering::SeqCst) {
        bail!("the image or the log could not be written: the log is incomplete");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_is_told_apart_by_its_mount_point() {
        let mp = Path::new("/var/tmp/img/ext4-recorded-1-1/fuse");
        let argv = args("/proc/self/fd/5", "/proc/self/fd/6", mp);
        assert_eq!(argv[0], SUBCOMMAND);
        let mut cmdline = b"/usr/bin/fsarena\0".to_vec();
        for a in &argv {
            cmdline.extend_from_slice(a.as_bytes());
            cmdline.push(0);
        }
        assert!(is_daemon_of(&cmdline, mp));
        assert!(!is_daemon_of(
            &cmdline,
            Path::new("/var/tmp/img/other/fuse")
        ));
        assert!(!is_daemon_of(&cmdline, Path::new("/var/tmp/img")));
        // Another program naming the mount point is not the daemon.
        let other = format!("vim\0--mountpoint\0{}\0", mp.display());
        assert!(!is_daemon_of(other.as_bytes(), mp));
    }
}
