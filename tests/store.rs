//! The result store end to end: runs land in the database, `history` and `show` read them,
//! and a run killed with SIGKILL keeps its completed trials and shows as interrupted while
//! readers query the database during the run.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fsarena(args: &[&str], db: &std::path::Path) -> (bool, String) {
    let out = Command::new(common::bin())
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run fsarena");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn runs_are_stored_and_shown() {
    if common::skip_without_loop("runs_are_stored_and_shown") {
        return;
    }
    let dir = common::image_dir();
    let db = dir.path().join("results.db");
    let (v, table) = common::run_json(
        &[
            "bonnie-files:files=1",
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
    let id = v["run_id"].as_str().unwrap();
    assert!(table.contains(&format!("run {id} stored in")), "{table}");
    let (ok, hist) = fsarena(&["history"], &db);
    assert!(
        ok && hist.contains(id) && hist.contains("complete"),
        "{hist}"
    );
    assert!(
        hist.contains("tmpfs") && hist.contains("bonnie-files"),
        "{hist}"
    );
    let prefix = &id[..id.len() - 2];
    let (ok, shown) = fsarena(&["show", prefix], &db);
    assert!(
        ok && shown.contains("seq_create") && shown.contains(id),
        "{shown}"
    );
    let (ok, err) = fsarena(&["show", "nope"], &db);
    assert!(!ok && err.contains("no run"), "{err}");
    common::assert_clean(dir.path());
}

#[test]
fn a_killed_run_keeps_its_trials() {
    if common::skip_without_loop("a_killed_run_keeps_its_trials") {
        return;
    }
    let dir = common::image_dir();
    let db = dir.path().join("k.db");
    let mut child = Command::new(common::bin())
        .args([
            "run",
            "bonnie-files:files=2",
            "--fs",
            "tmpfs",
            "--size",
            "64MiB",
        ])
        .args(["--reps", "500", "--quiet", "--image-dir"])
        .arg(dir.path())
        .arg("--db")
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    // Read the database while the run writes to it, until two trials are in.
    let start = Instant::now();
    let trials = loop {
        let (ok, hist) = fsarena(&["history"], &db);
        let line = hist
            .lines()
            .find(|l| l.contains("running"))
            .map(String::from);
        if ok {
            if let Some(l) = line {
                let n: Vec<u64> = l
                    .split(['│', '┆'])
                    .filter_map(|c| c.trim().parse().ok())
                    .collect();
                if n.first().is_some_and(|&n| n >= 2) {
                    break n[0];
                }
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no trials stored: {hist}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let (ok, shown) = fsarena(&["show", "last"], &db);
    assert!(ok, "{shown}");
    assert!(shown.contains("seq_create"), "{shown}");
    let (_, hist) = fsarena(&["history"], &db);
    assert!(hist.contains("interrupted"), "{hist}");
    assert!(trials >= 2);
    assert!(common::cleanup(dir.path()).status.success());
    common::assert_clean(dir.path());
}

#[test]
fn a_database_that_refuses_the_run_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("refuses.db");
    // A valid, migrated database whose runs table refuses every insert.
    drop(fsarena::store::Store::open(&db).unwrap());
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON runs \
             BEGIN SELECT RAISE(ABORT, 'refused by test'); END;",
        )
        .unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let img = dir.path().join("img");
    let (ok, text) = fsarena(
        &[
            "run",
            "bonnie-files:files=1",
            "--reps",
            "1",
            "--quiet",
            "--dir",
            work.to_str().unwrap(),
            "--image-dir",
            img.to_str().unwrap(),
        ],
        &db,
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("recording the run in the result database") && text.contains("refused"),
        "{text}"
    );
    // No run's state file (the directory's ownership marker may stay), and the directory
    // target untouched.
    let states: Vec<std::path::PathBuf> = std::fs::read_dir(img.join("state"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(states, Vec::<std::path::PathBuf>::new());
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
}

#[test]
fn reading_commands_do_not_create_databases() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    for cmd in [
        &["history"][..],
        &["show", "last"],
        &["export", "last", "--csv"],
    ] {
        let out = Command::new(common::bin())
            .args(cmd)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains("no result database at"), "{err}");
        assert!(!db.exists(), "{cmd:?} created {}", db.display());
    }
}
