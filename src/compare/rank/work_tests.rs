//! Work verdicts: judged with the headline in one family, floored where repetitions are
//! equal, and not judged where every side counted zero.

use super::super::{settle, verdicts, Axis};
use crate::result::{PhaseResult, RunResult};

/// A phase of 1000 files with `written` KiB, `flushes` flushes and CPU `cpu` seconds.
fn phase(wall_s: f64, written_kib: u64, flushes: u64, cpu: f64) -> PhaseResult {
    PhaseResult {
        name: "create".into(),
        primary: "ops_per_s".into(),
        ops_unit: "files/s".into(),
        ops: 1000,
        wall_s,
        ops_per_s: 1000.0 / wall_s,
        dev_write_bytes: Some(written_kib * 1024),
        dev_write_ios: Some(written_kib / 4),
        dev_read_ios: Some(0),
        dev_read_bytes: Some(0),
        dev_flushes: Some(flushes),
        cpu_sys_s: cpu,
        ..Default::default()
    }
}

/// A run of `targets`, each with its repetitions' phases.
fn run(targets: &[(&str, Vec<PhaseResult>)]) -> RunResult {
    let names: Vec<&str> = targets.iter().map(|(n, _)| *n).collect();
    let ones: Vec<Vec<f64>> = targets.iter().map(|(_, ps)| vec![1.0; ps.len()]).collect();
    let data: Vec<(&str, &str, &str, &[f64])> = targets
        .iter()
        .zip(&ones)
        .map(|((n, _), xs)| (*n, "smallfiles", "create", xs.as_slice()))
        .collect();
    let mut r = crate::compare::tests::run("R", &names, &data);
    let mut phases = targets.iter().flat_map(|(_, ps)| ps.iter().cloned());
    for t in &mut r.trials {
        t.phases = vec![phases.next().unwrap()];
    }
    r
}

#[test]
fn equal_repetitions_of_work_settle_what_a_noisy_clock_cannot() {
    // The clock varies by a third; the bytes written are the same in every repetition,
    // ext4 writing 1.5× xfs's; the flushes are equal (3 each); CPU varies by 5%.
    let noisy = [1.0, 1.4, 0.7, 1.2];
    let cpu = [0.100, 0.105, 0.095, 0.102];
    let ext4: Vec<_> = (0..4).map(|i| phase(noisy[i], 6000, 3, cpu[i])).collect();
    let xfs: Vec<_> = (0..4)
        .map(|i| phase(noisy[3 - i], 4000, 3, cpu[3 - i]))
        .collect();
    let v = verdicts(&run(&[("ext4", ext4), ("xfs", xfs)]));
    assert_eq!(v.len(), 1);
    let v = &v[0];
    // Time cannot tell; work tells the bytes apart, at 1.5×, with a tight interval.
    assert_eq!(v.open_pairs().len(), 0);
    assert_eq!(v.settled(), Some(Axis::Work));
    let written = v
        .work
        .iter()
        .find(|w| w.figure == Some("dev_kib_written_per_op"))
        .unwrap();
    assert_eq!(written.places[0].target, "xfs");
    let r = written.places[1].vs_best.unwrap();
    assert!((r.ratio - 1.5).abs() < 1e-3, "{}", r.ratio);
    let (lo, hi) = r.ci.unwrap();
    assert!(lo > 1.4 && hi < 1.6, "{lo} {hi}");
    // Reads: zero on both sides, not judged. Flushes: 3 and 3, the floor of a count of
    // three (one flush in four) leaves them open, never "told apart".
    assert!(v.work.iter().all(|w| w.figure != Some("dev_reads_per_op")));
    let flushes = v
        .work
        .iter()
        .find(|w| w.figure == Some("dev_flushes_per_op"))
        .unwrap();
    assert_ne!(
        flushes.pairs[0].outcome,
        crate::compare::family::Outcome::Apart
    );
    // The headline is a family of one test; the work figures are another family.
    let tests = v.work.iter().filter(|w| w.pairs[0].test.is_some()).count();
    assert_eq!(v.family.tests, 1);
    assert!(v.work.iter().all(|w| w.family.tests == tests));
    assert!(v
        .work_line()
        .unwrap()
        .starts_with("work per file: written xfs 4.00 KiB, ext4 1.50× ["));
}

#[test]
fn a_target_without_a_device_has_no_work_verdict() {
    let mut tmpfs: Vec<_> = (0..3).map(|_| phase(0.1, 0, 0, 0.05)).collect();
    for p in &mut tmpfs {
        p.dev_write_bytes = None;
        p.dev_write_ios = None;
        p.dev_read_ios = None;
        p.dev_read_bytes = None;
        p.dev_flushes = None;
    }
    let ext4: Vec<_> = (0..3).map(|_| phase(1.0, 6000, 3, 0.1)).collect();
    let mut v = verdicts(&run(&[("ext4", ext4), ("tmpfs", tmpfs)]));
    // Only CPU, which both measured, is judged.
    let figures: Vec<_> = v[0].work.iter().map(|w| w.figure.unwrap()).collect();
    assert_eq!(figures, ["cpu_ms_per_op"]);
    // Settling again keeps them.
    settle(v.iter_mut(), 0.03);
    assert_eq!(v[0].work.len(), 1);
}
