//! Bonnie++'s file tests (`bonnie++ -n num:max:min:ndirs`): create, stat and delete many
//! files, first in sequential then in random order.
//!
//! Source: Russell Coker, *Bonnie++* 1.03 and 2.00a (`bon_file.cpp`, the `-n` option and
//! its documentation). No code is copied. What is faithful, and what differs:
//! * **Count**: `files` is in units of 1024, as `-n` is. `dirs` > 0 spreads the files over
//!   that many subdirectories (file *i* of *n* goes to directory ⌊i·dirs/n⌋).
//! * **Names**: a 7-digit zero-padded number and 0–12 random alphanumerics; the number comes
//!   first in the sequential tests and last in the random tests, so the sequential names sort
//!   in creation order and the random ones do not. Names are derived from the index and the
//!   seed on demand: memory does not grow with the number of files.
//! * **Sequential**: create in numeric order; stat in readdir order (reading each file's data
//!   when `max_size` > 0, as bonnie++ does); delete in readdir order.
//! * **Random**: create in a pseudo-random order (a keyed permutation of the indices computed
//!   on the fly, not a shuffled list); stat as many randomly picked files as there are files
//!   (picks may repeat, as in bonnie++); delete in another pseudo-random order.
//! * **Sizes**: uniform in [`min_size`, `max_size`] from the seed (0/0: empty files); data
//!   from the run's data pattern, written in pieces of at most [`WRITE_PIECE`] bytes.
//!   bonnie++'s hard-link (-1) and symlink (-2) modes are not offered.
//! * **Sync**: bonnie++ does not sync by default (`-b` fsyncs every file and directory).
//!   Here the sync policy decides: `end` (default) ends every create and delete phase with
//!   syncfs inside its timing; `each` fsyncs each file after writing it and its directory
//!   after each create or delete, like `-b`; `none` is bonnie++'s default.
//! * **Directories**: each instance works in `Bonnie.<idx>`. Directories are made inside the
//!   create phases and removed inside the delete phases (timed, not counted as operations).
//! * **Instances** (`procs`) run concurrently as threads, each in its own directory.
//! * **Timing**: nanosecond monotonic clock; never "+++++" (bonnie++ prints that for tests
//!   under 0.5 s).

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::probe::recorder::Op;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Largest single write when filling a file.
pub const WRITE_PIECE: usize = 4096;
/// Characters of the random part of a name (bonnie++ uses letters and digits).
const ALNUM: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

const fn spec(name: &'static str, kind: PhaseKind) -> PhaseSpec {
    PhaseSpec {
        name,
        kind,
        primary: Primary::OpsPerS,
        ops_unit: "files/s",
    }
}

const SEQ_CREATE: PhaseSpec = spec("seq_create", PhaseKind::Meta);
const SEQ_STAT: PhaseSpec = spec("seq_stat", PhaseKind::Read);
const SEQ_DELETE: PhaseSpec = spec("seq_delete", PhaseKind::Meta);
const RAND_CREATE: PhaseSpec = spec("rand_create", PhaseKind::Meta);
const RAND_STAT: PhaseSpec = spec("rand_stat", PhaseKind::Read);
const RAND_DELETE: PhaseSpec = spec("rand_delete", PhaseKind::Meta);

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "files",
        kind: ParamKind::Count,
        default: "16",
        unit: "×1024 files",
        help: "files per instance, in units of 1024 (bonnie++ -n)",
    },
    ParamSpec {
        name: "max_size",
        kind: ParamKind::Size,
        default: "0",
        unit: "bytes",
        help: "largest file (0: empty files); > 0 makes the stat phases read the data",
    },
    ParamSpec {
        name: "min_size",
        kind: ParamKind::Size,
        default: "0",
        unit: "bytes",
        help: "smallest file",
    },
    ParamSpec {
        name: "dirs",
        kind: ParamKind::Count,
        default: "0",
        unit: "directories",
        help: "subdirectories to spread the files over (0: one directory)",
    },
    ParamSpec {
        name: "procs",
        kind: ParamKind::Count,
        default: "1",
        unit: "instances",
        help: "concurrent instances, each in its own directory",
    },
];

/// The bonnie-files workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "bonnie-files",
    about: "Bonnie++ file tests (-n): create, stat, delete files in sequential and random order",
    params: PARAMS,
    phases: &[
        SEQ_CREATE,
        SEQ_STAT,
        SEQ_DELETE,
        RAND_CREATE,
        RAND_STAT,
        RAND_DELETE,
    ],
    build,
};

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    Ok(Box::new(BonnieFiles::from_params(p)?))
}

/// A validated configuration.
#[derive(Clone, Debug)]
pub struct BonnieFiles {
    /// Files per instance (already multiplied by 1024).
    pub files: u64,
    pub min_size: u64,
    pub max_size: u64,
    pub dirs: u64,
    pub procs: u64,
}

impl BonnieFiles {
    /// Checks the parameters together; a violation is a usage error (exit code 2).
    pub fn from_params(p: &Params) -> Result<Self> {
        let files = p.count("files").unwrap_or(0);
        let (min_size, max_size) = (
            p.bytes("min_size").unwrap_or(0),
            p.bytes("max_size").unwrap_or(0),
        );
        let (dirs, procs) = (p.count("dirs").unwrap_or(0), p.count("procs").unwrap_or(0));
        let problem = if files == 0 {
            "files must be at least 1 (units of 1024)"
        } else if files > 1 << 20 {
            "files must be at most 1048576 (units of 1024)"
        } else if min_size > max_size {
            "min_size must not exceed max_size"
        } else if procs == 0 {
            "procs must be at least 1"
        } else if dirs > files * 1024 {
            "dirs must not exceed the number of files"
        } else {
            ""
        };
        if !problem.is_empty() {
            return Err(usage(format!("bonnie-files: {problem}")));
        }
        Ok(Self {
            files: files * 1024,
            min_size,
            max_size,
            dirs,
            procs,
        })
    }
}

/// SplitMix64: a fast, well-mixed hash of a 64-bit value.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The name of file `i`: 7 digits and 0–12 random alphanumerics, number first when
/// `sequential`, random part first otherwise. Deterministic from (`seed`, `i`).
pub fn file_name(seed: u64, i: u64, sequential: bool) -> String {
    let mut h = mix(seed ^ mix(i));
    let len = (h % 13) as usize;
    let mut random = String::with_capacity(len);
    for _ in 0..len {
        h = mix(h);
        random.push(ALNUM[(h % ALNUM.len() as u64) as usize] as char);
    }
    if sequential {
        format!("{i:07}{random}")
    } else {
        format!("{random}{i:07}")
    }
}

/// A pseudo-random permutation of `0..n` evaluated on the fly: a 4-round Feistel network on
/// the smallest even number of bits covering `n`, cycle-walking values ≥ `n` back in.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// A permutation of `0..n` keyed by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut k = seed;
        let keys = [0; 4].map(|_| {
            k = mix(k);
            k
        });
        Self { n, half_bits, keys }
    }

    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            let f = mix(r ^ key) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The `i`-th element of the permutation (`i < n`).
    pub fn at(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.feistel(i);
        while x >= self.n {
            x = self.feistel(x);
        }
        x
    }
}

impl Workload for BonnieFiles {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let root = cx.workdir().to_path_buf();
        let seed = cx.seed();
        let procs = self.procs as usize;
        let inst = |w: &Worker| Instance::new(self, &root, w.idx, seed);
        cx.phase(&SEQ_CREATE, procs, |w| inst(w).create(w, true))?;
        cx.phase(&SEQ_STAT, procs, |w| inst(w).stat_readdir(w))?;
        cx.phase(&SEQ_DELETE, procs, |w| inst(w).delete_readdir(w))?;
        cx.phase(&RAND_CREATE, procs, |w| inst(w).create(w, false))?;
        cx.phase(&RAND_STAT, procs, |w| inst(w).stat_random(w))?;
        cx.phase(&RAND_DELETE, procs, |w| inst(w).delete_random(w))?;
        Ok(())
    }
}

/// One instance's view: its directory and how indices map to paths.
struct Instance<'a> {
    cfg: &'a BonnieFiles,
    dir: PathBuf,
    /// Seed of this instance's names, sizes and orders.
    seed: u64,
}

impl<'a> Instance<'a> {
    fn new(cfg: &'a BonnieFiles, root: &Path, idx: usize, seed: u64) -> Self {
        Self {
            cfg,
            dir: root.join(format!("Bonnie.{idx}")),
            seed: mix(seed ^ (idx as u64).wrapping_mul(0x1234_5678_9abc_def1)),
        }
    }

    fn subdirs(&self) -> Vec<PathBuf> {
        if self.cfg.dirs == 0 {
            return vec![self.dir.clone()];
        }
        (0..self.cfg.dirs)
            .map(|d| self.dir.join(format!("{d:05}")))
            .collect()
    }

    fn dir_of(&self, i: u64) -> PathBuf {
        if self.cfg.dirs == 0 {
            return self.dir.clone();
        }
        let d = (i as u128 * self.cfg.dirs as u128 / self.cfg.files as u128) as u64;
        self.dir.join(format!("{d:05}"))
    }

    fn size_of(&self, i: u64) -> u64 {
        let span = self.cfg.max_size - self.cfg.min_size;
        self.cfg.min_size
            + if span == 0 {
                0
            } else {
                mix(self.seed ^ !i) % (span + 1)
            }
    }

    /// Makes the directories (timed as part of the phase, not counted).
    fn make_dirs(&self, w: &mut Worker) -> Result<()> {
        let t = w.start();
        std::fs::create_dir(&self.dir).on("mkdir", &self.dir)?;
        for d in self.subdirs().iter().filter(|d| **d != self.dir) {
            std::fs::create_dir(d).on("mkdir", d)?;
        }
        w.done_batch(Op::Mkdir, t, 0, 0);
        Ok(())
    }

    /// Removes the (empty) directories (timed as part of the phase, not counted).
    fn remove_dirs(&self, w: &mut Worker) -> Result<()> {
        let t = w.start();
        for d in self.subdirs().iter().filter(|d| **d != self.dir) {
            std::fs::remove_dir(d).on("rmdir", d)?;
        }
        std::fs::remove_dir(&self.dir).on("rmdir", &self.dir)?;
        w.done_batch(Op::Delete, t, 0, 0);
        Ok(())
    }

    fn create(&self, w: &mut Worker, sequential: bool) -> Result<()> {
        self.make_dirs(w)?;
        let order = Permutation::new(self.cfg.files, self.seed ^ 0xc4ea7e);
        for k in 0..self.cfg.files {
            w.check()?;
            let i = if sequential { k } else { order.at(k) };
            let dir = self.dir_of(i);
            let path = dir.join(file_name(self.seed, i, sequential));
            let size = self.size_of(i);
            let t = w.start();
            let mut f = File::create(&path).on("creating", &path)?;
            let mut left = size as usize;
            while left > 0 {
                let n = left.min(WRITE_PIECE);
                f.write_all(w.data().slice(n)).on("writing", &path)?;
                left -= n;
            }
            if size > 0 {
                w.after_write(&f).on("fsync", &path)?;
            }
            drop(f);
            w.after_dir_change(&dir).on("fsync of directory", &dir)?;
            w.done(Op::Create, t, size);
        }
        w.end_fs(&self.dir).on("syncfs", &self.dir)
    }

    /// stat (and read, for non-empty files) one file; returns bytes read.
    fn stat_one(&self, path: &Path, buf: &mut [u8]) -> Result<u64> {
        let meta = std::fs::metadata(path).on("stat", path)?;
        if self.cfg.max_size == 0 || meta.len() == 0 {
            return Ok(0);
        }
        let mut f = File::open(path).on("opening", path)?;
        let mut total = 0u64;
        loop {
            let n = f.read(buf).on("reading", path)?;
            if n == 0 {
                return Ok(total);
            }
            total += n as u64;
        }
    }

    fn stat_readdir(&self, w: &mut Worker) -> Result<()> {
        let mut buf = vec![0u8; 1 << 16];
        for dir in self.subdirs() {
            for entry in std::fs::read_dir(&dir).on("readdir", &dir)? {
                w.check()?;
                let path = entry.on("readdir", &dir)?.path();
                let t = w.start();
                let bytes = self.stat_one(&path, &mut buf)?;
                w.done(Op::Stat, t, bytes);
            }
        }
        Ok(())
    }

    fn stat_random(&self, w: &mut Worker) -> Result<()> {
        let mut buf = vec![0u8; 1 << 16];
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed ^ 0x57a7);
        for _ in 0..self.cfg.files {
            w.check()?;
            let i = rng.gen_range(0..self.cfg.files);
            let path = self.dir_of(i).join(file_name(self.seed, i, false));
            let t = w.start();
            let bytes = self.stat_one(&path, &mut buf)?;
            w.done(Op::Stat, t, bytes);
        }
        Ok(())
    }

    fn unlink(&self, w: &mut Worker, dir: &Path, path: &Path) -> Result<()> {
        let t = w.start();
        std::fs::remove_file(path).on("unlink", path)?;
        w.after_dir_change(dir).on("fsync of directory", dir)?;
        w.done(Op::Delete, t, 0);
        Ok(())
    }

    fn delete_readdir(&self, w: &mut Worker) -> Result<()> {
        for dir in self.subdirs() {
            // Deleting while reading a directory may make readdir skip entries on some
            // filesystems; read again until it is empty.
            loop {
                let mut deleted = 0u64;
                for entry in std::fs::read_dir(&dir).on("readdir", &dir)? {
                    w.check()?;
                    let path = entry.on("readdir", &dir)?.path();
                    self.unlink(w, &dir, &path)?;
                    deleted += 1;
                }
                if deleted == 0 {
                    break;
                }
            }
        }
        self.remove_dirs(w)?;
        w.end_fs(w_parent(&self.dir)).on("syncfs", &self.dir)
    }

    fn delete_random(&self, w: &mut Worker) -> Result<()> {
        let order = Permutation::new(self.cfg.files, self.seed ^ 0xde1e7e);
        for k in 0..self.cfg.files {
            w.check()?;
            let i = order.at(k);
            let dir = self.dir_of(i);
            let path = dir.join(file_name(self.seed, i, false));
            self.unlink(w, &dir, &path)?;
        }
        self.remove_dirs(w)?;
        w.end_fs(w_parent(&self.dir)).on("syncfs", &self.dir)
    }
}

/// The directory holding an instance's directory (still there after it is removed).
fn w_parent(dir: &Path) -> &Path {
    dir.parent().unwrap_or(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::result::PhaseResult;
    use crate::workload::testutil::in_context;

    #[test]
    fn names_look_like_bonnie_plus_plus() {
        for i in [0u64, 7, 1023, 9_999_999] {
            let s = file_name(1, i, true);
            let r = file_name(1, i, false);
            assert!(s.starts_with(&format!("{i:07}")), "{s}");
            assert!(r.ends_with(&format!("{i:07}")), "{r}");
            assert!((7..=19).contains(&s.len()), "{s}");
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
            assert_eq!(s[7..], r[..r.len() - 7], "same random part either way");
        }
        assert_eq!(file_name(5, 3, true), file_name(5, 3, true));
        let lens: std::collections::HashSet<_> =
            (0..500).map(|i| file_name(9, i, true).len()).collect();
        assert_eq!(lens.len(), 13, "suffix lengths 0..=12 all occur");
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 5, 64, 1000, 1024, 4097, 16384] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.at(i) as usize;
                assert!(!seen[x], "n={n}: {x} twice");
                seen[x] = true;
            }
        }
        let a: Vec<_> = (0..100).map(|i| Permutation::new(100, 1).at(i)).collect();
        let b: Vec<_> = (0..100).map(|i| Permutation::new(100, 2).at(i)).collect();
        assert_ne!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>(), "not the identity");
    }

    fn run(params: &str) -> (Vec<PhaseResult>, usize) {
        let p = Params::parse("bonnie-files", PARAMS, params).unwrap();
        in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
            build(&p).unwrap().run(cx).unwrap();
            let left = std::fs::read_dir(cx.workdir()).unwrap().count();
            (cx.phases().to_vec(), left)
        })
    }

    #[test]
    fn runs_all_phases_and_leaves_nothing() {
        let (phases, left) = run("files=1,procs=2,dirs=4");
        let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "seq_create",
                "seq_stat",
                "seq_delete",
                "rand_create",
                "rand_stat",
                "rand_delete"
            ]
        );
        for p in &phases {
            assert_eq!(p.ops, 2048, "{}", p.name);
            assert_eq!(p.workers, 2);
            assert_eq!(p.bytes, 0, "empty files");
        }
        assert_eq!(left, 0, "work directory empty afterwards");
    }

    #[test]
    fn sized_files_are_written_and_read() {
        let (phases, left) = run("files=1,max_size=4KiB,min_size=1KiB");
        let get = |n: &str| phases.iter().find(|p| p.name == n).unwrap();
        let written = get("seq_create").bytes;
        assert!((1024 * 1024..=4096 * 1024).contains(&written), "{written}");
        assert_eq!(
            get("seq_stat").bytes,
            written,
            "readdir stat reads every file once"
        );
        assert_eq!(
            get("rand_create").bytes,
            written,
            "same sizes in the random test"
        );
        assert!(get("rand_stat").bytes > 0);
        assert_eq!(left, 0);
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        for bad in [
            "files=0",
            "min_size=2K,max_size=1K",
            "procs=0",
            "dirs=5000,files=1",
        ] {
            let p = Params::parse("bonnie-files", PARAMS, bad).unwrap();
            let err = build(&p).err().unwrap_or_else(|| panic!("{bad} accepted"));
            assert_eq!(crate::error::exit_code(&err), 2, "{bad}");
        }
    }
}
