//! The corpus of real fio job files kept in `tests/fio-corpus` (SOURCES.tsv says where
//! each comes from): each counted file is checked as a plan (`fsarena plan check`, nothing
//! runs), with the environment and the fio options its harness gives, and its outcome —
//! `unchanged`, `lenient` (runs with `--fio-lenient`) or `refused` — must be the one
//! SOURCES.tsv records (`bench/fio-corpus.py count` prints them all, fetched ones too).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-corpus")
}

/// Whether `plan check` accepts the file, and its stderr; with the cache policy and seed
/// the file asks for when the first try says which.
fn check(dir: &Path, file: &Path, env: &str, set: &str, lenient: bool) -> (bool, String) {
    let sets: Vec<String> = set
        .split(';')
        .filter(|s| !s.is_empty())
        .map(|s| format!("{s:?}"))
        .collect();
    let attempt = |cache: &str, seed: &str| {
        let plan = format!(
            "[defaults]\nsync = \"none\"\ncache = \"{cache}\"\nseed = {seed}\n\
             [[target]]\ndir = {:?}\n[[workload]]\nfio = {:?}\nlenient = {lenient}\n\
             set = [{}]\n",
            dir.join("d"),
            file,
            sets.join(", ")
        );
        let path = dir.join("p.toml");
        std::fs::write(&path, plan).unwrap();
        let mut cmd = Command::new(common::bin());
        // One issue a line, unwrapped, whatever the terminal the tests run in.
        cmd.args(["plan", "check"])
            .arg(&path)
            .env("COLUMNS", "100000");
        for kv in env.split_whitespace() {
            let (k, v) = kv.split_once('=').expect("VAR=value");
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, err) = attempt("cold", "42");
    let wants = "asks for cache = \"";
    match err.find(wants).filter(|_| !ok) {
        Some(at) => {
            let rest = &err[at + wants.len()..];
            let cache = &rest[..rest.find('"').unwrap()];
            let seed: String = rest[rest.find("seed = ").unwrap() + 7..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            attempt(cache, &seed)
        }
        None => (ok, err),
    }
}

#[test]
fn the_corpus_runs_as_recorded() {
    let text = std::fs::read_to_string(corpus().join("SOURCES.tsv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).expect(name);
    let (file, kept, counted, env, set, outcome) = (
        col("file"),
        col("kept"),
        col("counted"),
        col("env"),
        col("set"),
        col("outcome"),
    );
    let work = common::image_dir();
    std::fs::create_dir_all(work.path().join("d")).unwrap();
    let mut checked = 0;
    for line in lines {
        let row: Vec<&str> = line.split('\t').collect();
        if row[kept] != "here" || row[counted] != "yes" {
            continue;
        }
        let path = corpus().join(row[file]);
        let (strict, err) = check(work.path(), &path, row[env], row[set], false);
        let got = if strict {
            "unchanged"
        } else if check(work.path(), &path, row[env], row[set], true).0 {
            "lenient"
        } else {
            "refused"
        };
        assert_eq!(got, row[outcome], "{}: {err}", row[file]);
        checked += 1;
    }
    assert!(checked >= 20, "{checked} files checked");
}
