//! `--phase-time`: workloads scaled from the stored trials of this host so that each
//! phase lasts at least the given time, the same on every target, said before the run.

mod common;

use assert_cmd::Command;
use predicates::str::contains;

#[test]
fn a_second_run_scales_from_the_first_and_says_so() {
    if common::skip_without_loop("a_second_run_scales_from_the_first") {
        return;
    }
    let img = common::image_dir();
    let args = [
        "smallfiles:files=300",
        "space",
        "--fs",
        "tmpfs",
        "--size",
        "1GiB",
    ];
    // Nothing stored yet: kept as given, and said why.
    let out = common::run_any(
        &[&args[..], &["--reps", "1", "--phase-time", "0.05s"]].concat(),
        img.path(),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "--phase-time 0.05s: smallfiles: files kept at 300 (no stored trial of smallfiles \
             with these parameters on tmpfs on this host)"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("space: kept as given (no parameter scales its work)"),
        "{}",
        out.stderr
    );
    // Now the first run's phases say how long 300 files take: the files are raised.
    let out = common::run_any(
        &[&args[..], &["--reps", "1", "--phase-time", "0.05s"]].concat(),
        img.path(),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("--phase-time 0.05s: smallfiles: files 300 → "))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    let files: u64 = line
        .split(" → ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(files > 300, "{line}");
    let v = out.json.unwrap();
    assert_eq!(v["trials"][0]["params"]["files"], files.to_string(), "{v}");
    common::assert_clean(img.path());
}

#[test]
fn phase_time_is_refused_with_a_plan_and_needs_a_duration() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            &["--plan", "x.toml", "--phase-time", "1s"][..],
            "cannot be used with",
        ),
        (
            &["smallfiles", "--phase-time", "soon"][..],
            "--phase-time 'soon': give a duration",
        ),
    ] {
        Command::cargo_bin("fsarena")
            .unwrap()
            .current_dir(dir.path())
            .arg("run")
            .args(args)
            .args(["--db", "x.db"])
            .assert()
            .code(2)
            .stderr(contains(says));
    }
}
