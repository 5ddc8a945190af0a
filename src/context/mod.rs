//! The context a workload runs in: it applies the cache and sync policies around each phase,
//! runs the phase's workers, and measures the phase.
//!
//! ```text
//! cx.phase(&SPEC, 1, |w| { let t = w.start(); write(..)?; w.done(Op::Write, t, n); Ok(()) })?;
//! ```
//! Timing runs from just before the workers start (or from the moment the last of them got
//! ready, see [`Worker::ready`]) until the last one has returned — its final fsync (sync
//! policy `end`) included. CPU times and device counters are read at the same two instants,
//! so every figure of a phase covers one window.

mod engine;
mod figures;
pub mod gate;
mod tools;
mod warm;
mod workers;

pub use figures::{
    cache_suspect, cold_verifiable, CACHE_SUSPECT_FACTOR, DEVICE_SHARE_MB, SHORT_PHASE_S,
};
pub use gate::Procs;
pub use workers::{live_ops, Worker};

use figures::phase_result;
use workers::{run_workers, Ran, LIVE};

use crate::data::DataPool;
use crate::policy::{CachePolicy, Policy, SyncPolicy};
use crate::probe::recorder::Recorder;
use crate::probe::sys;
use crate::provision::{FsTools, Target};
use crate::result::{PhaseResult, TargetInfo};
use crate::signals::check_stop;
use anyhow::{anyhow, Context, Result};
use gate::{NoGate, PhaseGate};
use std::fs::File;
use std::path::{Path, PathBuf};

/// What a phase does to the filesystem; decides warm-up and honesty flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseKind {
    /// Only reads (data or metadata): can be run twice, may be served from cache.
    Read,
    /// Writes file data.
    Write,
    /// Changes metadata (create, delete, rename).
    Meta,
}

/// The headline figure of a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Primary {
    MbPerS,
    OpsPerS,
    /// Seconds of wall time, for phases that are one operation (a mkfs, a mount).
    Seconds,
}

/// The static description of a phase.
#[derive(Clone, Copy, Debug)]
pub struct PhaseSpec {
    pub name: &'static str,
    pub kind: PhaseKind,
    pub primary: Primary,
    /// What one operation is, for `ops_per_s` labels (`seeks/s`, `files/s`).
    pub ops_unit: &'static str,
}

/// Everything a workload needs during one trial.
pub struct TrialContext<'a> {
    workdir: PathBuf,
    policy: &'a Policy,
    target: &'a mut dyn Target,
    pool: DataPool,
    can_drop_caches: bool,
    phases: Vec<PhaseResult>,
    /// Phases measured in parts, accumulated until [`TrialContext::finish_parts`].
    parts: Vec<(PhaseSpec, Measured, u64)>,
    progress: &'a dyn Fn(&str),
    /// Where this trial's log goes, when the runner gave it one.
    log_path: Option<PathBuf>,
    /// Whether a workload asked for the log (see [`Self::log_file`]).
    log_used: bool,
    /// Messages for the user, shown by the runner after the trial.
    messages: Vec<String>,
    /// The database engine the trial ran ([`Self::set_engine`]).
    engine: Option<crate::result::Engine>,
    /// This process's place among the processes running the trial together (MPI ranks).
    procs: Procs,
    /// The directory every rank sees (for one shared file or directory); `workdir` alone.
    shared_dir: PathBuf,
    /// The barriers between the processes running the trial together (none alone).
    gate: &'a dyn PhaseGate,
    /// Which repetition the trial is, from 1.
    repetition: u32,
}

/// What measuring one phase (or part of one) gave.
struct Measured {
    rec: Recorder,
    wall_s: f64,
    /// CPU and device work meanwhile.
    spent: workers::Spent,
    flags: Vec<String>,
    workers: usize,
    /// The cache policy applied before it.
    cache: CachePolicy,
}

impl<'a> TrialContext<'a> {
    /// A context for one trial in `workdir` (an empty directory on `target`).
    pub fn new(
        workdir: PathBuf,
        policy: &'a Policy,
        target: &'a mut dyn Target,
        pool: DataPool,
        progress: &'a dyn Fn(&str),
    ) -> Self {
        let workdir_for_shared = workdir.clone();
        Self {
            workdir,
            policy,
            target,
            pool,
            can_drop_caches: sys::is_root(),
            phases: Vec::new(),
            parts: Vec::new(),
            progress,
            log_path: None,
            log_used: false,
            messages: Vec::new(),
            engine: None,
            procs: Procs::SOLO,
            shared_dir: workdir_for_shared,
            gate: &NoGate,
            repetition: 1,
        }
    }

    /// Makes this context repetition `rep` (from 1) of its trial's workload on its target.
    pub fn with_repetition(mut self, rep: u32) -> Self {
        self.repetition = rep.max(1);
        self
    }

    /// Makes this context repetition `rep` (tests that build their context elsewhere).
    #[cfg(test)]
    pub fn set_repetition(&mut self, rep: u32) {
        self.repetition = rep.max(1);
    }

    /// The repetition this trial is (from 1): for a workload asked to vary its random
    /// choices from one repetition to the next (fio's `randrepeat=0`).
    pub fn repetition(&self) -> u32 {
        self.repetition
    }

    /// Makes this context process `procs.index` of `procs.count` that share
    /// `shared_dir` (a directory all of them see), as under `--mpi shared`.
    pub fn with_procs(mut self, procs: Procs, shared_dir: PathBuf) -> Self {
        self.procs = procs;
        self.shared_dir = shared_dir;
        self
    }

    /// Makes every phase start after `gate`'s barrier, so that processes running the trial
    /// together (`run --mpi`) start each phase at the same moment (docs/distributed.md).
    pub fn with_gate(mut self, gate: &'a dyn PhaseGate) -> Self {
        self.gate = gate;
        self
    }

    /// This process's rank among those running the trial together (0 of 1 without MPI).
    pub fn procs(&self) -> Procs {
        self.procs
    }

    /// The directory every rank sees; without MPI the trial's own work directory. A
    /// workload that shares a file or directory between ranks puts it here, and one that
    /// works file-per-process keeps to [`Self::workdir`].
    pub fn shared_dir(&self) -> &Path {
        &self.shared_dir
    }

    /// Gives the trial a log file at `path` (created only when a workload asks for it with
    /// [`Self::log_file`]; kept after the run and recorded with the trial).
    pub fn with_log_path(mut self, path: PathBuf) -> Self {
        self.log_path = Some(path);
        self
    }

    /// The trial's log file, for the output of the user's commands: its directory is made
    /// now and the runner records its path with the trial. Fails when the runner gave none.
    pub fn log_file(&mut self) -> Result<PathBuf> {
        let path = self
            .log_path
            .clone()
            .ok_or_else(|| anyhow!("this trial has no log file"))?;
        if let Some(dir) = path.parent() {
            crate::owned::ensure_owned_dir(dir)
                .map_err(|e| anyhow!("creating the log directory {}: {e}", dir.display()))?;
        }
        self.log_used = true;
        Ok(path)
    }

    /// The log file, if a workload used it.
    pub fn used_log(&self) -> Option<&Path> {
        self.log_path.as_deref().filter(|_| self.log_used)
    }

    /// Leaves a message for the user (a size capped to free space, …); the runner shows it
    /// after the trial.
    pub fn message(&mut self, text: impl Into<String>) {
        self.messages.push(text.into());
    }

    /// The messages left so far, removed.
    pub fn take_messages(&mut self) -> Vec<String> {
        std::mem::take(&mut self.messages)
    }

    /// Whether caches can be dropped (root): when not, "cold" is not cold.
    pub fn can_drop_caches(&self) -> bool {
        self.can_drop_caches
    }

    /// The empty working directory of this trial.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// What the trial's target is (kind `loop`, `tmpfs` or `dir`, filesystem type, size).
    pub fn target_info(&self) -> &TargetInfo {
        self.target.info()
    }

    /// The target's own tools for an untimed step (an unmount before a timed mkfs); fails
    /// saying that `what` needs a loop target when the target has none. Timed steps go
    /// through [`Self::target_phase`].
    pub fn fs_tools(&mut self, what: &str) -> Result<&mut dyn FsTools> {
        crate::provision::tools_of(&mut *self.target, what)
    }

    /// The run's policies.
    pub fn policy(&self) -> &Policy {
        self.policy
    }

    /// The run's seed: the same for every repetition, so repetitions do the same work.
    pub fn seed(&self) -> u64 {
        self.policy.seed
    }

    /// The trial's data pool.
    pub fn data(&self) -> &DataPool {
        &self.pool
    }

    /// The phases measured so far.
    pub fn into_phases(mut self) -> Vec<PhaseResult> {
        self.finish_parts(&[]);
        self.phases
    }

    /// Attaches a workload-specific figure to the phase measured last (see
    /// [`PhaseResult::extra`]).
    pub fn note(&mut self, key: &str, value: f64) {
        if let Some(p) = self.phases.last_mut() {
            p.extra.insert(key.to_string(), value);
        }
    }

    /// Attaches a workload-specific figure to the last phase named `phase`.
    pub fn note_phase(&mut self, phase: &str, key: &str, value: f64) {
        if let Some(p) = self.phases.iter_mut().rev().find(|p| p.name == phase) {
            p.extra.insert(key.to_string(), value);
        }
    }

    /// Replaces the target's filesystem by a freshly made one (loop: new image and mkfs;
    /// tmpfs: new mount; directory: new work directory), for workloads whose original
    /// started each part on a new filesystem. Untimed.
    pub fn fresh_target(&mut self) -> Result<()> {
        check_stop()?;
        // Every rank is done with the old filesystem before it goes.
        self.gate.barrier()?;
        self.target.teardown()?;
        let was_shared = self.shared_dir == self.workdir;
        self.workdir = self.target.prepare()?;
        if was_shared {
            self.shared_dir = self.workdir.clone();
        }
        Ok(())
    }

    /// Drops caches (and remounts loop targets) outside any phase, as the cold policy does
    /// before a phase; for workloads that drop caches inside a phase's steps, like
    /// compilebench before each operation. A no-op when caches cannot be dropped.
    pub fn reset_caches(&mut self) -> Result<()> {
        if self.can_drop_caches {
            // No rank drops caches or remounts while another still works.
            self.gate.barrier()?;
            self.target.reset()?;
        }
        Ok(())
    }

    /// The run's state file, to record what a workload starts before it starts it
    /// ([`Target::state`]).
    pub fn state(&self) -> Option<std::sync::Arc<crate::state::State>> {
        self.target.state()
    }

    /// Phases measured so far (also when the workload failed part way).
    pub fn phases(&self) -> &[PhaseResult] {
        &self.phases
    }

    /// Runs and measures one phase with `workers` concurrent workers (threads), each calling
    /// `f` with its own [`Worker`]. Under `--cache warm`, read-only phases run once unmeasured
    /// first; under `--cache cold` caches are dropped (and loop targets remounted) before.
    pub fn phase<F>(&mut self, spec: &PhaseSpec, workers: usize, f: F) -> Result<()>
    where
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        let m = self.measure(spec, workers, self.policy.cache, &f)?;
        let r = self.phase_result(spec, m, None);
        self.phases.push(r);
        Ok(())
    }

    /// Runs and measures one phase like [`Self::phase`], but with the caches as the earlier
    /// phases left them, whatever the run's cache policy (no drop, no unmeasured warm-up):
    /// for workloads whose result is the gap between a cold first run and warm repeats
    /// (metascan's passes 2, 3, …). Such a phase is not judged as a cold read.
    pub fn phase_warm<F>(&mut self, spec: &PhaseSpec, workers: usize, f: F) -> Result<()>
    where
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        let m = self.measure(spec, workers, CachePolicy::Keep, &f)?;
        let r = self.phase_result(spec, m, None);
        self.phases.push(r);
        Ok(())
    }

    /// Measures one part of a phase that is made of separately timed parts (compilebench's
    /// runs of "patch", interleaved with other operations): the policies apply to each part
    /// as to a phase, and the parts of one name add up — operations, bytes, time, CPU,
    /// device I/O, latency histograms — into one phase when [`Self::finish_parts`] is
    /// called. Returns the part's wall time in seconds.
    pub fn phase_part<F>(&mut self, spec: &PhaseSpec, workers: usize, f: F) -> Result<f64>
    where
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        let m = self.measure(spec, workers, self.policy.cache, &f)?;
        let wall_s = m.wall_s;
        match self.parts.iter_mut().find(|(s, _, _)| s.name == spec.name) {
            Some((_, acc, runs)) => {
                acc.rec.append(&m.rec, acc.wall_s);
                acc.wall_s += m.wall_s;
                acc.spent.add(&m.spent);
                for f in m.flags {
                    if !acc.flags.contains(&f) {
                        acc.flags.push(f);
                    }
                }
                *runs += 1;
            }
            None => self.parts.push((*spec, m, 1)),
        }
        Ok(wall_s)
    }

    /// Turns the parts measured with [`Self::phase_part`] into phases, in the order of
    /// `order` (phases not in it follow in the order their names first ran); each carries
    /// the number of parts as the extra figure `runs`.
    pub fn finish_parts(&mut self, order: &[PhaseSpec]) {
        let mut parts = std::mem::take(&mut self.parts);
        parts.sort_by_key(|(s, _, _)| {
            order
                .iter()
                .position(|o| o.name == s.name)
                .unwrap_or(usize::MAX)
        });
        for (spec, m, runs) in parts {
            let r = self.phase_result(&spec, m, Some(runs));
            self.phases.push(r);
        }
    }

    /// Runs and measures one phase like [`Self::phase`], after a warm-up run of `ramp` by
    /// as many workers, unmeasured (a job's `ramp`). The cache policy applies before the
    /// ramp, and nothing is reset between the ramp and the measured run: the ramp warms
    /// what the run is measured on. Such a phase is not judged as a cold read, since the
    /// ramp may have cached what it reads; a read phase is flagged `warm`.
    pub fn phase_after_ramp<R, F>(
        &mut self,
        spec: &PhaseSpec,
        workers: usize,
        ramp: R,
        f: F,
    ) -> Result<()>
    where
        R: Fn(&mut Worker) -> Result<()> + Sync,
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        let workers = workers.max(1);
        let mut flags = self.apply_cache(spec, workers, self.policy.cache, &f)?;
        if spec.kind == PhaseKind::Read && !flags.iter().any(|f| f == "warm") {
            flags.push("warm".to_string());
        }
        check_stop()?;
        self.run_workers(workers, &ramp)?;
        let m = self.measure_now(spec, workers, CachePolicy::Keep, flags, &f)?;
        let r = self.phase_result(spec, m, None);
        self.phases.push(r);
        Ok(())
    }

    /// Applies the cache policy `cache`, then runs and times the workers of one phase or
    /// part.
    fn measure<F>(
        &mut self,
        spec: &PhaseSpec,
        workers: usize,
        cache: CachePolicy,
        f: &F,
    ) -> Result<Measured>
    where
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        let workers = workers.max(1);
        let flags = self.apply_cache(spec, workers, cache, f)?;
        self.measure_now(spec, workers, cache, flags, f)
    }

    /// Applies the cache policy `cache` before a phase whose workers run `f`: drops caches
    /// (cold), or runs the phase once unmeasured (warm, read phases). Returns the flags it
    /// calls for.
    fn apply_cache<F>(
        &mut self,
        spec: &PhaseSpec,
        workers: usize,
        cache: CachePolicy,
        f: &F,
    ) -> Result<Vec<String>>
    where
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        check_stop()?;
        let mut flags = Vec::new();
        match cache {
            CachePolicy::Cold => {
                // No rank drops caches or remounts while another still works.
                self.gate.barrier()?;
                self.target.reset()?;
                if !self.can_drop_caches {
                    flags.push("cache-not-dropped".to_string());
                }
            }
            CachePolicy::Warm if spec.kind == PhaseKind::Read => {
                self.run_workers(workers, f)?;
                flags.push("warm".to_string());
            }
            CachePolicy::Warm | CachePolicy::Keep => {}
        }
        Ok(flags)
    }

    /// Runs and times the workers of one phase or part as they find the caches; `cache`
    /// is the policy applied before, for the honesty flags.
    fn measure_now<F>(
        &mut self,
        spec: &PhaseSpec,
        workers: usize,
        cache: CachePolicy,
        flags: Vec<String>,
        f: &F,
    ) -> Result<Measured>
    where
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        // Every rank starts the measured run together.
        self.gate.barrier()?;
        // Announced once the target is ready and the measured run begins; the count shown
        // until then is the phase before's (or a warm-up's).
        LIVE.clear();
        (self.progress)(spec.name);
        let watch = self.gate.watch();
        let measured = self.run_workers(workers, f);
        drop(watch);
        let ran = measured?;
        Ok(Measured {
            rec: ran.rec,
            wall_s: ran.wall_s,
            spent: ran.spent,
            flags,
            workers,
            cache,
        })
    }

    /// The result of a phase (or of its parts added up), with the state of the filesystem
    /// after it and the honesty flags.
    fn phase_result(&self, spec: &PhaseSpec, m: Measured, runs: Option<u64>) -> PhaseResult {
        let mut r = phase_result(spec, &m.rec, m.wall_s, m.workers);
        r.cpu_user_s = m.spent.cpu_user_s;
        r.cpu_sys_s = m.spent.cpu_sys_s;
        r.cpu_pct = if m.wall_s > 0.0 {
            100.0 * (r.cpu_user_s + r.cpu_sys_s) / m.wall_s
        } else {
            0.0
        };
        let own_device = self.target.info().work_unmeasured.is_none();
        if let Some(d) = m.spent.dev {
            r.dev_read_bytes = Some(d.read_bytes);
            r.dev_write_bytes = Some(d.write_bytes);
            if r.bytes_written > 0 {
                r.write_amplification = Some(d.write_bytes as f64 / r.bytes_written as f64);
            }
        }
        // Work figures only from a device of the target's own (a `--dir` target's
        // partition counts every process's I/O: its bytes serve the cache checks alone).
        if let Some(d) = m.spent.dev.filter(|_| own_device) {
            r.dev_read_ios = Some(d.read_ios);
            r.dev_write_ios = Some(d.write_ios);
            (r.dev_read_merges, r.dev_write_merges) = (Some(d.read_merges), Some(d.write_merges));
            r.dev_flushes = d.flush_ios;
            r.dev_discards = d.discard_ios;
            r.dev_discard_bytes = d.discard_bytes;
        }
        r.kernel_cpu_s = m.spent.kernel_s;
        r.space_used_bytes = sys::space(&self.workdir).ok().map(|s| s.used_bytes());
        // Read when the clock stopped, before the closing sync of a quiesced target.
        r.dirty_bytes_end = m.spent.dirty_bytes;
        if self.gate.is_multi() {
            // Merged with the other ranks' into the aggregate's percentiles.
            r.lat_buckets = m.rec.latency().buckets();
        }
        r.flags.extend(m.flags);
        if let Some(runs) = runs {
            r.extra.insert("runs".into(), runs as f64);
        }
        self.add_honesty_flags(spec, m.cache, &mut r);
        r
    }

    fn add_honesty_flags(&self, spec: &PhaseSpec, cache: CachePolicy, r: &mut PhaseResult) {
        if r.wall_s < SHORT_PHASE_S {
            r.flags.push("short".into());
        }
        if self.policy.sync == SyncPolicy::None && spec.kind != PhaseKind::Read {
            r.flags.push("not-synced".into());
        }
        if cache == CachePolicy::Cold && spec.kind == PhaseKind::Read {
            let info = self.target.info();
            let ceiling = info.device_read_ceiling_mb_per_s();
            let compressible = self.policy.data != crate::policy::DataPolicy::Random;
            if cache_suspect(r, spec.primary, ceiling, compressible) {
                r.flags.push("cache-suspect".into());
            }
            if !cold_verifiable(info, r, spec.primary) {
                r.flags.push("cold-unverifiable".into());
            }
        }
    }

    fn run_workers<F>(&self, n: usize, f: &F) -> Result<Ran>
    where
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        let stat = self.target.device_stat();
        // The filesystem is quiesced around the work (see `run_workers`) where work is measured, unless
        // the run asked for no syncs at all: under `--sync none` what a phase leaves dirty
        // is the next one's to carry, as in classic Bonnie.
        let own_device = stat.is_some() && self.target.info().work_unmeasured.is_none();
        let quiesce = (own_device && self.policy.sync != SyncPolicy::None)
            .then(|| {
                File::open(&self.workdir)
                    .with_context(|| format!("open {}", self.workdir.display()))
            })
            .transpose()?;
        run_workers(
            self.policy.sync,
            &self.pool,
            n,
            f,
            stat,
            quiesce.as_ref(),
            &LIVE,
        )
    }
}

#[cfg(test)]
mod tests;
