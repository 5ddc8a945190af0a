//! `ace`: generated workloads in the style of ACE (Mohan et al., "Finding Crash-Consistency
//! Bugs with Bounded Black-Box Crash Testing", OSDI '18): a bounded space of short
//! sequences of file-system operations, each followed by a persistence operation, every
//! sequence run in a directory of its own on one recording.
//!
//! Each workload `wK` starts from `wK/A/foo` (the pattern's `size` bytes, mode 0644, the
//! attribute `user.a`), `wK/A/bar` (4 KiB) and an empty `wK/B`; all workloads' starting
//! files are made first and promised by one `syncfs`. A step is a core operation on `foo`
//! (see [`CORES`]; `rename-over` renames `bar` over it, `creat` makes a new file) and then
//! one of [`PERSISTS`] on what it touched: `fsync` or `fdatasync` of the file, or `fsync`
//! of the directory where it added or removed a name. `seq=1` runs every one-step
//! workload (54); `seq=2` a sample, chosen by the seed, of the two-step ones; `only=`
//! names workloads (`truncate0:fsync+link:fsyncdir`, several joined by `/`).
//!
//! What each persistence operation promises, and nothing more (what POSIX and Linux's
//! `fsync(2)` say, not what a filesystem happens to do):
//! * `fsync` of a file: its contents, size, mode and `user.` attributes, under every name
//!   it has that was itself promised;
//! * `fdatasync`: its contents and size, unless its mode or attributes changed since its
//!   last `fsync` (then nothing: the version promised would carry them);
//! * `fsync` of a directory: the names in it — each there, holding its file's contents if
//!   those were promised — and the names removed from it gone.
//!
//! A new name is not promised by an `fsync` of its file (POSIX asks for the directory's);
//! while an operation is in flight a file may hold either side of it or a mix ("not
//! promised, lost", [`super::expect::Finding::Unpromised`]).

use super::expect::{Expect, Xattrs};
use super::patterns::{contents, Syncs, Tape, Work};
use crate::probe::recorder::Op;
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::Path;
use std::time::Instant;

/// A core operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Core {
    Append,
    Overwrite,
    Truncate0,
    Shrink,
    Grow,
    Falloc,
    FallocKeep,
    Punch,
    Link,
    LinkAcross,
    Rename,
    RenameAcross,
    RenameOver,
    Unlink,
    Creat,
    Setxattr,
    Removexattr,
    Chmod,
}

/// The core operations by name: on `foo` unless said.
pub const CORES: [(Core, &str); 18] = [
    (Core::Append, "append"),           // 4 KiB at its end
    (Core::Overwrite, "overwrite"),     // 4 KiB at 4 KiB, in place
    (Core::Truncate0, "truncate0"),     // ftruncate to 0
    (Core::Shrink, "shrink"),           // ftruncate to half its size and 100 bytes
    (Core::Grow, "grow"),               // ftruncate to twice its size and 100 bytes
    (Core::Falloc, "falloc"),           // fallocate 8 KiB past its end, growing it
    (Core::FallocKeep, "falloc-keep"),  // the same with FALLOC_FL_KEEP_SIZE
    (Core::Punch, "punch"),             // a hole at 4 KiB, 4 KiB long
    (Core::Link, "link"),               // a hard link in A
    (Core::LinkAcross, "link-across"),  // a hard link in B
    (Core::Rename, "rename"),           // to a new name in A
    (Core::RenameAcross, "rename-across"), // to a new name in B
    (Core::RenameOver, "rename-over"),  // A/bar renamed over foo's name
    (Core::Unlink, "unlink"),           // foo's name removed (the file stays open)
    (Core::Creat, "creat"),             // a new 4 KiB file in A
    (Core::Setxattr, "setxattr"),       // a new `user.` attribute
    (Core::Removexattr, "removexattr"), // `user.a` removed
    (Core::Chmod, "chmod"),             // mode 0600 (0640 if it was 0600)
];

/// A persistence operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persist {
    Fsync,
    Fdatasync,
    FsyncDir,
}

/// The persistence operations by name.
pub const PERSISTS: [(Persist, &str); 3] = [
    (Persist::Fsync, "fsync"),
    (Persist::Fdatasync, "fdatasync"),
    (Persist::FsyncDir, "fsyncdir"),
];

/// A core operation, then a persistence operation.
pub type Step = (Core, Persist);

/// Bytes of `bar`, of a new file, and of an append or overwrite.
const CHUNK: usize = 4096;

mod space;
pub use space::{chosen, name, parse, space, valid};

/// One file of a workload, as the program knows it.
#[derive(Clone, Debug)]
struct Inode {
    data: Vec<u8>,
    /// Every contents it had, oldest first, the present ones last.
    history: Vec<Vec<u8>>,
    mode: u32,
    xattrs: Xattrs,
    /// Its names, relative to the workload's directory.
    names: Vec<String>,
    /// Whether what it holds now (contents and metadata) was promised.
    promised: bool,
    /// Whether its mode or attributes changed since its last `fsync`.
    meta_pending: bool,
}

/// What a core operation does on the disk.
#[derive(Debug)]
enum DiskOp {
    Write(usize, u64, Vec<u8>),
    Truncate(usize, u64),
    Fallocate(usize, i32, u64, u64),
    Link(String, String),
    Rename(String, String),
    Unlink(String),
    Creat(String, Vec<u8>),
    SetXattr(usize, String, Vec<u8>),
    RemoveXattr(usize, String),
    Chmod(usize, u32),
}

/// What a core operation changed, for its persistence operation and the promises.
struct Change {
    /// The file an `fsync` or `fdatasync` syncs.
    file: usize,
    /// The directory an `fsync` of a directory syncs (`A` or `B`).
    dir: String,
    /// A file whose contents or metadata changed.
    changed: Option<usize>,
    /// Names that came, with their file.
    added: Vec<(String, usize)>,
    removed: Vec<String>,
    op: DiskOp,
}

/// A workload's files as the program knows them.
struct Model {
    prefix: String,
    seed: u64,
    /// `foo`, `bar`, then the files `creat` made.
    inodes: Vec<Inode>,
    /// Names removed whose directory was not `fsync`ed since.
    removed: Vec<String>,
    /// Names given to another file (`rename-over`) whose directory was not `fsync`ed
    /// since: which file such a name holds is not promised, so neither is what it holds.
    replaced: Vec<String>,
}

fn dir_of(name: &str) -> String {
    name.split_once('/').map_or("A", |x| x.0).to_string()
}

impl Model {
    fn new(seed: u64, prefix: &str, size: usize) -> Model {
        let file = |name: &str, len: usize, xattrs: Xattrs| Inode {
            data: contents(seed, &format!("{prefix}/{name}"), 0, len),
            history: vec![contents(seed, &format!("{prefix}/{name}"), 0, len)],
            mode: 0o644,
            xattrs,
            names: vec![name.to_string()],
            promised: false,
            meta_pending: false,
        };
        Model {
            prefix: prefix.to_string(),
            seed,
            inodes: vec![
                file("A/foo", size, vec![("user.a".to_string(), b"alpha".to_vec())]),
                file("A/bar", CHUNK, Vec::new()),
            ],
            removed: Vec::new(),
            replaced: Vec::new(),
        }
    }

    fn bytes(&self, what: &str, k: usize, len: usize) -> Vec<u8> {
        contents(self.seed, &format!("{}/{what}{k}", self.prefix), 0, len)
    }

    /// Core operation `core` as step `k` of the workload: the model changed, and what to
    /// do on the disk; an error where it cannot run (a name it needs is gone).
    fn step(&mut self, core: Core, k: usize) -> Result<Change, String> {
        let foo_name = self.inodes[0].names.first().cloned();
        let named = || foo_name.clone().ok_or_else(|| "foo has no name".to_string());
        let change = |op: DiskOp| Change {
            file: 0,
            dir: foo_name.as_deref().map_or("A".to_string(), dir_of),
            changed: Some(0),
            added: Vec::new(),
            removed: Vec::new(),
            op,
        };
        let len = self.inodes[0].data.len();
        let c = match core {
            Core::Append | Core::Overwrite => {
                let at = if core == Core::Append { len } else { CHUNK };
                let bytes = self.bytes("chunk", k, CHUNK);
                let data = &mut self.inodes[0].data;
                data.resize(data.len().max(at + CHUNK), 0);
                data[at..at + CHUNK].copy_from_slice(&bytes);
                change(DiskOp::Write(0, at as u64, bytes))
            }
            Core::Truncate0 | Core::Shrink | Core::Grow => {
                let to = match core {
                    Core::Truncate0 => 0,
                    Core::Shrink => (len / 2 + 100).min(len),
                    _ => len * 2 + 100,
                };
                self.inodes[0].data.resize(to, 0);
                change(DiskOp::Truncate(0, to as u64))
            }
            Core::Falloc | Core::FallocKeep => {
                let keep = core == Core::FallocKeep;
                if !keep {
                    self.inodes[0].data.resize(len + 2 * CHUNK, 0);
                }
                let mode = if keep { libc::FALLOC_FL_KEEP_SIZE } else { 0 };
                change(DiskOp::Fallocate(0, mode, len as u64, 2 * CHUNK as u64))
            }
            Core::Punch => {
                let data = &mut self.inodes[0].data;
                let end = data.len().min(2 * CHUNK);
                data.get_mut(CHUNK..end).into_iter().for_each(|x| x.fill(0));
                let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
                change(DiskOp::Fallocate(0, mode, CHUNK as u64, CHUNK as u64))
            }
            Core::Link | Core::LinkAcross | Core::Rename | Core::RenameAcross => {
                let from = named()?;
                let dir = if matches!(core, Core::Link | Core::Rename) { "A" } else { "B" };
                let link = matches!(core, Core::Link | Core::LinkAcross);
                let to = format!("{dir}/{}{k}", if link { "link" } else { "moved" });
                let names = &mut self.inodes[0].names;
                names.push(to.clone());
                let mut c = change(match link {
                    true => DiskOp::Link(from.clone(), to.clone()),
                    false => DiskOp::Rename(from.clone(), to.clone()),
                });
                if !link {
                    names.retain(|n| *n != from);
                    c.removed.push(from);
                }
                c.added.push((to, 0));
                c.dir = dir.to_string();
                c.changed = None;
                c
            }
            Core::RenameOver => {
                let to = named()?;
                let from = match self.inodes[1].names.as_slice() {
                    [one] => one.clone(),
                    _ => return Err("bar has no single name".to_string()),
                };
                self.inodes[0].names.retain(|n| *n != to);
                self.inodes[1].names = vec![to.clone()];
                self.replaced.push(to.clone());
                Change {
                    file: 1,
                    dir: dir_of(&to),
                    changed: None,
                    added: vec![(to.clone(), 1)],
                    removed: vec![from.clone()],
                    op: DiskOp::Rename(from, to),
                }
            }
            Core::Unlink => {
                let name = named()?;
                self.inodes[0].names.retain(|n| *n != name);
                let mut c = change(DiskOp::Unlink(name.clone()));
                c.removed.push(name);
                c.changed = None;
                c
            }
            Core::Creat => {
                let name = format!("A/new{k}");
                let data = self.bytes("new", k, CHUNK);
                self.inodes.push(Inode {
                    data: data.clone(),
                    history: vec![data.clone()],
                    mode: 0o644,
                    xattrs: Vec::new(),
                    names: vec![name.clone()],
                    promised: false,
                    meta_pending: false,
                });
                let file = self.inodes.len() - 1;
                Change {
                    file,
                    dir: "A".to_string(),
                    changed: None,
                    added: vec![(name.clone(), file)],
                    removed: Vec::new(),
                    op: DiskOp::Creat(name, data),
                }
            }
            Core::Setxattr | Core::Removexattr => {
                let value = self.bytes("xattr", k, 64);
                let xattrs = &mut self.inodes[0].xattrs;
                let op = if core == Core::Setxattr {
                    let name = format!("user.b{k}");
                    xattrs.push((name.clone(), value.clone()));
                    xattrs.sort();
                    DiskOp::SetXattr(0, name, value)
                } else {
                    let before = xattrs.len();
                    xattrs.retain(|x| x.0 != "user.a");
                    if xattrs.len() == before {
                        return Err("user.a is gone".to_string());
                    }
                    DiskOp::RemoveXattr(0, "user.a".to_string())
                };
                self.inodes[0].meta_pending = true;
                change(op)
            }
            Core::Chmod => {
                let file = &mut self.inodes[0];
                file.mode = if file.mode == 0o600 { 0o640 } else { 0o600 };
                file.meta_pending = true;
                change(DiskOp::Chmod(0, file.mode))
            }
        };
        if let Some(i) = c.changed {
            let f = &mut self.inodes[i];
            f.promised = false;
            if f.history.last() != Some(&f.data) {
                f.history.push(f.data.clone());
            }
        }
        self.removed.extend(c.removed.iter().cloned());
        Ok(c)
    }
}

/// Does `op` in the workload directory `wdir`, on the open files `fds` (by file).
fn on_disk(wdir: &Path, op: &DiskOp, fds: &mut Vec<File>) -> Result<()> {
    let path = |n: &str| wdir.join(n);
    let check = |r: libc::c_int, what: &str| match r {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()).with_context(|| format!("{what} in {}", wdir.display())),
    };
    let c = |s: &str| std::ffi::CString::new(s).expect("attribute names have no NUL");
    match op {
        DiskOp::Write(i, at, bytes) => fds[*i].write_all_at(bytes, *at)?,
        DiskOp::Truncate(i, len) => fds[*i].set_len(*len)?,
        DiskOp::Fallocate(i, mode, at, len) => {
            // SAFETY: a plain system call on an open descriptor.
            let r = unsafe { libc::fallocate(fds[*i].as_raw_fd(), *mode, *at as i64, *len as i64) };
            check(r, "fallocate")?;
        }
        DiskOp::Link(from, to) => std::fs::hard_link(path(from), path(to)).context("link")?,
        DiskOp::Rename(from, to) => std::fs::rename(path(from), path(to)).context("rename")?,
        DiskOp::Unlink(name) => std::fs::remove_file(path(name)).context("unlink")?,
        DiskOp::Creat(name, data) => {
            let mut f = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(path(name))
                .with_context(|| format!("creating {}", path(name).display()))?;
            f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            f.write_all(data)?;
            fds.push(f);
        }
        DiskOp::SetXattr(i, name, value) => {
            let (fd, n) = (fds[*i].as_raw_fd(), c(name));
            // SAFETY: the value's pointer and length are its own.
            let r = unsafe { libc::fsetxattr(fd, n.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
            check(r, "setxattr")?;
        }
        DiskOp::RemoveXattr(i, name) => {
            // SAFETY: a plain system call on an open descriptor.
            let r = unsafe { libc::fremovexattr(fds[*i].as_raw_fd(), c(name).as_ptr()) };
            check(r, "removexattr")?;
        }
        DiskOp::Chmod(i, mode) => fds[*i].set_permissions(std::fs::Permissions::from_mode(*mode))?,
    }
    Ok(())
}

/// Records file `f`'s present contents and metadata as a new version of `path`, one of its
/// names, begun at `started`.
fn record(e: &mut Expect, path: &str, f: &Inode, started: u64) {
    e.begin_unsynced(path, f.data.clone(), started);
    e.set_mode(path, f.mode);
    e.set_xattrs(path, f.xattrs.clone());
}

/// Makes workload `wK`'s starting files in `dir`, recorded in `e` (promised later).
fn start(dir: &Path, m: &Model, e: &mut Expect, at: u64) -> Result<()> {
    let wdir = dir.join(&m.prefix);
    for d in ["", "A", "B"] {
        std::fs::create_dir(wdir.join(d)).with_context(|| format!("creating {}", wdir.display()))?;
    }
    for f in &m.inodes {
        let name = &f.names[0];
        let mut fd = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(wdir.join(name))
            .with_context(|| format!("creating {}", wdir.join(name).display()))?;
        fd.set_permissions(std::fs::Permissions::from_mode(f.mode))?;
        fd.write_all(&f.data)?;
        let mut fds = vec![fd];
        for (k, v) in &f.xattrs {
            on_disk(&wdir, &DiskOp::SetXattr(0, k.clone(), v.clone()), &mut fds)?;
        }
        let path = format!("{}/{name}", m.prefix);
        record(e, &path, f, at);
        e.track_name(&path);
    }
    Ok(())
}

/// `ace`: the workloads of [`Work::ace`] in `dir`.
pub fn run(dir: &Path, w: &Work, tape: &mut dyn Tape) -> Result<Expect> {
    let mut e = Expect::default();
    let mut s = Syncs::new(w);
    let at = tape.position()?;
    let mut started = Vec::new();
    for (k, _) in w.ace.iter().enumerate() {
        let m = Model::new(w.seed, &format!("w{k}"), w.size);
        start(dir, &m, &mut e, at)?;
        started.push(m);
    }
    // One syncfs promises every workload's starting files.
    let top = File::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    // SAFETY: a plain system call on an open descriptor.
    if unsafe { libc::syncfs(top.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error()).context("syncfs");
    }
    tape.synced();
    let at = tape.position()?;
    for m in &mut started {
        for f in &mut m.inodes {
            f.promised = true;
            for n in &f.names {
                let path = format!("{}/{n}", m.prefix);
                e.promise(&path, at);
                e.promise_name(&path, at);
            }
        }
    }
    for (steps, mut m) in w.ace.iter().zip(started) {
        let t = Instant::now();
        let wdir = dir.join(&m.prefix);
        // Its files opened now, one workload's at a time (thousands of workloads would
        // pass the limit of open files).
        let open = |f: &Inode| {
            let path = wdir.join(&f.names[0]);
            let fd = OpenOptions::new().read(true).write(true).open(&path);
            fd.with_context(|| format!("opening {}", path.display()))
        };
        let mut fds = m.inodes.iter().map(open).collect::<Result<Vec<_>>>()?;
        for (k, &(core, persist)) in steps.iter().enumerate() {
            let begun = tape.position()?;
            let c = m.step(core, k).map_err(anyhow::Error::msg)?;
            on_disk(&wdir, &c.op, &mut fds)?;
            expect_change(&mut e, &m, &c, begun);
            persist_step(&mut e, &mut m, &c, persist, (&wdir, &fds), (&mut s, tape))?;
        }
        tape.done(Op::Other, t, 0);
    }
    Ok(e)
}

/// Records in `e` what change `c` of model `m` did, begun at log position `begun`.
fn expect_change(e: &mut Expect, m: &Model, c: &Change, begun: u64) {
    let path = |n: &str| format!("{}/{n}", m.prefix);
    if let Some(i) = c.changed {
        let f = &m.inodes[i];
        f.names.iter().for_each(|n| record(e, &path(n), f, begun));
    }
    for (n, i) in &c.added {
        let (p, f) = (path(n), &m.inodes[*i]);
        let replaced = e.files.contains_key(&p);
        if !replaced {
            // What the file held before, for its blocks not to count as garbage.
            let before = &f.history[..f.history.len() - 1];
            before.iter().for_each(|d| e.begin_unsynced(&p, d.clone(), begun));
        }
        record(e, &p, f, begun);
        if !replaced {
            e.track_name(&p);
            // A new name holds its file's promised contents wherever it is there.
            if f.promised {
                e.promise(&p, begun);
            }
        }
    }
    c.removed.iter().for_each(|n| e.unlink(&path(n), begun));
}

/// Does persistence operation `p` after change `c`, and records what it promised.
fn persist_step(
    e: &mut Expect,
    m: &mut Model,
    c: &Change,
    p: Persist,
    (wdir, fds): (&Path, &[File]),
    (s, tape): (&mut Syncs, &mut dyn Tape),
) -> Result<()> {
    let prefix = m.prefix.clone();
    let path = |n: &str| format!("{prefix}/{n}");
    match p {
        Persist::Fsync | Persist::Fdatasync => {
            s.file(&fds[c.file], p == Persist::Fdatasync, tape)?;
            let at = tape.position()?;
            let f = &mut m.inodes[c.file];
            if p == Persist::Fsync || !f.meta_pending {
                let unsure = |n: &&String| m.replaced.contains(n);
                f.names.iter().filter(|n| !unsure(n)).for_each(|n| e.promise(&path(n), at));
                f.promised = true;
                f.meta_pending = false;
            }
        }
        Persist::FsyncDir => {
            s.dir(&wdir.join(&c.dir), tape)?;
            let at = tape.position()?;
            let inside = |n: &str| dir_of(n) == c.dir;
            for f in &m.inodes {
                for n in f.names.iter().filter(|n| inside(n)) {
                    e.promise_name(&path(n), at);
                    if f.promised {
                        e.promise(&path(n), at);
                    }
                }
            }
            for n in m.removed.iter().filter(|n| inside(n)) {
                e.promise_unlink(&path(n), at);
            }
            m.removed.retain(|n| !inside(n));
            m.replaced.retain(|n| !inside(n));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
