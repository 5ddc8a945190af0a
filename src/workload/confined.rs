//! Writing a tree below a root without ever writing outside it: the one policy of the
//! workloads that recreate a tree fsarena did not make — `untar` (a user's archive) and
//! `compile:mode=kernel-build,source=DIR` (a copy of a user's tree, through
//! [`tree::copy_tree`](crate::workload::tree::copy_tree)).
//!
//! Making a symlink is harmless whatever it points to; *following* one is what writes
//! outside (GNU tar's view too). So:
//! * symlinks are made exactly as they are, absolute or leaving the tree included;
//! * names are relative and without `..` ([`components`]): an absolute name or a `..` is
//!   refused;
//! * every directory on the way to an entry is opened relative to the root with
//!   `O_NOFOLLOW` ([`Tree::walk`]): an entry reached through a symlink — one just made or
//!   any other — is refused, never followed (GNU tar follows in-tree symlinks; fsarena
//!   does not);
//! * a hard link's target name obeys the same rules, and `linkat` does not follow it;
//! * an entry that replaces a name unlinks it first; files are created with
//!   `O_CREAT|O_EXCL|O_NOFOLLOW`, so nothing is ever written through a symlink that was
//!   there before;
//! * a directory's mode and times are set through a descriptor opened with `O_NOFOLLOW`.
//!
//! Other entry types (devices, FIFOs, sockets) are never made: `untar` skips and counts
//! them; a copy refuses a source tree that holds one, before anything is provisioned
//! (reading a FIFO would block, reading a device would copy it).
//!
//! [`Preview`] applies the same rules to names alone, so an archive's hostile members are
//! found when the plan is built, before any filesystem is made.

use crate::workload::IoContext;
use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashSet;
use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};

/// A name made safe: relative, without `.` or empty components, never `..`. `None` for the
/// root itself (`./`). `what` names the entry in the error ("file", "hard link target").
pub fn components(name: &[u8], what: &str) -> Result<Option<Vec<Vec<u8>>>> {
    if name.first() == Some(&b'/') {
        bail!(
            "refusing {what} '{}': absolute name",
            String::from_utf8_lossy(name)
        );
    }
    let mut parts = Vec::new();
    for c in name.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => bail!(
                "refusing {what} '{}': '..' would leave the target",
                String::from_utf8_lossy(name)
            ),
            c => parts.push(c.to_vec()),
        }
    }
    Ok((!parts.is_empty()).then_some(parts))
}

/// A name as a C string (a NUL byte inside is an error).
pub fn cname(c: &[u8]) -> Result<CString> {
    CString::new(c).map_err(|_| anyhow!("name with a NUL byte"))
}

fn io_cname(c: &[u8]) -> io::Result<CString> {
    CString::new(c).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A directory descriptor, opened without following a symlink.
pub struct Dir(File);

impl Dir {
    /// Opens `path` (the root, fsarena's own directory) as a directory.
    pub fn open_root(path: &Path) -> Result<Dir> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = File::options()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)
            .on("open", path)?;
        Ok(Dir(f))
    }

    /// Another descriptor of the same directory.
    pub fn try_clone(&self) -> Result<Dir> {
        Ok(Dir(self.0.try_clone().context("dup")?))
    }

    fn fd(&self) -> libc::c_int {
        self.0.as_raw_fd()
    }

    /// Opens the subdirectory `name`, refusing a symlink (ELOOP or ENOTDIR); when it is
    /// missing and `create` gives a mode, makes it first. Returns whether it was made.
    pub fn sub(&self, name: &[u8], create: Option<u32>) -> io::Result<(Dir, bool)> {
        let c = io_cname(name)?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let open = || {
            // SAFETY: valid descriptor and NUL-terminated name.
            let fd = unsafe { libc::openat(self.fd(), c.as_ptr(), flags) };
            if fd < 0 {
                Err(io::Error::last_os_error())
            } else {
                // SAFETY: a new descriptor nothing else owns.
                Ok(Dir(unsafe { File::from_raw_fd(fd) }))
            }
        };
        match (open(), create) {
            (Err(e), Some(mode)) if e.raw_os_error() == Some(libc::ENOENT) => {
                // SAFETY: valid descriptor and NUL-terminated name.
                match check(unsafe { libc::mkdirat(self.fd(), c.as_ptr(), mode as libc::mode_t) }) {
                    Ok(()) => open().map(|d| (d, true)),
                    Err(e) if e.raw_os_error() == Some(libc::EEXIST) => open().map(|d| (d, false)),
                    Err(e) => Err(e),
                }
            }
            (other, _) => other.map(|d| (d, false)),
        }
    }

    /// Removes the non-directory `name` if there is one (a directory stays: what replaces
    /// it then fails with EEXIST).
    fn unlink(&self, name: &CStr) {
        // SAFETY: valid descriptor and NUL-terminated name; failure is fine (absent).
        unsafe { libc::unlinkat(self.fd(), name.as_ptr(), 0) };
    }

    /// Makes the symlink `name` -> `target` exactly as given, replacing a non-directory.
    pub fn symlink(&self, name: &CStr, target: &[u8]) -> io::Result<()> {
        let target = io_cname(target)?;
        self.unlink(name);
        // SAFETY: valid descriptor and NUL-terminated strings.
        check(unsafe { libc::symlinkat(target.as_ptr(), self.fd(), name.as_ptr()) })
    }

    /// Creates the regular file `name` for writing (mode 0600 until the caller sets it),
    /// replacing a non-directory that has the name — a symlink is removed, never written
    /// through (`O_EXCL` does not follow it).
    pub fn create_file(&self, name: &CStr) -> io::Result<File> {
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: valid descriptor and NUL-terminated name.
        let open = || unsafe { libc::openat(self.fd(), name.as_ptr(), flags, 0o600) };
        let mut fd = open();
        if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST) {
            self.unlink(name);
            fd = open();
        }
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor nothing else owns.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Makes `name` a hard link to `from_name` in `from` (not following it if it is a
    /// symlink), replacing a non-directory.
    pub fn hard_link(&self, name: &CStr, from: &Dir, from_name: &CStr) -> io::Result<()> {
        self.unlink(name);
        // SAFETY: valid descriptors and NUL-terminated names; flags 0: no following.
        check(unsafe { libc::linkat(from.fd(), from_name.as_ptr(), self.fd(), name.as_ptr(), 0) })
    }

    /// Sets the access and modification times of `name` (not following a symlink).
    pub fn set_times(&self, name: &CStr, mtime: i64) -> io::Result<()> {
        let ts = libc::timespec {
            tv_sec: mtime as libc::time_t,
            tv_nsec: 0,
        };
        let times = [ts, ts];
        // SAFETY: valid descriptor, NUL-terminated name, two timespecs.
        check(unsafe {
            libc::utimensat(
                self.fd(),
                name.as_ptr(),
                times.as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        })
    }

    /// Sets this directory's own mode and times (through its descriptor: no path, no
    /// symlink).
    pub fn set_mode_and_times(&self, mode: u32, mtime: i64) -> io::Result<()> {
        // SAFETY: valid descriptor.
        check(unsafe { libc::fchmod(self.fd(), mode as libc::mode_t) })?;
        let ts = libc::timespec {
            tv_sec: mtime as libc::time_t,
            tv_nsec: 0,
        };
        // SAFETY: valid descriptor, two timespecs.
        check(unsafe { libc::futimens(self.fd(), [ts, ts].as_ptr()) })
    }
}

/// The root of a tree being written, and its path (for messages and fsyncs).
pub struct Tree {
    root: Dir,
    path: PathBuf,
}

impl Tree {
    /// Opens the existing directory `path` as the root.
    pub fn open(path: &Path) -> Result<Tree> {
        Ok(Tree {
            root: Dir::open_root(path)?,
            path: path.to_path_buf(),
        })
    }

    /// The root's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of the entry `parts` below the root (for messages and fsyncs).
    pub fn path_of(&self, parts: &[Vec<u8>]) -> PathBuf {
        let rel = parts.join(&b'/');
        self.path.join(String::from_utf8_lossy(&rel).as_ref())
    }

    /// Opens the directory `dirs` below the root, never through a symlink: each step is
    /// `O_NOFOLLOW`. With `create`, missing directories are made (mode 0755), and `made`
    /// counts them. `what` and `shown` name the entry the walk is for, in the refusal.
    pub fn walk(
        &self,
        dirs: &[Vec<u8>],
        create: bool,
        what: &str,
        shown: &str,
        made: &mut u64,
    ) -> Result<Dir> {
        let mut at = self.root.try_clone()?;
        for (i, d) in dirs.iter().enumerate() {
            let (next, new) = at.sub(d, create.then_some(0o755)).map_err(|e| {
                let p = String::from_utf8_lossy(&dirs[..=i].join(&b'/')).into_owned();
                match e.raw_os_error() {
                    Some(libc::ELOOP) | Some(libc::ENOTDIR) => anyhow!(
                        "refusing {what} '{shown}': '{p}' is not a directory (a symlink is \
                         never followed)"
                    ),
                    _ => anyhow!(e).context(format!("{what} '{shown}': opening '{p}'")),
                }
            })?;
            *made += u64::from(new);
            at = next;
        }
        Ok(at)
    }
}

/// The policy applied to names alone, entry by entry, without writing anything: what
/// extracting would refuse or fail on because of an earlier entry — a directory on the way
/// that is a symlink, a directory replaced by something else or a symlink by a directory.
/// Keeps the names of the symlinks and directories made so far.
#[derive(Default)]
pub struct Preview {
    symlinks: HashSet<Vec<u8>>,
    dirs: HashSet<Vec<u8>>,
}

/// The kinds of entry [`Preview`] distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    Symlink,
    HardLink,
    /// Devices, FIFOs, …: not made (their directories are), their name checked all the same.
    Other,
}

impl Preview {
    /// Checks one entry: its name (and a hard link's target name) must be safe and not
    /// reached through a symlink of an earlier entry; a directory and a non-directory may
    /// not replace each other. `what` names the entry in the error.
    pub fn check(&mut self, kind: Kind, name: &[u8], link: &[u8], what: &str) -> Result<()> {
        let Some(parts) = components(name, what)? else {
            return Ok(());
        };
        let shown = String::from_utf8_lossy(name);
        let parents = &parts[..parts.len() - 1];
        self.not_through_symlink(parents, what, &shown)?;
        let key = parts.join(&b'/');
        if kind == Kind::HardLink {
            let target = components(link, "hard link target")?
                .ok_or_else(|| anyhow!("refusing hard link '{shown}' to the root"))?;
            self.not_through_symlink(&target[..target.len() - 1], what, &shown)?;
        }
        match kind {
            Kind::Dir if self.symlinks.contains(&key) => bail!(
                "refusing directory '{shown}': it would replace a symlink, which is never \
                 followed"
            ),
            Kind::File | Kind::Symlink | Kind::HardLink if self.dirs.contains(&key) => {
                bail!("refusing {what} '{shown}': it would replace a directory")
            }
            _ => {}
        }
        for i in 1..=parents.len() {
            self.dirs.insert(parts[..i].join(&b'/'));
        }
        match kind {
            Kind::Dir => {
                self.dirs.insert(key);
            }
            Kind::Symlink => {
                self.symlinks.insert(key);
            }
            Kind::File | Kind::HardLink => {
                self.symlinks.remove(&key);
            }
            Kind::Other => {}
        }
        Ok(())
    }

    fn not_through_symlink(&self, dirs: &[Vec<u8>], what: &str, shown: &str) -> Result<()> {
        if self.symlinks.is_empty() {
            return Ok(());
        }
        for i in 1..=dirs.len() {
            let p = dirs[..i].join(&b'/');
            if self.symlinks.contains(&p) {
                bail!(
                    "refusing {what} '{shown}': '{}' is not a directory (a symlink is never \
                     followed)",
                    String::from_utf8_lossy(&p)
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn names_are_relative_and_never_leave() {
        assert_eq!(
            components(b"./a//b/", "file").unwrap(),
            Some(vec![b"a".to_vec(), b"b".to_vec()])
        );
        assert_eq!(components(b"./", "file").unwrap(), None);
        for bad in [&b"/etc/passwd"[..], b"..", b"a/../../b", b"a/.."] {
            assert!(components(bad, "file").is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_file_replacing_a_symlink_never_writes_through_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("root"), tmp.path().join("victim"));
        std::fs::create_dir(&root).unwrap();
        std::fs::write(&outside, b"precious").unwrap();
        let tree = Tree::open(&root).unwrap();
        let top = tree.walk(&[], false, "file", "", &mut 0).unwrap();
        let a = cname(b"a").unwrap();
        top.symlink(&a, outside.as_os_str().as_encoded_bytes())
            .unwrap();
        assert_eq!(std::fs::read_link(root.join("a")).unwrap(), outside);
        use std::io::Write;
        top.create_file(&a).unwrap().write_all(b"new").unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
        assert_eq!(std::fs::read(root.join("a")).unwrap(), b"new");
        // A hard link over a symlink replaces it too.
        top.symlink(&a, outside.as_os_str().as_encoded_bytes())
            .unwrap();
        std::fs::write(root.join("f"), b"f").unwrap();
        top.hard_link(&a, &top, &cname(b"f").unwrap()).unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
        assert!(!std::fs::symlink_metadata(root.join("a"))
            .unwrap()
            .is_symlink());
    }

    #[test]
    fn walks_never_follow_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("d")).unwrap();
        symlink("d", root.join("in")).unwrap();
        symlink(tmp.path(), root.join("out")).unwrap();
        let tree = Tree::open(&root).unwrap();
        for link in ["in", "out"] {
            let dirs = [link.as_bytes().to_vec(), b"x".to_vec()];
            let err = tree.walk(&dirs, true, "file", "f", &mut 0).err().unwrap();
            assert!(format!("{err:#}").contains("never followed"), "{err:#}");
        }
        assert!(!root.join("d/x").exists() && !tmp.path().join("x").exists());
        let mut made = 0;
        tree.walk(&[b"d".to_vec(), b"y".to_vec()], true, "f", "f", &mut made)
            .unwrap();
        assert_eq!(made, 1);
    }

    #[test]
    fn preview_refuses_what_the_walk_refuses() {
        let mut p = Preview::default();
        p.check(Kind::Symlink, b"a", b"/etc", "symlink").unwrap();
        p.check(Kind::Symlink, b"b/c", b"../../x", "symlink")
            .unwrap();
        p.check(Kind::File, b"z", b"", "file").unwrap();
        for (kind, name, link) in [
            (Kind::File, &b"a/passwd"[..], &b""[..]),
            (Kind::Dir, b"./a/d/", b""),
            (Kind::HardLink, b"h", b"a/passwd"),
            (Kind::Dir, b"b/c", b""),
            (Kind::File, b"b/c/x", b""),
            (Kind::File, b"b", b""),
        ] {
            assert!(p.check(kind, name, link, "entry").is_err(), "{name:?}");
        }
        // Replaced by a file, `a` is no symlink any more.
        p.check(Kind::File, b"a", b"", "file").unwrap();
        p.check(Kind::Dir, b"a2/", b"", "directory").unwrap();
        p.check(Kind::HardLink, b"h", b"a", "hard link").unwrap();
    }
}
