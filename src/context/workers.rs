//! Running a phase's workers: one thread each (or this thread alone), the start line they
//! may wait at ([`Worker::ready`]), the CPU and device counters read around them, and the
//! live operation counts a progress display reads ([`live_ops`]).

use crate::data::{DataPool, DataSource};
use crate::policy::SyncPolicy;
use crate::probe::recorder::{Mark, Op, Recorder};
use crate::probe::sys;
use crate::probe::Stamp;
use crate::signals::check_stop;
use anyhow::{anyhow, Context, Result};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// One worker's count of operations done, alone on its cache line: the worker stores into
/// it (a plain store, no lock, no shared line), a progress display reads it.
#[derive(Default)]
#[repr(align(128))]
struct LiveCell(AtomicU64);

/// The counts of the workers of the phase now running or, once it ended, of that phase
/// until the next is announced: a phase shorter than a display's refresh is seen done
/// (its final count), not at 0.
pub(super) struct LiveOps(Mutex<Option<Arc<[LiveCell]>>>);

impl LiveOps {
    pub(super) const fn new() -> Self {
        Self(Mutex::new(None))
    }

    /// Fresh counts for `n` workers, shown from now on.
    fn open(&self, n: usize) -> Arc<[LiveCell]> {
        let cells: Arc<[LiveCell]> = (0..n).map(|_| LiveCell::default()).collect();
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&cells));
        cells
    }

    /// 0 until the next workers start: a phase is announced.
    pub(super) fn clear(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    pub(super) fn total(&self) -> u64 {
        let guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().map_or(0, |cells| {
            cells.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
        })
    }
}

pub(super) static LIVE: LiveOps = LiveOps::new();

/// Operations done so far in the phase now running, or in all by the phase that ended
/// last until the next is announced (0 from then until its workers start). For progress
/// displays; never called from the workers' hot path.
pub fn live_ops() -> u64 {
    LIVE.total()
}

/// The CPU times of the children reaped so far, the target device's counters and the
/// kernel threads' CPU time at one instant. The CPU of the work itself is its threads' own
/// ([`sys::thread_cpu_times`]), read by each of them around its part.
pub(super) struct Counters {
    children: sys::CpuTimes,
    stat_path: Option<PathBuf>,
    dev: Option<sys::DiskStat>,
    kernel_s: Option<f64>,
}

/// What happened between two [`Counters`].
pub(super) struct Spent {
    pub(super) cpu_user_s: f64,
    pub(super) cpu_sys_s: f64,
    /// The target device's requests and bytes; `None` when it has no device of its own.
    pub(super) dev: Option<sys::DiskStat>,
    /// CPU seconds of the machine's kernel threads ([`sys::kernel_threads_cpu_s`]).
    pub(super) kernel_s: Option<f64>,
    /// Dirty and writeback page cache when the window ended, before any closing sync:
    /// what the work left unwritten when its clock stopped.
    pub(super) dirty_bytes: u64,
}

impl Spent {
    /// Adds `other` (a later part of the same phase): a figure one part lacks is lacking.
    pub(super) fn add(&mut self, other: &Spent) {
        self.cpu_user_s += other.cpu_user_s;
        self.cpu_sys_s += other.cpu_sys_s;
        self.dev = match (self.dev, other.dev) {
            (Some(a), Some(b)) => Some(a.plus(&b)),
            _ => None,
        };
        self.kernel_s = match (self.kernel_s, other.kernel_s) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        // At the end of the phase: its last part's.
        self.dirty_bytes = other.dirty_bytes;
    }
}

impl Counters {
    /// The counters now; after a syncfs of `quiesce`'s filesystem when given, so that
    /// what earlier work left dirty is written out before they are read (see
    /// [`run_workers`]).
    pub(super) fn now(stat_path: Option<PathBuf>, quiesce: Option<&File>) -> io::Result<Self> {
        if let Some(f) = quiesce {
            sys::syncfs_of(f)?;
        }
        let dev = stat_path.as_deref().and_then(sys::DiskStat::read);
        // Read last: scanning /proc for the kernel threads costs this thread a millisecond
        // of its own, which is not the work's.
        let kernel_s = sys::kernel_threads_cpu_s();
        Ok(Self {
            children: sys::children_cpu_times(),
            stat_path,
            dev,
            kernel_s,
        })
    }

    /// What was spent since `self`: `own`, the CPU of the work's threads over the window
    /// (each thread's own, [`sys::thread_cpu_times`]), plus the children reaped meanwhile;
    /// the device's counters and the kernel threads' CPU seconds. With `quiesce`, its
    /// filesystem is synced after the CPU times are read and before the device's counters
    /// and the kernel threads' CPU are: the writes the work left dirty, and the journal
    /// commit that covers them, are its work, not a later phase's. A sync that wrote
    /// nothing was the measurement's own: ext4 sends the device a flush on every syncfs,
    /// dirty or not, and that flush is not counted.
    pub(super) fn since(&self, quiesce: Option<&File>, own: sys::CpuTimes) -> io::Result<Spent> {
        let cpu = own.plus(sys::children_cpu_times().since(self.children));
        let dirty_bytes = sys::dirty_bytes();
        let mut dev1 = self.stat_path.as_deref().and_then(sys::DiskStat::read);
        if let Some(f) = quiesce {
            sys::syncfs_of(f)?;
            let after = self.stat_path.as_deref().and_then(sys::DiskStat::read);
            dev1 = closing_sync(dev1, after);
        }
        let kernel1 = sys::kernel_threads_cpu_s();
        Ok(Spent {
            cpu_user_s: cpu.user_s,
            cpu_sys_s: cpu.sys_s,
            dev: match (self.dev, dev1) {
                (Some(d0), Some(d1)) => Some(d1.since(&d0)),
                _ => None,
            },
            kernel_s: match (self.kernel_s, kernel1) {
                (Some(k0), Some(k1)) => Some((k1 - k0).max(0.0)),
                _ => None,
            },
            dirty_bytes,
        })
    }
}

/// The device's counters at the end of a window, given those `before` and `after` its
/// closing sync: `after` when the sync wrote something (the work's dirty data and its
/// commit), else `before` (the sync's own flush, which ext4 sends even when nothing is
/// dirty, is the measurement's).
fn closing_sync(
    before: Option<sys::DiskStat>,
    after: Option<sys::DiskStat>,
) -> Option<sys::DiskStat> {
    match (before, after) {
        (Some(b), Some(a)) if a.write_ios == b.write_ios => Some(b),
        _ => after,
    }
}

/// What the workers of one phase did and cost, every figure over one window: from the
/// phase start (the start line of [`Worker::ready`], or just before the workers start) to
/// the moment the last worker ended.
pub(super) struct Ran {
    pub(super) rec: Recorder,
    pub(super) wall_s: f64,
    /// CPU and device work meanwhile.
    pub(super) spent: Spent,
}

/// Runs `n` workers of one phase (on this thread when `n` is 1) and merges their recorders;
/// CPU times and the device counters at `stat` (a `/sys/block/*/stat`) are read when the
/// clock starts and when it stops. Their operation counts are shown in `shown`.
///
/// `quiesce`, when given, is a directory on the target whose filesystem is synced, outside
/// the clock, before the starting counters are read and after the process's CPU times
/// are read at the end: the device work of the window is then the phase's own, whole
/// (what it left dirty and its journal commit included), and none of an earlier phase's
/// or set-up's. Without it a journal timer or writeback would fall in one repetition's
/// phase and in the next phase of another.
pub(super) fn run_workers<F>(
    sync: SyncPolicy,
    pool: &DataPool,
    n: usize,
    f: &F,
    stat: Option<PathBuf>,
    quiesce: Option<&File>,
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
    let gate = Gate::new(n, stat.clone(), quiesce);
    let early = Counters::now(stat, quiesce).context("syncfs before the phase")?;
    let start = Instant::now();
    // Each worker's result with the CPU its thread spent from the start line to its end.
    let run_one = |idx: usize, mut rec: Recorder| -> Result<(Recorder, sys::CpuTimes, bool)> {
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
            cpu0: sys::thread_cpu_times(),
            readied: false,
            untimed: Duration::ZERO,
        };
        let res = f(&mut w);
        let cpu = sys::thread_cpu_times().window(w.cpu0);
        w.rec.finish();
        if res.is_err() {
            abort.store(true, Ordering::Relaxed);
        }
        let untimed = w.untimed.as_secs_f64();
        w.rec.done_s = w.rec.done_s.map(|(a, b)| (a, b - untimed));
        res.map(|_| (w.rec, cpu, untimed > 0.0))
    };
    let results: Vec<Result<(Recorder, sys::CpuTimes, bool)>> = if n == 1 {
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
    let (start, before) = match gate.opened()? {
        Some(opened) => opened,
        None => (start, early),
    };
    let wall_s = start.elapsed().as_secs_f64();
    let own = results
        .iter()
        .flatten()
        .fold(sys::CpuTimes::default(), |sum, (_, cpu, _)| sum.plus(*cpu));
    // With untimed teardown, rates are over the time to the last worker's timed end.
    // (A worker's recorder counts from the start line, `Worker::ready`, once it got there.)
    let ends = results.iter().flatten().filter_map(|r| Some(r.0.done_s?.1));
    let untimed_end = results
        .iter()
        .flatten()
        .any(|r| r.2)
        .then(|| ends.fold(0.0, f64::max));
    let spent = before
        .since(quiesce, own)
        .context("syncfs after the phase")?;
    let mut merged = Recorder::new(start);
    let mut first_err = None;
    for r in results {
        match r {
            Ok((rec, _, _)) => merged += &rec,
            Err(e) if first_err.is_none() => first_err = Some(e),
            Err(_) => {}
        }
    }
    if let Some(s) = untimed_end.filter(|_| merged.own_s.is_none()) {
        merged.own_s = Some(s.min(wall_s));
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(Ran {
            rec: merged,
            wall_s,
            spent,
        }),
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
    gate: &'a Gate<'a>,
    /// This thread's CPU times when its work started (see [`Worker::ready`]).
    cpu0: sys::CpuTimes,
    /// Whether it passed the start line ([`Worker::ready`]).
    readied: bool,
    /// Time this worker spent on what the phase does not time (see [`Worker::untimed`]).
    untimed: Duration,
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

    /// Shows `ops` operations done so far in the progress display without recording
    /// them: for operations an external program does, recorded when it has finished
    /// (pgbench's transactions, from its log).
    pub fn show_live(&self, ops: u64) {
        self.live.store(ops, Ordering::Relaxed);
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

    /// Counts `d` of teardown that is not the filesystem's work (an engine's io_destroy):
    /// rates are over the time to the workers' ends less it, as fio's; wall time keeps it.
    pub fn untimed(&mut self, d: Duration) {
        self.untimed += d;
    }

    /// Says that the external program that did this phase's work timed it itself, in
    /// `seconds` by its own clock: the phase's rates are over them instead of its wall
    /// time (which still counts for CPU use and the wall-time figure).
    pub fn timed_itself(&mut self, seconds: f64) {
        self.rec.own_s = Some(seconds);
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
    /// Once: a worker that calls it again (a job's next loop) is already past the line.
    pub fn ready(&mut self) {
        if std::mem::replace(&mut self.readied, true) {
            return;
        }
        let t = self.gate.arrive(self.idx);
        self.rec.restart(t);
        // After the gate: the worker that opened it read the counters and synced there.
        self.cpu0 = sys::thread_cpu_times();
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
struct Gate<'s> {
    n: usize,
    /// The device counters to read when the gate opens.
    stat: Option<PathBuf>,
    /// The filesystem to sync before they are read (see [`run_workers`]).
    quiesce: Option<&'s File>,
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
    /// The CPU times and device counters when it opened, or why they could not be read.
    counters: Option<io::Result<Counters>>,
    /// Which workers were counted.
    arrived: Vec<bool>,
}

impl<'s> Gate<'s> {
    fn new(n: usize, stat: Option<PathBuf>, quiesce: Option<&'s File>) -> Self {
        Self {
            n,
            stat,
            quiesce,
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
            s.counters = Some(Counters::now(self.stat.clone(), self.quiesce));
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
        struct Leave<'g, 's>(&'g Gate<'s>, usize);
        impl Drop for Leave<'_, '_> {
            fn drop(&mut self) {
                let mut s = self.0.lock();
                self.0.count(&mut s, self.1, false);
            }
        }
        Leave(self, idx)
    }

    /// When the gate opened and the counters then, if it opened; once, after the workers
    /// ended.
    fn opened(&self) -> Result<Option<(Instant, Counters)>> {
        let mut s = self.lock();
        let (Some(start), Some(counters)) = (s.start, s.counters.take()) else {
            return Ok(None);
        };
        Ok(Some((
            start,
            counters.context("syncfs at the phase's start line")?,
        )))
    }
}

#[cfg(test)]
mod closing_tests {
    use super::*;

    fn stat(write_ios: u64, flushes: u64) -> Option<sys::DiskStat> {
        Some(sys::DiskStat {
            write_ios,
            write_bytes: write_ios * 4096,
            flush_ios: Some(flushes),
            ..Default::default()
        })
    }

    #[test]
    fn a_closing_sync_counts_only_when_it_wrote() {
        // Nothing dirty: its flush is the sync's own, not the work's.
        assert_eq!(closing_sync(stat(10, 2), stat(10, 3)), stat(10, 2));
        // It wrote the work's dirty data and committed it: all of it is the work's.
        assert_eq!(closing_sync(stat(10, 2), stat(14, 3)), stat(14, 3));
        // A counter that cannot be read is not guessed.
        assert_eq!(closing_sync(None, stat(14, 3)), stat(14, 3));
        assert_eq!(closing_sync(stat(10, 2), None), None);
    }
}
