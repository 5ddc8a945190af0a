//! The state file: every mount, loop device, image and work directory a run creates is
//! recorded here *before* it is created and removed after it is gone, so that
//! `fsarena cleanup` can undo what a `kill -9` or a power cut left behind.
//!
//! One JSON file per run in `<image-dir>/state/`, rewritten atomically (write + rename),
//! mode 0600 in a directory of mode 0700.
//!
//! `cleanup` undoes as root what a state file names, so it believes only files nobody
//! else could have written: a state directory and state files owned by root (by the user
//! running it, when not root) and not writable by group or others, and of what they name,
//! only mounts, loop devices and images under the image directory. Anything else is
//! ignored and said.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::owned::{self, Removal};
pub use crate::owned::{ensure_owned_dir, is_owned, MARKER};

/// Something a run created that must be undone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Resource {
    /// A filesystem mounted at `path` (a directory fsarena created).
    Mount { path: PathBuf },
    /// A loop device attached to `image`.
    Loop { device: String, image: PathBuf },
    /// An image file fsarena created.
    Image { path: PathBuf },
    /// A directory fsarena created (carries [`MARKER`]).
    Dir { path: PathBuf },
    /// The QEMU process of a guest (`run --kernel`), whose pid QEMU writes to `pidfile`
    /// (and removes when it exits).
    Guest { pidfile: PathBuf },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StateData {
    pid: u32,
    run_id: String,
    resources: Vec<Resource>,
}

/// The live state file of a run.
pub struct State {
    path: PathBuf,
    data: Mutex<StateData>,
    /// `<run>.lock` beside the state file, held with an exclusive `flock` for the run's
    /// whole life: how `cleanup`, `--resume` and other runs tell a live run from a dead
    /// one, whatever the binary is called (the lock goes with the process, also on
    /// `kill -9`).
    _lock: std::fs::File,
    /// The first failure to rewrite the file after something was undone, if any.
    stale: Mutex<Option<String>>,
}

/// The lock file of run `run_id`'s state file `state_file`.
fn lock_path(state_file: &Path) -> PathBuf {
    state_file.with_extension("lock")
}

/// Takes the run's lock without waiting; fails, naming the run, when a live process holds
/// it (another `--resume` of the same run).
fn take_lock(path: &Path, run_id: &str) -> Result<std::fs::File> {
    // The file locked must still be the one at `path` (a run that just ended unlinks its
    // own): otherwise lock the new one.
    for _ in 0..10 {
        let f = lock_once(path, run_id)?;
        let held = f.metadata().map(|m| (m.dev(), m.ino())).ok();
        let named = std::fs::symlink_metadata(path)
            .map(|m| (m.dev(), m.ino()))
            .ok();
        if held.is_some() && held == named {
            return Ok(f);
        }
    }
    anyhow::bail!(
        "{}: kept changing while it was being locked",
        path.display()
    )
}

fn lock_once(path: &Path, run_id: &str) -> Result<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    // SAFETY: flock(2) on a descriptor this function owns.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Err(crate::error::usage(format!(
                "run {run_id} is live in another process (it holds {}): wait for it or stop \
                 it first",
                path.display()
            )));
        }
        return Err(e).with_context(|| format!("locking {}", path.display()));
    }
    Ok(f)
}

/// Removes the lock file of a dead run, taken first so that no process holds it: a
/// process of the same run that opened it meanwhile then locks the unlinked file, sees it
/// is no longer the one at its path and makes a new one ([`take_lock`]). Left when held.
fn remove_stale_lock(path: &Path) {
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
    else {
        return;
    };
    // SAFETY: flock(2) on a descriptor owned here; the lock goes with it.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        owned::remove(path, Removal::File).ok();
    }
}

/// Whether the run whose state file is `state_file` is alive: some process holds its lock.
/// A state file without a lock file (written by an older fsarena) is judged by its pid.
pub fn run_is_live(state_file: &Path, pid: u32) -> bool {
    let lock = lock_path(state_file);
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&lock)
    else {
        return !lock.exists() && pid_is_live_fsarena(pid);
    };
    // SAFETY: flock(2) on a descriptor owned here; a shared lock taken is dropped with it.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

impl State {
    /// Starts the state file of run `run_id` in `state_dir`.
    pub fn create(state_dir: &Path, run_id: &str) -> Result<Self> {
        if let Some(parent) = state_dir.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(state_dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(e).with_context(|| format!("creating {}", state_dir.display()))
            }
            _ => {}
        }
        ensure_owned_dir(state_dir)?;
        let path = state_dir.join(format!("{run_id}.json"));
        // Locked before the state file is written: a second process of the same run must
        // not overwrite the first one's record.
        let lock = take_lock(&lock_path(&path), run_id)?;
        let s = Self {
            path,
            data: Mutex::new(StateData {
                pid: std::process::id(),
                run_id: run_id.to_string(),
                resources: Vec::new(),
            }),
            _lock: lock,
            stale: Mutex::new(None),
        };
        s.save()?;
        Ok(s)
    }

    fn save(&self) -> Result<()> {
        let data = self.data.lock().unwrap_or_else(|e| e.into_inner());
        let tmp = self.path.with_extension("json.tmp");
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .and_then(|mut f| {
                // Also when a crash left the file with another mode.
                f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
                f.write_all(&serde_json::to_vec_pretty(&*data)?)
            })
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &self.path).with_context(|| format!("renaming {}", tmp.display()))?;
        Ok(())
    }

    /// Records `r` before it is created.
    pub fn add(&self, r: Resource) -> Result<()> {
        self.data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resources
            .push(r);
        self.save()
    }

    /// Forgets `r` after it was undone. Failing to rewrite the file (a full or failing
    /// disk) never stops a teardown: the record is only stale (it names something already
    /// undone, which `cleanup` skips), the next rewrite or [`Self::finish`] heals it, and
    /// [`Self::finish`] reports the failure.
    pub fn remove(&self, r: &Resource) -> Result<()> {
        self.data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resources
            .retain(|x| x != r);
        if let Err(e) = self.save() {
            let mut stale = self.stale.lock().unwrap_or_else(|e| e.into_inner());
            stale.get_or_insert_with(|| format!("{e:#}"));
        }
        Ok(())
    }

    /// Where the run's trial logs go: `logs/<run id>/` beside the state directory
    /// (`<image-dir>/logs/<run id>/`). Logs are results, not resources: `cleanup` keeps them.
    pub fn log_dir(&self) -> PathBuf {
        let state_dir = self.path.parent().unwrap_or(Path::new("."));
        let base = state_dir.parent().unwrap_or(state_dir);
        let run_id = &self
            .data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .run_id
            .clone();
        base.join("logs").join(run_id)
    }

    /// Deletes the state file when everything was undone.
    pub fn finish(&self) -> Result<()> {
        let left = self
            .data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resources
            .len();
        if left == 0 {
            owned::remove(&self.path, Removal::File).ok();
            owned::remove(&self.path.with_extension("json.tmp"), Removal::File).ok();
            owned::remove(&lock_path(&self.path), Removal::File).ok();
            return Ok(());
        }
        let stale = self.stale.lock().unwrap_or_else(|e| e.into_inner()).take();
        match stale {
            Some(why) => anyhow::bail!(
                "{left} resource(s) of this run are still recorded in {} and the record \
                 could not be rewritten ({why}); run `fsarena cleanup`",
                self.path.display()
            ),
            None => Ok(()),
        }
    }
}

/// Whether `dev` (e.g. `/dev/loop3`) is attached to `image`.
fn loop_backs(dev: &str, image: &Path) -> bool {
    backing_file(dev).is_some_and(|b| b == image)
}

/// The backing file of a loop device, without the " (deleted)" the kernel appends once the
/// file was unlinked while attached.
fn backing_file(dev: &str) -> Option<PathBuf> {
    let name = dev.trim_start_matches("/dev/");
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let text = text.trim_end_matches('\n');
    Some(PathBuf::from(
        text.strip_suffix(" (deleted)").unwrap_or(text),
    ))
}

/// Every attached loop device with its backing file.
fn attached_loops() -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("loop"))
        .map(|n| format!("/dev/{n}"))
        .filter_map(|d| backing_file(&d).map(|b| (d, b)))
        .collect()
}

/// Detaches `dev` from `image` and waits until it is really gone. `losetup -d` on a device
/// that someone still holds open (udev's blkid probing it after a write, for one) only marks
/// it for autoclear and returns at once; the detach happens when the last opener closes it.
/// Retries `losetup -d` while waiting, for up to 10 s.
pub fn detach_loop(dev: &str, image: &Path) -> Result<()> {
    for attempt in 0..200 {
        if !loop_backs(dev, image) {
            return Ok(());
        }
        if attempt % 20 == 0 {
            if let Err(e) = crate::cmd::run(&["losetup", "-d", dev]) {
                if !loop_backs(dev, image) {
                    return Ok(());
                }
                if attempt >= 180 {
                    return Err(e);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    anyhow::bail!("{dev} is still attached to {} after 10 s", image.display())
}

/// Loop devices whose backing file is `image`.
pub fn loops_backing(image: &Path) -> Vec<String> {
    attached_loops()
        .into_iter()
        .filter(|(d, b)| b == image && backs_here(d, image))
        .map(|(d, _)| d)
        .collect()
}

/// Whether loop device `dev` is attached to the very file `image` names in this host's
/// view (same device and inode). The kernel reports a backing file by the path its
/// attacher saw: hosts that share one kernel (containers, namespaces) see the same path
/// name different files, and another host's image must not be detached from here.
fn backs_here(dev: &str, image: &Path) -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(image)
        .is_ok_and(|f| crate::provision::loopdev::backs(dev, &f))
}

/// Whether `path` is a mount point now (per /proc/self/mountinfo).
pub fn is_mounted(path: &Path) -> bool {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let want = path.to_string_lossy();
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .any(|m| unescape_mount_path(m) == want)
}

/// Undoes `octal escapes (\040 for space) of /proc mount paths.
pub fn unescape_mount_path(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Unmounts `path` with one `umount` and no retry, for an unmount that is timed: a wait
/// between retries would be counted as the filesystem's. Returns seconds taken.
pub fn umount_once(path: &Path) -> Result<f64> {
    let p = path.to_string_lossy().to_string();
    crate::cmd::run(&["umount", &p])
        .map(|out| out.seconds)
        .with_context(|| format!("the timed umount of {p} (not retried, so no wait is timed)"))
}

/// Unmounts `path`, retrying while busy, lazily as a last resort. Returns seconds taken.
pub fn umount(path: &Path) -> Result<f64> {
    let p = path.to_string_lossy().to_string();
    let mut last = None;
    for attempt in 0..5 {
        match crate::cmd::run(&["umount", &p]) {
            Ok(out) => return Ok(out.seconds),
            Err(e) => {
                if !is_mounted(path) {
                    return Ok(0.0);
                }
                last = Some(e);
                std::thread::sleep(std::time::Duration::from_millis(200 << attempt));
            }
        }
    }
    crate::cmd::run(&["umount", "-l", &p])
        .map(|o| o.seconds)
        .map_err(|e| last.unwrap_or(e))
}

/// Undoes one resource; `Ok(true)` when something was done.
pub fn undo(r: &Resource) -> Result<bool> {
    match r {
        Resource::Mount { path } => {
            if is_mounted(path) {
                umount(path)?;
                let _ = owned::remove(path, Removal::EmptyDir);
                return Ok(true);
            }
            Ok(owned::remove(path, Removal::EmptyDir).unwrap_or(false))
        }
        Resource::Loop { device, image } => {
            if loop_backs(device, image) {
                detach_loop(device, image)?;
                return Ok(true);
            }
            Ok(false)
        }
        Resource::Image { path } => {
            // A run killed between losetup and recording the device leaves an attached
            // loop device that only the image names: detach it first.
            for dev in loops_backing(path) {
                detach_loop(&dev, path)?;
            }
            owned::remove(path, Removal::File)
        }
        Resource::Dir { path } => owned::remove(path, Removal::Tree),
        Resource::Guest { pidfile } => stop_guest(pidfile),
    }
}

/// Stops the QEMU whose pid is in `pidfile` (only a live process whose command line names
/// that very pidfile), waiting up to 10 s for it to go; `Ok(true)` when one was stopped.
pub fn stop_guest(pidfile: &Path) -> Result<bool> {
    let Ok(text) = std::fs::read_to_string(pidfile) else {
        return Ok(false);
    };
    let Ok(pid) = text.trim().parse::<i32>() else {
        return Ok(false);
    };
    let ours = |pid: i32| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            let want = pidfile.as_os_str().as_encoded_bytes();
            c.split(|&b| b == 0).any(|arg| arg == want)
        })
    };
    if pid <= 1 || !ours(pid) {
        let _ = std::fs::remove_file(pidfile);
        return Ok(false);
    }
    for (signal, wait) in [(libc::SIGTERM, 50), (libc::SIGKILL, 50)] {
        // SAFETY: kill(2) on a pid just checked to be this guest's QEMU.
        unsafe { libc::kill(pid, signal) };
        for _ in 0..wait {
            if !ours(pid) {
                let _ = std::fs::remove_file(pidfile);
                return Ok(true);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    anyhow::bail!("QEMU (pid {pid}) of {} did not stop", pidfile.display())
}

fn pid_is_live_fsarena(pid: u32) -> bool {
    pid != std::process::id()
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim() == "fsarena")
            .unwrap_or(false)
}

/// Undoes everything recorded in the state files of `<image_dir>/state` whose run is no
/// longer alive, then [`sweep`]s `image_dir`. Returns one line per action taken (or
/// refused or ignored). Idempotent.
pub fn cleanup(image_dir: &Path) -> Result<Vec<String>> {
    let dir = image_dir
        .canonicalize()
        .unwrap_or_else(|_| image_dir.to_path_buf());
    let (mut lines, live) = replay_state_files(&dir, None);
    lines.extend(sweep(image_dir, &live));
    Ok(lines)
}

/// Undoes what run `run_id` recorded in `image_dir` when it is no longer alive (as
/// [`cleanup`] does for every run, without the sweep): what an MPI rank's guardian does
/// when its rank is gone.
pub fn cleanup_run(image_dir: &Path, run_id: &str) -> Vec<String> {
    let dir = image_dir
        .canonicalize()
        .unwrap_or_else(|_| image_dir.to_path_buf());
    replay_state_files(&dir, Some(run_id)).0
}

/// Why `meta` (from `lstat` or `fstat`) is not to be believed by user `me`: a symlink,
/// an owner other than `me` and root, or writable by group or others.
fn untrusted(meta: &std::fs::Metadata, me: u32) -> Option<String> {
    if meta.file_type().is_symlink() {
        return Some("it is a symbolic link".into());
    }
    if meta.uid() != me && meta.uid() != 0 {
        return Some(format!("it is owned by uid {}, another user", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "it is writable by group or others (mode {:o})",
            meta.mode() & 0o7777
        ));
    }
    None
}

/// Reads the state file `path` when it is a regular file [`untrusted`] finds nothing
/// against (checked on the descriptor read, so a swap after the check does not count).
fn read_trusted(path: &Path, me: u32) -> std::result::Result<StateData, String> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot open it: {e}"))?;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if let Some(why) = untrusted(&meta, me) {
        return Err(why);
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| format!("unreadable: {e}"))
}

/// Why `r`, read from a state file, is not for cleanup to undo: a mount, loop device or
/// image not under `image_dir` (or spelled with `..`), or a loop device not named
/// `/dev/loopN`. Directories are left to [`owned::remove`], which deletes only inside a
/// directory carrying fsarena's marker (`--dir` work directories lie elsewhere).
fn outside(r: &Resource, image_dir: &Path) -> Option<String> {
    let under = |p: &Path| {
        p.is_absolute()
            && !p.components().any(|c| c == Component::ParentDir)
            && p.starts_with(image_dir)
            && p != image_dir
    };
    let path = match r {
        Resource::Mount { path } | Resource::Image { path } => path,
        Resource::Guest { pidfile } => pidfile,
        Resource::Loop { device, image } => {
            let n = device.strip_prefix("/dev/loop").unwrap_or("");
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return Some(format!("{device} is not a loop device"));
            }
            image
        }
        Resource::Dir { .. } => return None,
    };
    (!under(path)).then(|| {
        format!(
            "{} is not under the image directory {}",
            path.display(),
            image_dir.display()
        )
    })
}

/// Replays the state files of dead runs in `<image_dir>/state`; returns the lines and the
/// ids of live runs.
fn replay_state_files(image_dir: &Path, only: Option<&str>) -> (Vec<String>, Vec<String>) {
    let state_dir = image_dir.join("state");
    let mut lines = Vec::new();
    let mut live = Vec::new();
    let Ok(entries) = std::fs::read_dir(&state_dir) else {
        return (lines, live);
    };
    if !state_dir.join(MARKER).is_file() {
        lines.push(format!(
            "{} carries no {MARKER} marker: not fsarena's, nothing in it was touched",
            state_dir.display()
        ));
        return (lines, live);
    }
    let me = crate::probe::sys::euid();
    if let Some(why) = std::fs::symlink_metadata(&state_dir)
        .map_err(|e| e.to_string())
        .map_or_else(Some, |m| untrusted(&m, me))
    {
        lines.push(format!(
            "ignored the state directory {}: {why}; none of its files was read",
            state_dir.display()
        ));
        return (lines, live);
    }
    for entry in entries.flatten() {
        let path = entry.path();
        let ext = path.extension().and_then(|e| e.to_str());
        if ext == Some("lock") && !path.with_extension("json").exists() {
            // A run killed while it finished, between removing its state file and its lock.
            remove_stale_lock(&path);
        }
        if ext != Some("json") {
            continue;
        }
        // A run's own file, and its guests' when it ran some beside host targets.
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if only.is_some_and(|run| stem != run && stem.strip_prefix(run) != Some("-guests")) {
            continue;
        }
        let data = match read_trusted(&path, me) {
            Ok(d) => d,
            Err(why) => {
                lines.push(format!("ignored state file {}: {why}", path.display()));
                continue;
            }
        };
        if run_is_live(&path, data.pid) {
            live.push(data.run_id.clone());
            lines.push(format!(
                "run {} is still running (pid {}); left alone",
                data.run_id, data.pid
            ));
            continue;
        }
        let mut failed = false;
        for r in data.resources.iter().rev() {
            if let Some(why) = outside(r, image_dir) {
                failed = true;
                lines.push(format!(
                    "ignored {} named in {}: {why}",
                    describe(r),
                    path.display()
                ));
                continue;
            }
            match undo(r) {
                Ok(true) => lines.push(format!("undid {}", describe(r))),
                Ok(false) => {}
                Err(e) => {
                    failed = true;
                    lines.push(format!("could not undo {}: {e:#}", describe(r)));
                }
            }
        }
        lines.extend(kept_journals(image_dir, &data.run_id));
        if !failed {
            owned::remove(&path, Removal::File).ok();
            remove_stale_lock(&lock_path(&path));
            // A rewrite the run was killed in the middle of.
            owned::remove(&path.with_extension("json.tmp"), Removal::File).ok();
        }
    }
    (lines, live)
}

/// A line for each journal the dead run `run_id` left in `<image_dir>/journal` (a run
/// whose trials all reached the database removes its own; one killed keeps it): how to
/// store what it holds. Said once, when the run is cleaned up; journals are results and
/// are never deleted here.
fn kept_journals(image_dir: &Path, run_id: &str) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(image_dir.join("journal")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(run_id))
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|p| {
            format!(
                "kept journal {}: `fsarena import {}` stores any trial of it the database \
                 lacks",
                p.display(),
                p.display()
            )
        })
        .collect()
}

/// After the state files were replayed: unmounts what is still mounted under
/// `<image_dir>/mnt` and detaches loop devices backed by images in `image_dir`, except those
/// of runs still alive (`live` run ids). This catches a `mount` or `losetup` that was still
/// running when fsarena was killed and finished after the state file was written.
pub fn sweep(image_dir: &Path, live: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    let Ok(dir) = image_dir.canonicalize() else {
        return lines;
    };
    if !dir.join(MARKER).is_file() {
        return lines;
    }
    let is_live = |p: &Path| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        live.iter().any(|id| name.starts_with(id.as_str()))
    };
    let mnt = dir.join("mnt");
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut mounts: Vec<PathBuf> = text
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(unescape_mount_path))
        .map(PathBuf::from)
        .filter(|m| m.starts_with(&mnt) && !is_live(m))
        .collect();
    mounts.sort_by_key(|m| std::cmp::Reverse(m.as_os_str().len()));
    for m in mounts {
        let r = Resource::Mount { path: m };
        match undo(&r) {
            Ok(_) => lines.push(format!("undid {} (not in a state file)", describe(&r))),
            Err(e) => lines.push(format!("could not undo {}: {e:#}", describe(&r))),
        }
    }
    for (device, image) in attached_loops() {
        if image.parent() == Some(dir.as_path()) && !is_live(&image) {
            if !backs_here(&device, &image) {
                lines.push(format!(
                    "left {device} alone: it backs a file named {}, but not the one of that \
                     name here (another host's, sharing this kernel?)",
                    image.display()
                ));
                continue;
            }
            let done = detach_loop(&device, &image);
            let r = Resource::Loop { device, image };
            match done {
                Ok(_) => lines.push(format!("undid {} (not in a state file)", describe(&r))),
                Err(e) => lines.push(format!("could not undo {}: {e:#}", describe(&r))),
            }
        }
    }
    lines
}

/// A one-line description of a resource.
pub fn describe(r: &Resource) -> String {
    match r {
        Resource::Mount { path } => format!("mount {}", path.display()),
        Resource::Loop { device, image } => format!("loop device {device} ({})", image.display()),
        Resource::Image { path } => format!("image {}", path.display()),
        Resource::Dir { path } => format!("directory {}", path.display()),
        Resource::Guest { pidfile } => format!("guest QEMU ({})", pidfile.display()),
    }
}

#[cfg(test)]
mod tests;
