//! Many small files in a directory tree: create, stat, read and delete them, after the
//! `make-many-files` test of the seed articles (Andrew Morton's program on linux-kernel,
//! 31 Oct 2001: 100,000 files of 4 KiB in a 10-way tree of directories, timed with a
//! `sync`; the KernelTrap ext4 article's 405,000-file variant, whose 777-byte source is not
//! available).
//!
//! **Tree.** Directories are numbered breadth-first: directory 0 is the root
//! (`smallfiles/` in the work directory), the children of directory `d` are
//! `d·fanout + 1 … d·fanout + fanout`, named `d0 … d<fanout−1>` after their slot, so the
//! parent of `d > 0` is `(d − 1) / fanout`. Directory `d` holds files
//! `d·per_dir … d·per_dir + per_dir − 1` (the last one may hold fewer), named `f<index>`.
//! There are `ceil(files / per_dir)` directories; every path is computed from the index, so
//! memory does not grow with the number of files. With the defaults (405,000 files, 100 per
//! directory, fanout 10) that is 4,050 directories on five levels.
//!
//! **Phases.**
//! * `create`: in index order, each directory is made (`mkdir`, one [`Op::Mkdir`]) before its
//!   first file; each file is created (`openat` `O_CREAT|O_EXCL|O_WRONLY` relative to its
//!   directory), written in one `write(2)` per MiB with `--data` bytes, and closed (one
//!   [`Op::Create`] carrying its bytes). Sizes are uniform in [`size_min`, `size_max`], drawn
//!   from a keyed hash of (seed, index): the same in every repetition.
//! * `stat`: walks the tree in readdir order and lstats every entry ([`stat_tree`],
//!   like `find -ls`); the counts are checked against the tree's shape.
//! * `read`: only when `size_max > 0`; opens and reads every file to its end, in creation
//!   order (directory by directory, `openat`), one [`Op::Read`] each; the bytes are checked.
//! * `delete`: `rm -r` of the whole tree ([`remove_tree`], readdir order), checked.
//!
//! Operations are files and directories alike (`entries/s`); each phase that touches every
//! file also notes `files_per_s` = files ÷ phase time, the figure fs_mark prints.
//!
//! **Sync policy**: under `--sync each` every file is fsynced after its write and its
//! directory after each create, mkdir (the parent), unlink and rmdir (the parent) — bonnie++
//! `-b`-like; fs_mark `-S 1` fsyncs the file only. Under `--sync end` the create and delete
//! phases end with a syncfs inside their timing (Morton timed `make-many-files ; sync`).
//! `fsync=true` fsyncs every file after its write whatever the policy (fs_mark `-S 1`; the
//! mail-server suite), counted with the policy's fsyncs.
//!
//! Differs: Morton's tree has files in the leaves only (10 per leaf, 10⁴ leaves), made
//! depth-first with `creat`; here every directory holds `per_dir` files and the tree is filled
//! breadth-first. Files are written from the data pool (Morton wrote a zero buffer).

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::size::format_size;
use crate::workload::bonnie_files::{cstr, hash, write_data, DirFd};
use crate::workload::params::param;
use crate::workload::tree::{remove_tree, stat_tree, TreeCount};
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{bail, Context, Result};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Most files a run may ask for.
const MAX_FILES: u64 = 1_000_000_000;
/// Largest file: these are small files.
const MAX_SIZE: u64 = 1 << 30;
/// Piece size of writes and reads (what one `write(2)` carries).
const IO_CHUNK: usize = 1 << 20;
/// Key of the size stream.
const TAG_SIZE: u64 = 0x736d_616c_6c73_697a;

const PARAMS: &[ParamSpec] = &[
    param(
        "files",
        ParamKind::Count,
        "405000",
        "files",
        "number of files (the seed article's make-many-files made 405,000)",
    ),
    param(
        "per_dir",
        ParamKind::Count,
        "100",
        "files",
        "files per directory; the tree has ceil(files / per_dir) directories",
    ),
    param(
        "fanout",
        ParamKind::Count,
        "10",
        "directories",
        "subdirectories per directory (breadth-first tree; ≥ 1)",
    ),
    param(
        "size_min",
        ParamKind::Size,
        "0",
        "bytes",
        "smallest file; sizes are uniform in [size_min, size_max]",
    ),
    param(
        "size_max",
        ParamKind::Size,
        "0",
        "bytes",
        "largest file (≤ 1GiB); 0 makes empty files and skips the read phase",
    ),
    param(
        "fsync",
        ParamKind::Bool,
        "false",
        "",
        "fsync every file after writing it, whatever --sync says (fs_mark -S 1, a mail server)",
    ),
];

const fn phase(name: &'static str, kind: PhaseKind, unit: &'static str) -> PhaseSpec {
    PhaseSpec {
        name,
        kind,
        primary: Primary::OpsPerS,
        ops_unit: unit,
    }
}

const CREATE: PhaseSpec = phase("create", PhaseKind::Meta, "entries/s");
const STAT: PhaseSpec = phase("stat", PhaseKind::Read, "entries/s");
const READ: PhaseSpec = phase("read", PhaseKind::Read, "files/s");
const DELETE: PhaseSpec = phase("delete", PhaseKind::Meta, "entries/s");
const PHASES: &[PhaseSpec] = &[CREATE, STAT, READ, DELETE];

/// fs_mark's "Files/sec".
pub const FIGURES: &[Figure] = &[Figure::higher("files_per_s", "files/s")];

/// The `smallfiles` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "smallfiles",
    about: "many small files in a directory tree (make-many-files, 405,000 files): \
            create, stat, read, delete",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: None,
    resolve: None,
    // A directory per 100 files besides the files.
    database: None,
    programs: &[],
    phase_time_knobs: &[super::Knob::new("files", &[], 1.1)],
    build,
};

/// The shape of the tree: which directory holds which file, computed from indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tree {
    pub files: u64,
    pub per_dir: u64,
    pub fanout: u64,
}

impl Tree {
    /// Number of directories, the root included.
    pub fn dirs(&self) -> u64 {
        self.files.div_ceil(self.per_dir).max(1)
    }

    /// The directory holding file `i`.
    pub fn dir_of(&self, i: u64) -> u64 {
        i / self.per_dir
    }

    /// The files of directory `d`.
    pub fn files_of(&self, d: u64) -> std::ops::Range<u64> {
        let start = (d * self.per_dir).min(self.files);
        start..(start + self.per_dir).min(self.files)
    }

    /// Directory `d`'s path relative to the root (empty for the root), into `out`.
    pub fn dir_path(&self, d: u64, out: &mut PathBuf) {
        let mut slots = Vec::new();
        let mut d = d;
        while d > 0 {
            slots.push((d - 1) % self.fanout);
            d = (d - 1) / self.fanout;
        }
        out.clear();
        for slot in slots.iter().rev() {
            out.push(format!("d{slot}"));
        }
    }

    /// File `i`'s path relative to the root.
    pub fn file_path(&self, i: u64) -> PathBuf {
        let mut p = PathBuf::new();
        self.dir_path(self.dir_of(i), &mut p);
        p.push(format!("f{i}"));
        p
    }
}

/// The validated `smallfiles` configuration.
#[derive(Clone, Copy, Debug)]
pub struct SmallFiles {
    tree: Tree,
    size_min: u64,
    size_max: u64,
    /// fsync each file after its write regardless of the sync policy.
    fsync: bool,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let count = |k| p.count(k).expect("counts have defaults");
    let size = |k| p.bytes(k).expect("sizes have defaults");
    let (files, per_dir, fanout) = (count("files"), count("per_dir"), count("fanout"));
    let (size_min, size_max) = (size("size_min"), size("size_max"));
    let f = format_size;
    let problem = if files == 0 || files > MAX_FILES {
        format!("files={files}: must be 1 to {MAX_FILES}")
    } else if per_dir == 0 {
        "per_dir=0: a directory must hold at least 1 file".to_string()
    } else if fanout == 0 {
        "fanout=0: must be at least 1 (use per_dir ≥ files for one flat directory)".to_string()
    } else if size_min > size_max {
        format!(
            "size_min={} is larger than size_max={}",
            f(size_min),
            f(size_max)
        )
    } else if size_max > MAX_SIZE {
        format!("size_max={}: at most {} per file", f(size_max), f(MAX_SIZE))
    } else {
        let tree = Tree {
            files,
            per_dir,
            fanout,
        };
        return Ok(Box::new(SmallFiles {
            tree,
            size_min,
            size_max,
            fsync: p.flag("fsync"),
        }));
    };
    Err(usage(format!("smallfiles: {problem}")))
}

impl Workload for SmallFiles {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let base = cx.workdir().to_path_buf();
        let root = base.join("smallfiles");
        let key = hash(cx.seed(), TAG_SIZE);
        let n = self.tree.files as f64;
        cx.phase(&CREATE, 1, |w| self.create(w, &root, key))?;
        note_files_per_s(cx, n);
        cx.phase(&STAT, 1, |w| self.stat(w, &root))?;
        note_files_per_s(cx, n);
        if self.size_max > 0 {
            cx.phase(&READ, 1, |w| self.read(w, &root, key))?;
        }
        cx.phase(&DELETE, 1, |w| self.delete(w, &root, &base))?;
        note_files_per_s(cx, n);
        Ok(())
    }
}

/// Notes files ÷ time of the phase just measured (fs_mark's "Files/sec").
fn note_files_per_s(cx: &mut TrialContext, files: f64) {
    if let Some(wall_s) = cx.phases().last().map(|p| p.wall_s) {
        if wall_s > 0.0 {
            cx.note("files_per_s", files / wall_s);
        }
    }
}

impl SmallFiles {
    /// File `i`'s size: uniform in [size_min, size_max] (Lemire's multiply-shift of a
    /// keyed hash).
    fn size_of(&self, key: u64, i: u64) -> u64 {
        let span = u128::from(self.size_max - self.size_min) + 1;
        let r = u128::from(hash(key, i));
        self.size_min + ((r * span) >> 64) as u64
    }

    /// Makes every directory before its first file and creates every file, in index order.
    fn create(&self, w: &mut Worker, root: &Path, key: u64) -> Result<()> {
        let (mut rel, mut name) = (PathBuf::new(), Vec::with_capacity(24));
        for d in 0..self.tree.dirs() {
            self.tree.dir_path(d, &mut rel);
            let dir = root.join(&rel);
            w.check()?;
            let t = w.start();
            std::fs::create_dir(&dir).on("mkdir", &dir)?;
            let parent = dir.parent().expect("a directory below the work directory");
            w.after_dir_change(parent).on("fsync", parent)?;
            w.done(Op::Mkdir, t, 0);
            let fd = DirFd::open(&dir)?;
            for i in self.tree.files_of(d) {
                w.check()?;
                file_name(i, &mut name);
                let size = self.size_of(key, i);
                let t = w.start();
                create_file(w, &fd, &dir, &name, size, self.fsync)
                    .with_context(|| fd.what("create", &name))?;
                w.done(Op::Create, t, size);
            }
        }
        w.end_fs(root).context("syncfs after creating files")?;
        Ok(())
    }

    /// lstat of every entry, in readdir order; checks the counts.
    fn stat(&self, w: &mut Worker, root: &Path) -> Result<()> {
        let seen = stat_tree(w, root)?;
        let subdirs = self.tree.dirs() - 1;
        self.check_count("stat", root, seen, subdirs)
    }

    /// Reads every file to its end, in creation order; checks each file's size.
    fn read(&self, w: &mut Worker, root: &Path, key: u64) -> Result<()> {
        let mut buf = vec![0u8; (self.size_max as usize).clamp(1, IO_CHUNK)];
        let (mut rel, mut name) = (PathBuf::new(), Vec::with_capacity(24));
        for d in 0..self.tree.dirs() {
            self.tree.dir_path(d, &mut rel);
            let fd = DirFd::open(&root.join(&rel))?;
            for i in self.tree.files_of(d) {
                w.check()?;
                file_name(i, &mut name);
                let t = w.start();
                let got =
                    read_file(&fd, &name, &mut buf).with_context(|| fd.what("read", &name))?;
                w.done(Op::Read, t, got);
                let want = self.size_of(key, i);
                if got != want {
                    bail!(
                        "{}: read {got} bytes, created {want}",
                        fd.what("read", &name)
                    );
                }
            }
        }
        Ok(())
    }

    /// `rm -r` of the tree; checks the counts, then applies the sync policy.
    fn delete(&self, w: &mut Worker, root: &Path, base: &Path) -> Result<()> {
        let removed = remove_tree(w, root)?;
        self.check_count("delete", root, removed, self.tree.dirs())?;
        w.end_fs(base).context("syncfs after deleting files")?;
        Ok(())
    }

    fn check_count(&self, what: &str, root: &Path, got: TreeCount, dirs: u64) -> Result<()> {
        let files = self.tree.files;
        if got.files != files || got.dirs != dirs || got.symlinks != 0 {
            bail!(
                "{what}: expected {files} files and {dirs} directories in {}, found {} and {}",
                root.display(),
                got.files,
                got.dirs
            );
        }
        Ok(())
    }
}

/// Creates file `name` in `fd` (the directory `dir`), writes `size` bytes and closes it,
/// applying the sync policy to the file and then its directory; `fsync` fsyncs the file
/// whatever the policy.
fn create_file(
    w: &mut Worker,
    fd: &DirFd,
    dir: &Path,
    name: &[u8],
    size: u64,
    fsync: bool,
) -> io::Result<()> {
    let f = fd.create(cstr(name))?;
    write_data(w, &f, size, IO_CHUNK)?;
    if fsync && w.sync_policy() != crate::policy::SyncPolicy::Each {
        w.fsync(&f)?;
    }
    w.after_write(&f)?;
    drop(f);
    w.after_dir_change(dir)
}

/// Opens file `name` in `fd` and reads it to its end; returns the bytes read.
fn read_file(fd: &DirFd, name: &[u8], buf: &mut [u8]) -> io::Result<u64> {
    let mut f = fd.open_at(cstr(name), libc::O_RDONLY | libc::O_CLOEXEC)?;
    let mut got = 0u64;
    loop {
        match f.read(buf)? {
            0 => return Ok(got),
            n => got += n as u64,
        }
    }
}

/// Puts `f<i>`, NUL-terminated, into `out`.
fn file_name(i: u64, out: &mut Vec<u8>) {
    out.clear();
    let _ = write!(out, "f{i}");
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::result::PhaseResult;
    use crate::workload::testutil::in_context;
    use crate::workload::WorkloadSpec;

    fn tree(files: u64, per_dir: u64, fanout: u64) -> Tree {
        Tree {
            files,
            per_dir,
            fanout,
        }
    }

    #[test]
    fn paths_follow_a_breadth_first_tree() {
        let t = tree(25, 2, 3);
        assert_eq!(t.dirs(), 13);
        let p = |i| t.file_path(i).to_string_lossy().into_owned();
        assert_eq!(p(0), "f0");
        assert_eq!(p(1), "f1");
        assert_eq!(p(2), "d0/f2");
        assert_eq!(p(7), "d2/f7");
        assert_eq!(p(8), "d0/d0/f8");
        assert_eq!(p(13), "d0/d2/f13");
        assert_eq!(p(14), "d1/d0/f14");
        assert_eq!(p(24), "d2/d2/f24");
        assert_eq!(t.files_of(12), 24..25, "the last directory is partial");
        assert_eq!(t.files_of(0), 0..2);
        // The defaults: 4,050 directories, the last one on the fifth level (depth 4).
        let t = tree(405_000, 100, 10);
        assert_eq!(t.dirs(), 4050);
        assert_eq!(
            t.file_path(404_999).to_string_lossy(),
            "d2/d9/d3/d8/f404999"
        );
        assert_eq!(t.file_path(111_099).to_string_lossy(), "d9/d9/d9/f111099");
        assert_eq!(
            t.file_path(111_100).to_string_lossy(),
            "d0/d0/d0/d0/f111100"
        );
        assert_eq!(tree(1, 100, 10).dirs(), 1);
        assert_eq!(tree(100, 100, 10).dirs(), 1);
        assert_eq!(tree(101, 100, 10).dirs(), 2);
    }

    #[test]
    fn every_directory_has_at_most_fanout_children_and_a_parent_made_before_it() {
        let t = tree(10_000, 7, 4);
        let mut children = std::collections::HashMap::<PathBuf, u64>::new();
        let mut made = std::collections::HashSet::from([PathBuf::new()]);
        let mut rel = PathBuf::new();
        for d in 1..t.dirs() {
            t.dir_path(d, &mut rel);
            let parent = rel.parent().unwrap().to_path_buf();
            assert!(made.contains(&parent), "parent of {rel:?} made before it");
            *children.entry(parent).or_default() += 1;
            assert!(made.insert(rel.clone()), "{rel:?} twice");
        }
        assert!(children.values().all(|&c| c <= 4));
        assert_eq!(made.len() as u64, t.dirs());
    }

    /// Runs the workload on a fresh directory target; returns its phases and what was left
    /// in the work directory afterwards.
    fn run(params: &str, sync: SyncPolicy) -> (Vec<PhaseResult>, Vec<PathBuf>) {
        let spec = WorkloadSpec::parse(&format!("smallfiles:{params}")).unwrap();
        let workload = (spec.info.build)(&spec.params).unwrap();
        in_context(DataPolicy::Random, sync, |cx| {
            workload.run(cx).unwrap();
            let left = std::fs::read_dir(cx.workdir()).unwrap();
            let left = left.map(|e| e.unwrap().path()).collect();
            (cx.phases().to_vec(), left)
        })
    }

    fn count(p: &PhaseResult, op: &str) -> u64 {
        p.lat_by_op
            .iter()
            .find(|o| o.op == op)
            .map_or(0, |o| o.count)
    }

    #[test]
    fn end_to_end_with_data() {
        let (phases, left) = run(
            "files=1000,per_dir=30,fanout=3,size_min=1,size_max=5000",
            SyncPolicy::End,
        );
        let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["create", "stat", "read", "delete"]);
        let dirs = 1000u64.div_ceil(30);
        let create = &phases[0];
        assert_eq!(
            (count(create, "create"), count(create, "mkdir")),
            (1000, dirs)
        );
        assert_eq!(create.ops, 1000 + dirs);
        assert!(
            create.bytes > 1000 && create.bytes < 5_000_000,
            "{}",
            create.bytes
        );
        assert_eq!(count(create, "fsync"), 1, "one syncfs under --sync end");
        assert!(create.extra["files_per_s"] > 0.0);
        assert_eq!(
            phases[1].ops,
            1000 + dirs - 1,
            "stat of every entry below the root"
        );
        assert_eq!(phases[2].ops, 1000);
        assert_eq!(phases[2].bytes, create.bytes, "read what was written");
        let delete = &phases[3];
        assert_eq!(
            (count(delete, "delete"), count(delete, "rmdir")),
            (1000, dirs)
        );
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    #[test]
    fn empty_files_skip_the_read_phase_and_sync_each_fsyncs_per_entry() {
        let (phases, left) = run("files=200,per_dir=50,fanout=2", SyncPolicy::Each);
        let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["create", "stat", "delete"]);
        // create: file and its directory per file, the parent per mkdir (4 directories).
        assert_eq!(count(&phases[0], "fsync"), 2 * 200 + 4);
        assert_eq!(phases[0].bytes, 0);
        // delete: the directory per unlink, the parent per rmdir.
        assert_eq!(count(&phases[2], "fsync"), 200 + 4);
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    #[test]
    fn fsync_true_fsyncs_each_file_once_whatever_the_policy() {
        let params = "files=200,per_dir=50,fanout=2,size_max=4KiB,fsync=true";
        // --sync none: the workload's own fsync of each file, nothing else.
        let (phases, _) = run(params, SyncPolicy::None);
        assert_eq!(count(&phases[0], "fsync"), 200);
        assert_eq!(phases[0].ops, 200 + 4, "fsyncs are not operations");
        // --sync end: and the syncfs at the end.
        let (phases, _) = run(params, SyncPolicy::End);
        assert_eq!(count(&phases[0], "fsync"), 200 + 1);
        // --sync each already fsyncs each file (and directory): not a second time.
        let (phases, left) = run(params, SyncPolicy::Each);
        assert_eq!(count(&phases[0], "fsync"), 2 * 200 + 4);
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    #[test]
    fn sizes_are_uniform_and_repeatable() {
        let sf = SmallFiles {
            tree: tree(1, 1, 1),
            size_min: 10,
            size_max: 20,
            fsync: false,
        };
        let sizes: std::collections::HashSet<_> = (0..1000).map(|i| sf.size_of(7, i)).collect();
        assert_eq!(sizes, (10..=20).collect());
        assert_eq!(sf.size_of(7, 3), sf.size_of(7, 3));
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        for bad in [
            "files=0",
            "per_dir=0",
            "fanout=0",
            "size_min=2KiB,size_max=1KiB",
            "size_max=2GiB",
            "files=x",
            "depth=3",
        ] {
            let err = WorkloadSpec::parse(&format!("smallfiles:{bad}")).err();
            let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
            assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
        }
        assert!(WorkloadSpec::parse("smallfiles:files=1,per_dir=1,fanout=1").is_ok());
    }
}
