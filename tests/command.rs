//! End-to-end runs of the `command` workload: a succeeding command with setup, clean and
//! env on tmpfs and an ext4 loop image; a failing command that fails its trial, keeps its
//! log and lets the run go on.

mod common;

use common::phase;
use std::process::Command;

fn check_ok(fs: &str) {
    let burn = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; \
                dd if=/dev/urandom of=big bs=1M count=8 2>/dev/null; df -T . | tail -1; echo $MSG";
    let spec = format!(
        "command:setup='mkdir src && echo hi > src/a',run='{burn}',clean='rm -r src big',\
         env='MSG=hello, there;UNUSED=1'"
    );
    let Some((dir, v, _)) = common::run_once_on(&format!("command_{fs}"), &[&spec], fs, "256MiB")
    else {
        return;
    };
    let t = common::ok_trial(&v, 0);
    assert_eq!(common::phase_names(t), ["setup", "run", "clean"]);
    let run = phase(t, "run");
    let x = &run["extra"];
    assert!(x["children_cpu_user_s"].as_f64().unwrap() > 0.1, "{x}");
    assert!(
        run["cpu_user_s"].as_f64().unwrap() >= x["children_cpu_user_s"].as_f64().unwrap() * 0.99
    );
    let command_s = x["command_s"].as_f64().unwrap();
    assert!(command_s > 0.1 && command_s <= run["wall_s"].as_f64().unwrap());
    let log = t["log"].as_str().expect("the trial records its log");
    assert!(log.starts_with(dir.path().to_str().unwrap()), "{log}");
    let text = std::fs::read_to_string(log).unwrap();
    assert!(
        text.contains("hello, there\n"),
        "env reached the command: {text}"
    );
    let fstype = if fs == "tmpfs" { " tmpfs " } else { " ext4 " };
    assert!(
        text.contains(fstype),
        "the command ran on the target: {text}"
    );
    common::assert_clean(dir.path());
}

#[test]
fn command_on_tmpfs() {
    check_ok("tmpfs");
}

#[test]
fn command_on_ext4() {
    check_ok("ext4");
}

#[test]
fn a_failing_command_fails_its_trial_and_the_run_goes_on() {
    let test = "command_failing";
    if common::skip_without_loop(test) {
        return;
    }
    let dir = common::image_dir();
    let out = common::run_any(
        &[
            "command:run='echo starting; echo oops >&2; exit 7'",
            "command:run=echo fine",
            "--fs",
            "tmpfs",
            "--size",
            "64MiB",
            "--reps",
            "2",
            "--quiet",
        ],
        dir.path(),
    );
    let stderr = &out.stderr;
    assert_eq!(out.code, Some(1), "a failed trial fails the run: {stderr}");
    // The summary at the end names each failed trial and its cause.
    let stdout = &out.stdout;
    let summary = stdout
        .split("2 of 4 trial(s) did not succeed:")
        .nth(1)
        .unwrap_or_else(|| panic!("no failure summary: {stdout}"));
    for rep in [1, 2] {
        assert!(
            summary.contains(&format!(
                "tmpfs command:run='echo starting; echo oops >&2; exit 7' rep {rep}: failed: "
            )),
            "{summary}"
        );
    }
    assert!(summary.contains("exited with status 7"), "{summary}");
    let v = out.json.expect("json written");
    assert_eq!(v["status"], "failed");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 4, "every trial ran");
    for t in trials {
        let failing = t["label"].as_str().unwrap().contains("exit 7");
        if !failing {
            assert_eq!(t["status"], "ok", "{t}");
            continue;
        }
        assert_eq!(t["status"], "failed", "{t}");
        let err = t["error"].as_str().unwrap();
        assert!(err.contains("exited with status 7"), "{err}");
        assert!(
            err.contains("starting") && err.contains("oops"),
            "tail: {err}"
        );
        let log = t["log"].as_str().expect("the failed trial keeps its log");
        assert!(err.contains(log), "the error names the log: {err}");
        let text = std::fs::read_to_string(log).expect("the log is kept");
        assert!(text.contains("oops"), "{text}");
    }
    // The stored run has the same logs.
    let db = dir.path().join("results.db");
    let stored = Command::new(common::bin())
        .arg("export")
        .arg("last")
        .arg("--json")
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let s: serde_json::Value = common::run_document(&stored.stdout);
    assert_eq!(s["trials"][0]["log"], trials[0]["log"]);
    // Cleanup undoes mounts and images but keeps the logs.
    common::cleanup(dir.path());
    assert!(std::path::Path::new(trials[0]["log"].as_str().unwrap()).exists());
    common::assert_clean(dir.path());
}
