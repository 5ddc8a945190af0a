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

pub mod gate;

use crate::data::{DataPool, DataSource};
use crate::policy::{CachePolicy, Policy, SyncPolicy};
use crate::probe::recorder::{Mark, Op, Recorder};
use crate::probe::sys;
use crate::probe::Stamp;
use crate::provision::{FsTools, Target};
use crate::result::{OpLatency, PhaseResult, TargetInfo};
use crate::signals::check_stop;
use anyhow::{anyhow, Result};
use gate::{NoGate, PhaseGate};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Phases shorter than this are flagged `short`.
pub const SHORT_PHASE_S: f64 = 0.1;
/// A cold read faster than this multiple of the device's read ceiling (the faster of its
/// calibrated O_DIRECT and buffered cold rates) is flagged `cache-suspect`.
pub const CACHE_SUSPECT_FACTOR: f64 = 1.2;
/// Share of a cold MB/s read phase's bytes the device must have read for it not to be
/// cache-suspect (see [`cache_suspect`]).
pub const DEVICE_SHARE_MB: f64 = 0.9;

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

/// One worker's count of operations done, alone on its cache line: the worker stores into
/// it (a plain store, no lock, no shared line), a progress display reads it.
#[derive(Default)]
#[repr(align(128))]
struct LiveCell(AtomicU64);

/// The counts of the workers of the phase now running or, once it ended, of that phase
/// until the next is announced: a phase shorter than a display's refresh is seen done
/// (its final count), not at 0.
struct LiveOps(Mutex<Option<Arc<[LiveCell]>>>);

impl LiveOps {
    const fn new() -> Self {
        Self(Mutex::new(None))
    }

    /// Fresh counts for `n` workers, shown from now on.
    fn open(&self, n: usize) -> Arc<[LiveCell]> {
        let cells: Arc<[LiveCell]> = (0..n).map(|_| LiveCell::default()).collect();
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&cells));
        cells
    }

    /// 0 until the next workers start: a phase is announced.
    fn clear(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn total(&self) -> u64 {
        let guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().map_or(0, |cells| {
            cells.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
        })
    }
}

static LIVE: LiveOps = LiveOps::new();

/// Operations done so far in the phase now running, or in all by the phase that ended
/// last until the next is announced (0 from then until its workers start). For progress
/// displays; never called from the workers' hot path.
pub fn live_ops() -> u64 {
    LIVE.total()
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
    /// This process's place among the processes running the trial together (MPI ranks).
    procs: Procs,
    /// The directory every rank sees (for one shared file or directory); `workdir` alone.
    shared_dir: PathBuf,
    /// The barriers between the processes running the trial together (none alone).
    gate: &'a dyn PhaseGate,
}

/// This process's place among the processes that run one trial together: process `index`
/// of `count` (its MPI rank and the communicator's size). A run without MPI is 0 of 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Procs {
    pub index: usize,
    pub count: usize,
}

impl Procs {
    /// One process alone.
    pub const SOLO: Procs = Procs { index: 0, count: 1 };
}

/// The process's CPU times and the target device's byte counters at one instant.
struct Counters {
    cpu: sys::CpuTimes,
    stat_path: Option<PathBuf>,
    dev: Option<(u64, u64)>,
}

impl Counters {
    fn now(stat_path: Option<PathBuf>) -> Self {
        let dev = stat_path.as_deref().and_then(sys::device_bytes);
        Self {
            cpu: sys::cpu_times(),
            stat_path,
            dev,
        }
    }

    /// CPU user and system seconds, and device bytes read and written, since `self`.
    fn since(&self) -> (f64, f64, Option<(u64, u64)>) {
        let cpu = sys::cpu_times();
        let dev1 = self.stat_path.as_deref().and_then(sys::device_bytes);
        let dev = match (self.dev, dev1) {
            (Some((r0, w0)), Some((r1, w1))) => {
                Some((r1.saturating_sub(r0), w1.saturating_sub(w0)))
            }
            _ => None,
        };
        (
            cpu.user_s - self.cpu.user_s,
            cpu.sys_s - self.cpu.sys_s,
            dev,
        )
    }
}

/// What the workers of one phase did and cost, every figure over one window: from the
/// phase start (the start line of [`Worker::ready`], or just before the workers start) to
/// the moment the last worker ended.
struct Ran {
    rec: Recorder,
    wall_s: f64,
    cpu_user_s: f64,
    cpu_sys_s: f64,
    /// Bytes the device read and wrote meanwhile.
    dev: Option<(u64, u64)>,
}

/// What measuring one phase (or part of one) gave.
struct Measured {
    rec: Recorder,
    wall_s: f64,
    cpu_user_s: f64,
    cpu_sys_s: f64,
    /// Bytes the device read and wrote meanwhile.
    dev: Option<(u64, u64)>,
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
            procs: Procs::SOLO,
            shared_dir: workdir_for_shared,
            gate: &NoGate,
        }
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

    /// Runs and measures a phase whose single operation is `f` acting on the target itself
    /// — the filesystem's own tools (mkfs, mount, umount, fsck) through
    /// [`Target::tools`] — so the phase's wall time is the command's, CPU time includes
    /// the command's (it is a waited-for child), and the device counters show what it read
    /// and wrote. Recorded as one [`Op::Other`].
    ///
    /// The cache policy does not apply: what is mounted is the workload's business, and no
    /// drop is needed for the device to be cold. The kernel discards a block device's page
    /// cache when its last opener closes it (an umount, the end of an mkfs or fsck), so each
    /// tool starts with the device's data uncached — measured on a loop device: three
    /// `e2fsck -fn` in a row each read the same 17 MB from it, while with the device held
    /// open elsewhere the second read nothing. A drop_caches would only add loading the
    /// tool's own program from disk to its time.
    pub fn target_phase<T>(
        &mut self,
        spec: &PhaseSpec,
        f: impl FnOnce(&mut dyn Target) -> Result<T>,
    ) -> Result<T> {
        check_stop()?;
        self.gate.barrier()?;
        LIVE.clear();
        (self.progress)(spec.name);
        let mut rec = Recorder::new(Instant::now());
        let before = Counters::now(self.target.device_stat());
        let start = Instant::now();
        rec.restart(start);
        let out = f(&mut *self.target)?;
        rec.done(Op::Other, start, 0);
        let wall_s = start.elapsed().as_secs_f64();
        rec.finish();
        let (cpu_user_s, cpu_sys_s, dev) = before.since();
        let m = Measured {
            rec,
            wall_s,
            cpu_user_s,
            cpu_sys_s,
            dev,
            flags: Vec::new(),
            workers: 1,
            // No policy applied: the tools' phases are never judged cold.
            cache: CachePolicy::Keep,
        };
        let mut r = self.phase_result(spec, m, None);
        // The tools write their own data out: mkfs and fsck close the device, umount flushes.
        r.flags.retain(|f| f != "not-synced");
        self.phases.push(r);
        Ok(out)
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
                acc.cpu_user_s += m.cpu_user_s;
                acc.cpu_sys_s += m.cpu_sys_s;
                acc.dev = match (acc.dev, m.dev) {
                    (Some((r0, w0)), Some((r1, w1))) => Some((r0 + r1, w0 + w1)),
                    _ => None,
                };
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
            cpu_user_s: ran.cpu_user_s,
            cpu_sys_s: ran.cpu_sys_s,
            dev: ran.dev,
            flags,
            workers,
            cache,
        })
    }

    /// The result of a phase (or of its parts added up), with the state of the filesystem
    /// after it and the honesty flags.
    fn phase_result(&self, spec: &PhaseSpec, m: Measured, runs: Option<u64>) -> PhaseResult {
        let mut r = phase_result(spec, &m.rec, m.wall_s, m.workers);
        r.cpu_user_s = m.cpu_user_s;
        r.cpu_sys_s = m.cpu_sys_s;
        r.cpu_pct = if m.wall_s > 0.0 {
            100.0 * (r.cpu_user_s + r.cpu_sys_s) / m.wall_s
        } else {
            0.0
        };
        if let Some((read, written)) = m.dev {
            r.dev_read_bytes = Some(read);
            r.dev_write_bytes = Some(written);
            if r.bytes_written > 0 {
                r.write_amplification = Some(written as f64 / r.bytes_written as f64);
            }
        }
        r.space_used_bytes = sys::space(&self.workdir).ok().map(|s| s.used_bytes());
        r.dirty_bytes_end = sys::dirty_bytes();
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
        run_workers(self.policy.sync, &self.pool, n, f, stat, &LIVE)
    }
}

/// Runs `n` workers of one phase (on this thread when `n` is 1) and merges their recorders;
/// CPU times and the device counters at `stat` (a `/sys/block/*/stat`) are read when the
/// clock starts and when it stops. Their operation counts are shown in `shown`.
fn run_workers<F>(
    sync: SyncPolicy,
    pool: &DataPool,
    n: usize,
    f: &F,
    stat: Option<PathBuf>,
    shown: &LiveOps,
) -> Result<Ran>
where
    F: Fn(&mut Worker) -> Result<()> + Sync,
{
    let abort = AtomicBool::new(false);
    // Left in `shown` when the workers end: their final count stays on display.
    let live = shown.open(n);
    // Built before the clock starts: allocating histograms is not the filesystem's time.
    let recorders: Vec<Recorder> = (0..n).map(|_| Recorder::new(Instant::now())).collect();
    let gate = Gate::new(n, stat.clone());
    let early = Counters::now(stat);
    let start = Instant::now();
    let run_one = |idx: usize, mut rec: Recorder| -> Result<Recorder> {
        rec.restart(start);
        // Counts this worker at the start line when it ends without reaching it.
        let _leave = gate.leave_on_drop(idx);
        let mut w = Worker {
            idx,
            rec,
            sync,
            data: pool.source(idx as u64),
            abort: &abort,
            live: &live[idx].0,
            gate: &gate,
        };
        let res = f(&mut w);
        w.rec.finish();
        if res.is_err() {
            abort.store(true, Ordering::Relaxed);
        }
        res.map(|_| w.rec)
    };
    let results: Vec<Result<Recorder>> = if n == 1 {
        recorders.into_iter().map(|rec| run_one(0, rec)).collect()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = recorders
                .into_iter()
                .enumerate()
                .map(|(i, rec)| s.spawn(move || run_one(i, rec)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow!("a worker thread panicked")))
                })
                .collect()
        })
    };
    // From the start line when the workers waited at one (Worker::ready): their setup is
    // in neither the wall time nor the CPU and device figures.
    let (start, before) = gate.opened().unwrap_or((start, early));
    let wall_s = start.elapsed().as_secs_f64();
    let (cpu_user_s, cpu_sys_s, dev) = before.since();
    let mut merged = Recorder::new(start);
    let mut first_err = None;
    for r in results {
        match r {
            Ok(rec) => merged += &rec,
            Err(e) if first_err.is_none() => first_err = Some(e),
            Err(_) => {}
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(Ran {
            rec: merged,
            wall_s,
            cpu_user_s,
            cpu_sys_s,
            dev,
        }),
    }
}

/// Whether a cold read phase looks served from cache. Two tests:
/// * the device's counters say it read under [`DEVICE_SHARE_MB`] (a phase judged in MB/s:
///   a bulk read, each byte read once) or under half (an ops/s phase, which may re-read:
///   Bonnie's seeks) of what the phase read (≥ 1 MiB). Measured on ext4 loop cold reads:
///   bulk reads got 1.00–1.24 of their bytes from the device, seeks 0.94, a cached read 0
///   (docs/validation.md, "cache-suspect"). Not when the data written was compressible
///   (`--data zeros|text|compress:PCT`): a compressing filesystem then reads fewer bytes
///   from its device than it returns, from a truly cold cache;
/// * the phase ran faster than [`CACHE_SUSPECT_FACTOR`] × `ceiling_mb_per_s`, the fastest
///   the device was calibrated to deliver a cold read
///   ([`TargetInfo::device_read_ceiling_mb_per_s`]: the faster of its O_DIRECT and its
///   buffered, readahead rate, so that a buffered read at the device's buffered rate
///   passes) — unless the counters show the device really delivered ≥ 90% of the bytes
///   (the calibration then underestimated the device).
pub fn cache_suspect(
    r: &PhaseResult,
    primary: Primary,
    ceiling_mb_per_s: Option<f64>,
    compressible: bool,
) -> bool {
    let read = r.bytes_read as f64;
    let from_dev = r.dev_read_bytes.map(|b| b as f64);
    let share = if primary == Primary::MbPerS {
        DEVICE_SHARE_MB
    } else {
        0.5
    };
    if let Some(dev) = from_dev.filter(|_| !compressible) {
        if read >= (1 << 20) as f64 && dev < share * read {
            return true;
        }
    }
    let too_fast = primary == Primary::MbPerS
        && ceiling_mb_per_s.is_some_and(|d| r.mb_per_s > CACHE_SUSPECT_FACTOR * d);
    let device_delivered = from_dev.is_some_and(|dev| read > 0.0 && dev >= 0.9 * read);
    too_fast && !device_delivered
}

/// Whether [`cache_suspect`] can tell a cold read phase `r` on the target `info` from a
/// cached one: not on tmpfs or ramfs (drop_caches does not evict them: a "cold" read there
/// is a memory read), and elsewhere only with the device's counters for the phase, or with
/// a measured device rate for a phase judged in MB/s. A `--dir` on a filesystem with no
/// block device of its own (btrfs, overlay, NFS, FUSE) has neither. On a loop image or a
/// device, whose rate fsarena measures, a phase judged in MB/s also needs that rate: when
/// the calibration failed, the rule that catches a read faster than the device (partly
/// from cache) cannot run, and the figure says so rather than only a progress line.
pub fn cold_verifiable(info: &TargetInfo, r: &PhaseResult, primary: Primary) -> bool {
    if matches!(info.fstype.as_str(), "tmpfs" | "ramfs") {
        return false;
    }
    let rate = info.device_read_ceiling_mb_per_s().is_some();
    let calibrates = matches!(info.kind.as_str(), "loop" | "device");
    if calibrates && primary == Primary::MbPerS && !rate {
        return false;
    }
    r.dev_read_bytes.is_some() || (primary == Primary::MbPerS && rate)
}

fn phase_result(spec: &PhaseSpec, rec: &Recorder, wall_s: f64, workers: usize) -> PhaseResult {
    let per_s = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
    PhaseResult {
        name: spec.name.to_string(),
        wall_s,
        ops: rec.ops,
        bytes: rec.bytes,
        bytes_read: rec.bytes_of(&[Op::Read, Op::Stat, Op::Seek]),
        bytes_written: rec.bytes_of(&[Op::Write, Op::Append, Op::Create]),
        ops_per_s: per_s(rec.ops as f64),
        mb_per_s: per_s(rec.bytes as f64) / 1e6,
        lat_us: rec.latency().percentiles_us(),
        lat_by_op: rec
            .per_op()
            .map(|(op, count, h)| OpLatency {
                op: op.name().to_string(),
                count,
                samples: h.count(),
                lat_us: h.percentiles_us().unwrap_or_default(),
                buckets: h.buckets(),
            })
            .collect(),
        series: rec.series().finish((wall_s * 1e9) as u64),
        first_done_s: rec.done_s.map(|d| d.0),
        last_done_s: rec.done_s.map(|d| d.1),
        workers,
        primary: match spec.primary {
            Primary::MbPerS => "mb_per_s",
            Primary::OpsPerS => "ops_per_s",
            Primary::Seconds => "wall_s",
        }
        .to_string(),
        ops_unit: spec.ops_unit.to_string(),
        ..Default::default()
    }
}

/// One worker of a phase: records operations and applies the sync policy.
pub struct Worker<'a> {
    /// 0-based index of this worker in the phase.
    pub idx: usize,
    rec: Recorder,
    sync: SyncPolicy,
    data: DataSource,
    abort: &'a AtomicBool,
    /// Where this worker publishes its operation count for progress displays.
    live: &'a AtomicU64,
    gate: &'a Gate,
}

impl Worker<'_> {
    /// The time an operation starts.
    #[inline]
    pub fn start(&self) -> Instant {
        Instant::now()
    }

    /// The time an operation starts, from the cheaper clock of [`crate::probe::clock`]
    /// (the TSC where the kernel trusts it): for hot loops where a clock read is a large
    /// part of an operation. The `done*` methods take either kind of time.
    #[inline]
    pub fn stamp(&self) -> Stamp {
        Stamp::now()
    }

    /// Records an operation that started at `t` and moved `bytes` bytes.
    #[inline]
    pub fn done<T: Mark>(&mut self, op: Op, t: T, bytes: u64) {
        self.rec.done(op, t, bytes);
        self.live.store(self.rec.ops, Ordering::Relaxed);
    }

    /// Records an operation that began at `t` and ended at `ended` (see
    /// [`Recorder::done_between`]).
    #[inline]
    pub fn done_between<T: Mark>(&mut self, op: Op, t: T, ended: T, bytes: u64) {
        self.rec.done_between(op, t, ended, bytes);
        self.live.store(self.rec.ops, Ordering::Relaxed);
    }

    /// Records an fsync or fdatasync that began at `t` and a workload issued itself: timed
    /// under [`Op::Fsync`] as the sync policy's are, not counted as an operation.
    pub fn sync_done<T: Mark>(&mut self, t: T) {
        self.rec.sync_done(t);
    }

    /// Records a part of a compound operation (see [`Recorder::part`]).
    #[inline]
    pub fn done_part<T: Mark>(&mut self, op: Op, t: T, bytes: u64) {
        self.rec.part(op, t, bytes);
    }

    /// Records `ops` operations timed together from `t`.
    #[inline]
    pub fn done_batch<T: Mark>(&mut self, op: Op, t: T, ops: u64, bytes: u64) {
        self.rec.done_batch(op, t, ops, bytes);
        self.live.store(self.rec.ops, Ordering::Relaxed);
    }

    /// Waits until every worker of the phase is ready (has called this, or ended), then
    /// starts the phase's clock: the phase's wall time, CPU times, device counters and this
    /// worker's series run from the moment the last worker got ready. For workloads whose workers set up (open
    /// files, fill buffers) before their timed work, so that thread start and setup are not
    /// counted as the work's time — fio too starts its jobs' clocks after their setup.
    /// A phase whose workers never call it is timed from before they start.
    pub fn ready(&mut self) {
        let t = self.gate.arrive(self.idx);
        self.rec.restart(t);
    }

    /// This worker's stream of pattern bytes.
    #[inline]
    pub fn data(&mut self) -> &mut DataSource {
        &mut self.data
    }

    /// The sync policy in force.
    pub fn sync_policy(&self) -> SyncPolicy {
        self.sync
    }

    /// Fails with `Interrupted` after SIGINT/SIGTERM, or when another worker failed.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.abort.load(Ordering::Relaxed) {
            return Err(anyhow!("stopped because another worker failed"));
        }
        check_stop()
    }

    fn timed_sync(&mut self, what: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<()> {
        let t = Instant::now();
        what()?;
        self.rec.sync_done(t);
        Ok(())
    }

    /// fsync `f` now, whatever the sync policy (a workload's own fsync), timed as the
    /// policy's fsyncs are.
    pub fn fsync(&mut self, f: &File) -> std::io::Result<()> {
        self.timed_sync(|| f.sync_all())
    }

    /// After each write: fsync under `--sync each`.
    pub fn after_write(&mut self, f: &File) -> std::io::Result<()> {
        if self.sync == SyncPolicy::Each {
            self.timed_sync(|| f.sync_all())?;
        }
        Ok(())
    }

    /// After creating or deleting in `dir`: fsync the directory under `--sync each`.
    pub fn after_dir_change(&mut self, dir: &Path) -> std::io::Result<()> {
        if self.sync == SyncPolicy::Each {
            self.timed_sync(|| File::open(dir)?.sync_all())?;
        }
        Ok(())
    }

    /// At the end of writing `f`: fsync under `--sync end` (under `each` it already was).
    pub fn end_file(&mut self, f: &File) -> std::io::Result<()> {
        if self.sync == SyncPolicy::End {
            self.timed_sync(|| f.sync_all())?;
        }
        Ok(())
    }

    /// At the end of a metadata phase: syncfs of the filesystem holding `path` under
    /// `--sync end`.
    pub fn end_fs(&mut self, path: &Path) -> std::io::Result<()> {
        if self.sync == SyncPolicy::End {
            self.timed_sync(|| sys::syncfs(path))?;
        }
        Ok(())
    }
}

/// The start line of a phase's workers (see [`Worker::ready`]): opens when each worker has
/// arrived or ended; the instant it opened is the phase start, if any worker arrived, and
/// the counters read then are the phase's starting counters.
struct Gate {
    n: usize,
    /// The device counters to read when the gate opens.
    stat: Option<PathBuf>,
    state: Mutex<GateState>,
    opened: Condvar,
}

struct GateState {
    /// Workers that arrived or ended.
    counted: usize,
    /// Whether any worker waits at the gate (arrived rather than ended).
    waited: bool,
    /// When the gate opened.
    start: Option<Instant>,
    /// The CPU times and device counters when it opened.
    counters: Option<Counters>,
    /// Which workers were counted.
    arrived: Vec<bool>,
}

impl Gate {
    fn new(n: usize, stat: Option<PathBuf>) -> Self {
        Self {
            n,
            stat,
            state: Mutex::new(GateState {
                counted: 0,
                waited: false,
                start: None,
                counters: None,
                arrived: vec![false; n],
            }),
            opened: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts worker `idx` (once); the last one opens the gate.
    fn count(&self, s: &mut GateState, idx: usize, waits: bool) {
        if !std::mem::replace(&mut s.arrived[idx], true) {
            s.counted += 1;
        }
        s.waited |= waits;
        if s.counted == self.n && s.waited && s.start.is_none() {
            s.counters = Some(Counters::now(self.stat.clone()));
            s.start = Some(Instant::now());
            self.opened.notify_all();
        }
    }

    /// Worker `idx` is ready: waits for the others and returns the phase start.
    fn arrive(&self, idx: usize) -> Instant {
        let mut s = self.lock();
        self.count(&mut s, idx, true);
        loop {
            if let Some(t) = s.start {
                return t;
            }
            s = self.opened.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Counts worker `idx` when the returned guard drops (it ended, failed or panicked),
    /// unless it arrived before.
    fn leave_on_drop(&self, idx: usize) -> impl Drop + '_ {
        struct Leave<'g>(&'g Gate, usize);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let mut s = self.0.lock();
                self.0.count(&mut s, self.1, false);
            }
        }
        Leave(self, idx)
    }

    /// When the gate opened and the counters then; once, after the workers ended.
    fn opened(&self) -> Option<(Instant, Counters)> {
        let mut s = self.lock();
        Some((s.start?, s.counters.take()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Provision, TargetInfo};
    use std::cell::Cell;
    use std::rc::Rc;

    /// A target that counts its cache resets.
    struct CountingTarget {
        info: TargetInfo,
        resets: Rc<Cell<u32>>,
    }

    impl Target for CountingTarget {
        fn info(&self) -> &TargetInfo {
            &self.info
        }
        fn prepare(&mut self) -> Result<PathBuf> {
            Ok(std::env::temp_dir())
        }
        fn reset(&mut self) -> Result<()> {
            self.resets.set(self.resets.get() + 1);
            Ok(())
        }
        fn device_stat(&self) -> Option<PathBuf> {
            None
        }
        fn provision(&self) -> Provision {
            Provision::default()
        }
        fn teardown(&mut self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn phase_warm_keeps_the_caches_under_the_cold_policy() {
        const READ: PhaseSpec = PhaseSpec {
            name: "r",
            kind: PhaseKind::Read,
            primary: Primary::OpsPerS,
            ops_unit: "",
        };
        let resets = Rc::new(Cell::new(0));
        let mut target = CountingTarget {
            info: TargetInfo::default(),
            resets: Rc::clone(&resets),
        };
        let policy = Policy {
            cache: CachePolicy::Cold,
            ..Default::default()
        };
        let pool = DataPool::new(policy.data, policy.seed);
        let mut cx = TrialContext::new(std::env::temp_dir(), &policy, &mut target, pool, &|_| {});
        let runs = AtomicU64::new(0);
        let f = |_: &mut Worker| {
            runs.fetch_add(1, Ordering::Relaxed);
            Ok(())
        };
        cx.phase(&READ, 1, f).unwrap();
        assert_eq!(resets.get(), 1, "a cold phase resets first");
        cx.phase_warm(&READ, 1, f).unwrap();
        cx.phase_warm(&READ, 1, f).unwrap();
        assert_eq!(resets.get(), 1, "warm phases do not reset");
        assert_eq!(
            runs.load(Ordering::Relaxed),
            3,
            "and run once each, measured"
        );
        let phases = cx.into_phases();
        assert!(phases[1..]
            .iter()
            .all(|p| !p.flags.iter().any(|f| f == "cache-not-dropped")));
    }

    /// A batched operation (the per-char tests: one timed call for a chunk of characters)
    /// counts its operations in `count` and its timed calls in `samples`.
    #[test]
    fn lat_by_op_counts_operations_and_samples_apart() {
        const W: PhaseSpec = PhaseSpec {
            name: "w",
            kind: PhaseKind::Write,
            primary: Primary::OpsPerS,
            ops_unit: "chars/s",
        };
        let mut target = CountingTarget {
            info: TargetInfo::default(),
            resets: Rc::new(Cell::new(0)),
        };
        let policy = Policy::default();
        let pool = DataPool::new(policy.data, policy.seed);
        let mut cx = TrialContext::new(std::env::temp_dir(), &policy, &mut target, pool, &|_| {});
        cx.phase(&W, 1, |w| {
            for _ in 0..3 {
                let t = w.start();
                w.done_batch(Op::Write, t, 4096, 4096);
            }
            Ok(())
        })
        .unwrap();
        let p = cx.into_phases().remove(0);
        let write = p.lat_by_op.iter().find(|o| o.op == "write").unwrap();
        assert_eq!((write.count, write.samples), (3 * 4096, 3));
    }

    /// The flags of one cold read phase on a target described by `info`.
    fn cold_read_flags(info: TargetInfo) -> Vec<String> {
        const READ: PhaseSpec = PhaseSpec {
            name: "r",
            kind: PhaseKind::Read,
            primary: Primary::MbPerS,
            ops_unit: "",
        };
        let mut target = CountingTarget {
            info,
            resets: Rc::new(Cell::new(0)),
        };
        let policy = Policy {
            cache: CachePolicy::Cold,
            ..Default::default()
        };
        let pool = DataPool::new(policy.data, policy.seed);
        let mut cx = TrialContext::new(std::env::temp_dir(), &policy, &mut target, pool, &|_| {});
        cx.phase(&READ, 1, |w| {
            let t = w.start();
            w.done(Op::Read, t, 1 << 20);
            Ok(())
        })
        .unwrap();
        cx.phase_warm(&READ, 1, |_| Ok(())).unwrap();
        let phases = cx.into_phases();
        assert!(
            !phases[1].flags.iter().any(|f| f == "cold-unverifiable"),
            "a phase that does not claim cold is not marked"
        );
        phases[0].flags.clone()
    }

    /// A cold read that no test can check (tmpfs; no device counters and no measured
    /// device rate) is marked so; one that the measured device rate can check is not.
    #[test]
    fn cold_reads_that_cannot_be_checked_are_marked() {
        let unverifiable = |info| cold_read_flags(info).contains(&"cold-unverifiable".into());
        let tmpfs = TargetInfo {
            fstype: "tmpfs".into(),
            kind: "tmpfs".into(),
            ..Default::default()
        };
        assert!(unverifiable(tmpfs.clone()));
        // A --dir on a filesystem with no block device: no counters (this target has
        // none), no rate.
        let overlay = TargetInfo {
            fstype: "overlay".into(),
            kind: "dir".into(),
            ..Default::default()
        };
        assert!(unverifiable(overlay));
        let calibrated = TargetInfo {
            fstype: "ext4".into(),
            kind: "loop".into(),
            device_read_mb_per_s: Some(1e12),
            ..Default::default()
        };
        assert!(!unverifiable(calibrated.clone()));
        // tmpfs stays unverifiable whatever else is known: drop_caches does not evict it.
        let r = read_phase(100.0, 256 << 20, Some(0));
        assert!(!cold_verifiable(&tmpfs, &r, Primary::MbPerS));
        // Device counters alone can check, also an ops/s phase; a rate alone only MB/s.
        let ext4 = TargetInfo {
            fstype: "ext4".into(),
            ..Default::default()
        };
        assert!(cold_verifiable(&ext4, &r, Primary::OpsPerS));
        let no_counters = read_phase(100.0, 256 << 20, None);
        assert!(!cold_verifiable(
            &calibrated,
            &no_counters,
            Primary::OpsPerS
        ));
        assert!(cold_verifiable(&calibrated, &no_counters, Primary::MbPerS));
        // A loop image whose calibration failed: the counters still judge an ops/s phase,
        // but an MB/s phase lacks the rate rule and is marked.
        let failed = TargetInfo {
            fstype: "ext4".into(),
            kind: "loop".into(),
            device_read_mb_per_s: None,
            ..Default::default()
        };
        assert!(cold_verifiable(&failed, &r, Primary::OpsPerS));
        assert!(!cold_verifiable(&failed, &r, Primary::MbPerS));
    }

    fn read_phase(mb_per_s: f64, bytes_read: u64, dev_read: Option<u64>) -> PhaseResult {
        PhaseResult {
            mb_per_s,
            bytes_read,
            bytes: bytes_read,
            dev_read_bytes: dev_read,
            ..Default::default()
        }
    }

    #[test]
    fn cache_suspect_rules() {
        let m = 1u64 << 20;
        // Device counters say the data did not come from the device.
        assert!(cache_suspect(
            &read_phase(100.0, 256 * m, Some(10 * m)),
            Primary::MbPerS,
            None,
            false
        ));
        // Faster than the device, and no counters to say otherwise.
        assert!(cache_suspect(
            &read_phase(3000.0, 256 * m, None),
            Primary::MbPerS,
            Some(1000.0),
            false
        ));
        // Faster than the calibration, but the device delivered the bytes: not suspect.
        assert!(!cache_suspect(
            &read_phase(1500.0, 256 * m, Some(256 * m)),
            Primary::MbPerS,
            Some(1000.0),
            false
        ));
        // Plausible speed, bytes from the device.
        assert!(!cache_suspect(
            &read_phase(900.0, 256 * m, Some(250 * m)),
            Primary::MbPerS,
            Some(1000.0),
            false
        ));
        // A bulk read that got a third of its bytes from the cache is suspect; a read
        // judged in ops/s (seeks re-read blocks) is not, down to half.
        assert!(cache_suspect(
            &read_phase(500.0, 256 * m, Some(170 * m)),
            Primary::MbPerS,
            Some(1000.0),
            false
        ));
        assert!(!cache_suspect(
            &read_phase(500.0, 256 * m, Some(170 * m)),
            Primary::OpsPerS,
            Some(1000.0),
            false
        ));
        // Compressible data: a compressing filesystem reads fewer bytes than it returns,
        // so the byte rule does not judge; the speed rule still does.
        assert!(!cache_suspect(
            &read_phase(500.0, 256 * m, Some(40 * m)),
            Primary::MbPerS,
            Some(1000.0),
            true
        ));
        assert!(cache_suspect(
            &read_phase(3000.0, 256 * m, Some(40 * m)),
            Primary::MbPerS,
            Some(1000.0),
            true
        ));
        // Metadata-only reads (no payload) are not judged by the byte rule.
        assert!(!cache_suspect(
            &read_phase(0.0, 0, Some(0)),
            Primary::OpsPerS,
            Some(1000.0),
            false
        ));
    }

    /// The speed rule judges against the faster of the device's two calibrated rates: a
    /// buffered cold read at the buffered rate (far above the O_DIRECT one) is not
    /// suspect, a read well above both is, and a run with only the O_DIRECT rate (stored
    /// before the buffered one was measured) is judged against that.
    #[test]
    fn cache_suspect_judges_against_the_faster_calibrated_rate() {
        let m = 1u64 << 20;
        let rates = |direct, buffered| TargetInfo {
            device_read_mb_per_s: direct,
            device_buffered_read_mb_per_s: buffered,
            ..Default::default()
        };
        let both = rates(Some(715.0), Some(2000.0));
        assert_eq!(both.device_read_ceiling_mb_per_s(), Some(2000.0));
        let faster_direct = rates(Some(1800.0), Some(900.0));
        assert_eq!(faster_direct.device_read_ceiling_mb_per_s(), Some(1800.0));
        let direct_only = rates(Some(715.0), None);
        assert_eq!(direct_only.device_read_ceiling_mb_per_s(), Some(715.0));
        assert_eq!(rates(None, None).device_read_ceiling_mb_per_s(), None);
        // No device counters: the speed rule alone decides.
        let suspect = |mb_per_s, info: &TargetInfo| {
            let r = read_phase(mb_per_s, 256 * m, None);
            cache_suspect(
                &r,
                Primary::MbPerS,
                info.device_read_ceiling_mb_per_s(),
                false,
            )
        };
        assert!(!suspect(2000.0, &both), "at the buffered rate");
        assert!(!suspect(2300.0, &both), "within 1.2× the buffered rate");
        assert!(suspect(2500.0, &both), "well above both rates");
        assert!(
            !suspect(2000.0, &faster_direct),
            "under 1.2× the direct rate"
        );
        assert!(suspect(2000.0, &direct_only), "2.8× the only rate measured");
        // A measured buffered rate alone also lets the rate rule check an MB/s read.
        let loop_target = |direct, buffered| TargetInfo {
            fstype: "ext4".into(),
            kind: "loop".into(),
            ..rates(direct, buffered)
        };
        let r = read_phase(100.0, 256 * m, None);
        assert!(cold_verifiable(
            &loop_target(None, Some(900.0)),
            &r,
            Primary::MbPerS
        ));
        assert!(!cold_verifiable(
            &loop_target(None, None),
            &r,
            Primary::MbPerS
        ));
    }

    /// Workers that call `ready` are timed from when the last one got ready: a slow setup
    /// is not the phase's time; without `ready` it is; a worker that fails before getting
    /// ready does not leave the others waiting.
    #[test]
    fn a_phase_shows_its_final_count_once_ended_until_the_next_is_announced() {
        // A 2,000-file phase ends between two refreshes of the bar: the bar read 0 (the
        // count was dropped when the workers ended), so it showed 0/2,020 ops.
        let pool = DataPool::new(crate::policy::DataPolicy::Zeros, 1);
        let shown = LiveOps::new();
        let f = |w: &mut Worker| {
            for _ in 0..1000 {
                let t = w.start();
                w.done(Op::Stat, t, 0);
            }
            Ok(())
        };
        run_workers(SyncPolicy::None, &pool, 2, &f, None, &shown).unwrap();
        assert_eq!(shown.total(), 2000, "after the phase ended");
        shown.clear();
        assert_eq!(shown.total(), 0, "the next phase announced");
        let none = |_: &mut Worker| Ok(());
        run_workers(SyncPolicy::None, &pool, 1, &none, None, &shown).unwrap();
        assert_eq!(shown.total(), 0, "its own count, not the phase before's");
    }

    #[test]
    fn ready_starts_the_clock_when_all_workers_are_set_up() {
        use std::time::Duration;
        let pool = DataPool::new(crate::policy::DataPolicy::Zeros, 1);
        let setup = |w: &Worker| std::thread::sleep(Duration::from_millis(300 * w.idx as u64));
        let work = |w: &mut Worker| {
            let t = w.stamp();
            std::thread::sleep(Duration::from_millis(20));
            w.done(Op::Read, t, 1);
        };
        let with_ready = |w: &mut Worker| {
            setup(w);
            w.ready();
            work(w);
            Ok(())
        };
        let ran = run_workers(
            SyncPolicy::None,
            &pool,
            2,
            &with_ready,
            None,
            &LiveOps::new(),
        )
        .unwrap();
        let (rec, wall_s) = (ran.rec, ran.wall_s);
        // Under the 0.3 s of worker 1's setup, which a clock started before it would count.
        assert!((0.02..0.3).contains(&wall_s), "{wall_s} s");
        assert_eq!(rec.ops, 2);
        let (first, last) = rec.done_s.unwrap();
        assert!(first >= 0.02 && last <= wall_s, "{first} {last} {wall_s}");
        let without = |w: &mut Worker| {
            setup(w);
            work(w);
            Ok(())
        };
        let wall_s = run_workers(SyncPolicy::None, &pool, 2, &without, None, &LiveOps::new())
            .unwrap()
            .wall_s;
        assert!(wall_s >= 0.32, "{wall_s} s");
        let one_fails = |w: &mut Worker| {
            if w.idx == 1 {
                return Err(anyhow!("setup failed"));
            }
            w.ready();
            Ok(())
        };
        assert!(run_workers(
            SyncPolicy::None,
            &pool,
            2,
            &one_fails,
            None,
            &LiveOps::new()
        )
        .is_err());
    }

    /// CPU time is read over the same window as the wall time: a worker's setup before
    /// `ready` (a buffer fill, opens) burns CPU that is in neither, so CPU% stays within
    /// 100% per worker. Counters read before the workers started counted 2 × 0.4 s of
    /// setup CPU against ~0.05 s of wall time (~1600%).
    #[test]
    fn cpu_time_covers_the_wall_time_window_only() {
        use std::time::Duration;
        const BUSY: PhaseSpec = PhaseSpec {
            name: "busy",
            kind: PhaseKind::Write,
            primary: Primary::OpsPerS,
            ops_unit: "",
        };
        let resets = Rc::new(Cell::new(0));
        let mut target = CountingTarget {
            info: TargetInfo::default(),
            resets: Rc::clone(&resets),
        };
        let policy = Policy {
            cache: CachePolicy::Keep,
            ..Default::default()
        };
        let pool = DataPool::new(policy.data, policy.seed);
        let mut cx = TrialContext::new(std::env::temp_dir(), &policy, &mut target, pool, &|_| {});
        let workers = 2;
        cx.phase(&BUSY, workers, |w| {
            // Untimed setup that burns 0.4 s of CPU.
            let t = Instant::now();
            let mut x = 0u64;
            while t.elapsed() < Duration::from_millis(400) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            w.ready();
            let t = w.start();
            std::thread::sleep(Duration::from_millis(50));
            w.done(Op::Other, t, 0);
            Ok(())
        })
        .unwrap();
        let p = &cx.phases()[0];
        let cpu_s = p.cpu_user_s + p.cpu_sys_s;
        assert!(p.wall_s >= 0.05 && p.wall_s < 0.4, "wall {} s", p.wall_s);
        // Other tests of this process may run meanwhile: at most both cores' worth.
        assert!(cpu_s < 0.3, "setup CPU counted: {cpu_s} s");
        assert!(
            p.cpu_pct <= 100.0 * workers as f64 + 10.0,
            "cpu {}% with {workers} workers",
            p.cpu_pct
        );
    }
}
