//! `io500`: the IO500 benchmark's twelve phases (IO500/io500, `src/main.c`; the ior and
//! mdtest command lines of `src/phase_*.c`) as one fsarena trial, in the official order:
//! ior-easy-write, mdtest-easy-write, (timestamp), ior-hard-write, mdtest-hard-write,
//! find, ior-easy-read, mdtest-easy-stat, ior-hard-read, mdtest-hard-stat,
//! mdtest-easy-delete, mdtest-hard-read, mdtest-hard-delete.
//!
//! Tasks are the `tasks` threads of each rank (× MPI ranks under `--mpi`), numbered as
//! [`Task`] does. The write phases run until their stonewall time (300 s by default, as
//! the rules ask) or their budget; the read, stat and delete phases then handle exactly
//! what each task wrote. The scores are the IO500's (`score.rs`); `rules.rs` says whether
//! the run met the rules fsarena can check. `docs/io500.md` maps every phase to the
//! IO500's command line and lists the differences.

mod ior;
mod mdtest;
pub mod rules;
pub mod score;
mod trial;

use crate::figures::Figure;
use trial::{Budget, Dirs, Reached, Trial};

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
use crate::error::usage;
use crate::workload::params::param;
use crate::workload::tasks::Task;
use crate::workload::{spec, IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::Result;
use score::Group;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// The stonewall the rules ask for, seconds.
pub const OFFICIAL_STONEWALL_S: f64 = 300.0;

const PARAMS: &[ParamSpec] = &[
    param("tasks", ParamKind::Count, "1", "tasks", "tasks per process (threads; with --mpi, × ranks = IO500's MPI processes)"),
    param("stonewall", ParamKind::Float, "300", "s", "time each write phase runs (IO500 stonewall-time; the rules ask 300)"),
    param("ior_easy_s", ParamKind::Float, "", "s", "ior-easy-write's stonewall (default: stonewall)"),
    param("mdtest_easy_s", ParamKind::Float, "", "s", "mdtest-easy-write's stonewall (default: stonewall)"),
    param("ior_hard_s", ParamKind::Float, "", "s", "ior-hard-write's stonewall (default: stonewall)"),
    param("mdtest_hard_s", ParamKind::Float, "", "s", "mdtest-hard-write's stonewall (default: stonewall)"),
    param("ior_easy_xfer", ParamKind::Size, "2MiB", "bytes", "ior-easy transfer size (ior -t 2m)"),
    param("ior_easy_block", ParamKind::Size, "9920000MiB", "bytes", "ior-easy bytes per task at most (ior -b 9920000m), capped to 30% of the free space"),
    param("ior_hard_xfer", ParamKind::Size, "47008", "bytes", "ior-hard transfer = block size (ior -t 47008 -b 47008)"),
    param("ior_hard_segments", ParamKind::Count, "10000000", "segments", "ior-hard transfers per task at most (ior -s), capped to 30% of the free space"),
    param("mdtest_easy_files", ParamKind::Count, "1000000", "files", "mdtest-easy files per task at most (mdtest -n), capped to 45% of the free inodes (10% of the space at 2 KiB a file where inodes are not counted)"),
    param("mdtest_hard_files", ParamKind::Count, "1000000", "files", "mdtest-hard files per task at most (mdtest -n), capped to 45% of the free inodes and 10% of the space"),
    param("mdtest_hard_bytes", ParamKind::Size, "3901", "bytes", "bytes written to and read from each mdtest-hard file (mdtest -w 3901 -e 3901)"),
    param("verify", ParamKind::Bool, "true", "", "check every ior transfer read back against its pattern (ior -R)"),
];

const IOR_EASY_WRITE: PhaseSpec = spec(
    "ior-easy-write",
    PhaseKind::Write,
    Primary::MbPerS,
    "transfers/s",
);
const MDTEST_EASY_WRITE: PhaseSpec = spec(
    "mdtest-easy-write",
    PhaseKind::Meta,
    Primary::OpsPerS,
    "files/s",
);
const IOR_HARD_WRITE: PhaseSpec = spec(
    "ior-hard-write",
    PhaseKind::Write,
    Primary::MbPerS,
    "transfers/s",
);
const MDTEST_HARD_WRITE: PhaseSpec = spec(
    "mdtest-hard-write",
    PhaseKind::Meta,
    Primary::OpsPerS,
    "files/s",
);
const FIND: PhaseSpec = spec("find", PhaseKind::Read, Primary::OpsPerS, "entries/s");
const IOR_EASY_READ: PhaseSpec = spec(
    "ior-easy-read",
    PhaseKind::Read,
    Primary::MbPerS,
    "transfers/s",
);
const MDTEST_EASY_STAT: PhaseSpec = spec(
    "mdtest-easy-stat",
    PhaseKind::Read,
    Primary::OpsPerS,
    "stats/s",
);
const IOR_HARD_READ: PhaseSpec = spec(
    "ior-hard-read",
    PhaseKind::Read,
    Primary::MbPerS,
    "transfers/s",
);
const MDTEST_HARD_STAT: PhaseSpec = spec(
    "mdtest-hard-stat",
    PhaseKind::Read,
    Primary::OpsPerS,
    "stats/s",
);
const MDTEST_EASY_DELETE: PhaseSpec = spec(
    "mdtest-easy-delete",
    PhaseKind::Meta,
    Primary::OpsPerS,
    "files/s",
);
const MDTEST_HARD_READ: PhaseSpec = spec(
    "mdtest-hard-read",
    PhaseKind::Read,
    Primary::OpsPerS,
    "files/s",
);
const MDTEST_HARD_DELETE: PhaseSpec = spec(
    "mdtest-hard-delete",
    PhaseKind::Meta,
    Primary::OpsPerS,
    "files/s",
);

/// The twelve phases in the official order, with the score each counts towards.
pub const PHASES: &[PhaseSpec] = &[
    IOR_EASY_WRITE,
    MDTEST_EASY_WRITE,
    IOR_HARD_WRITE,
    MDTEST_HARD_WRITE,
    FIND,
    IOR_EASY_READ,
    MDTEST_EASY_STAT,
    IOR_HARD_READ,
    MDTEST_HARD_STAT,
    MDTEST_EASY_DELETE,
    MDTEST_HARD_READ,
    MDTEST_HARD_DELETE,
];

/// The score group of phase `name`: the ior phases are bandwidth, the rest metadata.
pub fn group(name: &str) -> Group {
    if name.starts_with("ior-") {
        Group::Bw
    } else {
        Group::Md
    }
}

/// The bandwidth phases (ior), scored in GiB/s; see [`group`].
const BW_PHASES: &[&str] = &[
    "ior-easy-write",
    "ior-hard-write",
    "ior-easy-read",
    "ior-hard-read",
];
/// The metadata phases (mdtest and find), scored in kIOPS.
const MD_PHASES: &[&str] = &[
    "mdtest-easy-write",
    "mdtest-hard-write",
    "find",
    "mdtest-easy-stat",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
];

/// The IO500's figures and scores: a bandwidth phase's figure in GiB/s (2^30 bytes), a
/// metadata phase's in kIOPS; the scores are their geometric means, and the total theirs.
pub const FIGURES: &[Figure] = &[
    Figure::higher("io500_figure", "GiB/s").on(BW_PHASES),
    Figure::higher("io500_figure", "kIOPS").on(MD_PHASES),
    Figure::neither("reached", "transfers").on(BW_PHASES),
    Figure::neither("reached", "files").on(MD_PHASES),
    Figure::neither("find_matched", "files").on(&["find"]),
    Figure::higher("score_bw_gib_s", "GiB/s"),
    Figure::higher("score_md_kiops", "kIOPS"),
    Figure::higher("score_total", "score").gated(),
    Figure::neither("official", "yes=1"),
    Figure::neither("unofficial_stonewall_below_300", "yes=1"),
    Figure::neither("unofficial_write_phase_short", "yes=1"),
    Figure::neither("unofficial_zero_score", "yes=1"),
    Figure::neither("unofficial_find_found_nothing", "yes=1"),
    Figure::neither("unofficial_not_synced", "yes=1"),
    Figure::neither("unofficial_not_persistent", "yes=1"),
    Figure::neither("unofficial_data_reducible", "yes=1"),
    Figure::neither("unofficial_caches_kept", "yes=1"),
];

/// The `io500` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "io500",
    about: "the IO500's 12 phases (ior-easy/hard, mdtest-easy/hard, find) with its \
            bandwidth, metadata and total scores and whether the run met the rules \
            (IO500/io500)",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: Some(rules::rescore_merged),
    resolve: None,
    database: None,
    programs: &[],
    phase_time_knobs: &[],
    build,
};

/// The validated configuration.
#[derive(Clone, Debug)]
pub struct Io500 {
    tasks: usize,
    /// Stonewalls of ior-easy, mdtest-easy, ior-hard, mdtest-hard.
    walls: [Duration; 4],
    easy_xfer: u64,
    easy_block: u64,
    hard_xfer: u64,
    hard_segments: u64,
    easy_files: u64,
    hard_files: u64,
    hard_bytes: u64,
    verify: bool,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    Ok(Box::new(Io500::from_params(p)?))
}

impl Io500 {
    /// Checks the parameters; a violation is a usage error (exit code 2).
    pub fn from_params(p: &Params) -> Result<Self> {
        let count = |k| p.count(k).expect("counts have defaults");
        let bytes = |k| p.bytes(k).expect("sizes have defaults");
        let stonewall_s = p.float("stonewall").unwrap_or(OFFICIAL_STONEWALL_S);
        let wall = |k| Duration::from_secs_f64(p.float(k).unwrap_or(stonewall_s));
        let c = Self {
            tasks: count("tasks") as usize,
            walls: [
                wall("ior_easy_s"),
                wall("mdtest_easy_s"),
                wall("ior_hard_s"),
                wall("mdtest_hard_s"),
            ],
            easy_xfer: bytes("ior_easy_xfer"),
            easy_block: bytes("ior_easy_block"),
            hard_xfer: bytes("ior_hard_xfer"),
            hard_segments: count("ior_hard_segments"),
            easy_files: count("mdtest_easy_files"),
            hard_files: count("mdtest_hard_files"),
            hard_bytes: bytes("mdtest_hard_bytes"),
            verify: p.flag("verify"),
        };
        let problem = if !(1..=1024).contains(&c.tasks) {
            Some("tasks: give 1 to 1024".to_string())
        } else if c.easy_xfer == 0 || c.hard_xfer == 0 || c.easy_xfer > 64 << 20 {
            Some("ior_easy_xfer and ior_hard_xfer: give 1 B to 64 MiB".to_string())
        } else if c.verify && (c.easy_xfer % 8 != 0 || c.hard_xfer % 8 != 0) {
            Some("verify=true needs transfer sizes that are multiples of 8 B".to_string())
        } else if c.easy_block < c.easy_xfer {
            Some("ior_easy_block must hold at least one transfer".to_string())
        } else if c.walls.iter().any(|w| w.is_zero()) {
            Some("stonewall times must be above 0 s".to_string())
        } else {
            None
        };
        match problem {
            Some(p) => Err(usage(format!("io500: {p}"))),
            None => Ok(c),
        }
    }
}

impl Io500 {
    /// The per-task limits: the parameters, capped so that all tasks together fit in the
    /// free space (ior-easy and ior-hard 30% each, mdtest-hard 10% at 4 KiB per file) and
    /// free inodes (45% to each mdtest; where the filesystem does not count inodes, as
    /// btrfs, mdtest-easy gets 10% of the space at 2 KiB of metadata per file); a cap is
    /// said to the user.
    fn budget(&self, cx: &mut TrialContext, total_tasks: u64) -> Result<Budget> {
        let free = crate::probe::sys::space(cx.workdir())?.avail_bytes;
        let inodes = crate::probe::sys::inodes_free(cx.workdir());
        let share = |pct: u64, of: u64| (of / 100).saturating_mul(pct) / total_tasks;
        let hard_file_bytes = self.hard_bytes.div_ceil(4096).max(1) * 4096;
        let easy_cap = match inodes {
            Some(i) => share(45, i),
            None => share(10, free) / 2048,
        };
        let b = Budget {
            easy_xfers: (self.easy_block / self.easy_xfer).min(share(30, free) / self.easy_xfer),
            hard_segments: self.hard_segments.min(share(30, free) / self.hard_xfer),
            easy_files: self.easy_files.min(easy_cap),
            hard_files: self
                .hard_files
                .min(inodes.map_or(u64::MAX, |i| share(45, i)))
                .min(share(10, free) / hard_file_bytes),
        };
        let capped = b.easy_xfers < self.easy_block / self.easy_xfer
            || b.hard_segments < self.hard_segments
            || b.easy_files < self.easy_files
            || b.hard_files < self.hard_files;
        if capped {
            cx.message(format!(
                "io500: limits per task capped to the free space ({} B) and inodes: ior-easy \
                 {} transfers, ior-hard {} segments, mdtest-easy {} files, mdtest-hard {} files",
                free, b.easy_xfers, b.hard_segments, b.easy_files, b.hard_files
            ));
        }
        if b.easy_xfers == 0 || b.hard_segments == 0 || b.easy_files == 0 || b.hard_files == 0 {
            return Err(anyhow::anyhow!(
                "io500: the filesystem has too little free space or inodes for one transfer \
                 or file per task ({free} B free)"
            ));
        }
        Ok(b)
    }
}

impl Workload for Io500 {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let (n, procs) = (self.tasks, cx.procs());
        let budget = self.budget(cx, (procs.count * n) as u64)?;
        let d = Dirs::new(cx.workdir(), cx.shared_dir());
        // Untimed set-up, idempotent: every rank makes what it needs (mdtest's tree
        // creation is not part of its rates either).
        for dir in [&d.ior_easy, &d.mdtest_easy, &d.ior_hard, &d.mdtest_hard] {
            std::fs::create_dir_all(dir).on("create directory", dir)?;
        }
        for i in 0..n {
            let tree = d.easy_tree(Task::of(procs, n, i));
            std::fs::create_dir_all(&tree).on("create directory", &tree)?;
        }
        let trial = Trial {
            cfg: self,
            d,
            budget,
            procs,
            seed: cx.seed(),
            reached: [(); 4].map(|_| Reached::new(n)),
        };
        trial.writes(cx)?;
        let found = self.find(cx, &trial.d)?;
        trial.reads(cx)?;
        let reached = trial.reached.each_ref().map(|r| r.total());
        rules::record(cx, self, reached, found);
        Ok(())
    }
}

impl Io500 {
    /// The find phase: this rank's tasks walk its file-per-task trees, dealt out to them in
    /// turn, and a share of the shared directories (ior-hard, mdtest-hard), which the
    /// tasks of all procs split by name, as the IO500's parallel find does. Returns this
    /// rank's matches.
    fn find(&self, cx: &mut TrialContext, d: &Dirs) -> Result<u64> {
        let procs = cx.procs();
        let newer = std::fs::metadata(&d.stamp).on("stat", &d.stamp)?;
        let spec = mdtest::FindSpec {
            newer_ns: {
                use std::os::unix::fs::MetadataExt;
                newer.mtime() as i128 * 1_000_000_000 + newer.mtime_nsec() as i128
            },
            size_bytes: self.hard_bytes,
            name_part: "01",
        };
        let mut roots = vec![d.ior_easy.clone()];
        roots.extend((0..self.tasks).map(|i| d.easy_tree(Task::of(procs, self.tasks, i))));
        let shared = [d.ior_hard.clone(), d.mdtest_hard.clone()];
        let found = AtomicU64::new(0);
        let n = self.tasks;
        cx.phase(&FIND, n, |w| {
            for root in roots.iter().skip(w.idx).step_by(n) {
                mdtest::find(w, root, &spec, &found, None)?;
            }
            let share = (procs.index * n + w.idx, procs.count * n);
            for root in &shared {
                mdtest::find(w, root, &spec, &found, Some(share))?;
            }
            Ok(())
        })?;
        Ok(found.into_inner())
    }
}

#[cfg(test)]
mod tests;
