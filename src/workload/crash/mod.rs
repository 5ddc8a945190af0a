//! `crash`: what a power cut costs. Each application pattern ([`patterns`], [`sqlite`]) is
//! run twice per trial:
//!
//! 1. **timed**, on the target as provisioned: the phase named after the pattern, with its
//!    operations per second (files, replacements, records, transactions) — the speed;
//! 2. **recorded**, untimed, on a small twin of the target (the same filesystem, mkfs and
//!    mount options) whose loop device's backing file fsarena serves through FUSE,
//!    logging every write and flush that reaches it (`crate::provision::recorded`). From
//!    the log and the image as it was before, at most `states` crash states are rebuilt
//!    (the disk at every flush, then up to `reorder` subsets of the writes between two
//!    flushes, CrashMonkey's model), each recovered, checked and repaired by the filesystem's own
//!    tools, mounted, and its files judged against what the pattern was promised
//!    ([`expect`]).
//!
//! Figures, on each pattern's phase: `crash_states` checked; `crash_bad_states` (states
//! where a promise was broken: lower is better); `crash_unmountable`, `crash_repaired`
//! (states); `crash_lost`, `crash_empty`, `crash_garbage`, `crash_leftover` (a temporary
//! left after a promised rename), `crash_reappeared` (a file back after a promised
//! unlink), `crash_metadata` (a promised mode or `user.` attribute not kept) (files, summed over the states);
//! `crash_unpromised_lost` (files lost where POSIX promised nothing: not a broken
//! promise); and what the recorder saw: `crash_writes`, `crash_flushes`, and the
//! pattern's own `crash_fsyncs`; `crash_check_s`, the seconds the states took to build and
//! check; the coverage: `crash_flush_points` in the recording and
//! `crash_flush_points_checked`, `crash_reordered` states checked of `crash_reorderings`
//! there are, `crash_torn` states checked (`tear=N`) and the `crash_tearable` writes;
//! what the block trace showed for the pessimistic log (`crate::provision::recorded::trace`;
//! absent without it): `crash_in_flight` writes in flight when a flush was issued,
//! `crash_fua_writes` the filesystem marked FUA, `crash_beside_fua` writes that the flush
//! after a FUA write did not cover; the
//! promises: `crash_promises` made (file versions whose `fsync` returned, or committed
//! transactions) and `crash_promises_broken`, those some checked state lost, emptied,
//! garbled or changed the mode of; `crash_recorded_s`, the pattern's time on the
//! recording, and `crash_exposed_pct`, the share of it covered by the
//! crash windows of bad states: when a power cut would have lost promised data, as far as
//! the states checked show. Each state with a finding is described in the trial's
//! log (its prefix and kept writes, and what was found), with the seed that chooses it.
//!
//! `pattern=ace` ([`ace`]) runs generated workloads instead, in the style of the
//! filesystems' own crash testers; `pattern=in-flight` is the pessimistic log's negative
//! control ([`patterns::in_flight`]); both are named alone, not part of `pattern=all`.
//!
//! Crash states need a loop target (the twin is made like it); on others (tmpfs, a
//! directory) only the speed is measured, and a message says so.

pub mod ace;
pub mod expect;
mod pass;
pub mod patterns;
pub mod sqlite;

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::workload::params::param;
use crate::workload::{ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{Context, Result};
use patterns::{Tape, Work};
use std::path::Path;
use std::time::Instant;

/// How many of [`PATTERNS`] `pattern=all` runs: all but `ace`.
pub const ALL: usize = 8;

/// The patterns, in the order `pattern=all` runs them (`ace` and `in-flight` only when
/// named).
pub const PATTERNS: [&str; 10] = [
    "fsync-write",
    "rename-replace",
    "rename-replace-nofsync",
    "overwrite",
    "append-log",
    "sqlite-wal",
    "sqlite-rollback",
    "churn",
    "ace",
    "in-flight",
];

const CHOICES: &[&str] = &[
    "all",
    "fsync-write",
    "rename-replace",
    "rename-replace-nofsync",
    "overwrite",
    "append-log",
    "sqlite-wal",
    "sqlite-rollback",
    "churn",
    "ace",
    "in-flight",
];

/// `synchronous=`: fsarena's choice per journal mode, or SQLite's levels.
const SYNCHRONOUS: &[&str] = &["default", "normal", "full", "extra"];

const PARAMS: &[ParamSpec] = &[
    param(
        "pattern",
        ParamKind::Choice(CHOICES),
        "all",
        "",
        "the application pattern, or all of them (each its own phase; not ace, generated \
         workloads, nor in-flight, a negative control: named alone)",
    ),
    param(
        "states",
        ParamKind::Count,
        "1000",
        "states",
        "crash states checked per pattern and trial, at most: the state at every flush \
         first (evenly spaced ones when there are more), then reordered ones; 0: speed only",
    ),
    param(
        "reorder",
        ParamKind::Count,
        "40",
        "states",
        "reordered crash states per pattern and trial, at most, within `states`: a flush \
         point and a subset of the writes before the next flush",
    ),
    param(
        "tear",
        ParamKind::Count,
        "0",
        "states",
        "torn crash states per pattern and trial, at most, within `states`: the power cut \
         while a write of two 4 KiB blocks or more was written, some of its blocks on the \
         disk and the writes of its epoch before it",
    ),
    param(
        "ops",
        ParamKind::Count,
        "64",
        "ops",
        "operations per pattern: files, replacements, records or transactions; ace: \
         workloads",
    ),
    param(
        "synchronous",
        ParamKind::Choice(SYNCHRONOUS),
        "default",
        "",
        "the SQLite patterns' PRAGMA synchronous: default (FULL with WAL, EXTRA with the \
         rollback journal: what makes a COMMIT durable), or normal, full or extra (a known \
         case: full with the rollback journal may lose the last transaction)",
    ),
    param(
        "seq",
        ParamKind::Count,
        "1",
        "steps",
        "ace: steps per workload, 1 (every one-step workload) or 2 (`ops` of them, chosen \
         by the seed)",
    ),
    param(
        "only",
        ParamKind::Text,
        "",
        "",
        "ace: these workloads only, CORE:PERSIST steps joined by + (truncate0:fsync+\
         link:fsyncdir), several joined by /",
    ),
    param(
        "size",
        ParamKind::Size,
        "16KiB",
        "bytes",
        "bytes of each file written whole (churn: the largest)",
    ),
    param(
        "sync_every",
        ParamKind::Count,
        "4",
        "records",
        "append-log: records between two fdatasync calls",
    ),
    param(
        "forget",
        ParamKind::Count,
        "0",
        "fsyncs",
        "a negative control of the checker: leave out every N-th fsync or fdatasync of a \
         file pattern and record its promise all the same, as a program with that bug \
         believes its data safe (0: none; not for the SQLite patterns)",
    ),
    param(
        "image",
        ParamKind::Size,
        "",
        "bytes",
        "size of the recorded twin's image; default 256MiB, or the filesystem's smallest \
         (xfs: 300MiB) rounded up",
    ),
];

const fn phase(name: &'static str, ops_unit: &'static str) -> PhaseSpec {
    PhaseSpec {
        name,
        kind: PhaseKind::Write,
        primary: Primary::OpsPerS,
        ops_unit,
    }
}

/// One phase per pattern, in [`PATTERNS`] order.
const PHASES: [PhaseSpec; 10] = [
    phase("fsync-write", "files/s"),
    phase("rename-replace", "replacements/s"),
    phase("rename-replace-nofsync", "replacements/s"),
    phase("overwrite", "overwrites/s"),
    phase("append-log", "records/s"),
    phase("sqlite-wal", "transactions/s"),
    phase("sqlite-rollback", "transactions/s"),
    phase("churn", "ops/s"),
    phase("ace", "workloads/s"),
    phase("in-flight", "writes/s"),
];

/// The crash figures of each pattern's phase.
pub const FIGURES: &[Figure] = &[
    Figure::neither("crash_states", "states"),
    Figure::lower("crash_bad_states", "states"),
    Figure::lower("crash_unmountable", "states"),
    Figure::lower("crash_repaired", "states"),
    Figure::lower("crash_lost", "files"),
    Figure::lower("crash_empty", "files"),
    Figure::lower("crash_garbage", "files"),
    Figure::lower("crash_leftover", "files"),
    Figure::lower("crash_reappeared", "files"),
    Figure::lower("crash_metadata", "files"),
    Figure::lower("crash_unpromised_lost", "files"),
    Figure::neither("crash_writes", "writes"),
    Figure::neither("crash_flushes", "flushes"),
    Figure::neither("crash_fsyncs", "calls"),
    Figure::neither("crash_check_s", "s"),
    Figure::neither("crash_flush_points", "states"),
    Figure::neither("crash_flush_points_checked", "states"),
    Figure::neither("crash_reordered", "states"),
    Figure::neither("crash_reorderings", "states"),
    Figure::neither("crash_torn", "states"),
    Figure::neither("crash_tearable", "writes"),
    Figure::neither("crash_in_flight", "writes"),
    Figure::neither("crash_fua_writes", "writes"),
    Figure::neither("crash_beside_fua", "writes"),
    Figure::neither("crash_promises", "promises"),
    Figure::lower("crash_promises_broken", "promises"),
    Figure::neither("crash_recorded_s", "s"),
    Figure::lower("crash_exposed_pct", "%"),
];

/// The `crash` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "crash",
    about: "what a power cut costs: application patterns (fsync, rename-replace, append log, \
            SQLite, churn) timed, then their writes recorded under the filesystem and the \
            promises checked in up to `states` crash states",
    params: PARAMS,
    phases: &PHASES,
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

/// The validated `crash` configuration.
#[derive(Clone, Debug)]
pub struct Crash {
    /// Indices into [`PATTERNS`].
    patterns: Vec<usize>,
    states: usize,
    reorder: usize,
    tear: usize,
    ops: u64,
    size: usize,
    sync_every: u64,
    forget: u64,
    image: Option<u64>,
    /// The SQLite patterns' `PRAGMA synchronous`, where not fsarena's choice.
    synchronous: Option<&'static str>,
    /// `ace`: steps per workload, and the workloads named.
    seq: u64,
    only: Option<Vec<Vec<ace::Step>>>,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let pattern = p.choice("pattern");
    let patterns = match PATTERNS.iter().position(|&n| n == pattern) {
        Some(i) => vec![i],
        None => (0..ALL).collect(),
    };
    let ops = p.count("ops").expect("ops has a default");
    let size = p.bytes("size").expect("size has a default");
    let sync_every = p.count("sync_every").expect("sync_every has a default");
    let states = p.count("states").expect("states has a default");
    let reorder = p.count("reorder").expect("reorder has a default");
    let forget = p.count("forget").expect("forget has a default");
    let sqlite = patterns.iter().any(|&i| PATTERNS[i].starts_with("sqlite"));
    let seq = p.count("seq").expect("seq has a default");
    let only = p.text("only").map(ace::parse).transpose();
    let synchronous = SYNCHRONOUS[1..].iter().copied().find(|&s| s == p.choice("synchronous"));
    let problem = if forget > 0 && sqlite {
        format!(
            "forget={forget}: SQLite makes its own fsync calls; choose a file pattern \
             (pattern=fsync-write, rename-replace, rename-replace-nofsync, overwrite, append-log or \
             churn)"
        )
    } else if let Err(e) = &only {
        format!("only: {e}")
    } else if p.text("only").is_some() && pattern != "ace" {
        "only= names ace workloads: give pattern=ace".to_string()
    } else if synchronous.is_some() && !sqlite {
        "synchronous= is for the SQLite patterns (pattern=sqlite-wal, sqlite-rollback)".to_string()
    } else if !(1..=2).contains(&seq) {
        format!("seq={seq}: 1 or 2")
    } else if !(1..=100_000).contains(&ops) {
        format!("ops={ops}: must be 1 to 100000")
    } else if !(1..=(64 << 20)).contains(&size) {
        "size must be 1 byte to 64MiB".to_string()
    } else if sync_every == 0 {
        "sync_every must be at least 1".to_string()
    } else if states > 1_000_000 {
        format!("states={states}: at most 1000000")
    } else {
        return Ok(Box::new(Crash {
            patterns,
            states: states as usize,
            reorder: reorder.min(states) as usize,
            tear: p.count("tear").expect("tear has a default").min(states) as usize,
            ops,
            size: size as usize,
            sync_every,
            forget,
            image: p.bytes("image"),
            synchronous,
            seq,
            only: only.ok().flatten(),
        }));
    };
    Err(usage(format!("crash: {problem}")))
}

/// The timed pass: operations reported to the phase's worker.
struct Timed<'w, 'a>(&'w mut Worker<'a>);

impl Tape for Timed<'_, '_> {
    fn done(&mut self, op: Op, t: Instant, bytes: u64) {
        self.0.done(op, t, bytes);
    }
    fn position(&mut self) -> Result<u64> {
        Ok(0)
    }
}

/// What running a pattern leaves to judge crash states by.
pub enum Expectation {
    Files(expect::Expect),
    Sqlite(sqlite::SqliteExpect),
}

/// Runs pattern `i` of [`PATTERNS`] in `dir`.
pub fn run_pattern(i: usize, dir: &Path, w: &Work, tape: &mut dyn Tape) -> Result<Expectation> {
    use Expectation::{Files, Sqlite};
    Ok(match PATTERNS[i] {
        "fsync-write" => Files(patterns::fsync_write(dir, w, tape)?),
        "rename-replace" => Files(patterns::rename_replace(dir, w, true, tape)?),
        "rename-replace-nofsync" => Files(patterns::rename_replace(dir, w, false, tape)?),
        "overwrite" => Files(patterns::overwrite(dir, w, tape)?),
        "append-log" => Files(patterns::append_log(dir, w, tape)?),
        "sqlite-wal" => Sqlite(sqlite::run(dir, w, true, tape)?),
        "sqlite-rollback" => Sqlite(sqlite::run(dir, w, false, tape)?),
        "ace" => Files(ace::run(dir, w, tape)?),
        "in-flight" => Files(patterns::in_flight(dir, w, tape)?),
        _ => Files(patterns::churn(dir, w, tape)?),
    })
}

impl Crash {
    fn work(&self, seed: u64, i: usize) -> Work {
        let seed = seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let ace = match (PATTERNS[i], &self.only) {
            ("ace", Some(only)) => only.clone(),
            ("ace", None) => ace::chosen(self.seq, self.ops, seed),
            _ => Vec::new(),
        };
        Work {
            ops: self.ops,
            size: self.size,
            sync_every: self.sync_every,
            seed,
            forget: self.forget,
            synchronous: self.synchronous,
            ace,
        }
    }
}

impl Workload for Crash {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let twin = if self.states == 0 {
            None
        } else {
            let twin = cx.fs_tools("crash states").map(|tools| tools.twin());
            match twin {
                Ok(Some(twin)) => Some(twin),
                Ok(None) => {
                    cx.message(
                        "crash: speed only: crash states need a loop image fsarena makes \
                         (its twin is made the same way), and this target is not one",
                    );
                    None
                }
                Err(e) => {
                    cx.message(format!("crash: speed only: {e:#}"));
                    None
                }
            }
        };
        for &i in &self.patterns {
            let work = self.work(cx.seed(), i);
            let dir = cx.workdir().join(PATTERNS[i]);
            std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
            cx.phase(&PHASES[i], 1, |w| {
                w.ready();
                run_pattern(i, &dir, &work, &mut Timed(w)).map(|_| ())
            })?;
            if let Some(twin) = &twin {
                let tally = crate::probe::disturb::untimed(|| {
                    pass::crash_states(cx, twin, self, i, &work)
                })?;
                tally.note(cx, PATTERNS[i]);
            }
        }
        Ok(())
    }
}
