//! Teardown under fire: SIGINT in the middle of a phase leaves nothing mounted, attached or
//! on disk (exit code 130); after `kill -9`, `fsarena cleanup` removes what was left.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Starts a slow run (fsync after every 8 KiB write) and returns once its `write_block`
/// phase has begun.
fn start_slow_run(image_dir: &std::path::Path) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(common::bin())
        .args([
            "run",
            "bonnie:size=1GiB,char_size=0",
            "--fs",
            "ext4",
            "--size",
            "2GiB",
            "--reps",
            "1",
            "--sync",
            "each",
        ])
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
            .expect("fsarena reached write_block in time");
        if line.contains("write_block") {
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
    let (mut child, rx) = start_slow_run(dir.path());
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
