//! Mongo, Hans Reiser's file-tree benchmark (2000; LTP `testcases/kernel/fs/mongo/`:
//! `mongo.pl`, `reiser_fract_tree.c`, `mongo_read.c`, `mongo_slinks.c`, `map5.c`): build
//! a tree of files whose sizes follow a heavy-tailed distribution, then copy, symlink, read,
//! stat, rename and delete it, for four parameter sets on a fresh filesystem each.
//!
//! Faithful:
//! * **Sets** (total bytes, median file size): 1 = (50 MiB, 100), 2 = (100 MiB, 1000),
//!   3 = (100 MiB, 10000), 4 = (100 MiB, 100000); fixed maximum file size 1,000,000,
//!   directories of median 100 and maximum 10,000 files, branching median 0 and maximum 1,
//!   write buffer 4096. `set=all` runs the four in order, each after `cx.fresh_target()`
//!   (a new mkfs on loop targets, as mongo.pl's umount/mkfs/mount), each with its own
//!   seven phases named `create_<set>` … `delete_<set>`; `set=N` runs only set N's.
//! * **The tree** is reiser_fract_tree's, draw for draw (see `mongo/fract_tree.rs`): glibc
//!   `rand()` reproduced exactly, `srand(seed)` with `seed=1` as the original, so the same
//!   directories `d<N>`, files `1`, `2`, … and sizes in the same order — pinned in the
//!   tests against a C model that calls glibc itself (`bench/mongo_fract_tree.c`). Files are
//!   opened `O_CREAT|O_EXCL|O_RDWR`, 0777, written 4095 bytes per write(2).
//! * **Phases** as mongo.pl: `create`; `copy` (`cp -r testdir1-j testdir2-j`,
//!   [`tree::copy_tree`](crate::workload::tree::copy_tree)); `symlinks` (every file X of
//!   testdir1 gets `X.lnk` → X, then lstat and readlink, as mongo_slinks); `read` (every
//!   file of both trees, read(2) of 4096 bytes until a short read, as mongo_read);
//!   `stats`; `rename` (every file X of testdir1 → `X.r`); `delete` (`rm -r` of both
//!   trees). An untimed syncfs follows every phase (mongo.pl's `sync`).
//! * **After create and copy** (untimed) the phase gets notes: `space_used_kib` (statvfs
//!   used − used before create: mongo.pl's `df -k` difference), `dirs` and `files` below
//!   the work directory, `files_over_16k`, and `fragmentation` = contiguous runs of the
//!   files over 16 KiB ÷ their number (mongo.pl's map5 + summ), from FIEMAP; no
//!   `fragmentation` where the filesystem has no FIEMAP (tmpfs) or no file is over 16 KiB.
//! * **`procs`** = P trees built at once, as mongo.pl's P processes: worker j works on
//!   `testdir1-j` and `testdir2-j`; every worker's tree is the same (each original process
//!   called `srand(1)`).
//!
//! Differs:
//! * **Repetitions**: mongo.pl ran each phase 3 times (3 trees `testdir1-i-j` side by
//!   side, the later ones on a fuller filesystem) and reported the sum of the 3 times;
//!   fsarena runs one tree per worker and repeats whole trials (`--reps`, each on a fresh
//!   filesystem), reporting the median. Multiply by 3 to compare with mongo.pl totals.
//! * **Read and stats scope**: mongo.pl's P processes each read (and `find`) the whole
//!   mount point — all trees, so P times over; here worker j reads and stats its own two
//!   trees, so every file is read once per phase. With `procs=1` the work is the same.
//! * **Stats** lstat()s every entry (files, directories, symlinks) of both trees. mongo.pl
//!   ran `find $MNT -type f`, which on today's filesystems with `d_type` reads directories
//!   without stat(2) at all (checked with strace, see docs); fsarena's phase is what the
//!   name says.
//! * **Symlink targets** are the file's name (relative), not the absolute path `find`
//!   printed: an absolute path under fsarena's mount point could pass ext4's 60-byte
//!   inline limit and cost a block per link, which the original's short `/testfs/...`
//!   paths did not.
//! * **Delete** removes a worker's two trees one after the other (mongo.pl with P > 1 ran
//!   the two `rm -r` at once).
//! * **Data** follows `--data` (incompressible by default); the original wrote `'a'`.
//! * **Sync**: mongo.pl timed no sync (`time -p` of the commands, then `sync`); fsarena's
//!   default `--sync end` ends every writing phase with syncfs inside its timing;
//!   `--sync none` times as mongo.pl did.
//! * **Counts** exclude the work directory itself (mongo.pl's `find $MNT` counted the mount
//!   point and `lost+found`).
//! * **Out of space** fails the trial (the original printed a warning and went on).
//! * **`scale`** multiplies each set's total bytes (not the file-size parameters), for
//!   short runs; `scale=1` is the original.
//!
//! Inodes: set 1 at scale 1 needs 3 × 67,295 per tree (files, copies, links); ext4 gives
//! one per 16 KiB, so images under ~3.2 GiB need e.g. `--mkfs-opt 'ext4=-N 300000'`.
//! Validation against the shell tools: `docs/validation.md (the mongo section)`.

mod fract_tree;
mod ops;
mod survey;

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::sys;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{bail, Result};
use fract_tree::FractTree;
use ops::Trees;
use std::path::Path;

/// (total bytes, median file size) of mongo.pl's four parameter sets.
pub const SETS: [(u64, u64); 4] = [
    (50 << 20, 100),
    (100 << 20, 1000),
    (100 << 20, 10_000),
    (100 << 20, 100_000),
];
const MAX_SCALE: f64 = 100.0;
const MAX_PROCS: u64 = 1024;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "set",
        kind: ParamKind::Choice(&["all", "1", "2", "3", "4"]),
        default: "all",
        unit: "",
        help: "parameter set: 1 = 50MiB of median 100 B files, 2 = 100MiB/1000 B, \
               3 = 100MiB/10000 B, 4 = 100MiB/100000 B; all = the four, each on a fresh fs",
    },
    ParamSpec {
        name: "scale",
        kind: ParamKind::Float,
        default: "1.0",
        unit: "×",
        help: "multiplies each set's total bytes (0 < scale ≤ 100); 1 is the original",
    },
    ParamSpec {
        name: "procs",
        kind: ParamKind::Count,
        default: "1",
        unit: "trees",
        help: "trees built and worked on at once (mongo.pl's processes), ≤ 1024",
    },
    ParamSpec {
        name: "seed",
        kind: ParamKind::Count,
        default: "1",
        unit: "",
        help: "srand() seed of the tree generator; 1 gives the original's trees",
    },
];

const fn data(name: &'static str, kind: PhaseKind, unit: &'static str) -> PhaseSpec {
    PhaseSpec {
        name,
        kind,
        primary: Primary::MbPerS,
        ops_unit: unit,
    }
}

const fn meta(name: &'static str, kind: PhaseKind, unit: &'static str) -> PhaseSpec {
    PhaseSpec {
        name,
        kind,
        primary: Primary::OpsPerS,
        ops_unit: unit,
    }
}

/// Phases of one set, in order.
const PHASES_PER_SET: usize = 7;

macro_rules! mongo_phases {
    ($($n:literal),*) => {
        &[$(
            data(concat!("create_", $n), PhaseKind::Write, "entries/s"),
            data(concat!("copy_", $n), PhaseKind::Write, "entries/s"),
            meta(concat!("symlinks_", $n), PhaseKind::Meta, "links/s"),
            data(concat!("read_", $n), PhaseKind::Read, "files/s"),
            meta(concat!("stats_", $n), PhaseKind::Read, "entries/s"),
            meta(concat!("rename_", $n), PhaseKind::Meta, "files/s"),
            meta(concat!("delete_", $n), PhaseKind::Meta, "entries/s"),
        )*]
    };
}

/// The seven phases of each of the four sets; a run names those of the sets it runs.
const PHASES: &[PhaseSpec] = mongo_phases!("1", "2", "3", "4");

/// mongo.pl's survey of the tree after create and copy.
pub const FIGURES: &[Figure] = &[
    Figure::neither("space_used_kib", "KiB"),
    Figure::neither("dirs", "dirs"),
    Figure::neither("files", "files"),
    Figure::neither("files_over_16k", "files"),
    // Fewer pieces per file is a better layout.
    Figure::lower("fragmentation", "fragments/file"),
];

/// The `mongo` workload.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "mongo",
    about: "Mongo (Reiser 2000): reiser_fract_tree trees of 4 file-size sets; create, cp -r, \
            symlink, read, stat, rename, rm -r; space and fragmentation",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: None,
    resolve: None,
    database: None,
    programs: &[],
    phase_time_knobs: &[],
    build,
};

/// One parameter set to run.
#[derive(Clone, Debug)]
struct Set {
    /// 1 to 4.
    number: usize,
    tree: FractTree,
}

/// Mongo with validated parameters.
#[derive(Clone, Debug)]
pub struct Mongo {
    sets: Vec<Set>,
    procs: usize,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    Ok(Box::new(Mongo::from_params(p)?))
}

impl Mongo {
    /// Validates the parameters and computes the trees of the sets to run.
    fn from_params(p: &Params) -> Result<Self> {
        let bad = |why: String| usage(format!("mongo: {why}"));
        let scale = p.float("scale").expect("scale has a default");
        let procs = p.count("procs").expect("procs has a default");
        let seed = p.count("seed").expect("seed has a default");
        if !(scale > 0.0 && scale <= MAX_SCALE) {
            return Err(bad(format!(
                "scale={scale}: must be above 0 and at most {MAX_SCALE}"
            )));
        }
        if procs == 0 || procs > MAX_PROCS {
            return Err(bad(format!("procs={procs}: must be 1 to {MAX_PROCS}")));
        }
        let seed = u32::try_from(seed)
            .map_err(|_| bad(format!("seed={seed}: must be at most {}", u32::MAX)))?;
        let numbers: Vec<usize> = match p.choice("set") {
            "all" => (1..=SETS.len()).collect(),
            n => vec![n.parse().expect("choices are 1 to 4")],
        };
        let mut sets = Vec::new();
        for number in numbers {
            let (bytes, median) = SETS[number - 1];
            let scaled = (bytes as f64 * scale).round() as u64;
            if scaled == 0 {
                return Err(bad(format!(
                    "scale={scale}: set {number} would have no bytes"
                )));
            }
            let tree = FractTree::new(scaled, median, seed).map_err(|e| bad(format!("{e:#}")))?;
            sets.push(Set { number, tree });
        }
        Ok(Mongo {
            sets,
            procs: procs as usize,
        })
    }
}

impl Workload for Mongo {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        for (k, set) in self.sets.iter().enumerate() {
            if k > 0 {
                cx.fresh_target()?;
            }
            self.run_set(cx, set)?;
        }
        Ok(())
    }
}

impl Mongo {
    fn run_set(&self, cx: &mut TrialContext, set: &Set) -> Result<()> {
        let trees = Trees {
            base: cx.workdir().to_path_buf(),
        };
        let base = trees.base.as_path();
        let used0 = sys::space(base)?.used_bytes();
        let [create, copy, symlinks, read, stats, rename, delete] =
            phases_of(set.number).map(|p| &PHASES[p]);
        let n = self.procs;
        let expect = |copies: u64| {
            let trees = copies * n as u64;
            (trees * set.tree.dirs(), trees * set.tree.files())
        };
        cx.phase(create, n, |w| ops::create(w, &set.tree, &trees.src(w.idx)))?;
        record_tree(cx, base, used0, expect(1))?;
        settle(base)?;
        cx.phase(copy, n, |w| ops::copy(w, &trees))?;
        record_tree(cx, base, used0, expect(2))?;
        settle(base)?;
        cx.phase(symlinks, n, |w| ops::symlinks(w, &trees))?;
        settle(base)?;
        cx.phase(read, n, |w| ops::read(w, &trees))?;
        settle(base)?;
        cx.phase(stats, n, |w| ops::stats(w, &trees))?;
        settle(base)?;
        cx.phase(rename, n, |w| ops::rename(w, &trees))?;
        settle(base)?;
        cx.phase(delete, n, |w| ops::delete(w, &trees))?;
        settle(base)
    }
}

/// Indices in [`PHASES`] of set `number`'s phases.
fn phases_of(number: usize) -> [usize; PHASES_PER_SET] {
    std::array::from_fn(|i| (number - 1) * PHASES_PER_SET + i)
}

/// mongo.pl's `sync` after every phase, untimed.
fn settle(base: &Path) -> Result<()> {
    sys::syncfs(base).on("syncfs", base)
}

/// mongo.pl's figures after create and copy, as notes on the phase just measured; fails
/// unless the work directory holds the `(dirs, files)` expected.
fn record_tree(cx: &mut TrialContext, base: &Path, used0: u64, expect: (u64, u64)) -> Result<()> {
    let used = sys::space(base)?.used_bytes().saturating_sub(used0);
    cx.note("space_used_kib", used as f64 / 1024.0);
    let s = survey::survey(base)?;
    if (s.dirs, s.files) != expect {
        bail!(
            "{} holds {} directories and {} files; expected {} and {}",
            base.display(),
            s.dirs,
            s.files,
            expect.0,
            expect.1
        );
    }
    cx.note("dirs", s.dirs as f64);
    cx.note("files", s.files as f64);
    cx.note("files_over_16k", s.files_over_16k as f64);
    if let Some(f) = s.fragmentation() {
        cx.note("fragmentation", f);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
