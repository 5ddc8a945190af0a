//! `--reps auto`: at least three repetitions, then more until the figures are precise
//! enough (never because a difference looks significant), bounded by `--max-reps` and
//! `--budget`; the number run and why it stopped are recorded and printed. `--reps-for
//! PCT` repeats until a PCT% difference could be seen; both start with a noise probe.

mod common;

use assert_cmd::Command;
use predicates::str::contains;

#[test]
fn precision_stops_the_repetitions_and_an_unreachable_one_goes_to_the_maximum() {
    if common::skip_without_loop("precision_stops_the_repetitions") {
        return;
    }
    // tmpfs against ext4 on file creation: a clear difference does not stop the
    // repetitions by itself; they stop when every figure is within ±5%, or at the maximum.
    let img = common::image_dir();
    let (v, out) = common::run_json(
        &[
            "smallfiles:files=1500",
            "--fs",
            "tmpfs,ext4",
            "--size",
            "128MiB",
            "--reps",
            "auto",
            "--max-reps",
            "6",
        ],
        img.path(),
    );
    let reps = v["policy"]["reps"].as_u64().unwrap();
    assert!((3..=6).contains(&reps), "{out}");
    assert_eq!(v["trials"].as_array().unwrap().len() as u64, 2 * reps);
    let decided = &v["policy"]["auto_reps"];
    assert_eq!(decided["max_reps"], 6);
    let head = decided["outcome"][0].as_str().unwrap();
    let settled = format!(
        "--reps auto: {reps} repetitions; all 3 phases precise to ±5% (the repetitions it needs)"
    );
    let maxed = format!("--reps auto: {reps} repetitions (--max-reps reached)");
    assert!(
        head == settled || (reps == 6 && head.starts_with(&maxed)),
        "{decided}"
    );
    assert!(
        out.contains(&format!("--reps auto: {reps} repetitions")),
        "{out}"
    );
    // One word per meaning: "settled" is the verdict's (every pair of a phase told apart or
    // within the margin), "precise to" the repetitions' (each figure's own interval).
    assert!(!head.contains("settled"), "{head}");
    assert!(out.contains("Could tell:"), "{out}");
    for line in out.lines().filter(|l| l.contains("settled")) {
        assert!(
            line.trim_start().starts_with("Could tell:"),
            "{line}\n{out}"
        );
    }
    // Rotated order: ext4 ran first in the second repetition.
    let order: Vec<(&str, u64)> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["target"].as_str().unwrap(), t["rep"].as_u64().unwrap()))
        .collect();
    assert_eq!(order[2..4], [("ext4", 2), ("tmpfs", 2)], "{order:?}");
    common::assert_clean(img.path());

    // One target, a precision no machine reaches: on to --max-reps, and it says so.
    let img = common::image_dir();
    let (v, out) = common::run_json(
        &[
            "smallfiles:files=300",
            "--fs",
            "tmpfs",
            "--size",
            "64MiB",
            "--reps",
            "auto",
            "--precision",
            "0.0001",
            "--max-reps",
            "4",
        ],
        img.path(),
    );
    assert_eq!(v["policy"]["reps"], 4, "{out}");
    assert_eq!(v["trials"].as_array().unwrap().len(), 4);
    assert!(out.contains("4 repetitions (--max-reps reached)"), "{out}");
    // The record names each phase short of the precision; the report the widest three.
    let outcome = v["policy"]["auto_reps"]["outcome"].as_array().unwrap();
    assert_eq!(outcome.len(), 4, "{outcome:?}");
    assert!(
        outcome[1..].iter().all(|l| l
            .as_str()
            .unwrap()
            .contains("not within ±0.0001%: smallfiles ")),
        "{outcome:?}"
    );
    assert!(out.contains("  short of ±0.0001%: smallfiles "), "{out}");
    assert!(!out.contains("not within"), "{out}");
    common::assert_clean(img.path());
}

#[test]
fn its_options_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (&["--precision", "5"][..], "go with --reps auto"),
        (&["--reps-for", "0"][..], "--reps-for 0: give a percentage"),
        (
            &["--reps-for", "10", "--max-reps", "6"][..],
            "--reps-for runs at least 12",
        ),
        (
            &["--reps-for", "10", "--reps", "3"][..],
            "cannot be used with",
        ),
        (
            &["--reps-for", "10", "--precision", "5"][..],
            "cannot be used with",
        ),
        (
            &["--reps", "3", "--max-reps", "5"][..],
            "go with --reps auto",
        ),
        (
            &["--reps", "auto", "--max-reps", "2"][..],
            "--max-reps 2: give 3 to",
        ),
        (&["--reps", "auto", "--precision", "0"][..], "--precision 0"),
        (
            &["--reps", "auto", "--budget", "soon"][..],
            "--budget 'soon'",
        ),
        (
            &["--reps", "often"][..],
            "give a whole number of repetitions, or auto",
        ),
    ] {
        Command::new(common::bin())
            .args(["run", "command:run=true", "--dir"])
            .arg(dir.path())
            .arg("--image-dir")
            .arg(dir.path().join("img"))
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(want));
    }
}

#[test]
fn reps_for_repeats_for_the_difference_after_a_noise_probe() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    std::fs::create_dir(&work).unwrap();
    let img = dir.path().join("img");
    std::fs::create_dir(&img).unwrap();
    let out = common::run_any(
        &[
            "smallfiles:files=100",
            "--dir",
            work.to_str().unwrap(),
            "--reps-for",
            "50",
            "--max-reps",
            "12",
        ],
        &img,
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, out.stdout);
    let v = out.json.expect("json written");
    let decided = &v["policy"]["auto_reps"];
    assert_eq!(decided["reps_for_pct"], 50.0, "{decided}");
    assert_eq!(decided["max_reps"], 12, "{decided}");
    let reps = v["policy"]["reps"].as_u64().unwrap();
    assert_eq!(reps, 12, "at least twelve, at most twelve: {decided}");
    let head = decided["outcome"][0].as_str().unwrap();
    assert!(
        head.starts_with(&format!("--reps-for 50: {reps} repetitions")),
        "{decided}"
    );
    // The probe before the first trial: its figures recorded, its forecast said.
    let noise = &v["host"]["noise"];
    assert_eq!(noise["rounds"], 6, "{noise}");
    assert_eq!(noise["io_bytes"], 16 << 20, "{noise}");
    for cv in ["io_cv", "cpu_cv"] {
        let x = noise[cv].as_f64().unwrap();
        assert!(x.is_finite() && x >= 0.0, "{noise}");
    }
    assert!(
        out.stderr.contains("Noise probe: 6 timings"),
        "{}",
        out.stderr
    );
    // A fixed number of repetitions has no probe.
    let img = dir.path().join("img2");
    std::fs::create_dir(&img).unwrap();
    let (v, _) = common::run_json(
        &[
            "smallfiles:files=100",
            "--dir",
            work.to_str().unwrap(),
            "--reps",
            "1",
        ],
        &img,
    );
    assert!(v["host"].get("noise").is_none(), "{}", v["host"]);
}
