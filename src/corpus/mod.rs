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

const WORDS: &[&str] = &[
    "core", "net", "fs", "mm", "block", "crypto", "sound", "drivers", "arch", "include", "lib",
    "kernel", "init", "ipc", "security", "scripts", "tools", "usb", "pci", "scsi", "video",
    "input", "media", "char", "gpu", "power", "acpi", "irq", "dma", "clk", "gpio", "i2c", "spi",
    "mtd", "tty", "serial", "hid", "ata", "md", "nfs", "ext3", "xfs", "proc", "sysfs", "sched",
    "time", "timer", "signal", "fork", "exit", "page", "slab", "swap", "vmscan", "filemap",
    "inode", "dentry", "super", "namei", "file", "buffer", "bio", "elevator", "socket", "tcp",
    "udp", "ip", "route", "neigh", "dev", "skbuff", "filter", "bridge", "vlan", "wireless", "main",
    "util", "common", "setup", "probe", "config", "debug", "trace", "test", "misc",
];

fn word(h: u64) -> &'static str {
    WORDS[(h % WORDS.len() as u64) as usize]
}

/// A uniform double in (0, 1) from a hash.
fn unit(h: u64) -> f64 {
    ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal variate from two hashes (Box–Muller).
fn normal(h1: u64, h2: u64) -> f64 {
    (-2.0 * unit(h1).ln()).sqrt() * (std::f64::consts::TAU * unit(h2)).cos()
}

impl SizeDist {
    /// The raw size of draw `(key, i)` before scaling to the set's total.
    fn raw(&self, key: u64, i: u64) -> f64 {
        match *self {
            SizeDist::LogNormal { median, sigma, max } => {
                let z = normal(hash(key, 2 * i), hash(key, 2 * i + 1));
                (median * (sigma * z).exp()).min(max as f64)
            }
            SizeDist::Uniform { lo, hi } => lo as f64 + unit(hash(key, i)) * (hi - lo) as f64,
        }
    }
}

impl FileSet {
    /// `count` files spread over `dirs` (weights per directory), with sizes from `dist`
    /// scaled to add up to `total_bytes`.
    pub fn new(
        key: u64,
        naming: Naming,
        dist: SizeDist,
        count: u64,
        total_bytes: u64,
        weights: &[f64],
    ) -> Self {
        let start = spread(count, weights);
        let raw_sum: f64 = (0..count).map(|i| dist.raw(key, i)).sum();
        let factor = if raw_sum > 0.0 {
            total_bytes as f64 / raw_sum
        } else {
            0.0
        };
        Self {
            key,
            naming,
            dist,
            start,
            factor,
            total_bytes,
        }
    }

    /// Number of files.
    pub fn len(&self) -> u64 {
        *self.start.last().unwrap_or(&0)
    }

    /// Whether the set has no files.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The indices of the files in directory `d`.
    pub fn in_dir(&self, d: usize) -> std::ops::Range<u64> {
        self.start[d]..self.start[d + 1]
    }

    /// The directory of file `i`.
    pub fn dir_of(&self, i: u64) -> usize {
        self.start.partition_point(|&s| s <= i) - 1
    }

    /// The size of file `i` in bytes.
    pub fn size(&self, i: u64) -> u64 {
        (self.dist.raw(self.key, i) * self.factor).round() as u64
    }

    /// The sum of all sizes (equal to the requested total up to rounding).
    pub fn bytes(&self) -> u64 {
        (0..self.len()).map(|i| self.size(i)).sum()
    }

    /// The requested total.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// The mode bits of file `i`: 0644, or 0755 for one file in 500 of source trees.
    pub fn mode(&self, i: u64) -> u32 {
        let exec =
            matches!(self.naming, Naming::Source) && hash(self.key ^ 0x6d6f_6465, i) % 500 == 0;
        if exec {
            0o755
        } else {
            0o644
        }
    }

    /// The name of file `i` (unique within its directory).
    pub fn name(&self, i: u64) -> String {
        let h = hash(self.key ^ 0x6e61_6d65, i);
        let local = i - self.start[self.dir_of(i)];
        match self.naming {
            Naming::Source => {
                let ext = match h % 100 {
                    0..=44 => "c",
                    45..=79 => "h",
                    80..=84 => "S",
                    85..=89 => "txt",
                    _ => "",
                };
                if ext.is_empty() {
                    let base = if h % 2 == 0 { "Makefile" } else { "Kconfig" };
                    format!("{base}.{local}")
                } else {
                    format!("{}-{local}.{ext}", word(h >> 8))
                }
            }
            Naming::Objects => {
                let ext = ["o", "o.cmd", "ko", "mod.c", "a"][(h % 5) as usize];
                format!("{}-{local}.{ext}", word(h >> 8))
            }
            Naming::Squid => format!("{i:08X}"),
            Naming::Maildir => {
                let t = 1_700_000_000 + i * 37;
                format!(
                    "{t}.M{}P{}Q{local}.fsarena,S={}:2,S",
                    h % 1_000_000,
                    1000 + (h >> 20) % 30_000,
                    self.size(i)
                )
            }
            Naming::Media => {
                if h % 2 == 0 {
                    format!("IMG_{local:04}.JPG")
                } else {
                    format!("track-{local:02}.flac")
                }
            }
            Naming::Desktop => {
                let ext = [
                    "txt", "pdf", "odt", "png", "jpg", "html", "xml", "csv", "ini", "log",
                ][(h % 10) as usize];
                format!("{}-{local}.{ext}", word(h >> 8))
            }
        }
    }
}

/// Splits `count` items over directories in proportion to `weights` (largest remainder);
/// returns the prefix sums (`len = weights.len() + 1`).
fn spread(count: u64, weights: &[f64]) -> Vec<u64> {
    let total: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights
        .iter()
        .map(|w| count as f64 * w / total.max(f64::MIN_POSITIVE))
        .collect();
    let mut counts: Vec<u64> = exact.iter().map(|x| x.floor() as u64).collect();
    let mut left = count - counts.iter().sum::<u64>().min(count);
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for &d in order.iter().cycle() {
        if left == 0 {
            break;
        }
        counts[d] += 1;
        left -= 1;
    }
    let mut start = Vec::with_capacity(counts.len() + 1);
    let mut acc = 0;
    start.push(0);
    for c in counts {
        acc += c;
        start.push(acc);
    }
    start
}

/// Scales a count, keeping at least 1.
fn scaled(n: u64, scale: f64) -> u64 {
    ((n as f64 * scale).round() as u64).max(1)
}

/// A random recursive tree of `n` directories below the root, at most `max_depth` deep:
/// each new directory hangs under a uniformly chosen earlier one that is not too deep.
fn random_tree(key: u64, n: u64, max_depth: u32) -> Vec<Dir> {
    let mut dirs = vec![Dir {
        path: String::new(),
        parent: 0,
        depth: 0,
    }];
    let mut children = vec![0u64];
    for i in 1..=n {
        let mut parent = (hash(key, i) % dirs.len() as u64) as usize;
        let mut tries = 0;
        while dirs[parent].depth >= max_depth && tries < 64 {
            parent = (hash(key ^ 0x7472_7920, i * 64 + tries) % dirs.len() as u64) as usize;
            tries += 1;
        }
        if dirs[parent].depth >= max_depth {
            parent = 0;
        }
        let name = format!("{}{}", word(hash(key ^ 0x646e_616d, i)), children[parent]);
        children[parent] += 1;
        children.push(0);
        let path = join(&dirs[parent].path, &name);
        let depth = dirs[parent].depth + 1;
        dirs.push(Dir {
            path,
            parent,
            depth,
        });
    }
    dirs
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}/{name}")
    }
}

/// Uneven per-directory weights: log-normal with σ 1 (a few directories hold many files).
fn lognormal_weights(key: u64, n: usize) -> Vec<f64> {
    (0..n as u64)
        .map(|d| normal(hash(key, 2 * d), hash(key, 2 * d + 1)).exp())
        .collect()
}

impl Corpus {
    /// The corpus of `profile` at `scale` (file counts, directory counts and bytes
    /// multiplied by it), deterministic from `seed`. Unknown profiles are usage errors.
    pub fn new(profile: &str, scale: f64, seed: u64) -> Result<Self> {
        let profile = PROFILES
            .iter()
            .copied()
            .find(|p| *p == profile)
            .ok_or_else(|| {
                usage(format!(
                    "unknown corpus profile '{}'{}; valid: {}",
                    crate::error::echo(profile),
                    crate::error::did_you_mean(profile, PROFILES.iter().copied()),
                    PROFILES.join(", ")
                ))
            })?;
        if !(scale > 0.0 && scale <= 100.0) {
            return Err(usage(format!(
                "scale={scale}: must be above 0 and at most 100"
            )));
        }
        let key = hash(seed, 0x636f_7270_7573);
        let bytes = |b: f64| (b * scale).round() as u64;
        let (dirs, files, symlink_dirs) = match profile {
            "source-tree" => {
                let dirs = random_tree(key, scaled(1263, scale), 6);
                let weights = lognormal_weights(key ^ 1, dirs.len());
                let dist = SizeDist::LogNormal {
                    median: 4055.0,
                    sigma: 1.41,
                    max: 1 << 20,
                };
                let n = scaled(21_280, scale);
                let fs = FileSet::new(
                    key ^ 2,
                    Naming::Source,
                    dist,
                    n,
                    bytes(222.0 * 1048576.0),
                    &weights,
                );
                let links = (0..dirs.len())
                    .filter(|&d| hash(key ^ 3, d as u64) % 100 == 0)
                    .collect();
                (dirs, fs, links)
            }
            "web-cache" => {
                let l2 = scaled(256, scale);
                let mut dirs = vec![Dir {
                    path: String::new(),
                    parent: 0,
                    depth: 0,
                }];
                for a in 0..16u64 {
                    dirs.push(Dir {
                        path: format!("{a:02X}"),
                        parent: 0,
                        depth: 1,
                    });
                }
                for a in 0..16u64 {
                    for b in 0..l2 {
                        dirs.push(Dir {
                            path: format!("{a:02X}/{b:02X}"),
                            parent: 1 + a as usize,
                            depth: 2,
                        });
                    }
                }
                // squid's (f / l2 / l2) % 16, (f / l2) % l2 fills the leaves evenly.
                let mut weights = vec![0.0; dirs.len()];
                weights[17..].iter_mut().for_each(|w| *w = 1.0);
                let dist = SizeDist::LogNormal {
                    median: 3400.0,
                    sigma: 1.6,
                    max: 64 << 20,
                };
                let n = scaled(250_000, scale);
                let fs = FileSet::new(key ^ 2, Naming::Squid, dist, n, bytes(3.1e9), &weights);
                (dirs, fs, Vec::new())
            }
            "maildir" => {
                let folders = scaled(20, scale);
                let mut dirs = vec![Dir {
                    path: String::new(),
                    parent: 0,
                    depth: 0,
                }];
                let mut weights = vec![0.0];
                let fw = lognormal_weights(key ^ 1, folders as usize);
                for (f, w) in fw.iter().enumerate() {
                    let name = if f == 0 {
                        "INBOX".to_string()
                    } else {
                        format!(".{}{f}", word(hash(key ^ 4, f as u64)))
                    };
                    let top = dirs.len();
                    dirs.push(Dir {
                        path: name.clone(),
                        parent: 0,
                        depth: 1,
                    });
                    weights.push(0.0);
                    for (sub, share) in [("cur", 0.97), ("new", 0.03), ("tmp", 0.0)] {
                        dirs.push(Dir {
                            path: format!("{name}/{sub}"),
                            parent: top,
                            depth: 2,
                        });
                        weights.push(w * share);
                    }
                }
                let dist = SizeDist::LogNormal {
                    median: 3072.0,
                    sigma: 1.0,
                    max: 32 << 20,
                };
                let n = scaled(50_000, scale);
                let fs = FileSet::new(key ^ 2, Naming::Maildir, dist, n, bytes(250e6), &weights);
                (dirs, fs, Vec::new())
            }
            "media" => {
                let albums = scaled(20, scale);
                let mut dirs = vec![Dir {
                    path: String::new(),
                    parent: 0,
                    depth: 0,
                }];
                for a in 0..albums {
                    dirs.push(Dir {
                        path: format!("album-{a:03}"),
                        parent: 0,
                        depth: 1,
                    });
                }
                let mut weights = vec![1.0; dirs.len()];
                weights[0] = 0.0;
                let dist = SizeDist::Uniform {
                    lo: 3_000_000,
                    hi: 8_000_000,
                };
                let n = scaled(300, scale);
                let fs = FileSet::new(key ^ 2, Naming::Media, dist, n, bytes(1.65e9), &weights);
                (dirs, fs, Vec::new())
            }
            _ => {
                let dirs = random_tree(key, scaled(2000, scale), 12);
                let weights = lognormal_weights(key ^ 1, dirs.len());
                let dist = SizeDist::LogNormal {
                    median: 4096.0,
                    sigma: 2.35,
                    max: 256 << 20,
                };
                let n = scaled(20_000, scale);
                let fs = FileSet::new(
                    key ^ 2,
                    Naming::Desktop,
                    dist,
                    n,
                    bytes(1073741824.0),
                    &weights,
                );
                let links = (0..dirs.len())
                    .filter(|&d| hash(key ^ 3, d as u64) % 50 == 0)
                    .collect();
                (dirs, fs, links)
            }
        };
        let symlink_dirs = symlink_dirs
            .into_iter()
            .filter(|&d: &usize| !files.in_dir(d).is_empty())
            .collect();
        Ok(Self {
            profile,
            scale,
            dirs,
            files,
            symlink_dirs,
        })
    }

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
