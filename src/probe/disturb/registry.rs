//! The machine-wide registry of live fsarena runs, so that runs with different
//! `--image-dir`s see each other.
//!
//! Each run publishes `<run>.<pid>.lock` in a registry directory and holds an exclusive
//! `flock` on it for its whole life (the lock goes with the process, also on `kill -9`).
//! A run is live exactly while its file is locked; an unlocked file (its run was killed)
//! is removed by the next run of the registry's own user that looks. The file holds the
//! run id, pid and image directory as JSON.
//!
//! * root uses `/run/fsarena` (made 0755, owned by root); another user
//!   `/run/user/UID/fsarena` inside that user's own runtime directory, or registers
//!   nowhere (said once) when it has none;
//! * readers look at `/run/fsarena` and every `/run/user/*/fsarena`;
//! * a registry directory is believed only when, as OpenSSH's StrictModes checks, it and
//!   every directory above it are owned by root or its user and not writable by group or
//!   others without the sticky bit ([`crate::probe::trust::untrusted`]), and it is no
//!   symlink; its entries are opened (`O_NOFOLLOW`, `O_NONBLOCK`) and removed relative to
//!   its descriptor, and believed only when they are regular files of that user;
//! * a file is written under a dot-name, locked, filled and only then renamed into place,
//!   so no reader ever sees a published file before its lock is held.

use crate::probe::trust::{untrusted, Entry};
pub use crate::result::LiveRun;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The registry directory of root's runs.
pub const ROOT_REGISTRY: &str = "/run/fsarena";
/// The directory of users' runtime directories (`$XDG_RUNTIME_DIR` is `/run/user/UID`).
const USER_RUNTIME: &str = "/run/user";

/// This process's entry, held locked until dropped (then removed).
pub struct Registration {
    path: PathBuf,
    file: std::fs::File,
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Only the file still ours by inode: never one published under the same name since.
        let held = self.file.metadata().map(|m| (m.dev(), m.ino())).ok();
        let named = std::fs::symlink_metadata(&self.path)
            .map(|m| (m.dev(), m.ino()))
            .ok();
        if held.is_some() && held == named {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The run id this process registered (its own and its MPI rank-mates' entries are not
/// "another run").
static OWN_RUN: OnceLock<String> = OnceLock::new();

/// Registers this process as a live run of `run_id` using `image_dir`. `Err` says why it
/// could not (other runs then cannot see this one).
pub fn register(run_id: &str, image_dir: &Path) -> Result<Registration, String> {
    let _ = OWN_RUN.set(run_id.to_string());
    let me = crate::probe::sys::euid();
    let dir = own_place(me)?;
    publish(&dir, run_id, image_dir)
}

/// Every live run registered on this machine except this process's own run.
pub fn other_live_runs() -> Vec<LiveRun> {
    let own = OWN_RUN.get();
    let me = std::process::id();
    let mut v: Vec<LiveRun> = places()
        .iter()
        .flat_map(|(dir, owner)| live_in(dir, *owner))
        .filter(|r| r.pid != me && Some(&r.run_id) != own)
        .collect();
    v.sort_by(|a, b| a.run_id.cmp(&b.run_id).then(a.pid.cmp(&b.pid)));
    v.dedup();
    v
}

/// This user's registry directory (made if missing and checked), also the place for what
/// holds machine-wide until the next boot (the guest's KVM check); `None` when it cannot
/// be had.
pub fn own_dir() -> Option<PathBuf> {
    own_place(crate::probe::sys::euid()).ok()
}

/// The registry directory for user `me`, made if missing and checked.
fn own_place(me: u32) -> Result<PathBuf, String> {
    let dir = if me == 0 {
        PathBuf::from(ROOT_REGISTRY)
    } else {
        let runtime = Path::new(USER_RUNTIME).join(me.to_string());
        if !runtime.is_dir() {
            return Err(format!(
                "{} (this user's runtime directory) does not exist",
                runtime.display()
            ));
        }
        runtime.join("fsarena")
    };
    match std::fs::DirBuilder::new().mode(0o755).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("creating {}: {e}", dir.display())),
    }
    trusted_dir(&dir, me).map_err(|why| format!("{}: {why}", dir.display()))?;
    Ok(dir)
}

/// The registry directories to read, each with the owner it must have.
fn places() -> Vec<(PathBuf, u32)> {
    let mut v = vec![(PathBuf::from(ROOT_REGISTRY), 0)];
    if let Ok(rd) = std::fs::read_dir(USER_RUNTIME) {
        for e in rd.flatten() {
            if let Some(uid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) {
                v.push((e.path().join("fsarena"), uid));
            }
        }
    }
    v
}

/// Why `dir` is not to be believed as a registry of user `owner`'s runs, if it is not.
pub fn trusted_dir(dir: &Path, owner: u32) -> Result<(), String> {
    let m = std::fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
    if !m.is_dir() {
        return Err("not a directory (or a symlink)".into());
    }
    if m.uid() != owner {
        return Err(format!("owned by uid {}, not {owner}", m.uid()));
    }
    let lstat = |p: &Path| Entry::of(p).ok();
    match untrusted(dir, dir, owner, &lstat) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// Writes, locks and publishes this process's entry in `dir`.
pub fn publish(dir: &Path, run_id: &str, image_dir: &Path) -> Result<Registration, String> {
    let pid = std::process::id();
    let name = format!("{run_id}.{pid}.lock");
    let tmp = dir.join(format!(".{name}"));
    let path = dir.join(&name);
    let _ = std::fs::remove_file(&tmp); // ours by name: a pid of this run left it
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)
        .map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    // SAFETY: flock(2) on a descriptor owned here.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("locking {}: {e}", tmp.display()));
    }
    let entry = LiveRun {
        run_id: run_id.to_string(),
        pid,
        image_dir: image_dir.display().to_string(),
    };
    let text = serde_json::to_vec(&entry).unwrap_or_default();
    let written = file
        .write_all(&text)
        .and_then(|_| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("publishing {}: {e}", path.display()));
    }
    Ok(Registration { path, file })
}

/// The live runs registered in `dir` (when it is a trusted registry of `owner`). Unlocked
/// files of dead runs are removed from this user's own registry. Entries are read and
/// removed relative to the directory's descriptor, opened without following a symlink, so
/// that a directory swapped meanwhile by its owner leads nowhere else.
pub fn live_in(dir: &Path, owner: u32) -> Vec<LiveRun> {
    if trusted_dir(dir, owner).is_err() {
        return Vec::new();
    }
    let Some(dir_fd) = open_dir(dir, owner) else {
        return Vec::new();
    };
    let listed = std::fs::read_dir(format!("/proc/self/fd/{}", dir_fd.as_raw_fd()));
    let Ok(rd) = listed else {
        return Vec::new();
    };
    let mine = owner == crate::probe::sys::euid();
    let mut v = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') || !name.ends_with(".lock") {
            continue;
        }
        match read_live(&dir_fd, name, owner) {
            Some(Ok(run)) => v.push(run),
            Some(Err(dead)) if mine => remove_dead(&dir_fd, name, dead),
            _ => {}
        }
    }
    v
}

/// `dir`, opened without following a symlink, when it is a directory of `owner` that
/// group and others cannot write.
fn open_dir(dir: &Path, owner: u32) -> Option<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir)
        .ok()?;
    let m = f.metadata().ok()?;
    (m.is_dir() && m.uid() == owner && m.mode() & 0o022 == 0).then_some(f)
}

/// `name` in the directory `dir`, opened for reading, never through a symlink and without
/// blocking on a FIFO.
fn open_at(dir: &std::fs::File, name: &str) -> Option<std::fs::File> {
    use std::os::fd::FromRawFd;
    let c = std::ffi::CString::new(name).ok()?;
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    // SAFETY: openat with a descriptor owned by `dir` and a NUL-terminated name.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags) };
    // SAFETY: a descriptor just returned by openat, owned by nothing else.
    (fd >= 0).then(|| unsafe { std::fs::File::from_raw_fd(fd) })
}

/// `Ok` with the run when the entry `name` of `dir` is locked (live), `Err` with the open
/// file when it is not (dead), `None` when it cannot be read or is not to be believed.
fn read_live(
    dir: &std::fs::File,
    name: &str,
    owner: u32,
) -> Option<Result<LiveRun, std::fs::File>> {
    let f = open_at(dir, name)?;
    let m = f.metadata().ok()?;
    if !m.is_file() || m.uid() != owner || m.mode() & 0o022 != 0 {
        return None;
    }
    // SAFETY: flock(2) on a descriptor owned here; the lock goes with it.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0 {
        return Some(Err(f));
    }
    let mut text = String::new();
    (&f).take(4096).read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok().map(Ok)
}

/// Removes the dead entry `name` of `dir` whose file `held` this process has locked, when
/// the name still means that file (a new entry is never published under a dead one's name).
fn remove_dead(dir: &std::fs::File, name: &str, held: std::fs::File) {
    let Ok(c) = std::ffi::CString::new(name) else {
        return;
    };
    let Ok(ours) = held.metadata() else { return };
    // SAFETY: an all-zero `stat` is valid; fstatat fills it from a NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let flags = libc::AT_SYMLINK_NOFOLLOW;
    // SAFETY: fstatat and unlinkat on a descriptor owned by `dir` and a NUL-terminated name.
    unsafe {
        if libc::fstatat(dir.as_raw_fd(), c.as_ptr(), &mut st, flags) == 0
            && st.st_dev == ours.dev()
            && st.st_ino == ours.ino()
        {
            libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0);
        }
    }
}
