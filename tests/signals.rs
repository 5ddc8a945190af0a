//! Teardown under fire: SIGINT in the middle of a phase leaves nothing mounted, attached or
//! on disk (exit code 130); after `kill -9`, `fsarena cleanup` removes what was left.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The slow workload: 1 GiB written with an fsync after every 8 KiB.
const SLOW: &str = "bonnie:size=1GiB,char_size=0";

/// Starts a slow run on ext4 (fsync after every 8 KiB write) and returns once its
/// `write_block` phase has begun.
fn start_slow_run(image_dir: &std::path::Path) -> (Child, mpsc::Receiver<String>) {
    start_run(
        image_dir,
        &[SLOW, "--fs", "ext4", "--size", "2GiB", "--sync", "each"],
        "write_block",
    )
}

/// Starts `fsarena run ARGS --reps 1` and returns once a progress line names `phase` and
/// a filesystem is mounted under `image_dir`.
fn start_run(
    image_dir: &std::path::Path,
    args: &[&str],
    phase: &str,
) -> (Child, mpsc::Receiver<String>) {
    let mut cmd = Command::new(common::bin());
    cmd.arg("run").args(args).args(["--reps", "1"]);
    if !args.contains(&"--db") {
        // Never the checkout's ./fsarena.db.
        cmd.arg("--db").arg(image_dir.join("results.db"));
    }
    let mut child = cmd
        .arg("--image-dir")
        .arg(image_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fsarena");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("fsarena reached the phase in time");
        if line.contains(phase) {
            break;
        }
    }
    // The phase is announced after the cold reset (umount + mount); make sure of the mount.
    for _ in 0..200 {
        if !common::mounts_under(image_dir).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    (child, rx)
}

fn wait_with_timeout(child: &mut Child, secs: u64) -> std::process::ExitStatus {
    for _ in 0..secs * 10 {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    panic!("fsarena did not exit within {secs} s");
}

#[test]
fn sigint_mid_phase_tears_everything_down() {
    let test = "sigint_mid_phase_tears_everything_down";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let db = dir.path().join("r.db");
    // A short trial finishes first; the signal comes in the middle of the second one.
    let (mut child, rx) = start_run(
        dir.path(),
        &[
            "bonnie-files:files=1,max_size=4KiB,min_size=1KiB",
            SLOW,
            "--fs",
            "ext4",
            "--size",
            "2GiB",
            "--sync",
            "each",
            "--db",
            db.to_str().unwrap(),
        ],
        "write_block",
    );
    if common::mounts_under(dir.path()).is_empty() {
        let _ = child.kill();
        panic!("no filesystem mounted mid-phase");
    }
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_with_timeout(&mut child, 120);
    let rest: Vec<String> = rx.try_iter().collect();
    assert_eq!(status.code(), Some(130), "stderr: {rest:?}");
    common::assert_clean(dir.path());
    let state_files: Vec<_> = std::fs::read_dir(dir.path().join("state"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .collect();
    assert!(
        state_files.is_empty(),
        "state file removed after a clean teardown"
    );
    // The run is stored as interrupted and keeps the trial that finished.
    let out = Command::new(common::bin())
        .args(["export", "last", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let run: serde_json::Value = common::run_document(&out.stdout);
    assert_eq!(run["status"], "interrupted");
    let trials = run["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2, "{trials:?}");
    assert_eq!(trials[0]["workload"], "bonnie-files");
    assert_eq!(trials[0]["status"], "ok");
    assert_eq!(common::phase(&trials[0], "seq_create")["ops"], 1024);
    assert_eq!(trials[1]["workload"], "bonnie");
    assert_eq!(trials[1]["status"], "interrupted");
    let history = Command::new(common::bin())
        .arg("history")
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&history.stdout).contains("interrupted"));
}

#[test]
fn kill_9_then_cleanup_leaves_nothing() {
    let test = "kill_9_then_cleanup_leaves_nothing";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let (mut child, _rx) = start_slow_run(dir.path());
    child.kill().expect("kill -9");
    child.wait().unwrap();
    assert!(
        !common::mounts_under(dir.path()).is_empty(),
        "kill -9 leaves the mount behind"
    );
    assert!(
        !common::images_under(dir.path()).is_empty(),
        "and the image"
    );
    let out = common::cleanup(dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cleanup failed: {text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("undid mount") && text.contains("undid image"),
        "{text}"
    );
    // The killed run's journal is named once, with the command that stores it.
    assert!(
        text.contains("kept journal") && text.contains("fsarena import"),
        "{text}"
    );
    common::assert_clean(dir.path());
    // Idempotent.
    let again = common::cleanup(dir.path());
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to clean up"));
}

#[test]
fn cleanup_sweeps_a_loop_device_missing_from_the_state_files() {
    let test = "cleanup_sweeps_a_loop_device_missing_from_the_state_files";
    if common::skip_without_loop(test) {
        return;
    }
    let dir = common::image_dir();
    fsarena::state::ensure_owned_dir(dir.path()).unwrap();
    let img = dir.path().join("20000101-000000-dead-ext4-1.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(common::loops_under(dir.path()).len(), 1);
    let out = common::cleanup(dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not in a state file"), "{text}");
    assert!(common::loops_under(dir.path()).is_empty(), "{text}");
}

#[test]
fn kill_9_on_tmpfs_then_cleanup_unmounts_it() {
    let test = "kill_9_on_tmpfs_then_cleanup_unmounts_it";
    if common::skip_without_loop(test) {
        return;
    }
    let dir = common::image_dir();
    // One write(2) per byte: minutes for 64 MiB, so the kill lands mid-phase.
    let (mut child, _rx) = start_run(
        dir.path(),
        &[
            "bonnie:size=64MiB,char_mode=syscall,seeks=10",
            "--fs",
            "tmpfs",
            "--size",
            "128MiB",
        ],
        "write_char",
    );
    child.kill().expect("kill -9");
    child.wait().unwrap();
    let left = common::mounts_under(dir.path());
    assert_eq!(left.len(), 1, "kill -9 leaves the tmpfs mounted: {left:?}");
    let out = common::cleanup(dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("undid mount"), "{text}");
    common::assert_clean(dir.path());
    let again = common::cleanup(dir.path());
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to clean up"));
}
