//! The database and the output files against careless and hostile paths: a report never
//! overwrites the database, an output's directory is checked before the run, and no
//! command changes a file that is not fsarena's database (another application's SQLite
//! file, an empty file, a FIFO).

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn fsarena(args: &[&str]) -> Output {
    Command::new(common::bin())
        .args(args)
        .output()
        .expect("fsarena runs")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The names and contents of every file in `dir`.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn no_output_path_may_be_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    let d = db.to_str().unwrap();
    let before = snapshot(dir.path());
    let cases: [&[&str]; 4] = [
        &[
            "--db",
            d,
            "run",
            "command:run=true",
            "--dir",
            "/tmp",
            "--json",
            d,
        ],
        &[
            "--db",
            d,
            "run",
            "command:run=true",
            "--dir",
            "/tmp",
            "--html",
            d,
        ],
        &["--db", d, "export", "last", "--json", "-o", d],
        &["--db", d, "report", "last", "--html", d],
    ];
    for args in cases {
        let o = fsarena(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(err(&o).contains("is the result database"), "{}", err(&o));
    }
    let wal = format!("{d}-wal");
    let o = fsarena(&["--db", d, "export", "last", "--csv", "-o", &wal]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert_eq!(
        snapshot(dir.path()),
        before,
        "the database directory changed"
    );
}

#[test]
fn an_output_directory_that_does_not_exist_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let o = fsarena(&[
        "--db",
        db.to_str().unwrap(),
        "run",
        "command:run=true",
        "--dir",
        "/tmp",
        "--json",
        "/nonexistent/x.json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("does not exist"), "{}", err(&o));
    assert!(!db.exists(), "the run started");
}

#[test]
fn another_application_s_database_is_never_changed() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("app.db");
    {
        let c = rusqlite::Connection::open(&foreign).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode=DELETE; CREATE TABLE notes (t TEXT); \
             INSERT INTO notes VALUES ('mine');",
        )
        .unwrap();
    }
    let before = snapshot(dir.path());
    let f = foreign.to_str().unwrap();
    for args in [
        vec!["--db", f, "history"],
        vec!["--db", f, "show", "last"],
        vec!["--db", f, "export", "last", "--json"],
        vec!["--db", f, "compare", "a", "b"],
        vec!["--db", f, "run", "command:run=true", "--dir", "/tmp"],
    ] {
        let o = fsarena(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(
            err(&o).contains("another application") && err(&o).contains(f),
            "{args:?}: {}",
            err(&o)
        );
    }
    // The estimates of list and plan check read a database only when it is fsarena's.
    assert_eq!(fsarena(&["--db", f, "list"]).status.code(), Some(0));
    assert_eq!(
        snapshot(dir.path()),
        before,
        "a foreign database was touched"
    );
}

#[test]
fn empty_garbage_and_newer_files_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, b"not a database at all, just text\n").unwrap();
    let negative = dir.path().join("negative.db");
    rusqlite::Connection::open(&negative)
        .unwrap()
        .execute_batch("CREATE TABLE runs (id TEXT); PRAGMA user_version = -1;")
        .unwrap();
    let before = snapshot(dir.path());
    for (file, want) in [
        (&empty, "empty file"),
        (&garbage, "not an SQLite database"),
        (&negative, "another application"),
    ] {
        let o = fsarena(&["--db", file.to_str().unwrap(), "history"]);
        assert_eq!(o.status.code(), Some(2), "{}", err(&o));
        assert!(err(&o).contains(want), "{want}: {}", err(&o));
    }
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_fifo_as_database_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("db.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path in a fresh temporary directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut child = Command::new(common::bin())
        .args(["--db", fifo.to_str().unwrap(), "history"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed().as_secs() > 20 {
            let _ = child.kill();
            panic!("fsarena history blocked on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(2));
}

#[test]
fn a_database_in_a_directory_that_does_not_exist_says_so() {
    let o = fsarena(&[
        "--db",
        "/nonexistent-fsarena-dir/r.db",
        "run",
        "command:run=true",
        "--dir",
        "/tmp",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(
        err(&o).contains("the directory /nonexistent-fsarena-dir does not exist"),
        "{}",
        err(&o)
    );
}
