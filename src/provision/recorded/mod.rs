//! A recorded target: the filesystem under test on a loop device whose backing file
//! fsarena serves itself through FUSE, logging every write and flush that reaches it
//! ([`log`]), so that the disk's state at a power cut can be rebuilt afterwards (issue 39;
//! the persistence model of CrashMonkey, Mohan et al., OSDI '18, built from loop and FUSE
//! because this kernel has no device-mapper `log-writes` target).
//!
//! [`Recording::start`] makes, in a directory of its own under the image directory:
//! `base.img`, a fresh filesystem made by mkfs on the file itself (the state before the
//! workload); `live.img`, a sparse copy of it that the daemon ([`daemon`]) serves as
//! `fuse/disk`; `writes.log`; and mounts the filesystem, on a loop device over
//! `fuse/disk`, at `mnt`. Replaying the whole log onto a copy of `base.img` gives
//! `live.img` byte for byte (tests/recorded.rs).
//!
//! What reaches the log (measured by tests/recorded.rs on Linux 6.18, loop direct I/O
//! on, writes of up to 1 MiB): the loop device has a volatile write cache and no FUA, so
//! the block layer sends a FUA write as the write followed by a flush; an `fsync` of a
//! file that had data to write shows as `…W F W F` on ext4, xfs and btrfs alike (the
//! pre-flush, the journal commit or superblock, its flush); an `fsync` of its directory
//! right after adds nothing on ext4 and xfs and `…W F W F` again on btrfs; `fstrim`
//! reaches the log as zero ranges.
//!
//! Everything is in the run's state file before it exists — the directory, the daemon
//! (with its pid once known), the loop device, the mount — and is undone in the only order
//! that works: the filesystem unmounted, the loop device detached, the FUSE mount
//! unmounted (the daemon then finishes its log and exits), the directory removed. So
//! `fsarena cleanup` after a `kill -9` ([`crate::state::stop_recorder`]) leaves nothing.

pub mod check;
pub mod daemon;
pub mod log;
pub mod states;
pub mod trace;

use super::fs::FsType;
use super::{loopdev, mount};
use crate::cmd;
use crate::owned::{self, Removal, MARKER};
use crate::state::{self, Resource, State};
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::BufRead;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the daemon may take to mount, and to finish its log once unmounted.
const DAEMON_TIMEOUT: Duration = Duration::from_secs(30);

/// What a recorded twin of a target is made of (the target's own filesystem and options).
pub struct Twin {
    pub fs: FsType,
    /// The user's mkfs options, as the target keeps them (fsarena's own come with `fs`).
    pub mkfs_opts: Vec<String>,
    /// The mount options the target was asked for.
    pub mount_opts: String,
    pub image_dir: PathBuf,
    pub state: Arc<State>,
    /// The target's name (the recording's directory is named after it).
    pub name: String,
}

/// The files a finished recording leaves in its directory.
#[derive(Debug)]
pub struct Recorded {
    pub dir: PathBuf,
    /// The image as mkfs left it, before anything was mounted.
    pub base: PathBuf,
    /// The image as the recorder left it.
    pub live: PathBuf,
    /// The write log ([`log::Log::open`]).
    pub log: PathBuf,
    /// What the block layer saw of the loop device while it recorded ([`trace`]), or why
    /// it was not seen.
    pub trace: std::result::Result<trace::Trace, String>,
}

impl Recorded {
    /// Removes the directory and its state record.
    pub fn remove(self, state: &State) -> Result<()> {
        let r = Resource::Dir { path: self.dir };
        state::undo(&r)?;
        state.remove(&r)
    }
}

/// A live recording: the daemon serving, the loop device attached, the filesystem mounted.
/// Dropped, it tears down whatever is up and removes its directory.
pub struct Recording {
    state: Arc<State>,
    files: Recorded,
    /// The FUSE mount point (`<dir>/fuse`).
    fuse: PathBuf,
    /// The filesystem's mount point (`<dir>/mnt`).
    mnt: PathBuf,
    mounted: bool,
    device: Option<String>,
    /// Whether the loop device runs with direct I/O.
    direct_io: bool,
    daemon: Option<Child>,
    /// The daemon's current record in the state file.
    recorder: Option<Resource>,
    /// Whether the directory is still this recording's to remove.
    owns_dir: bool,
    /// The block trace of the loop device, or why there is none.
    tracer: std::result::Result<trace::Tracer, String>,
}

/// Distinguishes the recordings of one process.
static SEQ: AtomicU32 = AtomicU32::new(0);

impl Recording {
    /// Makes a recorded twin of `size_bytes` (see the module docs) with the daemon run by
    /// this very binary.
    pub fn start(twin: &Twin, size_bytes: u64) -> Result<Recording> {
        let exe = std::env::current_exe().context("finding fsarena's own binary")?;
        Self::start_with(twin, size_bytes, &exe)
    }

    /// [`Self::start`] with the daemon run by `program` (the `fsarena` binary; tests run
    /// from another).
    pub fn start_with(twin: &Twin, size_bytes: u64, program: &Path) -> Result<Recording> {
        if !crate::probe::sys::is_root() {
            bail!("a recorded target needs root (loop devices, mount)");
        }
        if !Path::new("/dev/fuse").exists() {
            bail!("a recorded target needs FUSE, and /dev/fuse is missing (`modprobe fuse`)");
        }
        state::ensure_owned_dir(&twin.image_dir)?;
        let dir = twin.image_dir.join(format!(
            "{}-recorded-{}-{}",
            twin.name,
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed) + 1
        ));
        let record = Resource::Dir { path: dir.clone() };
        twin.state.add(record.clone())?;
        if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            // Not made here, so not ours to remove.
            let _ = twin.state.remove(&record);
            return Err(e).with_context(|| format!("creating {}", dir.display()));
        }
        let mut rec = Recording {
            state: Arc::clone(&twin.state),
            files: Recorded {
                base: dir.join("base.img"),
                live: dir.join("live.img"),
                log: dir.join("writes.log"),
                dir: dir.clone(),
                trace: Err("the recording has not finished".into()),
            },
            fuse: dir.join("fuse"),
            mnt: dir.join("mnt"),
            mounted: false,
            device: None,
            direct_io: false,
            daemon: None,
            recorder: None,
            owns_dir: true,
            tracer: Err("no loop device yet".into()),
        };
        std::fs::write(dir.join(MARKER), b"fsarena recorded target\n")
            .with_context(|| format!("writing the marker in {}", dir.display()))?;
        rec.make_images(twin, size_bytes)?;
        rec.start_daemon(program)?;
        rec.attach_and_mount(twin)?;
        Ok(rec)
    }

    /// `base.img` made by mkfs, and `live.img` a sparse copy of it.
    fn make_images(&self, twin: &Twin, size_bytes: u64) -> Result<()> {
        let f = &self.files;
        let base = loopdev::create_image(&f.base)
            .with_context(|| format!("creating {}", f.base.display()))?;
        base.set_len(size_bytes)
            .with_context(|| format!("sizing {}", f.base.display()))?;
        // mkfs on the very file created, whatever its name leads to by now.
        let (inherited, path) = loopdev::for_child(&base)?;
        let made = cmd::run_stoppable(&twin.fs.mkfs_argv(&path, &twin.mkfs_opts));
        drop(inherited);
        made.context("mkfs of the recorded image failed")?;
        let live = loopdev::create_image(&f.live)
            .with_context(|| format!("creating {}", f.live.display()))?;
        sparse_copy(&base, &live, size_bytes)
            .with_context(|| format!("copying {} to {}", f.base.display(), f.live.display()))
    }

    /// Starts the daemon over `live.img` (recorded in the state file first) and waits
    /// until its mount serves.
    fn start_daemon(&mut self, program: &Path) -> Result<()> {
        let f = &self.files;
        let live = File::options()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&f.live)
            .with_context(|| format!("opening {}", f.live.display()))?;
        let log = loopdev::create_image(&f.log)
            .with_context(|| format!("creating {}", f.log.display()))?;
        let errors_path = f.dir.join("daemon.log");
        let errors = loopdev::create_image(&errors_path)
            .with_context(|| format!("creating {}", errors_path.display()))?;
        drop(mount::make_mount_point(&self.fuse)?);
        let (live_fd, live_path) = loopdev::for_child(&live)?;
        let (log_fd, log_path) = loopdev::for_child(&log)?;
        let record = Resource::Recorder {
            mountpoint: self.fuse.clone(),
            pid: None,
        };
        self.state.add(record.clone())?;
        self.recorder = Some(record);
        let argv = daemon::args(&live_path, &log_path, &self.fuse);
        cmd::record(&format!("{} {}", program.display(), argv.join(" ")));
        let spawned = Command::new(program)
            .args(&argv)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(errors)
            // Its own process group: a Ctrl-C must not stop it before the filesystem
            // above it is unmounted.
            .process_group(0)
            .spawn();
        drop((live_fd, log_fd));
        let mut child =
            spawned.with_context(|| format!("starting the recorder {}", program.display()))?;
        let stdout = child.stdout.take().context("the recorder's stdout")?;
        let pid = child.id() as i32;
        self.daemon = Some(child);
        // The record gains the pid: the new one is written before the old one goes.
        let with_pid = Resource::Recorder {
            mountpoint: self.fuse.clone(),
            pid: Some(pid),
        };
        self.state.add(with_pid.clone())?;
        if let Some(old) = self.recorder.replace(with_pid) {
            self.state.remove(&old)?;
        }
        self.wait_ready(stdout, &errors_path)?;
        if !state::is_mounted(&self.fuse) {
            bail!(
                "the recorder said it was ready but nothing is mounted at {}",
                self.fuse.display()
            );
        }
        Ok(())
    }

    /// Waits for the daemon's ready line; fails with its errors when it exits first or
    /// takes longer than [`DAEMON_TIMEOUT`].
    fn wait_ready(&mut self, stdout: std::process::ChildStdout, errors: &Path) -> Result<()> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let t = Instant::now();
        loop {
            crate::signals::check_stop()?;
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(line) if line.trim() == daemon::READY => return Ok(()),
                Ok(_) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    // Something else said, or standard output closed: not a recorder
                    // that will serve.
                    let status = self.daemon.as_mut().map(|c| {
                        let _ = c.kill();
                        c.wait()
                    });
                    bail!(
                        "the recorder did not start ({}): {}",
                        match status {
                            Some(Ok(s)) => s.to_string(),
                            _ => "gone".into(),
                        },
                        tail(errors)
                    );
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
            if t.elapsed() > DAEMON_TIMEOUT {
                bail!(
                    "the recorder did not mount {} within {} s: {}",
                    self.fuse.display(),
                    DAEMON_TIMEOUT.as_secs(),
                    tail(errors)
                );
            }
        }
    }

    /// Attaches a loop device to `fuse/disk` and mounts the filesystem at `mnt`.
    fn attach_and_mount(&mut self, twin: &Twin) -> Result<()> {
        let disk = self.fuse.join(daemon::DISK);
        let f = File::options()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&disk)
            .with_context(|| format!("opening {}", disk.display()))?;
        let attached = loopdev::attach(&f, &disk)?;
        self.device = Some(attached.device.clone());
        self.direct_io = attached.direct_io;
        self.state.add(Resource::Loop {
            device: attached.device.clone(),
            image: disk,
        })?;
        drop(f);
        // Before the mount: every write and flush of the filesystem is traced.
        self.tracer =
            trace::Tracer::start(&self.state, &attached.device).map_err(|e| format!("{e:#}"));
        mount::mount(
            &self.state,
            twin.fs.mount_type(),
            &attached.device,
            &self.mnt,
            &twin.mount_opts,
        )?;
        self.mounted = true;
        Ok(())
    }

    /// Where the workload writes: the recorded filesystem's mount point.
    pub fn mountpoint(&self) -> &Path {
        &self.mnt
    }

    /// Whether the loop device over the daemon's `disk` runs with direct I/O (the host
    /// caches nothing of the image either way: the daemon's files are `FOPEN_DIRECT_IO`).
    pub fn loop_direct_io(&self) -> bool {
        self.direct_io
    }

    /// The file that reads as the log's position ([`Self::position`]), for a workload
    /// that reads it itself.
    pub fn position_file(&self) -> PathBuf {
        self.fuse.join(daemon::POSITION)
    }

    /// How many records the log holds now: read after an `fsync` returned, everything
    /// before this position reached the disk before the promise.
    pub fn position(&self) -> Result<u64> {
        let path = self.position_file();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        text.trim()
            .parse()
            .with_context(|| format!("{} holds {text:?}, not a number", path.display()))
    }

    /// Unmounts the filesystem, detaches the loop device, unmounts the FUSE mount, waits
    /// for the daemon to exit (successfully: its log is complete) and returns the files.
    pub fn finish(mut self) -> Result<Recorded> {
        // The trace stops once the filesystem is unmounted, before the loop device is
        // detached: another run may attach the same device number right after.
        let mut failed = Vec::new();
        if self.mounted {
            match mount::unmount(&self.state, &self.mnt) {
                Ok(_) => self.mounted = false,
                Err(e) => failed.push(format!("{e:#}")),
            }
        }
        let traced = std::mem::replace(&mut self.tracer, Err(String::new()));
        let trace = traced.and_then(|t| t.finish().map_err(|e| format!("{e:#}")));
        failed.extend(self.unmount_and_detach());
        if let Err(e) = self.stop_daemon() {
            failed.push(format!("{e:#}"));
        }
        if !failed.is_empty() {
            bail!("{}", failed.join("; "));
        }
        self.owns_dir = false;
        Ok(Recorded {
            dir: self.files.dir.clone(),
            base: self.files.base.clone(),
            live: self.files.live.clone(),
            log: self.files.log.clone(),
            trace,
        })
    }

    /// Unmounts the filesystem and detaches the loop device; what failed, said.
    fn unmount_and_detach(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        if self.mounted {
            match mount::unmount(&self.state, &self.mnt) {
                Ok(_) => self.mounted = false,
                Err(e) => failed.push(format!("{e:#}")),
            }
        }
        if let Some(device) = self.device.take() {
            let r = Resource::Loop {
                device,
                image: self.fuse.join(daemon::DISK),
            };
            match state::undo(&r) {
                Ok(_) => {
                    let _ = self.state.remove(&r);
                }
                Err(e) => failed.push(format!("{e:#}")),
            }
        }
        failed
    }

    /// Unmounts the FUSE mount and waits for the daemon (killed after
    /// [`DAEMON_TIMEOUT`]); fails unless it exited successfully.
    fn stop_daemon(&mut self) -> Result<()> {
        let Some(record) = self.recorder.take() else {
            return Ok(());
        };
        if state::is_mounted(&self.fuse) {
            if let Err(e) = state::umount(&self.fuse) {
                self.recorder = Some(record);
                return Err(e);
            }
        } else if let Some(child) = self.daemon.as_mut() {
            // Never mounted (it failed or timed out starting): nothing to finish.
            let _ = child.kill();
        }
        let status = match self.daemon.take() {
            Some(mut child) => {
                let t = Instant::now();
                loop {
                    if let Some(s) = child.try_wait().context("waiting for the recorder")? {
                        break Some(s);
                    }
                    if t.elapsed() > DAEMON_TIMEOUT {
                        let _ = child.kill();
                        let _ = child.wait();
                        break None;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            None => None,
        };
        let _ = owned::remove(&self.fuse, Removal::EmptyDir);
        self.state.remove(&record)?;
        match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => bail!(
                "the recorder failed ({s}), its log is not to be trusted: {}",
                tail(&self.files.dir.join("daemon.log"))
            ),
            None => bail!(
                "the recorder did not end within {} s of its unmount and was killed",
                DAEMON_TIMEOUT.as_secs()
            ),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = self.unmount_and_detach();
        if self.stop_daemon().is_err() {
            // Whatever the daemon left (a mount that would not go): cleanup's way.
            if let Some(r) = self.recorder.take() {
                if state::undo(&r).is_ok() {
                    let _ = self.state.remove(&r);
                }
            }
        }
        if self.owns_dir {
            let r = Resource::Dir {
                path: self.files.dir.clone(),
            };
            if state::undo(&r).is_ok() {
                let _ = self.state.remove(&r);
            }
        }
    }
}

/// The last lines of the daemon's error output, for an error message.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let last = lines[lines.len().saturating_sub(10)..].join("\n");
    if last.is_empty() {
        format!("{} is empty", path.display())
    } else {
        last
    }
}

/// Copies the first `len` bytes of `from` into the empty file `to`, data only: holes
/// (`SEEK_DATA`/`SEEK_HOLE`) stay holes, so a copy of a fresh filesystem takes the space
/// mkfs wrote, not the image's size.
pub fn sparse_copy(from: &File, to: &File, len: u64) -> Result<()> {
    to.set_len(len).context("sizing the copy")?;
    let seek = |at: u64, whence: libc::c_int| -> std::io::Result<Option<u64>> {
        // SAFETY: lseek(2) on an open descriptor.
        let r = unsafe { libc::lseek(from.as_raw_fd(), at as libc::off_t, whence) };
        if r >= 0 {
            return Ok(Some(r as u64));
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        }
    };
    let mut at = 0;
    while at < len {
        let Some(data) = seek(at, libc::SEEK_DATA).context("SEEK_DATA")? else {
            break;
        };
        if data >= len {
            break;
        }
        let end = seek(data, libc::SEEK_HOLE)
            .context("SEEK_HOLE")?
            .unwrap_or(len)
            .min(len);
        loopdev::copy_range(from, to, data, end)?;
        at = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
