//! Mounting and unmounting, and the mount options the kernel actually applied.
//!
//! A mount point cannot be redirected: it is made and opened one directory at a time from
//! `/`, never following a symlink (`mkdirat`/`openat` with `O_NOFOLLOW`), and `mount` is
//! given `/proc/self/fd/N` of that open directory with `--no-canonicalize`, so the kernel
//! mounts on the directory checked, whatever its name leads to by then. Afterwards the
//! mount must show at the mount point's path in `/proc/self/mountinfo`.

use crate::cmd;
use crate::state::{self, Resource, State};
use anyhow::{bail, Context, Result};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Mounts `source` of type `fstype` on `mountpoint` with `opts`; returns seconds taken.
/// The mount point is made (see the module docs) and recorded in the state file first;
/// when the mount fails, the mount point and its record are removed again (the caller has
/// nothing mounted to tear down).
pub fn mount(
    state: &State,
    fstype: &str,
    source: &str,
    mountpoint: &Path,
    opts: &str,
) -> Result<f64> {
    let dir = make_mount_point(mountpoint)?;
    state.add(Resource::Mount {
        path: mountpoint.to_path_buf(),
    })?;
    mount_on(&dir, fstype, source, mountpoint, opts)
        .inspect_err(|_| forget_failed(state, mountpoint))
}

/// Runs `mount` on the open directory `dir` (whose path is `mountpoint`) and checks that
/// the mount shows at `mountpoint`.
fn mount_on(
    dir: &OwnedFd,
    fstype: &str,
    source: &str,
    mountpoint: &Path,
    opts: &str,
) -> Result<f64> {
    let (inherited, target) = super::loopdev::for_child(dir).context("dup of the mount point")?;
    let mut argv = vec!["mount", "--no-canonicalize", "-t", fstype];
    if !opts.is_empty() {
        argv.extend(["-o", opts]);
    }
    argv.extend([source, &target]);
    let out = cmd::run(&argv).with_context(|| format!("mounting {}", mountpoint.display()));
    drop(inherited);
    let secs = out?.seconds;
    if !state::is_mounted(mountpoint) {
        // The directory mounted on is no longer at its path (renamed meanwhile): unmount
        // it through the descriptor still open, or nothing would ever unmount it.
        let at = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(dir));
        if let Ok(c) = std::ffi::CString::new(at) {
            // SAFETY: umount2(2) on a NUL-terminated path; MNT_DETACH cannot block.
            unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
        }
        bail!(
            "mount reported success but nothing is mounted at {} (its directory moved; \
             what was mounted on it was detached)",
            mountpoint.display()
        );
    }
    Ok(secs)
}

/// Creates `mountpoint` and its missing parents, one directory at a time from `/` without
/// following any symlink, and returns it open (`O_PATH`). Refuses a symlink or
/// non-directory on the way and a mount point owned by another user.
pub fn make_mount_point(mountpoint: &Path) -> Result<OwnedFd> {
    let refuse =
        |why: String| anyhow::anyhow!("refusing mount point {}: {why}", mountpoint.display());
    if !mountpoint.is_absolute() {
        return Err(refuse("not an absolute path".into()));
    }
    let mut dir = open_at(None, Path::new("/").as_os_str())
        .map_err(|e| refuse(format!("cannot open /: {e}")))?;
    let mut so_far = std::path::PathBuf::from("/");
    for c in mountpoint.components() {
        let name = match c {
            Component::RootDir => continue,
            Component::Normal(n) => n,
            _ => return Err(refuse("'.' or '..' in its path".into())),
        };
        so_far.push(name);
        let cname = CString::new(name.as_bytes()).map_err(|_| refuse("NUL in path".into()))?;
        // SAFETY: mkdirat with an open directory descriptor and a valid C string.
        let rc = unsafe { libc::mkdirat(dir.as_raw_fd(), cname.as_ptr(), 0o755) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(refuse(format!("creating {}: {e}", so_far.display())));
            }
        }
        dir = open_at(Some(&dir), name).map_err(|e| {
            // Only to say why (the refusal does not depend on this second look).
            let link = std::fs::symlink_metadata(&so_far).is_ok_and(|m| m.is_symlink());
            let why = match e.raw_os_error() {
                Some(libc::ELOOP | libc::ENOTDIR) if link => "a symbolic link".to_string(),
                Some(libc::ENOTDIR) => "not a directory".to_string(),
                _ => e.to_string(),
            };
            refuse(format!("{} is {why}", so_far.display()))
        })?;
    }
    let meta = std::fs::metadata(format!("/proc/self/fd/{}", dir.as_raw_fd()))?;
    let me = crate::probe::sys::euid();
    if std::os::unix::fs::MetadataExt::uid(&meta) != me {
        return Err(refuse(format!(
            "owned by uid {}, not by uid {me} who mounts",
            std::os::unix::fs::MetadataExt::uid(&meta)
        )));
    }
    Ok(dir)
}

/// `name` opened in `dir` (or the absolute `name` when `dir` is `None`) as a directory,
/// `O_PATH`, not following a symlink.
fn open_at(dir: Option<&OwnedFd>, name: &std::ffi::OsStr) -> std::io::Result<OwnedFd> {
    let c = CString::new(name.as_bytes())?;
    let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat with a valid C string; the descriptor is owned below.
    let raw = unsafe { libc::openat(at, c.as_ptr(), flags) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// After a failed mount command: undoes whatever it left (normally only the mount point
/// and its record; a mount that happened all the same is unmounted).
pub fn forget_failed(state: &State, mountpoint: &Path) {
    let _ = unmount(state, mountpoint);
}

/// Unmounts `mountpoint` (if mounted; retrying while busy), removes the directory and
/// forgets it; returns seconds.
pub fn unmount(state: &State, mountpoint: &Path) -> Result<f64> {
    unmount_with(state, mountpoint, state::umount)
}

/// [`unmount`] with one `umount` and no retry, for a timed unmount (the `provision`
/// workload's): fails when the filesystem is busy rather than timing the waits.
pub fn unmount_once(state: &State, mountpoint: &Path) -> Result<f64> {
    unmount_with(state, mountpoint, state::umount_once)
}

fn unmount_with(state: &State, mountpoint: &Path, umount: fn(&Path) -> Result<f64>) -> Result<f64> {
    let secs = if state::is_mounted(mountpoint) {
        umount(mountpoint)?
    } else {
        0.0
    };
    let _ = crate::owned::remove(mountpoint, crate::owned::Removal::EmptyDir);
    state.remove(&Resource::Mount {
        path: mountpoint.to_path_buf(),
    })?;
    Ok(secs)
}

/// The options in force on `mountpoint` as the kernel reports them in
/// `/proc/self/mountinfo`: per-mount options, then the superblock's, deduplicated
/// (e.g. btrfs adds `discard=async` on a loop device by itself).
pub fn effective_options(mountpoint: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = mountpoint.to_string_lossy();
    let line = text.lines().rev().find(|l| {
        l.split(' ')
            .nth(4)
            .map(state::unescape_mount_path)
            .as_deref()
            == Some(&*want)
    })?;
    let fields: Vec<&str> = line.split(' ').collect();
    let vfs = fields.get(5)?;
    let sep = fields.iter().position(|f| *f == "-")?;
    let sb = fields.get(sep + 3).copied().unwrap_or("");
    let mut seen = Vec::<&str>::new();
    for o in vfs.split(',').chain(sb.split(',')) {
        if !o.is_empty() && !seen.contains(&o) {
            seen.push(o);
        }
    }
    Some(seen.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_point_path_through_a_symlink_is_refused_without_root() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), base.join("mnt")).unwrap();
        let err = make_mount_point(&base.join("mnt/x"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a symbolic link"), "{err}");
        assert!(
            !outside.path().join("x").exists(),
            "created through the link"
        );
        let made = make_mount_point(&base.join("real/x")).unwrap();
        assert!(base.join("real/x").is_dir());
        drop(made);
        assert!(make_mount_point(Path::new("rel/x")).is_err());
        assert!(make_mount_point(&base.join("real/../x")).is_err());
    }

    /// The mount point (or the `mnt` directory above it) swapped for a symlink to another
    /// directory before the mount: refused, nothing lands on the other directory.
    #[test]
    fn a_mount_point_swapped_for_a_symlink_is_refused() {
        if !crate::probe::sys::is_root() {
            eprintln!("SKIP a_mount_point_swapped_for_a_symlink_is_refused: needs root");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        crate::state::ensure_owned_dir(&base).unwrap();
        let victim = tempfile::tempdir().unwrap();
        let victim = victim.path().canonicalize().unwrap();
        let st = State::create(&base.join("state"), "t").unwrap();
        std::fs::create_dir(base.join("mnt")).unwrap();
        let mp = base.join("mnt/t-tmpfs");
        std::os::unix::fs::symlink(&victim, &mp).unwrap();
        let err = mount(&st, "tmpfs", "fsarena", &mp, "size=1m").unwrap_err();
        assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
        assert!(
            !state::is_mounted(&victim),
            "mounted on the symlink's target"
        );
        assert!(std::fs::symlink_metadata(&mp).unwrap().is_symlink());
        // The same one level up: `mnt` itself a symlink.
        std::fs::remove_file(&mp).unwrap();
        std::fs::remove_dir(base.join("mnt")).unwrap();
        std::os::unix::fs::symlink(&victim, base.join("mnt")).unwrap();
        assert!(mount(&st, "tmpfs", "fsarena", &mp, "size=1m").is_err());
        assert!(!state::is_mounted(&victim.join("t-tmpfs")) && !state::is_mounted(&victim));
        // A real mount point: mounted there, and found there.
        std::fs::remove_file(base.join("mnt")).unwrap();
        mount(&st, "tmpfs", "fsarena", &mp, "size=1m").unwrap();
        assert!(state::is_mounted(&mp));
        unmount(&st, &mp).unwrap();
        assert!(!state::is_mounted(&mp) && !mp.exists());
    }

    #[test]
    fn root_has_effective_options() {
        let o = effective_options(Path::new("/")).expect("/ is mounted");
        assert!(o.contains("rw") || o.contains("ro"), "{o}");
        assert_eq!(
            effective_options(Path::new("/definitely/not/mounted")),
            None
        );
    }
}
