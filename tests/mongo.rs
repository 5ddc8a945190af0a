//! End-to-end runs of the `mongo` workload: tmpfs, an ext4 loop image (four fresh
//! filesystems with `set=all`) and an existing directory; JSON checked: phase names, op
//! counts against the tree of set 2 (pinned in the unit tests), notes, nothing left.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Set 2 at scale 0.01: (files, bytes, directories with the root) of one tree, from
/// `bench/mongo_fract_tree summary 1048576 1000`.
const SET2: (u64, u64, u64) = (224, 1_063_207, 5);

fn run_json(args: &[&str], image_dir: &Path) -> Value {
    let json = image_dir.join("out.json");
    let out = Command::new(common::bin())
        .arg("run")
        .args(args)
        .args(["--quiet", "--reps", "1", "--image-dir"])
        .arg(image_dir)
        .arg("--json")
        .arg(&json)
        .arg("--db")
        .arg(image_dir.join("results.db"))
        .output()
        .expect("run fsarena");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fsarena {args:?} failed: {stderr}");
    common::run_document(&std::fs::read(&json).expect("json written"))
}

fn phases(v: &Value) -> &Vec<Value> {
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0]["status"], "ok", "{}", trials[0]);
    trials[0]["phases"].as_array().unwrap()
}

fn phase<'a>(phases: &'a [Value], name: &str) -> &'a Value {
    phases
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

fn op_count(p: &Value, op: &str) -> u64 {
    p["lat_by_op"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == op)
        .map_or(0, |o| o["count"].as_u64().unwrap())
}

/// Checks the seven phases of set 2 with `procs` trees.
fn check_set2(phases: &[Value], procs: u64) {
    let names: Vec<_> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "create_2",
            "copy_2",
            "symlinks_2",
            "read_2",
            "stats_2",
            "rename_2",
            "delete_2"
        ]
    );
    let (f, b, d) = (SET2.0 * procs, SET2.1 * procs, SET2.2 * procs);
    let create = phase(phases, "create_2");
    assert_eq!(op_count(create, "create"), f);
    assert_eq!(op_count(create, "mkdir"), d);
    assert_eq!(create["bytes_written"].as_u64(), Some(b));
    assert_eq!(create["workers"].as_u64(), Some(procs));
    let extra = &create["extra"];
    assert_eq!(extra["files"].as_f64(), Some(f as f64));
    assert_eq!(extra["dirs"].as_f64(), Some(d as f64));
    assert!(extra["space_used_kib"].as_f64().unwrap() * 1024.0 >= b as f64);
    let copy = phase(phases, "copy_2");
    assert_eq!(copy["bytes_written"].as_u64(), Some(b));
    assert_eq!(copy["extra"]["files"].as_f64(), Some(2.0 * f as f64));
    assert_eq!(op_count(phase(phases, "symlinks_2"), "symlink"), f);
    assert_eq!(phase(phases, "read_2")["bytes_read"].as_u64(), Some(2 * b));
    assert_eq!(op_count(phase(phases, "rename_2"), "rename"), f);
    let delete = phase(phases, "delete_2");
    assert_eq!(op_count(delete, "delete"), 3 * f, "files, links and copies");
    assert_eq!(op_count(delete, "rmdir"), 2 * d);
}

#[test]
fn mongo_on_tmpfs() {
    if common::skip_without_loop("mongo_on_tmpfs") {
        return;
    }
    let dir = common::image_dir();
    let v = run_json(
        &[
            "mongo:set=2,scale=0.01,procs=2",
            "--fs",
            "tmpfs",
            "--size",
            "64MiB",
        ],
        dir.path(),
    );
    let phases = phases(&v);
    check_set2(phases, 2);
    let create = phase(phases, "create_2");
    assert!(
        create["extra"]["fragmentation"].is_null(),
        "tmpfs has no FIEMAP"
    );
    common::assert_clean(dir.path());
}

#[test]
fn mongo_all_sets_on_ext4_each_on_a_fresh_filesystem() {
    let test = "mongo_all_sets_on_ext4";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let v = run_json(
        &[
            "mongo:set=all,scale=0.01",
            "--fs",
            "ext4",
            "--size",
            "256MiB",
        ],
        dir.path(),
    );
    let phases = phases(&v);
    assert_eq!(phases.len(), 28);
    check_set2(&phases[7..14], 1);
    for set in 1..=4 {
        let create = phase(phases, &format!("create_{set}"));
        let extra = &create["extra"];
        // Each set starts on a fresh filesystem: the space its tree uses is about its own
        // size, not the earlier sets' as well.
        let kib = extra["space_used_kib"].as_f64().unwrap();
        assert!(kib > 500.0 && kib < 10_000.0, "set {set}: {kib} KiB");
        let big = extra["files_over_16k"].as_f64().unwrap();
        if big > 0.0 {
            let frag = extra["fragmentation"].as_f64().unwrap();
            assert!((1.0..4.0).contains(&frag), "set {set}: {frag}");
        }
        let copy = phase(phases, &format!("copy_{set}"));
        assert_eq!(copy["extra"]["files_over_16k"].as_f64(), Some(2.0 * big));
    }
    common::assert_clean(dir.path());
}

#[test]
fn mongo_in_a_directory_leaves_it_empty() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("here");
    std::fs::create_dir(&work).unwrap();
    let v = run_json(
        &[
            "mongo:set=2,scale=0.01",
            "--dir",
            work.to_str().unwrap(),
            "--cache",
            "keep",
        ],
        dir.path(),
    );
    check_set2(phases(&v), 1);
    let left: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
