//! Unit tests of the comparison on runs built in memory.

use super::*;
use crate::result::{PhaseResult, TargetInfo, Trial};

/// One repetition's figures of a phase: throughput `v` MB/s over one second of work.
/// The direction word of a significant verdict ("faster", "more", …); empty otherwise.
fn dir(v: &Verdict) -> &'static str {
    match v {
        Verdict::Significant { word, .. } => word,
        _ => "",
    }
}

fn phase(name: &str, v: f64) -> PhaseResult {
    PhaseResult {
        name: name.into(),
        wall_s: 100.0 / v,
        ops_per_s: v * 10.0,
        mb_per_s: v,
        cpu_pct: 50.0,
        dirty_bytes_end: 0,
        primary: "mb_per_s".into(),
        ..Default::default()
    }
}

/// A run whose `(target, workload, phase, values)` entries each become one trial per value.
pub(super) fn run(id: &str, targets: &[&str], data: &[(&str, &str, &str, &[f64])]) -> RunResult {
    let mut trials = Vec::new();
    for (target, label, ph, values) in data {
        for (i, v) in values.iter().enumerate() {
            trials.push(Trial {
                target: target.to_string(),
                workload: label.to_string(),
                label: label.to_string(),
                params: Default::default(),
                rep: i as u32 + 1,
                status: "ok".into(),
                error: None,
                provision: Default::default(),
                phases: vec![phase(ph, *v)],
                peak_rss_bytes: 0,
                log: None,
                elapsed_s: None,
                ranks: Vec::new(),
                disturbance: None,
                engine: None,
            });
        }
    }
    RunResult {
        fsarena_version: "0.1.0".into(),
        run_id: id.into(),
        started_at: "2026-11-23T01:00:00+00:00".into(),
        finished_at: None,
        status: "complete".into(),
        command_line: vec![],
        host: crate::result::HostInfo {
            hostname: "h1".into(),
            kernel: "6.18".into(),
            ..Default::default()
        },
        policy: Default::default(),
        can_drop_caches: true,
        targets: targets
            .iter()
            .map(|t| TargetInfo {
                name: t.to_string(),
                fstype: t.to_string(),
                kind: "loop".into(),
                ..Default::default()
            })
            .collect(),
        trials,
        summaries: vec![],
        mpi: None,
        left_out: Vec::new(),
        notes: Vec::new(),
        resumed_at: Vec::new(),
        planned_trials: None,
    }
}

const BASE: &[f64] = &[100.0, 101.0, 99.0];
const SLOWER_20: &[f64] = &[80.0, 80.8, 79.2];

fn row<'a>(c: &'a Comparison, target: &str, metric: &str) -> &'a Row {
    c.rows
        .iter()
        .find(|r| r.target_a == target && r.metric == metric)
        .unwrap_or_else(|| panic!("no row {target} {metric}"))
}

fn err_text(r: Result<Comparison>) -> (String, i32) {
    let e = r.expect_err("an error");
    (format!("{e:#}"), crate::error::exit_code(&e))
}

#[test]
fn whole_runs_are_matched_by_target_name() {
    let a = run(
        "A",
        &["ext4", "xfs"],
        &[("ext4", "w", "p", BASE), ("xfs", "w", "p", BASE)],
    );
    let b = run(
        "B",
        &["btrfs", "ext4"],
        &[("btrfs", "w", "p", BASE), ("ext4", "w", "p", SLOWER_20)],
    );
    let c = compare_runs(a, None, b, None, None).unwrap();
    assert_eq!(c.pairs, [("ext4".to_string(), "ext4".to_string())]);
    let r = row(&c, "ext4", "mb_per_s");
    assert_eq!((r.n_a, r.n_b, r.median_a, r.median_b), (3, 3, 100.0, 80.0));
    assert_eq!(dir(&r.verdict), "slower");
    assert_eq!(dir(&row(&c, "ext4", "wall_s").verdict), "slower");
    // cpu_pct is 50 in every repetition on both sides: equal.
    let cpu = row(&c, "ext4", "cpu_pct");
    assert_eq!(cpu.verdict, Verdict::Equal);
    assert_eq!(cpu.ratio.unwrap().ci, Some((1.0, 1.0)));
}

#[test]
fn a_target_on_one_side_picks_the_same_name_or_the_only_target() {
    let a = run(
        "A",
        &["ext4", "xfs"],
        &[("ext4", "w", "p", BASE), ("xfs", "w", "p", BASE)],
    );
    let single = run("B", &["btrfs"], &[("btrfs", "w", "p", BASE)]);
    let c = compare_runs(a.clone(), Some("xfs"), single.clone(), None, None).unwrap();
    assert_eq!(c.pairs, [("xfs".to_string(), "btrfs".to_string())]);
    let c = compare_runs(a.clone(), None, a.clone(), Some("xfs"), None).unwrap();
    assert_eq!(c.pairs, [("xfs".to_string(), "xfs".to_string())]);
    let (msg, code) = err_text(compare_runs(single, Some("btrfs"), a, None, None));
    assert_eq!(code, crate::error::exit::USAGE);
    assert!(
        msg.contains("no target 'btrfs'") && msg.contains("ext4, xfs"),
        "{msg}"
    );
}

#[test]
fn unknown_targets_and_nothing_in_common_are_usage_errors() {
    let a = run("A", &["ext4", "xfs"], &[("ext4", "w", "p", BASE)]);
    let (msg, code) = err_text(compare_runs(a.clone(), Some("zfs"), a.clone(), None, None));
    assert_eq!(code, crate::error::exit::USAGE);
    assert!(
        msg.contains("run A has no target 'zfs'; its targets: ext4, xfs"),
        "{msg}"
    );
    let b = run("B", &["btrfs"], &[("btrfs", "w", "p", BASE)]);
    let (msg, code) = err_text(compare_runs(a.clone(), None, b, None, None));
    assert_eq!(code, crate::error::exit::USAGE);
    assert!(msg.contains("no target name in common"), "{msg}");
    let other = run("C", &["ext4"], &[("ext4", "v", "p", BASE)]);
    let (msg, code) = err_text(compare_runs(a, None, other, None, None));
    assert_eq!(code, crate::error::exit::USAGE);
    assert!(
        msg.contains("no workload phase in common") && msg.contains("ext4 v"),
        "{msg}"
    );
    assert!(split_spec("last:").is_err() && split_spec(":ext4").is_err());
    assert_eq!(split_spec("last:ext4").unwrap(), ("last", Some("ext4")));
    assert_eq!(split_spec("2026").unwrap(), ("2026", None));
}

#[test]
fn fail_if_slower_counts_significant_losses_beyond_the_threshold() {
    let a = run("A", &["ext4"], &[("ext4", "w", "p", BASE)]);
    let b = run("B", &["ext4"], &[("ext4", "w", "p", SLOWER_20)]);
    let at = |limit| compare_runs(a.clone(), None, b.clone(), None, limit).unwrap();
    let c = at(Some(10.0));
    assert!(c.regressed());
    let r = row(&c, "ext4", "mb_per_s");
    assert!(r.regression);
    // 20% worse, its interval at 95% (one gated figure) within 17.1–22.8%: a loss of 10%,
    // 20% or 22% is not ruled out, one of 23% or 30% is (B is worse, within the
    // allowance: a pass, named).
    let Some(gate::Check::Judged {
        loss_pct, interval, ..
    }) = &r.gate
    else {
        panic!("{:?}", r.gate)
    };
    assert!((loss_pct - 20.0).abs() < 0.1, "{loss_pct}");
    assert!(interval.0 > 17.0 && interval.1 < 23.0, "{interval:?}");
    let text = render::render(&c);
    assert!(text.contains("a 10% loss not ruled out:"), "{text}");
    assert!(at(Some(19.9)).regressed());
    assert!(at(Some(interval.1 - 0.05)).regressed());
    assert!(!at(Some(interval.1 + 0.05)).regressed());
    let c = at(Some(30.0));
    assert!(!c.regressed());
    assert_eq!(c.exit_code(), crate::error::exit::OK);
    assert!(render::render(&c).contains("worse than A, by less than 30% (pass):"));
    assert!(!at(None).regressed());
    // B faster: nothing regresses even at 0%.
    let c = compare_runs(b.clone(), None, a.clone(), None, Some(0.0)).unwrap();
    assert!(!c.regressed());
    assert_eq!(dir(&row(&c, "ext4", "mb_per_s").verdict), "faster");
}

/// The wall time, rates and latencies of one phase are one result: the gate looks at its
/// headline only, not at three or more chances to fail.
#[test]
fn fail_if_slower_gates_on_each_phases_headline_only() {
    let a = run("A", &["ext4"], &[("ext4", "w", "p", BASE)]);
    let b = run("B", &["ext4"], &[("ext4", "w", "p", SLOWER_20)]);
    let c = compare_runs(a, None, b, None, Some(10.0)).unwrap();
    // wall_s, ops_per_s and mb_per_s are all 20% slower …
    for m in ["wall_s", "ops_per_s", "mb_per_s"] {
        assert_eq!(dir(&row(&c, "ext4", m).verdict), "slower", "{m}");
    }
    // … and count once, by the phase's headline (mb_per_s here).
    assert_eq!(c.gated(), 1);
    let failed: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| r.regression)
        .map(|r| r.metric.as_str())
        .collect();
    assert_eq!(failed, ["mb_per_s"]);
    let text = render::render(&c);
    assert!(text.contains("gates on 1 figure(s)"), "{text}");
    assert!(
        text.contains("1 figure(s) of B worse than A, a 10% loss not ruled out"),
        "{text}"
    );
}

/// The gated figures are one family (Benjamini-Hochberg): a 10% loss that one interval
/// calls significant (p = 0.026 at Hsu's 2 df) is no regression among nine phases that did
/// not move, but the same loss in all ten phases is told apart in each.
#[test]
fn fail_if_slower_holds_the_family_level() {
    const A: &[f64] = &[100.0, 102.0, 98.0];
    const B: &[f64] = &[90.0, 92.0, 88.0];
    const SAME: &[f64] = &[100.5, 98.5, 101.0];
    let names = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"];
    let one = |v| run("x", &["ext4"], &[("ext4", "w", "p0", v)]);
    let c = compare_runs(one(A), None, one(B), None, Some(1.0)).unwrap();
    assert_eq!(dir(&row(&c, "ext4", "mb_per_s").verdict), "slower");
    assert!(c.regressed(), "one gated figure: its 95% interval decides");
    assert_eq!(c.exit_code(), crate::error::exit::REGRESSION);
    let ten = |first: &'static [f64], rest: &'static [f64]| {
        let data: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, p)| ("ext4", "w", *p, if i == 0 { first } else { rest }))
            .collect();
        run("x", &["ext4"], &data)
    };
    let c = compare_runs(ten(A, A), None, ten(B, SAME), None, Some(1.0)).unwrap();
    assert_eq!(c.gated(), 10);
    assert_eq!(c.family.apart, 0);
    assert!((c.family.level - 0.995).abs() < 1e-12);
    assert!(
        !c.regressed(),
        "one loss among ten phases is not told apart"
    );
    let c = compare_runs(ten(A, A), None, ten(B, B), None, Some(1.0)).unwrap();
    assert_eq!(c.family.apart, 10);
    assert!((c.family.level - 0.95).abs() < 1e-12);
    assert!(c.regressed());
}

/// A gated figure the gate cannot judge fails it with its own exit status, and says why.
#[test]
fn what_the_gate_cannot_judge_fails_it() {
    use crate::error::exit;
    let a = run("A", &["ext4"], &[("ext4", "w", "p", BASE)]);
    // Two repetitions a side that happen to be equal are no certainty, nor a pass.
    let two = |v: f64| run("B", &["ext4"], &[("ext4", "w", "p", &[v, v])]);
    let c = compare_runs(two(100.0), None, two(50.0), None, Some(10.0)).unwrap();
    assert_eq!(row(&c, "ext4", "mb_per_s").verdict, Verdict::NoSpread);
    assert!(!c.regressed());
    assert_eq!(c.exit_code(), exit::GATE_UNJUDGED);
    let text = render::render_width(&c, 200);
    assert!(
        text.contains("ext4 w p mb_per_s: 2 repetition(s) in A, 2 in B: the gate needs 3"),
        "{text}"
    );
    // A zero in B.
    let zero = run("B", &["ext4"], &[("ext4", "w", "p", &[100.0, 0.0, 99.0])]);
    let c = compare_runs(a.clone(), None, zero, None, Some(10.0)).unwrap();
    assert_eq!(c.exit_code(), exit::GATE_UNJUDGED);
    // Every trial of a phase failed in B: measured in A only, not a pass.
    let mut b = run(
        "B",
        &["ext4"],
        &[("ext4", "w", "p", BASE), ("ext4", "w", "q", BASE)],
    );
    let a2 = b.clone();
    for t in b.trials.iter_mut().filter(|t| t.phases[0].name == "q") {
        t.status = "failed".into();
    }
    let c = compare_runs(a2, None, b, None, Some(10.0)).unwrap();
    assert_eq!(c.unjudged.len(), 1, "{:?}", c.unjudged);
    assert_eq!(c.exit_code(), exit::GATE_UNJUDGED);
    // The same target name set up differently.
    let mut b = a.clone();
    b.targets[0].size_bytes = 512 << 20;
    let c = compare_runs(a.clone(), None, b, None, Some(10.0)).unwrap();
    assert_eq!(c.exit_code(), exit::GATE_UNJUDGED);
    assert!(c
        .warnings
        .iter()
        .any(|w| w.contains("size 0 MiB vs 512 MiB")));
    let text = render::render_width(&c, 200);
    assert!(
        text.contains("the target is set up differently (size"),
        "{text}"
    );
}

/// A gate whose interval holds both no loss and the loss it is set for says it cannot
/// tell, with the repetitions that would, and does not pass; one that rules it out, passes.
#[test]
fn a_gate_that_cannot_see_its_threshold_fails_with_the_repetitions_needed() {
    use crate::error::exit;
    // CV about 5%, three repetitions: a 10% slowdown is below what these can see.
    const NOISY: &[f64] = &[100.0, 105.0, 95.2];
    let a = run("A", &["ext4"], &[("ext4", "w", "p", NOISY)]);
    let c = compare_runs(a.clone(), None, a.clone(), None, Some(10.0)).unwrap();
    assert!(!c.regressed());
    assert_eq!(c.exit_code(), exit::GATE_CANNOT_SEE);
    let Some(gate::Check::Judged {
        interval,
        zone: gate::Zone::CannotTell,
        reps_needed: Some(n),
        ..
    }) = row(&c, "ext4", "mb_per_s").gate.clone()
    else {
        panic!("{:?}", row(&c, "ext4", "mb_per_s").gate)
    };
    assert!(
        interval.0 < 0.0 && interval.1 > 10.0 && n > 3,
        "{interval:?} {n}"
    );
    assert_eq!(gate::reps_needed(&c), Some(Some(n)));
    let text = render::render_width(&c, 300);
    assert!(
        text.contains(&format!("needs {n} repetitions per side")),
        "{text}"
    );
    assert!(text.contains("FAIL (exit 5)"), "{text}");
    // Ten quiet repetitions a side see a 10% slowdown: a pass means something.
    const QUIET: &[f64] = &[
        100.0, 100.5, 101.0, 100.0, 100.5, 101.0, 100.0, 100.5, 101.0, 100.0,
    ];
    let a = run("A", &["ext4"], &[("ext4", "w", "p", QUIET)]);
    let c = compare_runs(a.clone(), None, a, None, Some(10.0)).unwrap();
    assert_eq!(c.exit_code(), exit::OK);
    assert!(render::render_width(&c, 300).contains(": pass: "));
}

#[test]
fn figures_without_a_better_side_never_regress() {
    let mut a = run("A", &["ext4"], &[("ext4", "w", "p", BASE)]);
    let mut b = a.clone();
    for (i, t) in b.trials.iter_mut().enumerate() {
        t.phases[0].cpu_pct = 90.0 + i as f64;
        t.phases[0].dirty_bytes_end = 1 << 20;
    }
    for t in &mut a.trials {
        t.phases[0].dirty_bytes_end = 4096;
    }
    let c = compare_runs(a, None, b, None, Some(0.0)).unwrap();
    assert_eq!(dir(&row(&c, "ext4", "cpu_pct").verdict), "more");
    assert_eq!(dir(&row(&c, "ext4", "dirty_bytes_end").verdict), "more");
    assert!(!c.regressed());
}

#[test]
fn zeros_single_repetitions_and_failed_trials() {
    let mut a = run("A", &["ext4"], &[("ext4", "w", "p", BASE)]);
    let mut b = run("B", &["ext4"], &[("ext4", "w", "p", &[100.0])]);
    a.trials[0].phases[0].dirty_bytes_end = 8192;
    // A failed trial with absurd figures is left out.
    let mut failed = a.trials[0].clone();
    failed.status = "failed".into();
    failed.phases[0].mb_per_s = 1e9;
    a.trials.push(failed);
    b.trials[0].phases[0].extra.insert("x_per_s".into(), 5.0);
    let c = compare_runs(a, None, b, None, Some(0.0)).unwrap();
    let r = row(&c, "ext4", "mb_per_s");
    assert_eq!((r.n_a, r.n_b), (3, 1));
    assert_eq!(r.verdict, Verdict::CannotJudge);
    assert_eq!(
        row(&c, "ext4", "dirty_bytes_end").verdict.text(),
        "n/a (zero values)"
    );
    assert!(c.rows.iter().all(|r| r.metric != "x_per_s"), "only in B");
    assert_eq!(c.metrics_only_b, ["x_per_s"]);
    let text = render::render(&c);
    assert!(
        !text.to_lowercase().contains("nan") && !text.contains("inf"),
        "{text}"
    );
    assert!(text.contains("cannot judge (1 repetition)"), "{text}");
}

#[test]
fn mixed_causes_are_named() {
    let mut a = run("A", &["ext4"], &[("ext4", "w", "p", BASE)]);
    let mut b = a.clone();
    b.run_id = "B".into();
    assert!(mixed_causes(&a, &b).is_empty());
    b.host.kernel = "6.19".into();
    b.policy.cache = crate::policy::CachePolicy::Warm;
    b.policy.seed = 7;
    for t in &mut b.trials {
        t.params.insert("size".into(), "1MiB".into());
    }
    let w = mixed_causes(&a, &b);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("kernel (6.18 vs 6.19)")
            && w[0].contains("cache policy (cold vs warm)")
            && w[0].contains("seed (42 vs 7)")
            && !w[0].contains("host"),
        "{w:?}"
    );
    assert_eq!(
        w[1],
        "workload w ran with different parameters: (none) vs size=1MiB"
    );
    let text = render::render(&compare_runs(a.clone(), None, b.clone(), None, None).unwrap());
    assert!(text.contains("warning: A and B differ in kernel"), "{text}");
    // Only the parameters that differ are named, each side's comma-separated.
    for (t, v) in [(&mut a, "2"), (&mut b, "3")] {
        for x in &mut t.trials {
            x.params.insert("files".into(), v.into());
            x.params.insert("fsync".into(), "true".into());
            x.params.insert("size".into(), "1MiB".into());
        }
    }
    b.trials[0].params.insert("per_dir".into(), "7".into());
    assert_eq!(
        mixed_causes(&a, &b)[1],
        "workload w ran with different parameters: files=2 vs files=3, per_dir=7"
    );
}

#[test]
fn one_sided_workloads_and_phases_are_listed() {
    let a = run(
        "A",
        &["ext4"],
        &[
            ("ext4", "w", "p", BASE),
            ("ext4", "w", "q", BASE),
            ("ext4", "v", "p", BASE),
        ],
    );
    let b = run(
        "B",
        &["ext4"],
        &[("ext4", "w", "p", BASE), ("ext4", "u", "p", BASE)],
    );
    let c = compare_runs(a, None, b, None, None).unwrap();
    assert_eq!(c.only_a, ["ext4 v", "ext4 w/q"]);
    assert_eq!(c.only_b, ["ext4 u"]);
    assert!(c
        .rows
        .iter()
        .all(|r| (r.workload.as_str(), r.phase.as_str()) == ("w", "p")));
    // Metrics in the order of stats::METRICS.
    let order: Vec<&str> = c.rows.iter().map(|r| r.metric.as_str()).collect();
    assert_eq!(
        order,
        [
            "wall_s",
            "ops_per_s",
            "mb_per_s",
            "cpu_pct",
            "dirty_bytes_end"
        ]
    );
}

/// An io500 run whose last phase carries the scores of each repetition: bandwidth score
/// `bw` GiB/s, metadata score 4 kIOPS, total their geometric mean. Every probe figure is
/// the same in every run, so only the scores can differ.
fn io500_run(id: &str, bw: &[f64]) -> RunResult {
    let mut r = run(
        "x",
        &["ext4"],
        &[("ext4", "io500", "mdtest-hard-delete", BASE)],
    );
    r.run_id = id.into();
    for (t, bw) in r.trials.iter_mut().zip(bw) {
        let extra = &mut t.phases[0].extra;
        extra.insert("score_bw_gib_s".into(), *bw);
        extra.insert("score_md_kiops".into(), 4.0);
        extra.insert("score_total".into(), (bw * 4.0).sqrt());
    }
    r
}

#[test]
fn a_higher_io500_bandwidth_is_faster_and_a_lower_score_fails_the_gate() {
    let low = io500_run("A", &[1.0, 1.01, 0.99]);
    let high = io500_run("B", &[2.0, 2.02, 1.98]);
    let c = compare_runs(low.clone(), None, high.clone(), None, Some(10.0)).unwrap();
    assert_eq!(dir(&row(&c, "ext4", "score_bw_gib_s").verdict), "faster");
    assert_eq!(dir(&row(&c, "ext4", "score_total").verdict), "better");
    assert!(!c.regressed(), "an improvement is no regression");
    let c = compare_runs(high, None, low, None, Some(10.0)).unwrap();
    assert_eq!(dir(&row(&c, "ext4", "score_bw_gib_s").verdict), "slower");
    assert_eq!(dir(&row(&c, "ext4", "score_total").verdict), "worse");
    assert!(c.regressed(), "the io500 score dropped by 29%");
    assert!(row(&c, "ext4", "score_total").regression);
}
