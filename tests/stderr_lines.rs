//! Every line fsarena writes to stderr goes out in one `write`, so that the lines of MPI
//! ranks sharing mpirun's stderr never interleave mid-line. Checked with strace, which
//! shows each write(2) on descriptor 2.

mod common;

use std::process::Command;

/// The strings fsarena passed to write(2) on stderr while running `args`, or `None` when
/// strace is not here.
fn stderr_writes(test: &str, args: &[&str]) -> Option<Vec<String>> {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIP {test}: needs strace (Debian package strace)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let out = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=write",
            "-e",
            "signal=none",
            "-s",
            "65536",
            "-o",
        ])
        .arg(&trace)
        .arg(common::bin())
        .arg("--db")
        .arg(dir.path().join("t.db"))
        .args(args)
        .output()
        .unwrap();
    assert!(!out.stderr.is_empty(), "fsarena wrote nothing to stderr");
    let text = std::fs::read_to_string(&trace).unwrap();
    Some(
        text.lines()
            .filter_map(|l| l.split_once("write(2, \"").map(|(_, rest)| rest))
            .map(|rest| rest[..rest.rfind("\", ").unwrap()].to_string())
            .collect(),
    )
}

#[test]
fn an_error_is_one_write_of_one_whole_line() {
    let test = "an_error_is_one_write_of_one_whole_line";
    let Some(writes) = stderr_writes(test, &["run", "smallfiles", "--fs", "nosuchfs"]) else {
        return;
    };
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert!(writes[0].starts_with("fsarena: error: "), "{writes:?}");
    assert!(writes[0].ends_with("\\n"), "{writes:?}");
}

#[test]
fn progress_and_warnings_of_a_run_are_whole_lines() {
    let test = "progress_and_warnings_of_a_run_are_whole_lines";
    if common::skip_without_loop(test) {
        return;
    }
    let img = common::image_dir();
    let img_arg = img.path().to_str().unwrap();
    let Some(writes) = stderr_writes(
        test,
        &[
            "run",
            "smallfiles:files=50",
            "--fs",
            "tmpfs",
            "--size",
            "64MiB",
            "--reps",
            "1",
            "--image-dir",
            img_arg,
        ],
    ) else {
        return;
    };
    assert!(writes.len() > 2, "{writes:?}");
    for w in &writes {
        assert!(
            w.ends_with("\\n"),
            "a write that is not whole lines: {w:?} in {writes:?}"
        );
    }
    common::assert_clean(img.path());
}
