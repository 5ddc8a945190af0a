//! The corpus generator: deterministic trees of files shaped like real ones, for the
//! workloads that need "a kernel tree", "a web cache" or "a home directory" (untar,
//! compile, and the metadata and space workloads).
//!
//! A corpus is a directory tree plus [`FileSet`]s placed in its directories. Everything is
//! derived from `(profile, scale, seed)`: the directories are built once (a few thousand
//! at most), while each file's name, size and mode are computed from its index, so a
//! 250,000-file corpus costs a few hundred kilobytes of memory. File contents are not part
//! of the corpus: writers fill files from the trial's data pool, so they follow `--data`.
//!
//! Profiles at scale 1 (file counts and byte totals are exact at every scale: sizes are
//! drawn from the profile's distribution, then scaled so that they add up to the total):
//!
//! | profile | files | dirs | bytes | sizes |
//! |---|---|---|---|---|
//! | `source-tree` | 21,280 | 1,263 | 222 MiB | log-normal, median 4,055 B, σ 1.41 |
//! | `web-cache` | 250,000 | 16 × 256 | 3.1 GB | log-normal, median 3.4 KB, σ 1.6 |
//! | `maildir` | 50,000 | 20 folders × cur/new/tmp | 250 MB | log-normal, median 3 KiB, σ 1.0 |
//! | `media` | 300 | 20 | 1.65 GB | uniform 3–8 MB |
//! | `desktop` | 20,000 | 2,000 | 1 GiB | log-normal, median 4 KiB, σ 2.35 |
//!
//! * `source-tree`: the file count and bytes of a clean Linux 2.6.20 tree (compilebench's
//!   dataset: 21,280 files in 1,263 directories at most 6 deep, 222 MiB, median file
//!   4,055 B — counted from compilebench's `dataset-unpatched`); `.c`/`.h`/`.S`/`Makefile`/
//!   `Kconfig` names, a random recursive directory tree, files spread unevenly over
//!   directories, 1 in 500 files an executable script, a handful of relative symlinks.
//! * `web-cache`: the 2001 article's squid cache (250,000 files, 3.1 GB), laid out as squid
//!   does (`L1/L2/%08X`, 16 × 256 directories, files named by their swap file number). Each
//!   leaf holds the same number of files, as in squid; here a leaf's numbers are contiguous,
//!   while squid cycles blocks of 256 numbers over the leaves.
//! * `maildir`: Maildir++ folders with `cur`, `new` and `tmp`, message names as Maildir
//!   delivery agents make them.
//! * `media`: photo/music folders of 3–8 MB files (pair it with `--data random`: media is
//!   incompressible).
//! * `desktop`: mixed document tree with log-normal sizes — the shape Douceur & Bolosky
//!   found for file sizes by count over 140 million files on 10,568 desktop file systems
//!   ("A Large-Scale Study of File-System Contents", SIGMETRICS 1999). The parameters
//!   (median 4 KiB, σ = 2.35 of the natural log, capped at 256 MiB) are fsarena's choice,
//!   in line with the 4 KiB median such studies report, not their fitted values.

use crate::context::Worker;
use crate::error::usage;
use crate::probe::recorder::Op;
use crate::workload::bonnie_files::hash;
use crate::workload::tree::TreeCount;
use crate::workload::IoContext;
use anyhow::Result;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::{symlink, OpenOptionsExt};
use std::path::Path;

mod fileset;
mod profiles;

use profiles::join;

/// The corpus profiles, by the names users type.
pub const PROFILES: &[&str] = &["source-tree", "web-cache", "maildir", "media", "desktop"];

/// Size distributions of file sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeDist {
    /// Log-normal with this median (bytes) and σ of the natural log, capped at `max`.
    LogNormal { median: f64, sigma: f64, max: u64 },
    /// Uniform in `[lo, hi]` bytes.
    Uniform { lo: u64, hi: u64 },
}

/// How the files of a set are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// Source files: `word-N.c`, `.h`, `.S`, `Makefile`, `Kconfig`, …
    Source,
    /// Build products next to sources: `word-N.o`, `.word-N.o.cmd`, …
    Objects,
    /// squid's swap files: the file number as 8 hex digits.
    Squid,
    /// Maildir messages: `<time>.M<usec>P<pid>Q<n>.fsarena,S=<size>:2,S`.
    Maildir,
    /// `IMG_0001.JPG`, `track-01.flac`, …
    Media,
    /// Documents: `word-N.ext` with common desktop extensions.
    Desktop,
}

/// A directory of the corpus.
#[derive(Clone, Debug)]
pub struct Dir {
    /// Path relative to the corpus root, `/`-separated; empty for the root.
    pub path: String,
    pub parent: usize,
    pub depth: u32,
}

/// Files placed in a corpus's directories: counts per directory, sizes from an index.
#[derive(Clone, Debug)]
pub struct FileSet {
    key: u64,
    naming: Naming,
    dist: SizeDist,
    /// `start[d]..start[d+1]` are the indices of the files in directory `d`.
    start: Vec<u64>,
    /// Multiplier applied to raw sizes so that they add up to the set's total.
    factor: f64,
    /// The total the sizes were scaled to.
    total_bytes: u64,
}

/// One entry of a corpus, in creation order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Dir { path: String },
    File { path: String, size: u64, mode: u32 },
    Symlink { path: String, target: String },
}

impl Entry {
    /// The entry's path relative to the corpus root.
    pub fn path(&self) -> &str {
        match self {
            Entry::Dir { path } | Entry::File { path, .. } | Entry::Symlink { path, .. } => path,
        }
    }
}

/// A generated tree: directories, one main file set, and symlinks.
#[derive(Clone, Debug)]
pub struct Corpus {
    pub profile: &'static str,
    pub scale: f64,
    pub dirs: Vec<Dir>,
    pub files: FileSet,
    /// Directories that get a symlink to their first file (`link-N` → that file).
    symlink_dirs: Vec<usize>,
}

/// What a corpus holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub files: u64,
    /// Directories below the root.
    pub dirs: u64,
    pub symlinks: u64,
    pub bytes: u64,
}

impl Corpus {
    /// Weights proportional to the main set's files per directory, for placing further
    /// file sets (build products next to sources) in the same directories.
    pub fn dir_weights(&self) -> Vec<f64> {
        (0..self.dirs.len())
            .map(|d| (self.files.in_dir(d).end - self.files.in_dir(d).start) as f64)
            .collect()
    }

    /// Counts and bytes.
    pub fn totals(&self) -> Totals {
        Totals {
            files: self.files.len(),
            dirs: self.dirs.len() as u64 - 1,
            symlinks: self.symlink_dirs.len() as u64,
            bytes: self.files.bytes(),
        }
    }

    /// The path of file `i` of `set` (a set placed in this corpus's directories).
    pub fn file_path(&self, set: &FileSet, i: u64) -> String {
        join(&self.dirs[set.dir_of(i)].path, &set.name(i))
    }

    /// The directories depth first (each followed by its subdirectories' subtrees, in index
    /// order), the order in which `tar c` visits a tree.
    fn dir_order(&self) -> Vec<usize> {
        let mut children = vec![Vec::new(); self.dirs.len()];
        for (d, dir) in self.dirs.iter().enumerate().skip(1) {
            children[dir.parent].push(d);
        }
        let (mut order, mut stack) = (Vec::with_capacity(self.dirs.len()), vec![0usize]);
        while let Some(d) = stack.pop() {
            order.push(d);
            stack.extend(children[d].iter().rev());
        }
        order
    }

    /// Every entry in creation order: each directory, then its files and symlinks, then its
    /// subdirectories' entries, depth first. This is also the order of a `tar c` of the
    /// tree: a directory's entries are contiguous.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        self.dir_order().into_iter().flat_map(move |d| {
            let dir = (d > 0).then(|| Entry::Dir {
                path: self.dirs[d].path.clone(),
            });
            let files = self.files.in_dir(d).map(move |i| Entry::File {
                path: self.file_path(&self.files, i),
                size: self.files.size(i),
                mode: self.files.mode(i),
            });
            let link = self.symlink_dirs.binary_search(&d).ok().map(|_| {
                let first = self.files.in_dir(d).start;
                Entry::Symlink {
                    path: join(&self.dirs[d].path, &format!("link-{d}")),
                    target: self.files.name(first),
                }
            });
            dir.into_iter().chain(files).chain(link)
        })
    }

    /// Writes the corpus below `root` (which must exist): directories (one [`Op::Mkdir`]
    /// each), files filled from the worker's data stream (one [`Op::Create`] each, with its
    /// bytes), symlinks ([`Op::Symlink`]). Under `--sync each` every file is fsynced; under
    /// `end` the caller ends its phase with a syncfs.
    pub fn write(&self, w: &mut Worker, root: &Path) -> Result<TreeCount> {
        let mut count = TreeCount::default();
        for entry in self.entries() {
            w.check()?;
            let path = root.join(entry.path());
            let t = w.start();
            match entry {
                Entry::Dir { .. } => {
                    fs::create_dir(&path).on("mkdir", &path)?;
                    w.done(Op::Mkdir, t, 0);
                    count.dirs += 1;
                }
                Entry::File { size, mode, .. } => {
                    write_file(w, &path, size, mode)?;
                    w.done(Op::Create, t, size);
                    count.files += 1;
                    count.bytes += size;
                }
                Entry::Symlink { target, .. } => {
                    symlink(&target, &path).on("symlink", &path)?;
                    w.done(Op::Symlink, t, 0);
                    count.symlinks += 1;
                }
            }
        }
        Ok(count)
    }
}

/// Largest single write when filling files (the data pool's largest slice is 4 MiB).
pub const WRITE_PIECE: usize = 1 << 20;

/// Creates `path` with `mode` and `size` bytes from the worker's data stream, written in
/// pieces of at most [`WRITE_PIECE`]; fsyncs it under `--sync each` (under `end` the
/// caller ends its phase with one syncfs, not an fsync per file).
pub fn write_file(w: &mut Worker, path: &Path, size: u64, mode: u32) -> Result<()> {
    let mut f = File::options()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .on("create", path)?;
    let mut left = size;
    while left > 0 {
        let n = left.min(WRITE_PIECE as u64) as usize;
        f.write_all(w.data().slice(n)).on("write", path)?;
        left -= n as u64;
    }
    w.after_write(&f).on("fsync", path)?;
    Ok(())
}

#[cfg(test)]
mod tests;
