//! One `io500` trial's state and its phases: where the tasks work ([`Dirs`]), their limits
//! ([`Budget`]), what each task's writes reached ([`Reached`]), and the four write phases
//! and the seven read, stat and delete phases that follow them ([`Trial`]; find is in
//! `mod.rs`).

use super::ior::{Layout, Stream};
use super::mdtest;
use super::*;
use crate::context::{Procs, TrialContext, Worker};
use crate::workload::job::file_key;
use crate::workload::tasks::{open_shared, Task};
use crate::workload::IoContext;
use anyhow::Result;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Where the phases work: file-per-task trees in this rank's directory, the shared file
/// and directory in the directory all ranks see.
pub(super) struct Dirs {
    pub(super) ior_easy: PathBuf,
    pub(super) mdtest_easy: PathBuf,
    pub(super) ior_hard: PathBuf,
    pub(super) mdtest_hard: PathBuf,
    /// The IO500's `timestampfile`, made after mdtest-easy-write: find's `-newer`.
    pub(super) stamp: PathBuf,
}

impl Dirs {
    pub(super) fn new(own: &Path, shared: &Path) -> Self {
        Self {
            ior_easy: own.join("ior-easy"),
            mdtest_easy: own.join("mdtest-easy"),
            ior_hard: shared.join("ior-hard"),
            mdtest_hard: shared.join("mdtest-hard"),
            stamp: shared.join("io500-timestampfile"),
        }
    }

    pub(super) fn easy_tree(&self, task: Task) -> PathBuf {
        self.mdtest_easy
            .join(format!("mdtest_tree.{}.0", task.index))
    }

    fn easy_file(&self, task: Task) -> PathBuf {
        self.ior_easy
            .join(format!("ior_file_easy.{:08}", task.index))
    }

    fn hard_file(&self) -> PathBuf {
        self.ior_hard.join("file")
    }
}

/// What each of this rank's tasks reached in one write phase.
pub(super) struct Reached(Vec<AtomicU64>);

impl Reached {
    pub(super) fn new(tasks: usize) -> Self {
        Self((0..tasks).map(|_| AtomicU64::new(0)).collect())
    }
    fn set(&self, w: &Worker, n: u64) {
        self.0[w.idx].store(n, Ordering::Relaxed);
    }
    fn of(&self, w: &Worker) -> u64 {
        self.0[w.idx].load(Ordering::Relaxed)
    }
    pub(super) fn total(&self) -> u64 {
        self.0.iter().map(|a| a.load(Ordering::Relaxed)).sum()
    }
}

/// Per-task limits after capping to the filesystem's free space and inodes.
pub(super) struct Budget {
    pub(super) easy_xfers: u64,
    pub(super) hard_segments: u64,
    pub(super) easy_files: u64,
    pub(super) hard_files: u64,
}

/// One trial's state: where the phases work, the limits, and what the writes reached.
pub(super) struct Trial<'c> {
    pub(super) cfg: &'c Io500,
    pub(super) d: Dirs,
    pub(super) budget: Budget,
    pub(super) procs: Procs,
    pub(super) seed: u64,
    /// Transfers or files per task of ior-easy, mdtest-easy, ior-hard, mdtest-hard.
    pub(super) reached: [Reached; 4],
}

impl Trial<'_> {
    fn task(&self, w: &Worker) -> Task {
        Task::of(self.procs, self.cfg.tasks, w.idx)
    }

    /// Task `t`'s ior stream on `f`: ior-easy (`hard` false) or ior-hard.
    fn stream<'a>(&self, f: &'a File, path: &'a Path, t: Task, hard: bool) -> Stream<'a> {
        let (xfer_bytes, layout, phase) = if hard {
            (self.cfg.hard_xfer, Layout::Segmented(t), 2)
        } else {
            (self.cfg.easy_xfer, Layout::Sequential, 1)
        };
        Stream {
            file: f,
            path,
            xfer_bytes,
            layout,
            key: self
                .cfg
                .verify
                .then(|| file_key(self.seed ^ phase, t.index, 0)),
        }
    }

    /// The stonewall deadline of write phase `i` (0 ior-easy … 3 mdtest-hard), from now.
    fn deadline(&self, i: usize) -> Instant {
        Instant::now() + self.cfg.walls[i]
    }

    /// The four write phases and the timestamp between mdtest-easy and ior-hard.
    pub(super) fn writes(&self, cx: &mut TrialContext) -> Result<()> {
        let (n, d, b, r) = (self.cfg.tasks, &self.d, &self.budget, &self.reached);
        cx.phase(&IOR_EASY_WRITE, n, |w| {
            let (t, path) = (self.task(w), d.easy_file(self.task(w)));
            let f = File::create(&path).on("create", &path)?;
            let k = self
                .stream(&f, &path, t, false)
                .write(w, b.easy_xfers, self.deadline(0))?;
            r[0].set(w, k);
            Ok(())
        })?;
        cx.phase(&MDTEST_EASY_WRITE, n, |w| {
            let t = self.task(w);
            let end = self.deadline(1);
            let k = mdtest::create(w, &d.easy_tree(t), t.index, &[], b.easy_files, end)?;
            r[1].set(w, k);
            Ok(())
        })?;
        if self.procs.index == 0 {
            File::create(&d.stamp).on("create", &d.stamp)?;
        }
        cx.phase(&IOR_HARD_WRITE, n, |w| {
            let (t, path) = (self.task(w), d.hard_file());
            let f = open_shared(&path, 0)?;
            let k = self
                .stream(&f, &path, t, true)
                .write(w, b.hard_segments, self.deadline(2))?;
            r[2].set(w, k);
            Ok(())
        })?;
        let data = vec![b'x'; self.cfg.hard_bytes as usize];
        cx.phase(&MDTEST_HARD_WRITE, n, |w| {
            let t = self.task(w);
            let end = self.deadline(3);
            let k = mdtest::create(w, &d.mdtest_hard, t.index, &data, b.hard_files, end)?;
            r[3].set(w, k);
            Ok(())
        })
    }

    /// The read, stat and delete phases, each on what its write phase made.
    pub(super) fn reads(&self, cx: &mut TrialContext) -> Result<()> {
        let (n, d, r) = (self.cfg.tasks, &self.d, &self.reached);
        let ior_read = |w: &mut Worker, path: PathBuf, hard: bool, done: &Reached| {
            let f = File::open(&path).on("open", &path)?;
            self.stream(&f, &path, self.task(w), hard)
                .read(w, done.of(w))
        };
        cx.phase(&IOR_EASY_READ, n, |w| {
            ior_read(w, d.easy_file(self.task(w)), false, &r[0])
        })?;
        cx.phase(&MDTEST_EASY_STAT, n, |w| {
            let t = self.task(w);
            mdtest::stat(w, &d.easy_tree(t), t.index, r[1].of(w))
        })?;
        cx.phase(&IOR_HARD_READ, n, |w| {
            ior_read(w, d.hard_file(), true, &r[2])
        })?;
        cx.phase(&MDTEST_HARD_STAT, n, |w| {
            mdtest::stat(w, &d.mdtest_hard, self.task(w).index, r[3].of(w))
        })?;
        cx.phase(&MDTEST_EASY_DELETE, n, |w| {
            let t = self.task(w);
            mdtest::delete(w, &d.easy_tree(t), t.index, r[1].of(w))
        })?;
        cx.phase(&MDTEST_HARD_READ, n, |w| {
            let len = self.cfg.hard_bytes as usize;
            mdtest::read(w, &d.mdtest_hard, self.task(w).index, r[3].of(w), len)
        })?;
        cx.phase(&MDTEST_HARD_DELETE, n, |w| {
            mdtest::delete(w, &d.mdtest_hard, self.task(w).index, r[3].of(w))
        })
    }
}
