//! What is fsarena's to delete: every directory fsarena makes for its own use (the image
//! directory, `mnt/`, `state/`, `logs/<run>/`, work directories in `--dir`) carries the
//! marker file [`MARKER`], and every deletion fsarena does on its own behalf goes through
//! [`remove`], which refuses
//!
//! * a path with a `..` component (no lexical tricks),
//! * a path that is itself a symbolic link,
//! * a path whose real location (its parent with every symlink resolved) is not inside a
//!   directory carrying the marker — so a symlink inside fsarena's directories that leads
//!   out is never followed to delete what it points at (one leading to another marked
//!   directory is harmless: that is fsarena's too),
//! * a tree with a filesystem mounted at or below it (deleting it would empty the mount).
//!
//! The check is not undone by a later swap: the directory holding the path is opened and
//! verified to be the one checked, and the deletion goes through that open directory.
//!
//! A tree is removed with [`std::fs::remove_dir_all`], which does not descend through
//! symbolic links (it unlinks them, and opens each directory relative to its parent with
//! `O_NOFOLLOW` since Rust 1.58.1, CVE-2022-21658).
//!
//! Deletions that are a workload's own measured operations inside its trial work directory
//! (postmark's unlinks, tar-delete) do not come here: they are the benchmark, and the work
//! directory lives inside a marked one.

use anyhow::{bail, Context, Result};
use std::path::{Component, Path, PathBuf};

/// Name of the marker file in every directory fsarena owns; nothing is deleted elsewhere.
pub const MARKER: &str = ".fsarena-owned";

/// What kind of thing [`remove`] removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// A regular file (an image, a state file).
    File,
    /// An empty directory (a mount point).
    EmptyDir,
    /// A directory and everything in it (a work directory).
    Tree,
}

/// Creates `dir` (and parents) if needed and puts the ownership marker in it.
pub fn ensure_owned_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let marker = dir.join(MARKER);
    if std::fs::symlink_metadata(&marker).is_err() {
        std::fs::write(
            &marker,
            format!(
                "created by fsarena (pid {}); its contents may be deleted by fsarena\n",
                std::process::id()
            ),
        )
        .with_context(|| format!("writing {}", marker.display()))?;
    }
    Ok(())
}

/// Whether `dir` carries the marker as a regular file (a symlinked marker does not count).
fn carries_marker(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(MARKER)).is_ok_and(|m| m.file_type().is_file())
}

/// The real path of `path` (parent canonicalised, last component kept) and the marked
/// directory it lies in; `Err` says why `path` is not fsarena's to delete. A directory may
/// carry the marker itself; a file must lie below a marked directory.
pub fn owner_of(path: &Path) -> std::result::Result<(PathBuf, PathBuf), String> {
    if path.components().any(|c| c == Component::ParentDir) {
        return Err("its path contains '..'".into());
    }
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot stat it: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err("it is a symbolic link".into());
    }
    let name = path.file_name().ok_or("it has no file name")?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = parent
        .canonicalize()
        .map_err(|e| format!("cannot resolve its directory: {e}"))?;
    let real = parent.join(name);
    let own = meta.is_dir().then(|| real.clone());
    own.into_iter()
        .chain(parent.ancestors().map(Path::to_path_buf))
        .find(|d| d.as_path() != Path::new("/") && carries_marker(d))
        .map(|d| (real.clone(), d))
        .ok_or_else(|| {
            format!(
                "{} is not inside a directory carrying fsarena's marker file {MARKER}",
                real.display()
            )
        })
}

/// Whether `path` is fsarena's to delete (see [`owner_of`]).
pub fn is_owned(path: &Path) -> bool {
    owner_of(path).is_ok()
}

/// Mount points at or below `dir` (per /proc/self/mountinfo).
fn mounts_within(dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|m| PathBuf::from(crate::state::unescape_mount_path(m)))
        .filter(|m| m.starts_with(dir))
        .collect()
}

/// The directory `dir` held open (`O_PATH`, last component not followed), checked to be
/// the very directory at that real path now. Deleting through [`Held::entry`] then goes to
/// this directory whatever is renamed or swapped for a symlink along `dir` afterwards: the
/// kernel resolves `/proc/self/fd/N` to the open directory, not by walking `dir` again.
struct Held {
    fd: std::os::fd::OwnedFd,
}

impl Held {
    fn open(dir: &Path) -> std::result::Result<Self, String> {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| "its path contains a NUL byte".to_string())?;
        // SAFETY: open(2) with a valid C string; the descriptor is owned below.
        let raw = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            let e = std::io::Error::last_os_error();
            return Err(format!("cannot open its directory {}: {e}", dir.display()));
        }
        // SAFETY: `raw` is a descriptor just opened and owned by nobody else.
        let held = Self {
            fd: unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) },
        };
        match std::fs::read_link(held.proc_path()) {
            Ok(now) if now == dir => Ok(held),
            _ => Err(format!(
                "its directory {} was moved or replaced while being checked",
                dir.display()
            )),
        }
    }

    fn proc_path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }

    /// `name` inside the held directory.
    fn entry(&self, name: &std::ffi::OsStr) -> PathBuf {
        self.proc_path().join(name)
    }
}

/// Deletes `path` as `how` says, only when it is fsarena's (see the module docs).
/// `Ok(false)` when there was nothing to delete.
///
/// The check and the deletion are one: the directory holding `path` is opened and verified
/// to be the one checked, and the deletion goes through that open directory, so a directory
/// on the way that is swapped for a symlink after the check leads nowhere (see `Held`).
pub fn remove(path: &Path, how: Removal) -> Result<bool> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(false);
    }
    let refuse = |why: String| anyhow::anyhow!("refusing to delete {}: {why}", path.display());
    let (real, _owner) = owner_of(path).map_err(refuse)?;
    let (Some(dir), Some(name)) = (real.parent(), real.file_name()) else {
        return Err(refuse("it has no parent directory".into()));
    };
    let held = Held::open(dir).map_err(refuse)?;
    remove_in(&held, name, &real, how).with_context(|| format!("removing {}", path.display()))?;
    Ok(true)
}

/// Deletes `name` in the held directory whose real path made `real`.
fn remove_in(held: &Held, name: &std::ffi::OsStr, real: &Path, how: Removal) -> Result<()> {
    let entry = held.entry(name);
    let is_dir = std::fs::symlink_metadata(&entry)?.is_dir();
    match how {
        Removal::File => {
            if is_dir {
                bail!(
                    "refusing to delete {}: a directory, not a file",
                    real.display()
                );
            }
            std::fs::remove_file(&entry)
        }
        Removal::EmptyDir => std::fs::remove_dir(&entry),
        Removal::Tree => {
            if !is_dir {
                bail!("refusing to delete {}: not a directory", real.display());
            }
            let mounted = mounts_within(real);
            if !mounted.is_empty() {
                bail!(
                    "refusing to delete {}: a filesystem is mounted at {}",
                    real.display(),
                    mounted[0].display()
                );
            }
            remove_tree_marker_last(&entry)
        }
    }?;
    Ok(())
}

/// Deletes the tree `dir` with its own marker last: when another process is still writing
/// into it (an MPI rank on another host, in a directory rank 0 made on a shared
/// filesystem), the deletion fails with the marker in place, so a later try — `cleanup`, or
/// a guardian trying again — may still delete what is left.
fn remove_tree_marker_last(dir: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_name() == MARKER {
            continue;
        }
        // std opens each directory below with O_NOFOLLOW relative to its parent.
        match e.file_type()?.is_dir() {
            true => std::fs::remove_dir_all(e.path())?,
            false => std::fs::remove_file(e.path())?,
        }
    }
    if std::fs::read_dir(dir)?.any(|e| e.is_ok_and(|e| e.file_name() != MARKER)) {
        return Err(std::io::Error::from_raw_os_error(libc::ENOTEMPTY));
    }
    match std::fs::remove_file(dir.join(MARKER)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::remove_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn marked() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        ensure_owned_dir(t.path()).unwrap();
        t
    }

    #[test]
    fn a_tree_keeps_its_marker_until_everything_else_is_gone() {
        let t = marked();
        let w = t.path().join("w");
        ensure_owned_dir(&w).unwrap();
        std::fs::create_dir_all(w.join("rank-1/d")).unwrap();
        std::fs::write(w.join("rank-1/d/f"), b"x").unwrap();
        std::fs::write(w.join("g"), b"y").unwrap();
        // A file another process keeps writing: here, one that cannot be deleted (an
        // immutable file for root, a read-only directory for another user).
        let stuck = w.join("stuck");
        std::fs::create_dir(&stuck).unwrap();
        std::fs::write(stuck.join("f"), b"z").unwrap();
        let root = crate::probe::sys::is_root();
        let pin = |on: bool| {
            use std::os::unix::fs::PermissionsExt;
            if root {
                let flag = if on { "+i" } else { "-i" };
                std::process::Command::new("chattr")
                    .arg(flag)
                    .arg(stuck.join("f"))
                    .status()
                    .is_ok_and(|s| s.success())
            } else {
                let m = if on { 0o500 } else { 0o700 };
                std::fs::set_permissions(&stuck, std::fs::Permissions::from_mode(m)).is_ok()
            }
        };
        if !pin(true) {
            eprintln!("SKIP a_tree_keeps_its_marker: chattr +i does not work on this filesystem");
            return;
        }
        let first = remove(&w, Removal::Tree);
        assert!(pin(false));
        assert!(first.is_err());
        assert!(w.join(MARKER).exists(), "the marker went before the rest");
        assert!(!w.join("rank-1").exists() && !w.join("g").exists());
        assert!(remove(&w, Removal::Tree).unwrap());
        assert!(!w.exists());
    }

    #[test]
    fn deletes_inside_a_marked_dir() {
        let t = marked();
        let f = t.path().join("a.img");
        std::fs::write(&f, b"x").unwrap();
        assert!(remove(&f, Removal::File).unwrap());
        assert!(!f.exists());
        assert!(
            !remove(&f, Removal::File).unwrap(),
            "absent is not an error"
        );
        let d = t.path().join("sub/deep");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("f"), b"x").unwrap();
        assert!(remove(&t.path().join("sub"), Removal::Tree).unwrap());
        assert!(!t.path().join("sub").exists());
    }

    #[test]
    fn refuses_unmarked_dirs() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("keep");
        std::fs::write(&f, b"x").unwrap();
        let err = remove(&f, Removal::File).unwrap_err().to_string();
        assert!(err.contains("refusing") && err.contains(MARKER), "{err}");
        assert!(remove(t.path(), Removal::Tree).is_err());
        assert!(f.exists());
    }

    #[test]
    fn a_marked_dir_may_be_removed_as_a_whole() {
        let outer = tempfile::tempdir().unwrap();
        let work = outer.path().join("fsarena-run-1");
        ensure_owned_dir(&work).unwrap();
        std::fs::write(work.join("f"), b"x").unwrap();
        assert!(remove(&work, Removal::Tree).unwrap());
        assert!(outer.path().exists());
    }

    #[test]
    fn refuses_symlinks_leading_out() {
        let t = marked();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = t.path().join("link");
        symlink(outside.path(), &link).unwrap();
        // Through the link: its real place is outside.
        assert!(remove(&link.join("victim"), Removal::File).is_err());
        // The link itself as a tree: refused, nothing behind it touched.
        assert!(remove(&link, Removal::Tree).is_err());
        assert!(remove(&link, Removal::File).is_err());
        // A file symlink to the outside.
        let flink = t.path().join("f.img");
        symlink(&victim, &flink).unwrap();
        assert!(remove(&flink, Removal::File).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn a_tree_removal_does_not_descend_through_symlinks() {
        let t = marked();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), b"keep").unwrap();
        let work = t.path().join("work");
        std::fs::create_dir(&work).unwrap();
        symlink(outside.path(), work.join("out")).unwrap();
        assert!(remove(&work, Removal::Tree).unwrap());
        assert_eq!(
            std::fs::read(outside.path().join("victim")).unwrap(),
            b"keep"
        );
    }

    #[test]
    fn refuses_dot_dot_tricks() {
        let t = marked();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let tricky = t
            .path()
            .join("..")
            .join(outside.path().file_name().unwrap())
            .join("victim");
        let err = remove(&tricky, Removal::File).unwrap_err().to_string();
        assert!(err.contains(".."), "{err}");
        assert!(victim.exists());
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_after_the_check_leads_nowhere() {
        let t = marked();
        let outside = tempfile::tempdir().unwrap();
        let dir = t.path().join("images");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("x.img"), b"ours").unwrap();
        std::fs::write(outside.path().join("x.img"), b"keep").unwrap();
        std::fs::create_dir(outside.path().join("w")).unwrap();
        std::fs::write(outside.path().join("w/f"), b"keep").unwrap();
        std::fs::create_dir(dir.join("w")).unwrap();
        let (real, _) = owner_of(&dir.join("x.img")).unwrap();
        let held = Held::open(real.parent().unwrap()).unwrap();
        // After the check: the checked directory is moved away, a symlink to the outside
        // takes its name. Deleting by path now would hit the outside files.
        let moved = t.path().join("moved");
        std::fs::rename(&dir, &moved).unwrap();
        symlink(outside.path(), &dir).unwrap();
        remove_in(&held, "x.img".as_ref(), &real, Removal::File).unwrap();
        remove_in(&held, "w".as_ref(), &real, Removal::Tree).unwrap();
        assert_eq!(
            std::fs::read(outside.path().join("x.img")).unwrap(),
            b"keep"
        );
        assert_eq!(std::fs::read(outside.path().join("w/f")).unwrap(), b"keep");
        assert!(!moved.join("x.img").exists() && !moved.join("w").exists());
        // Opened after the swap: the symlink is refused.
        assert!(Held::open(&dir).is_err());
    }

    #[test]
    fn a_symlinked_marker_does_not_count() {
        let t = tempfile::tempdir().unwrap();
        let real_marker = marked();
        symlink(real_marker.path().join(MARKER), t.path().join(MARKER)).unwrap();
        let f = t.path().join("keep");
        std::fs::write(&f, b"x").unwrap();
        assert!(remove(&f, Removal::File).is_err());
        assert!(f.exists());
    }
}
