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

mod cleanup;
mod scratch;
mod undo;

pub use scratch::ScratchDir;

use cleanup::pid_is_live_fsarena;
pub use cleanup::{cleanup, cleanup_run, remove_kept, sweep};
pub use undo::{
    detach_loop, is_mounted, loops_backing, postgres_pid, stop_guest, stop_postgres, stop_recorder,
    umount, umount_once, undo, unescape_mount_path,
};

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
    /// A PostgreSQL server a workload started (`pgbench`): its data directory, which the
    /// server's command line names and whose `postmaster.pid` holds its pid, the
    /// directory of its Unix socket (carries [`MARKER`]), and the server's pid once it
    /// started (recorded before it starts without one).
    Postgres {
        datadir: PathBuf,
        sockets: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<i32>,
    },
    /// The FUSE daemon of a recorded target (`fsarena record-serve`) and its mount at
    /// `mountpoint`, which the daemon's command line names; its pid once it started
    /// (recorded before it starts without one).
    Recorder {
        mountpoint: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<i32>,
    },
    /// A tracing instance of the kernel's tracing filesystem that traces a recorded
    /// target's loop device (`instances/NAME`, a name of
    /// [`crate::provision::recorded::trace::is_ours`]'s form).
    Trace { instance: String },
    /// A memory control group a database server ran in (`fsarena-mem-PID-N` under a
    /// memory hierarchy's mount point: [`crate::provision::memlimit::is_ours`]).
    Cgroup { path: PathBuf },
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

/// A one-line description of a resource.
pub fn describe(r: &Resource) -> String {
    match r {
        Resource::Mount { path } => format!("mount {}", path.display()),
        Resource::Loop { device, image } => format!("loop device {device} ({})", image.display()),
        Resource::Image { path } => format!("image {}", path.display()),
        Resource::Dir { path } => format!("directory {}", path.display()),
        Resource::Guest { pidfile } => format!("guest QEMU ({})", pidfile.display()),
        Resource::Postgres { datadir, .. } => {
            format!("PostgreSQL server (data directory {})", datadir.display())
        }
        Resource::Recorder { mountpoint, .. } => {
            format!("write recorder (FUSE mount {})", mountpoint.display())
        }
        Resource::Trace { instance } => format!("block trace (tracing instance {instance})"),
        Resource::Cgroup { path } => format!("memory control group {}", path.display()),
    }
}

#[cfg(test)]
mod tests;
