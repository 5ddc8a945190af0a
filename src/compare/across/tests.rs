//! Unit tests of runs as the unit: the pooled run's values, its composition and the
//! refusals, on runs built in memory.

use super::*;
use crate::compare::tests::run;

/// Three repetitions of ext4 and tmpfs, one phase `p` of workload `w`, each value `× k`.
fn day(id: &str, k: f64) -> RunResult {
    run(
        id,
        &["ext4", "tmpfs"],
        &[
            ("ext4", "w", "p", &[100.0 * k, 200.0 * k, 400.0 * k]),
            ("tmpfs", "w", "p", &[1000.0 * k, 1000.0 * k, 1000.0 * k]),
        ],
    )
}

fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * y.abs().max(1.0)
}

#[test]
fn geometric_means_of_positive_values_and_what_has_no_logarithm() {
    assert!(close(geometric_mean(&[100.0, 200.0, 400.0]), 200.0));
    assert!(close(geometric_mean(&[5.0]), 5.0));
    assert_eq!(geometric_mean(&[0.0, 4.0]), 0.0);
    assert!(geometric_mean(&[-1.0, 4.0]).is_nan());
    assert!(geometric_mean(&[f64::INFINITY, 4.0]).is_nan());
    assert!(geometric_mean(&[]).is_nan());
}

#[test]
fn each_run_is_one_repetition_worth_its_geometric_mean() {
    let runs = [
        day("20261201-100000-aaaa", 1.0),
        day("20261202-100000-bbbb", 2.0),
        day("20261203-100000-cccc", 0.5),
    ];
    let p = pool(&runs, Some("0123456789abcdef"));
    assert_eq!(p.run_id, "aaaa+bbbb+cccc");
    assert_eq!(p.policy.reps, 3);
    let ext4: Vec<&Trial> = p.trials.iter().filter(|t| t.target == "ext4").collect();
    assert_eq!(ext4.len(), 3, "one trial per run");
    assert_eq!(
        ext4.iter().map(|t| t.rep).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    // The geometric mean of 100, 200, 400 is 200, times each day's factor; a time is the
    // geometric mean of the times (100/v), so the reciprocal of the rate's.
    for (t, k) in ext4.iter().zip([1.0, 2.0, 0.5]) {
        let ph = &t.phases[0];
        assert!(close(ph.mb_per_s, 200.0 * k), "{}", ph.mb_per_s);
        assert!(close(ph.ops_per_s, 2000.0 * k), "{}", ph.ops_per_s);
        assert!(close(ph.wall_s, 100.0 / (200.0 * k)), "{}", ph.wall_s);
        assert!(close(ph.cpu_pct, 50.0));
        assert_eq!(ph.primary, "mb_per_s");
    }
    // compare's samples see one value per run.
    let s = super::super::samples(&p, "ext4");
    let mb = super::super::find(super::super::find(&s[0].1, "p").unwrap(), "mb_per_s").unwrap();
    assert_eq!(mb.len(), 3);
    let note = composition(&p).expect("a pooled run says what it is");
    assert!(
        note.starts_with("3 runs of plan 0123456789abcdef as repetitions"),
        "{note}"
    );
    assert!(
        note.contains("day-to-day variance is in the intervals"),
        "{note}"
    );
    assert!(note.contains("20261202-100000-bbbb"), "{note}");
    assert_eq!(
        head(Some("A"), &p).unwrap(),
        format!("Runs as the unit: A is {note}")
    );
    assert!(composition(&runs[0]).is_none() && head(None, &runs[0]).is_none());
}

#[test]
fn a_run_gives_what_its_successful_repetitions_measured() {
    let mut r1 = day("20261201-100000-aaaa", 1.0);
    // Its third ext4 repetition failed: the run's value is that of the first two.
    r1.trials[2].status = "failed".into();
    let mut r2 = day("20261202-100000-bbbb", 1.0);
    // No ext4 repetition succeeded: the run gives ext4 nothing.
    for t in r2.trials.iter_mut().filter(|t| t.target == "ext4") {
        t.status = "failed".into();
    }
    let p = pool(&[r1, r2], None);
    let ext4: Vec<&Trial> = p.trials.iter().filter(|t| t.target == "ext4").collect();
    assert_eq!(ext4.len(), 1);
    assert!(close(ext4[0].phases[0].mb_per_s, (100.0f64 * 200.0).sqrt()));
    assert_eq!(p.trials.iter().filter(|t| t.target == "tmpfs").count(), 2);
    let note = composition(&p).unwrap();
    assert!(
        note.starts_with("2 runs of one plan as repetitions"),
        "{note}"
    );
}

#[test]
fn day_to_day_spread_decides_the_verdict() {
    // Within each day A and B are far apart (no overlap); across days B's mean is the
    // same as A's. A run's verdict tells them apart; runs as the unit cannot.
    let a = |id: &str, k: f64| {
        run(
            id,
            &["ext4"],
            &[("ext4", "w", "p", &[100.0 * k, 101.0 * k, 99.0 * k])],
        )
    };
    let b = |id: &str, k: f64| {
        run(
            id,
            &["ext4"],
            &[("ext4", "w", "p", &[110.0 * k, 111.0 * k, 109.0 * k])],
        )
    };
    let one = crate::compare::compare_runs(a("a1", 1.0), None, b("b1", 1.0), None, None).unwrap();
    let row = one.rows.iter().find(|r| r.metric == "mb_per_s").unwrap();
    assert!(
        matches!(row.verdict, super::super::Verdict::Significant { .. }),
        "{:?}",
        row.verdict
    );
    let pa = pool(&[a("a1", 1.0), a("a2", 1.3), a("a3", 0.8)], None);
    let pb = pool(&[b("b1", 0.8), b("b2", 1.2), b("b3", 0.9)], None);
    let pooled = crate::compare::compare_runs(pa, None, pb, None, None).unwrap();
    let row = pooled.rows.iter().find(|r| r.metric == "mb_per_s").unwrap();
    assert_eq!((row.n_a, row.n_b), (3, 3));
    assert!(
        !matches!(row.verdict, super::super::Verdict::Significant { .. }),
        "{:?}",
        row.verdict
    );
}

#[test]
fn runs_of_different_plans_are_refused_naming_what_differs() {
    let a = day("20261201-100000-aaaa", 1.0);
    let mut b = day("20261202-100000-bbbb", 1.0);
    b.policy.seed = 7;
    b.targets[0].requested_mount_opts = "noatime".into();
    for t in b.trials.iter_mut().filter(|t| t.target == "ext4") {
        t.params.insert("files".into(), "500".into());
    }
    let err = same_plan(&[(a.clone(), None), (b, None)])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("runs 20261201-100000-aaaa and 20261202-100000-bbbb are not runs of one plan"),
        "{err}"
    );
    assert!(
        err.contains("target ext4: mount options '' vs 'noatime'"),
        "{err}"
    );
    assert!(err.contains("seed 42 vs 7"), "{err}");
    assert!(err.contains("ran with different parameters"), "{err}");
    // Another target, another workload.
    let c = run(
        "20261203-100000-cccc",
        &["xfs"],
        &[("xfs", "v", "p", &[1.0, 2.0, 3.0])],
    );
    let err = same_plan(&[(a.clone(), None), (c, None)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("targets ext4, tmpfs vs xfs"), "{err}");
    assert!(err.contains("workloads w vs v"), "{err}");
    // Stored plan hashes that differ, though the results show nothing else.
    let d = day("20261204-100000-dddd", 1.0);
    let err = same_plan(&[
        (a.clone(), Some("1111".into())),
        (d.clone(), Some("2222".into())),
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("plan 1111 vs 2222"), "{err}");
    // The first run without a hash, the others with two different ones.
    let e = day("20261205-100000-eeee", 1.0);
    let err = same_plan(&[
        (a.clone(), None),
        (d.clone(), Some("1111".into())),
        (e, Some("2222".into())),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("runs 20261204-100000-dddd and 20261205-100000-eeee are not runs of one plan: plan 1111 vs 2222"),
        "{err}"
    );
    // One plan: its hash when every run has one, else none.
    let same = [
        (a.clone(), Some("1111".into())),
        (d.clone(), Some("1111".into())),
    ];
    assert_eq!(same_plan(&same).unwrap().as_deref(), Some("1111"));
    assert_eq!(
        same_plan(&[(a, Some("1111".into())), (d, None)]).unwrap(),
        None
    );
}

#[test]
fn runs_as_the_unit_are_not_mixed_with_one_run_and_the_gate_wants_three() {
    let two = pool(&[day("a-1", 1.0), day("b-2", 1.0)], None);
    let three = pool(&[day("a-1", 1.0), day("b-2", 1.0), day("c-3", 1.0)], None);
    let one = day("d-4", 1.0);
    assert!(check_sides(&[("a+b", &two), ("a+b+c", &three)], false).is_ok());
    let err = check_sides(&[("a+b+c", &three), ("d", &one)], false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'a+b+c' is runs as the unit but 'd' is one run"),
        "{err}"
    );
    let err = check_sides(&[("a+b", &two), ("a+b+c", &three)], true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("needs 3 runs a side with runs as the unit"),
        "{err}"
    );
    assert!(err.contains("'a+b' has 2"), "{err}");
    assert!(check_sides(&[("a+b+c", &three), ("a+b+c", &three)], true).is_ok());
    assert!(check_sides(&[("d", &one), ("d", &one)], true).is_ok());
}

#[test]
fn the_store_resolves_each_run_and_refuses_a_run_twice_or_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    for (id, k) in [
        ("20261201-100000-aaaa", 1.0),
        ("20261202-100000-bbbb", 2.0),
        ("20261203-100000-cccc", 0.5),
    ] {
        store.import(&day(id, k)).unwrap();
    }
    let p = load(&store, "20261201+bbbb+last").unwrap();
    assert_eq!(p.run_id, "aaaa+bbbb+cccc");
    assert_eq!(p.policy.reps, 3);
    // One run as ever.
    assert_eq!(load(&store, "bbbb").unwrap().run_id, "20261202-100000-bbbb");
    let err = load(&store, "cccc+aaaa+last").unwrap_err().to_string();
    assert!(
        err.contains("run 20261203-100000-cccc is given twice ('cccc' and 'last')"),
        "{err}"
    );
    let err = load(&store, "aaaa++bbbb").unwrap_err().to_string();
    assert!(err.contains("a run is missing between the '+'s"), "{err}");
    let err = load(&store, "aaaa+nope").unwrap_err().to_string();
    assert!(err.contains("no run 'nope'"), "{err}");
}

#[test]
fn the_gate_counts_runs_when_runs_are_the_unit() {
    let side = |ks: [f64; 3]| {
        let runs: Vec<RunResult> = ks
            .iter()
            .enumerate()
            .map(|(i, k)| day(&format!("2026120{i}-100000-{i:04}"), *k))
            .collect();
        pool(&runs, None)
    };
    let (a, b) = (side([1.0, 1.5, 0.7]), side([0.8, 1.4, 1.1]));
    let mut c = crate::compare::compare_runs(a, None, b, None, Some(10.0)).unwrap();
    crate::compare::judge_headlines(&mut c, 0.03);
    crate::compare::gate::gate(&mut c);
    assert_eq!(
        c.exit_code(),
        crate::error::exit::GATE_CANNOT_SEE,
        "a 10% loss is unseen"
    );
    let text = crate::compare::render::render_width(&c, 400);
    assert!(text.contains("; 3/3 runs, needs "), "{text}");
    assert!(text.contains(" runs per side (RUN+RUN+…)"), "{text}");
    assert!(!text.contains("--reps"), "{text}");
}
