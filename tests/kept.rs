//! A figure measured is a figure kept: when the database's filesystem fills up or the
//! database is deleted during a run, the run exits non-zero saying so, never "stored in",
//! and every finished trial comes back with `fsarena import` from the journal.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Starts `fsarena run command:run=sleep 0.4 --reps 4 --dir D` with the database at `db`;
/// after `after`, calls `fault`; returns (exit code, stdout, stderr).
fn run_with_fault(
    image_dir: &Path,
    db: &Path,
    after: Duration,
    fault: impl FnOnce(),
) -> (Option<i32>, String, String) {
    let work = image_dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let child = Command::new(common::bin())
        .args(["--db", db.to_str().unwrap(), "run", "command:run=sleep 0.4"])
        .args(["--reps", "4", "--quiet", "--dir"])
        .arg(&work)
        .arg("--image-dir")
        .arg(image_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    fault();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_database_deleted_mid_run_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (code, out, err) = run_with_fault(dir.path(), &db, Duration::from_millis(900), || {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
    });
    assert_eq!(code, Some(1), "{err}");
    assert!(!out.contains("stored in"), "{out}");
    assert!(err.contains("deleted") && err.contains("import"), "{err}");
    assert_eq!(common::recovered_from_journal(&err, dir.path(), 2), 4);
}

#[test]
fn a_full_database_filesystem_loses_nothing() {
    if common::skip_without_loop("a_full_database_filesystem_loses_nothing") {
        return;
    }
    let dir = common::image_dir();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "fsarena-test-full"])
        .arg(&small)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let db = small.join("r.db");
    let filler = small.join("filler");
    let (code, out, err) = run_with_fault(dir.path(), &db, Duration::from_millis(900), || {
        // Whatever room is left goes to a file of zeros: the next trial cannot be written.
        let _ = Command::new("dd")
            .args(["if=/dev/zero", "bs=64k", "status=none"])
            .arg(format!("of={}", filler.display()))
            .status();
    });
    let _ = Command::new("umount").arg(&small).status();
    assert_eq!(code, Some(1), "{err}");
    assert!(!out.contains("stored in"), "{out}");
    assert!(
        err.contains(db.to_str().unwrap()),
        "the database is named: {err}"
    );
    assert!(err.contains("did not reach the database"), "{err}");
    assert_eq!(common::recovered_from_journal(&err, dir.path(), 2), 4);
}

#[test]
fn a_run_that_stored_everything_leaves_no_journal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (code, out, err) = run_with_fault(dir.path(), &db, Duration::ZERO, || {});
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("stored in"), "{out}");
    let journals = dir.path().join("journal");
    let left: Vec<_> = std::fs::read_dir(&journals)
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_journal_dir_given_keeps_every_trial_as_it_finished_also_when_all_is_stored() {
    // What a guest's fsarena is given (`--journal-dir` in the shared directory): the
    // host reads it back when the guest ends without its results.
    let dir = tempfile::tempdir().unwrap();
    let journals = dir.path().join("shared").join("journal");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = Command::new(common::bin())
        .arg("--db")
        .arg(dir.path().join("r.db"))
        .args(["run", "command:run=true", "--reps", "2", "--quiet", "--dir"])
        .arg(&work)
        .arg("--image-dir")
        .arg(dir.path())
        .arg("--journal-dir")
        .arg(&journals)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let kept: Vec<_> = std::fs::read_dir(&journals)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let back = fsarena::journal::read(&kept[0]).unwrap();
    assert_eq!(back.trials.len(), 2);
    assert_eq!(back.status, "complete");
    let beside: Vec<_> = std::fs::read_dir(dir.path().join("journal"))
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    assert!(beside.is_empty(), "{beside:?}");
}
