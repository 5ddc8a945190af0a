//! Unit tests of the trial context: policies around phases, workers and their start line,
//! live counts and the figures of a phase, with targets and data in memory.

use super::workers::LiveOps;
use super::*;
use crate::probe::recorder::Op;
use crate::result::{Provision, TargetInfo};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

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
/// The result of one write phase of one worker doing `f`, on a target that counts
/// nothing.
fn one_write_phase(f: impl Fn(&mut Worker) -> anyhow::Result<()> + Sync) -> PhaseResult {
    const W: PhaseSpec = PhaseSpec {
        name: "w",
        kind: PhaseKind::Write,
        primary: Primary::OpsPerS,
        ops_unit: "ops/s",
    };
    let mut target = CountingTarget {
        info: TargetInfo::default(),
        resets: Rc::new(Cell::new(0)),
    };
    let policy = Policy::default();
    let pool = DataPool::new(policy.data, policy.seed);
    let mut cx = TrialContext::new(std::env::temp_dir(), &policy, &mut target, pool, &|_| {});
    cx.phase(&W, 1, f).unwrap();
    cx.into_phases().remove(0)
}

#[test]
fn lat_by_op_counts_operations_and_samples_apart() {
    let p = one_write_phase(|w| {
        for _ in 0..3 {
            let t = w.start();
            w.done_batch(Op::Write, t, 4096, 4096);
        }
        Ok(())
    });
    let write = p.lat_by_op.iter().find(|o| o.op == "write").unwrap();
    assert_eq!((write.count, write.samples), (3 * 4096, 3));
}

/// A program that timed its work itself (`Worker::timed_itself`): the phase's rates are
/// over its time; the wall time and CPU use stay the phase's own.
#[test]
fn a_program_that_timed_itself_sets_the_rates() {
    let p = one_write_phase(|w| {
        let t = w.start();
        std::thread::sleep(std::time::Duration::from_millis(30));
        w.done_batch(Op::Other, t, 1000, 1_000_000);
        w.timed_itself(0.01);
        Ok(())
    });
    assert!((p.ops_per_s - 100_000.0).abs() < 1e-6, "{}", p.ops_per_s);
    assert!((p.mb_per_s - 100.0).abs() < 1e-9, "{}", p.mb_per_s);
    assert!(p.wall_s >= 0.03, "{}", p.wall_s);
}

/// Teardown a worker says is untimed (`Worker::untimed`, an engine's io_destroy): the
/// rates are over the time to the worker's end less it; the wall time keeps it.
#[test]
fn untimed_teardown_is_out_of_the_rates() {
    let p = one_write_phase(|w| {
        // A set-up before the start line, which the rates never count either.
        std::thread::sleep(std::time::Duration::from_millis(100));
        w.ready();
        let t = w.start();
        std::thread::sleep(std::time::Duration::from_millis(20));
        w.done_batch(Op::Other, t, 1000, 1_000_000);
        let t = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(200));
        w.untimed(t.elapsed());
        Ok(())
    });
    assert!(p.wall_s >= 0.22, "{}", p.wall_s);
    // About 1000 ops in 20 ms; counting the 200 ms would give under 4,600 ops/s.
    assert!(p.ops_per_s > 10_000.0, "{}", p.ops_per_s);
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
    run_workers(SyncPolicy::None, &pool, 2, &f, None, None, &shown).unwrap();
    assert_eq!(shown.total(), 2000, "after the phase ended");
    shown.clear();
    assert_eq!(shown.total(), 0, "the next phase announced");
    let none = |_: &mut Worker| Ok(());
    run_workers(SyncPolicy::None, &pool, 1, &none, None, None, &shown).unwrap();
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
    let wall_s = run_workers(
        SyncPolicy::None,
        &pool,
        2,
        &without,
        None,
        None,
        &LiveOps::new(),
    )
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

/// A phase's CPU is its workers' own: another thread of fsarena's busy meanwhile (the
/// progress display, the disturbance watch, another test) is not in it. Read as the
/// process's getrusage, a thread spinning beside a sleeping worker counted ~0.2 s here.
#[test]
fn cpu_time_is_the_workers_own_not_other_threads() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;
    const IDLE: PhaseSpec = PhaseSpec {
        name: "idle",
        kind: PhaseKind::Write,
        primary: Primary::OpsPerS,
        ops_unit: "",
    };
    let mut target = CountingTarget {
        info: TargetInfo::default(),
        resets: Rc::new(Cell::new(0)),
    };
    let policy = Policy {
        cache: CachePolicy::Keep,
        ..Default::default()
    };
    let pool = DataPool::new(policy.data, policy.seed);
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let spinner = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
    };
    let mut cx = TrialContext::new(std::env::temp_dir(), &policy, &mut target, pool, &|_| {});
    for workers in [1, 2] {
        cx.phase(&IDLE, workers, |w| {
            let t = w.start();
            std::thread::sleep(Duration::from_millis(200));
            w.done(Op::Other, t, 0);
            Ok(())
        })
        .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    spinner.join().unwrap();
    for p in cx.phases() {
        let cpu_s = p.cpu_user_s + p.cpu_sys_s;
        assert!(p.wall_s >= 0.2, "wall {} s", p.wall_s);
        assert!(cpu_s < 0.05, "another thread's CPU counted: {cpu_s} s");
    }
}
