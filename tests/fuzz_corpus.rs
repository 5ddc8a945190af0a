//! Replays every input of the fuzz corpora kept in `fuzz/corpus/<target>` through the
//! entry point its cargo-fuzz target calls ([`fsarena::fuzzing`]), on stable: an input that
//! once passed must never panic again. How the corpora were made: docs/security.md,
//! "Fuzzing"; their figures: docs/validation.md.

use std::path::Path;

fn replay(target: &str, entry: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 5,
        "{}: only {} inputs",
        dir.display(),
        files.len()
    );
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let run = std::panic::catch_unwind(|| entry(&bytes));
        assert!(run.is_ok(), "{} panicked", f.display());
    }
}

#[test]
fn plan_toml() {
    replay("plan_toml", fsarena::fuzzing::plan_toml);
}

#[test]
fn fio_job() {
    replay("fio_job", fsarena::fuzzing::fio_job);
}

#[test]
fn workload_spec() {
    replay("workload_spec", fsarena::fuzzing::workload_spec);
}

#[test]
fn sizes() {
    replay("sizes", fsarena::fuzzing::sizes);
}

#[test]
fn net_opts() {
    replay("net_opts", fsarena::fuzzing::net_opts);
}

#[test]
fn tar_archive() {
    replay("tar_archive", fsarena::fuzzing::tar_archive);
}
