//! A run is known to be alive by the lock on its state file, not by its process name:
//! `cleanup` leaves a run of a binary called anything else (`fsarena-dev`, a symlink)
//! alone, and undoes it once that process is gone.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn cleanup_leaves_a_live_run_under_another_name_alone() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("fsarena-dev");
    std::fs::copy(common::bin(), &dev).unwrap();
    let img = dir.path().join("img");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let child = Command::new(&dev)
        .args(["--db", dir.path().join("r.db").to_str().unwrap()])
        .args([
            "run",
            "command:run=sleep 4",
            "--reps",
            "1",
            "--quiet",
            "--dir",
        ])
        .arg(&work)
        .arg("--image-dir")
        .arg(&img)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for its state file, then clean up while it runs.
    let state = img.join("state");
    let started = Instant::now();
    while !std::fs::read_dir(&state)
        .map(|rd| {
            rd.flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
        .unwrap_or(false)
    {
        assert!(started.elapsed() < Duration::from_secs(20), "no state file");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let out = Command::new(common::bin())
        .args(["cleanup", "--image-dir"])
        .arg(&img)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("is still running"), "{text}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "the run was disturbed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Gone now: nothing of it is left to clean.
    let out = Command::new(common::bin())
        .args(["cleanup", "--image-dir"])
        .arg(&img)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("still running"), "{text}");
    let left: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.')) // the directory's ownership marker
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
