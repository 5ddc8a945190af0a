//! Metadata scans cold and warm: how long `du`, `ls -lR`, `find` and `tar cf - | cat` take
//! on a populated tree the first time (caches dropped) and the times after.
//!
//! The source: Jim Bray, "Linux Filesystems Comparison: ext2, ext3, xfs, Reiserfs" (2001;
//! `seeds/002_c3e1a9f5942b3da3.txt`), which timed `du -s mozilla`,
//! `ls -lR mozilla >/dev/null` and `tar -cf - sgi|cat >/dev/null` on source trees, run
//! after run: the first `du` of the mozilla tree took 14.4 s on reiserfs, the second
//! 0.94 s; the first `ls -lR` on ext2 39.8 s "[not in cache]", the next ones 9.4 s and
//! 6.9 s. That gap is the result this workload makes first-class.
//!
//! The tree is a corpus ([`crate::corpus`], `profile=source-tree` by default: at `scale=1`
//! the 21,280 files, 1,263 directories and 222 MiB of a Linux 2.6.20 tree), written by the
//! timed phase `populate` (MB/s; ends with a syncfs under the default `--sync end`, like
//! the other tree-writing phases). Then `passes` passes (3 by default), each running four
//! scans of the whole tree in this order; the phase of scan S in pass N is `S_N`:
//!
//! | phase | what | headline |
//! |---|---|---|
//! | `du_N` | `du -s`: lstat of every entry, st_blocks summed | entries/s |
//! | `ls_lR_N` | `ls -lR > /dev/null`: readdir, lstat (+ readlink), sort, format | entries/s |
//! | `find_N` | `find -name PATTERN`: readdir only, names matched | entries/s |
//! | `tar_read_N` | `tar cf - \| cat > /dev/null`: every file read in tree order | MB/s |
//!
//! (MB = 10^6 bytes.) The system calls and their order are each tool's, see
//! `metascan/walk.rs` and `metascan/ls.rs`. Every scan counts the root and every entry below it, and checks what it saw
//! against the corpus — entries, files, directories, symlinks, file bytes, names matched —
//! so a scan that missed part of the tree fails the trial instead of looking fast.
//!
//! **Cold and warm.** Under the default `--cache cold`, caches are dropped (and loop
//! targets unmounted and mounted again) before *each* scan of pass 1, so every `S_1` phase
//! starts cold — `du_1` and `ls_lR_1` read the inodes and directories from the device,
//! `tar_read_1` the data too — and never during later passes
//! ([`TrialContext::phase_warm_median`]), so `S_2`, `S_3`, … show the same scan from the caches
//! the earlier scans filled (pass 2's `du` runs after pass 1's `tar_read`, which has
//! touched everything). Dropping only before the first scan of pass 1 would have let
//! `du_1` warm the inodes for `ls_lR_1`, so only `du_1` would have been cold. On each
//! `S_1` phase the extra figure `cold_warm_ratio` is its wall time ÷ the last pass's
//! (over 1: cold was slower); it is given only when pass 1 was really cold (`--cache cold`,
//! run as root). Under `--cache warm` every scan of pass 1 runs once unmeasured first, and
//! under `--cache keep` nothing is dropped: then no pass is cold. On tmpfs "cold" is a
//! memory read: `drop_caches` does not evict tmpfs files. Each warm scan runs `warm_runs`
//! times back to back (5 by default) and its phase is the run of median time
//! ([`TrialContext::phase_warm_median`]): tens of milliseconds of CPU that one interrupt
//! lengthens by a tenth.
//!
//! Extra figures of pass 1: `du_1: kib` (what `du -s` prints, 1024-byte units) and
//! `find_1: matches` (names matching `pattern`, `*.c` by default; the `source-tree` corpus
//! names 45% of its files `.c`).
//!
//! `passes` is 1 to [`MAX_PASSES`]; `fsarena list` shows the phases of the default 3.

mod ls;
mod walk;

#[cfg(test)]
mod tests;

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::corpus::{Corpus, PROFILES};
use crate::error::usage;
use crate::figures::Figure;
use crate::policy::CachePolicy;
use crate::probe::recorder::Op;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{bail, Context, Result};
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Mutex;
use walk::Seen;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "profile",
        kind: ParamKind::Choice(PROFILES),
        default: "source-tree",
        unit: "",
        help: "corpus of the tree scanned",
    },
    ParamSpec {
        name: "scale",
        kind: ParamKind::Float,
        default: "1.0",
        unit: "× corpus",
        help: "multiplies the corpus (source-tree at 1.0: 21,280 files, 222 MiB)",
    },
    ParamSpec {
        name: "passes",
        kind: ParamKind::Count,
        default: "3",
        unit: "",
        help: "passes of du, ls -lR, find, tar read; pass 1 cold, the others warm (1-9)",
    },
    ParamSpec {
        name: "warm_runs",
        kind: ParamKind::Count,
        default: "5",
        unit: "runs",
        help: "times each warm scan runs back to back; its figures are the median run's (1-15)",
    },
    ParamSpec {
        name: "pattern",
        kind: ParamKind::Text,
        default: "*.c",
        unit: "glob",
        help: "the name find matches (find -name)",
    },
];

/// The most passes: phase names are declared for these.
pub const MAX_PASSES: usize = 9;
/// The most runs of each warm scan.
pub const MAX_WARM_RUNS: usize = 15;
/// The default of `passes`: the phases `fsarena list` shows.
const DEFAULT_PASSES: usize = 3;

const POPULATE: PhaseSpec = PhaseSpec {
    name: "populate",
    kind: PhaseKind::Write,
    primary: Primary::MbPerS,
    ops_unit: "entries/s",
};

const fn scan(name: &'static str, primary: Primary) -> PhaseSpec {
    PhaseSpec {
        name,
        kind: PhaseKind::Read,
        primary,
        ops_unit: "entries/s",
    }
}

/// `populate`, then the four scans of each pass: `du_N`, `ls_lR_N`, `find_N`, `tar_read_N`.
macro_rules! phases {
    ($($n:literal)*) => {
        [POPULATE, $(
            scan(concat!("du_", $n), Primary::OpsPerS),
            scan(concat!("ls_lR_", $n), Primary::OpsPerS),
            scan(concat!("find_", $n), Primary::OpsPerS),
            scan(concat!("tar_read_", $n), Primary::MbPerS),
        )*]
    };
}

/// Every phase metascan can run, in order.
const ALL_PHASES: [PhaseSpec; 1 + 4 * MAX_PASSES] = phases!(1 2 3 4 5 6 7 8 9);
const ALL: &[PhaseSpec] = &ALL_PHASES;

/// What pass 1 saw, and how much slower cold was than warm.
pub const FIGURES: &[Figure] = &[
    Figure::neither("kib", "KiB"),
    Figure::neither("matches", "names"),
    Figure::neither("cold_warm_ratio", "ratio"),
    // Each warm scan's runs, of which the phase is the median one.
    Figure::neither("warm_runs", "runs"),
];

/// The `metascan` workload.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "metascan",
    about: "populate a tree, then du, ls -lR, find and a tar read of it, pass after pass: \
            pass 1 cold (caches dropped before each scan), the others warm",
    params: PARAMS,
    phases: ALL.split_at(1 + 4 * DEFAULT_PASSES).0,
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: None,
    resolve: None,
    database: None,
    programs: &[],
    phase_time_knobs: &[super::Knob::new("scale", &[], 0.0)],
    build,
};

/// One of the four scans of a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    Du,
    LsLr,
    Find,
    TarRead,
}

impl Scan {
    const ALL: [Scan; 4] = [Scan::Du, Scan::LsLr, Scan::Find, Scan::TarRead];

    /// The phase of this scan in pass `pass` (1-based).
    fn spec(self, pass: usize) -> &'static PhaseSpec {
        &ALL_PHASES[1 + 4 * (pass - 1) + self as usize]
    }

    fn run(self, w: &mut Worker, root: &Path, pattern: &CString) -> Result<Seen> {
        match self {
            Scan::Du => walk::du(w, root),
            Scan::LsLr => ls::ls_lr(w, root, &mut std::io::sink()),
            Scan::Find => walk::find(w, root, pattern),
            Scan::TarRead => walk::tar_read(w, root, &mut vec![0u8; walk::TAR_RECORD]),
        }
    }

    /// Checks what a scan saw against the tree written.
    fn check(self, seen: &Seen, want: &Seen) -> Result<()> {
        let same = seen.entries == want.entries
            && seen.dirs == want.dirs
            && seen.files == want.files
            && seen.symlinks == want.symlinks
            && match self {
                Scan::Du | Scan::LsLr | Scan::TarRead => seen.bytes == want.bytes,
                Scan::Find => seen.matches == want.matches,
            };
        if !same {
            bail!(
                "saw {} entries ({} directories, {} files, {} symlinks, {} bytes, {} \
                 matches) where the tree written has {} ({}, {}, {}, {} bytes, {} matches): \
                 something changed the tree, or the walk missed part of it",
                seen.entries,
                seen.dirs,
                seen.files,
                seen.symlinks,
                seen.bytes,
                seen.matches,
                want.entries,
                want.dirs,
                want.files,
                want.symlinks,
                want.bytes,
                want.matches
            );
        }
        Ok(())
    }
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let scale = p.float("scale").expect("default");
    if !(scale > 0.0 && scale <= 100.0) {
        return Err(usage(format!(
            "metascan: scale={scale}: must be above 0 and at most 100 (1.0 is the full corpus)"
        )));
    }
    let passes = p.count("passes").expect("default") as usize;
    if !(1..=MAX_PASSES).contains(&passes) {
        return Err(usage(format!(
            "metascan: passes={passes}: must be 1 to {MAX_PASSES} (pass 1 is cold, the \
             others warm; 2 or more give the cold/warm gap)"
        )));
    }
    let warm_runs = p.count("warm_runs").expect("default") as usize;
    if !(1..=MAX_WARM_RUNS).contains(&warm_runs) {
        return Err(usage(format!(
            "metascan: warm_runs={warm_runs}: must be 1 to {MAX_WARM_RUNS} (each warm scan \
             runs that many times back to back and keeps the median run)"
        )));
    }
    let Some(pattern) = p.text("pattern") else {
        return Err(usage(
            "metascan: pattern is empty: give the name find should match, e.g. pattern=*.c",
        ));
    };
    if pattern.contains('/') {
        return Err(usage(format!(
            "metascan: pattern={pattern}: find -name matches names, which hold no '/'; give \
             a name pattern such as pattern=*.c"
        )));
    }
    let pattern = CString::new(pattern)
        .map_err(|_| usage("metascan: pattern holds a NUL byte; give a name pattern"))?;
    Ok(Box::new(Metascan {
        profile: p.choice("profile").to_string(),
        scale,
        passes,
        warm_runs,
        pattern,
    }))
}

struct Metascan {
    profile: String,
    scale: f64,
    passes: usize,
    warm_runs: usize,
    pattern: CString,
}

/// What every scan of `corpus` written at `root` must see (blocks and output aside).
fn expected(corpus: &Corpus, root: &Path, pattern: &CString) -> Seen {
    let t = corpus.totals();
    let mut buf = Vec::new();
    let root_name = root.file_name().map_or(&[][..], |n| n.as_bytes());
    let mut matches = u64::from(walk::name_matches(pattern, root_name, &mut buf));
    for e in corpus.entries() {
        let name = e.path().rsplit('/').next().unwrap_or_default();
        matches += u64::from(walk::name_matches(pattern, name.as_bytes(), &mut buf));
    }
    Seen {
        entries: 1 + t.dirs + t.files + t.symlinks,
        dirs: t.dirs,
        files: t.files,
        symlinks: t.symlinks,
        bytes: t.bytes,
        matches,
        ..Default::default()
    }
}

impl Workload for Metascan {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let corpus = Corpus::new(&self.profile, self.scale, cx.seed())?;
        let root = cx.workdir().join("tree");
        cx.phase(&POPULATE, 1, |w| {
            let t = w.start();
            fs::create_dir(&root).on("mkdir", &root)?;
            w.done(Op::Mkdir, t, 0);
            corpus.write(w, &root)?;
            w.end_fs(&root).on("syncfs", &root)
        })?;
        let want = expected(&corpus, &root, &self.pattern);
        for pass in 1..=self.passes {
            for scan in Scan::ALL {
                let spec = scan.spec(pass);
                let seen = Mutex::new(Seen::default());
                // Every run is checked, also the warm runs the median leaves out.
                let f = |w: &mut Worker| {
                    let s = scan.run(w, &root, &self.pattern)?;
                    scan.check(&s, &want)
                        .with_context(|| format!("metascan: {}", spec.name))?;
                    *seen.lock().unwrap() = s;
                    Ok(())
                };
                if pass == 1 {
                    cx.phase(spec, 1, f)?;
                } else {
                    cx.phase_warm_median(spec, 1, self.warm_runs, f)?;
                }
                let seen = seen.into_inner().unwrap();
                match (pass, scan) {
                    (1, Scan::Du) => cx.note("kib", seen.blocks.div_ceil(2) as f64),
                    (1, Scan::Find) => cx.note("matches", seen.matches as f64),
                    _ => {}
                }
            }
        }
        self.note_cold_warm(cx);
        Ok(())
    }
}

impl Metascan {
    /// Notes `cold_warm_ratio` on each phase of pass 1 when it was really cold.
    fn note_cold_warm(&self, cx: &mut TrialContext) {
        if self.passes < 2 || cx.policy().cache != CachePolicy::Cold {
            return;
        }
        for scan in Scan::ALL {
            let (first, last) = (scan.spec(1).name, scan.spec(self.passes).name);
            let wall = |name: &str| {
                cx.phases()
                    .iter()
                    .find(|p| p.name == name)
                    .map(|p| (p.wall_s, p.flags.iter().any(|f| f == "cache-not-dropped")))
            };
            if let (Some((cold, false)), Some((warm, _))) = (wall(first), wall(last)) {
                if warm > 0.0 {
                    cx.note_phase(first, "cold_warm_ratio", cold / warm);
                }
            }
        }
    }
}
