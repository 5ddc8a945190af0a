//! Unit tests of the N-way ranking on runs built in memory.

use super::*;
use crate::compare::family::Test;
use crate::compare::tests::run;

const SLOW: &[f64] = &[100.0, 103.0, 98.0, 101.0];
const FAST: &[f64] = &[200.0, 205.0, 196.0, 202.0];
const SLOW_TOO: &[f64] = &[101.0, 99.0, 102.0, 100.0];

/// Run `id` on `kernel`, with ext4 (values `ext4`) and one more target `other`.
fn kernel_run(id: &str, kernel: &str, ext4: &[f64], other: &str) -> RunResult {
    let mut r = run(
        id,
        &["ext4", other],
        &[("ext4", "w", "p", ext4), (other, "w", "p", SLOW)],
    );
    r.host.kernel = kernel.into();
    r
}

fn whole(runs: Vec<RunResult>) -> Vec<(RunResult, Option<String>)> {
    runs.into_iter().map(|r| (r, None)).collect()
}

#[test]
fn runs_are_ranked_per_common_target_and_labelled_by_what_sets_them_apart() {
    let sides = whole(vec![
        kernel_run("20261101-000000-aaaa", "6.1.0-28-amd64", SLOW, "xfs"),
        kernel_run("20261102-000000-bbbb", "6.12.0-28-amd64", FAST, "xfs"),
        kernel_run("20261103-000000-cccc", "6.13.0-28-amd64", SLOW_TOO, "btrfs"),
    ]);
    let r = ranking(&sides, 0.03).unwrap();
    assert_eq!(r.not_common, ["xfs (in aaaa, bbbb)", "btrfs (in cccc)"]);
    assert_eq!(
        r.differ,
        ["kernel (aaaa 6.1.0-28-amd64; bbbb 6.12.0-28-amd64; cccc 6.13.0-28-amd64)"]
    );
    assert_eq!(r.groups.len(), 1);
    let g = &r.groups[0];
    assert_eq!(g.target.as_deref(), Some("ext4"));
    // The suffix all kernels share is left out of the labels.
    assert_eq!(g.labels, ["aaaa[6.1.0]", "bbbb[6.12.0]", "cccc[6.13.0]"]);
    let v = &g.verdicts[0];
    assert_eq!(
        v.ranking(),
        "bbbb[6.12.0](a) cccc[6.13.0](b) aaaa[6.1.0](b)"
    );
    // Three sides: all 3 pairs in the family, two told apart (Benjamini-Hochberg), so
    // every interval is at 1 − 2·0.05/3.
    assert_eq!((v.family.tests, v.family.apart), (3, 2));
    let level = 1.0 - 2.0 * 0.05 / 3.0;
    assert!((v.family.level - level).abs() < 1e-12);
    let want = Test::of(SLOW, FAST).unwrap().interval(level);
    let aaaa = v.places.iter().find(|p| p.target == "aaaa[6.1.0]").unwrap();
    assert_eq!(aaaa.vs_best.unwrap().ci, Some(want));
    let text = render(&r, 80);
    assert!(text.contains("== target ext4 =="), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn the_trait_that_alone_tells_the_sides_apart_labels_them() {
    let mut a = run("A", &["ext4"], &[("ext4", "w", "p", SLOW)]);
    a.host.hostname = "h1".into();
    let mut b = a.clone();
    b.run_id = "B".into();
    let mut c = a.clone();
    c.run_id = "C".into();
    // The kernel differs between two of three; the mount options tell all three apart.
    c.host.kernel = "6.19".into();
    for (r, opts) in [
        (&mut a, ""),
        (&mut b, "noatime"),
        (&mut c, "nobarrier,noatime"),
    ] {
        r.targets[0].requested_mount_opts = opts.into();
    }
    let r = ranking(&whole(vec![a.clone(), b.clone(), c]), 0.03).unwrap();
    let g = &r.groups[0];
    assert_eq!(
        g.labels,
        ["A[defaults]", "B[noatime]", "C[nobarrier,noatime]"]
    );
    assert_eq!(r.differ, ["kernel (A 6.18; B 6.18; C 6.19)"]);
    assert_eq!(
        g.differ,
        ["mount options (A defaults; B noatime; C nobarrier,noatime)"]
    );
    // No single trait tells them apart: all that differ, in order.
    let mut c = a.clone();
    c.run_id = "C".into();
    c.host.kernel = "6.19".into();
    let r = ranking(&whole(vec![a.clone(), b, c]), 0.03).unwrap();
    assert_eq!(
        r.groups[0].labels,
        ["A[defaults,6.18]", "B[noatime,6.18]", "C[defaults,6.19]"]
    );
    // Nothing differs: the run itself, given twice, is told apart by number.
    let r = ranking(&whole(vec![a.clone(), a.clone(), a]), 0.03).unwrap();
    assert_eq!(r.groups[0].labels, ["A", "A#2", "A#3"]);
    assert!(r.differ.is_empty());
}

#[test]
fn targets_of_one_run_go_by_their_names_and_a_whole_run_by_its_counterpart() {
    let one = run(
        "R",
        &["ext4", "xfs", "tmpfs"],
        &[
            ("ext4", "w", "p", SLOW),
            ("xfs", "w", "p", SLOW_TOO),
            ("tmpfs", "w", "p", FAST),
        ],
    );
    let sides: Vec<(RunResult, Option<String>)> = ["ext4", "xfs", "tmpfs"]
        .iter()
        .map(|t| (one.clone(), Some(t.to_string())))
        .collect();
    let r = ranking(&sides, 0.03).unwrap();
    assert_eq!(r.groups[0].labels, ["ext4", "xfs", "tmpfs"]);
    assert_eq!(r.groups[0].verdicts[0].ranking(), "tmpfs(a) xfs(b) ext4(b)");
    assert!(r.groups[0].target.is_none());
    // A whole run among RUN:TARGET sides stands for the target named.
    let other = kernel_run("S", "6.19", FAST, "btrfs");
    let sides = vec![
        (one.clone(), Some("ext4".to_string())),
        (one.clone(), Some("xfs".to_string())),
        (other, None),
    ];
    let r = ranking(&sides, 0.03).unwrap();
    assert_eq!(
        r.groups[0].labels,
        ["R:ext4[6.18]", "R:xfs[6.18]", "S:ext4[6.19]"]
    );
    assert_eq!(
        r.groups[0].verdicts[0].ranking(),
        "S:ext4[6.19](a) R:xfs[6.18](b) R:ext4[6.18](b)"
    );
}

#[test]
fn one_filesystem_across_runs_goes_by_its_options() {
    let sides: Vec<(RunResult, Option<String>)> = [("R", ""), ("S", "noatime"), ("T", "sync")]
        .iter()
        .map(|(id, opts)| {
            let mut r = run(id, &["ext4"], &[("ext4", "w", "p", SLOW)]);
            r.targets[0].requested_mount_opts = opts.to_string();
            (r, Some("ext4".to_string()))
        })
        .collect();
    let r = ranking(&sides, 0.03).unwrap();
    let want = ["R:ext4[defaults]", "S:ext4[noatime]", "T:ext4[sync]"];
    assert_eq!(r.groups[0].labels, want);
    // Different filesystems: their options are no distinction; nothing else differs.
    let mut other = sides[2].0.clone();
    other.targets[0].fstype = "xfs".into();
    let sides = vec![
        sides[0].clone(),
        sides[1].clone(),
        (other, Some("ext4".into())),
    ];
    let r = ranking(&sides, 0.03).unwrap();
    assert_eq!(r.groups[0].labels, ["R:ext4", "S:ext4", "T:ext4"]);
}

#[test]
fn runs_without_a_common_target_or_phase_are_usage_errors() {
    let a = run("A", &["ext4"], &[("ext4", "w", "p", SLOW)]);
    let b = run("B", &["xfs"], &[("xfs", "w", "p", SLOW)]);
    let err = ranking(&whole(vec![a.clone(), b, a.clone()]), 0.03).unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.contains("no target name in common: A (ext4), B (xfs), A (ext4)"),
        "{text}"
    );
    assert_eq!(crate::error::exit_code(&err), 2);
    let c = run("C", &["ext4"], &[("ext4", "v", "q", SLOW)]);
    let d = run("D", &["ext4"], &[("ext4", "u", "r", SLOW)]);
    let err = ranking(&whole(vec![a, c, d]), 0.03).unwrap_err();
    assert!(format!("{err}").contains("nothing to rank"), "{err}");
}
