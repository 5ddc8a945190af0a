//! The walks of `du -s`, `find ROOT -name PATTERN` and `tar cf - ROOT | cat > /dev/null`,
//! with the system calls those tools make, in their order:
//!
//! * **du** (GNU du through gnulib fts, `FTS_PHYSICAL`): lstat of the root, then of every
//!   entry, pre-order in readdir order (each directory read to the end first, as fts
//!   does); st_blocks summed, a non-directory with several links counted once, as du does.
//! * **find**: readdir only. `-name` needs no stat, and with `d_type` neither does the walk
//!   (fts's `FTS_NOSTAT`); an entry whose `d_type` is unknown is lstat'ed, as fts does.
//!   Names are matched with fnmatch(3) without flags (find's `-name`: `*` matches a
//!   leading dot too); matching paths are formatted as `-print` would, then discarded.
//! * **tar**: GNU tar's order (`--sort=none`, the default): a directory's names are read
//!   to the end, then each entry is lstat'ed and archived in that order, descending into a
//!   subdirectory when it comes; a symlink is readlink'ed; a regular file is opened and
//!   read to the end in reads of [`TAR_RECORD`] bytes (tar's default record, 20 × 512),
//!   its size checked against st_size as tar does ("file changed as we read it"). The
//!   data goes nowhere: the pipe and `cat` of the shell command cost CPU the same on every
//!   filesystem and are left out.
//!
//! Recorded operations: one [`Op::Stat`] per lstat (du; tar's directories and symlinks,
//! with the readlink), one [`Op::Read`] per regular file (tar: lstat, open, reads, close,
//! with its bytes), and the listing of a directory (opendir, getdents to the end) as an
//! [`Op::Readdir`] sample — a part for du and tar (not counted in ops), and for find the
//! operation itself, counting the directory's entries as operations (find's work per
//! entry is in-memory; its latency samples are per directory).

use crate::context::Worker;
use crate::probe::recorder::Op;
use crate::workload::IoContext;
use anyhow::{bail, Result};
use std::collections::HashSet;
use std::ffi::{CStr, OsString};
use std::fs::{self, File, Metadata};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// tar's default record size (blocking factor 20 × 512 bytes): the size of its reads.
pub const TAR_RECORD: usize = 20 * 512;

/// What a walk saw. Every walk counts the root and everything below it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// The root and every entry below it.
    pub entries: u64,
    /// Directories below the root.
    pub dirs: u64,
    pub files: u64,
    pub symlinks: u64,
    /// Bytes of regular files: st_size (du, ls) or bytes read (tar); 0 for find.
    pub bytes: u64,
    /// du: st_blocks (512-byte units) summed, multiply-linked files once.
    pub blocks: u64,
    /// find: entries whose name matched.
    pub matches: u64,
    /// ls: bytes of listing formatted.
    pub output_bytes: u64,
}

impl Seen {
    /// Counts an entry below the root by its lstat.
    pub(super) fn count(&mut self, md: &Metadata) {
        self.entries += 1;
        let ft = md.file_type();
        if ft.is_dir() {
            self.dirs += 1;
        } else if ft.is_symlink() {
            self.symlinks += 1;
        } else if ft.is_file() {
            self.files += 1;
            self.bytes += md.len();
        }
    }
}

/// The names in `dir` (without `.` and `..`), read to the end before any is visited, as
/// fts and tar do; timed as one [`Op::Readdir`] part.
pub(super) fn names(w: &mut Worker, dir: &Path) -> Result<Vec<OsString>> {
    let t = w.start();
    let mut out = Vec::new();
    for e in fs::read_dir(dir).on("readdir", dir)? {
        out.push(e.on("readdir", dir)?.file_name());
    }
    w.done_part(Op::Readdir, t, 0);
    Ok(out)
}

/// lstat of `path`, recorded as one [`Op::Stat`].
pub(super) fn lstat(w: &mut Worker, path: &Path) -> Result<Metadata> {
    let t = w.start();
    let md = fs::symlink_metadata(path).on("lstat", path)?;
    w.done(Op::Stat, t, 0);
    Ok(md)
}

/// `du -s root`: see the module header.
pub fn du(w: &mut Worker, root: &Path) -> Result<Seen> {
    let mut seen = Seen::default();
    let mut linked = HashSet::new();
    let md = lstat(w, root)?;
    seen.entries = 1;
    seen.blocks = md.blocks();
    if md.is_dir() {
        du_dir(w, root, &mut seen, &mut linked)?;
    }
    Ok(seen)
}

fn du_dir(
    w: &mut Worker,
    dir: &Path,
    seen: &mut Seen,
    linked: &mut HashSet<(u64, u64)>,
) -> Result<()> {
    for name in names(w, dir)? {
        w.check()?;
        let path = dir.join(name);
        let md = lstat(w, &path)?;
        seen.count(&md);
        let again = !md.is_dir() && md.nlink() > 1 && !linked.insert((md.dev(), md.ino()));
        if !again {
            seen.blocks += md.blocks();
        }
        if md.is_dir() {
            du_dir(w, &path, seen, linked)?;
        }
    }
    Ok(())
}

/// Whether `name` matches the fnmatch(3) `pattern` (no flags, as find's `-name`). `buf`
/// is reused for the NUL-terminated name.
pub fn name_matches(pattern: &CStr, name: &[u8], buf: &mut Vec<u8>) -> bool {
    buf.clear();
    buf.extend_from_slice(name);
    buf.push(0);
    let Ok(name) = CStr::from_bytes_with_nul(buf) else {
        return false; // a name never holds a NUL
    };
    // SAFETY: both are NUL-terminated strings that outlive the call.
    unsafe { libc::fnmatch(pattern.as_ptr(), name.as_ptr(), 0) == 0 }
}

/// The state of a find walk.
struct Find<'a> {
    pattern: &'a CStr,
    seen: Seen,
    name: Vec<u8>,
    /// `-print` output of the directory being listed (discarded after each).
    out: Vec<u8>,
}

impl Find<'_> {
    fn visit(&mut self, path: &Path, name: &[u8]) {
        if name_matches(self.pattern, name, &mut self.name) {
            self.seen.matches += 1;
            self.out.extend_from_slice(path.as_os_str().as_bytes());
            self.out.push(b'\n');
        }
    }

    fn dir(&mut self, w: &mut Worker, dir: &Path) -> Result<()> {
        let t = w.start();
        let mut list = Vec::new();
        for e in fs::read_dir(dir).on("readdir", dir)? {
            let e = e.on("readdir", dir)?;
            let ft = e.file_type().on("lstat", &e.path())?;
            list.push((e.file_name(), ft));
        }
        w.done_batch(Op::Readdir, t, list.len() as u64, 0);
        for (name, ft) in list {
            w.check()?;
            let path = dir.join(&name);
            self.seen.entries += 1;
            self.visit(&path, name.as_bytes());
            if ft.is_dir() {
                self.seen.dirs += 1;
                self.out.clear();
                self.dir(w, &path)?;
            } else if ft.is_symlink() {
                self.seen.symlinks += 1;
            } else if ft.is_file() {
                self.seen.files += 1;
            }
        }
        self.out.clear();
        Ok(())
    }
}

/// `find root -name pattern`: see the module header.
pub fn find(w: &mut Worker, root: &Path, pattern: &CStr) -> Result<Seen> {
    let mut f = Find {
        pattern,
        seen: Seen::default(),
        name: Vec::new(),
        out: Vec::new(),
    };
    let md = lstat(w, root)?;
    f.seen.entries = 1;
    let base = root.file_name().map_or(&[][..], |n| n.as_bytes());
    f.visit(root, base);
    if md.is_dir() {
        f.dir(w, root)?;
    }
    Ok(f.seen)
}

/// `tar cf - root | cat > /dev/null`: see the module header. `buf` is the read buffer
/// (its length is the read size).
pub fn tar_read(w: &mut Worker, root: &Path, buf: &mut [u8]) -> Result<Seen> {
    let mut seen = Seen {
        entries: 1,
        ..Default::default()
    };
    if lstat(w, root)?.is_dir() {
        tar_dir(w, root, buf, &mut seen)?;
    }
    Ok(seen)
}

fn tar_dir(w: &mut Worker, dir: &Path, buf: &mut [u8], seen: &mut Seen) -> Result<()> {
    for name in names(w, dir)? {
        w.check()?;
        let path = dir.join(name);
        let t = w.start();
        let md = fs::symlink_metadata(&path).on("lstat", &path)?;
        let ft = md.file_type();
        seen.entries += 1;
        if ft.is_file() {
            let n = read_file(&path, buf)?;
            if n != md.len() {
                bail!(
                    "{}: file changed as we read it ({n} bytes read, st_size {})",
                    path.display(),
                    md.len()
                );
            }
            w.done(Op::Read, t, n);
            seen.files += 1;
            seen.bytes += n;
        } else if ft.is_symlink() {
            std::hint::black_box(fs::read_link(&path).on("readlink", &path)?);
            w.done(Op::Stat, t, 0);
            seen.symlinks += 1;
        } else {
            w.done(Op::Stat, t, 0);
            if ft.is_dir() {
                seen.dirs += 1;
                tar_dir(w, &path, buf, seen)?;
            }
        }
    }
    Ok(())
}

/// Opens `path` as tar does (`O_NOFOLLOW | O_NOCTTY`) and reads it to the end in reads of
/// `buf.len()`; returns the bytes read.
fn read_file(path: &Path, buf: &mut [u8]) -> Result<u64> {
    let mut f = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
        .on("open", path)?;
    let mut total = 0u64;
    loop {
        let n = f.read(buf).on("read", path)?;
        if n == 0 {
            return Ok(total);
        }
        std::hint::black_box(&buf[..n]);
        total += n as u64;
    }
}
