//! End-to-end runs of `dbrandom` and `smallfiles` at small scale on tmpfs and an ext4 loop
//! image: JSON checked phase by phase, nothing left behind.

mod common;

use common::{phase, phase_names as names};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const DBRANDOM: &str = "dbrandom:files=1,2,scale=1,cycles=5,tries=20";
const SMALLFILES: &str = "smallfiles:files=2000,size_max=4KiB";

/// Runs both workloads' arguments (see [`common::run_json`]) and checks that the table
/// names both.
fn run_json(args: &[&str], image_dir: &Path) -> Value {
    let (v, stdout) = common::run_json(args, image_dir);
    for name in ["dbrandom", "smallfiles", "tries_per_s", "files_per_s"] {
        assert!(stdout.contains(name), "{name} not in the table:\n{stdout}");
    }
    v
}

/// (count, p50 µs) of `op` in a phase's `lat_by_op`.
fn op(p: &Value, op: &str) -> (u64, f64) {
    let ops = p["lat_by_op"].as_array().unwrap();
    let o = ops
        .iter()
        .find(|o| o["op"] == op)
        .unwrap_or_else(|| panic!("no {op} in {}", p["name"]));
    (
        o["count"].as_u64().unwrap(),
        o["lat_us"]["p50"].as_f64().unwrap(),
    )
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn check_dbrandom(t: &Value, on_loop: bool) {
    assert_eq!(names(t), ["create", "random"]);
    let create = phase(t, "create");
    assert_eq!(u(&create["bytes"]), 3 << 20);
    assert_eq!(op(create, "write").0, 3, "1 MiB writes");
    assert_eq!(op(create, "fsync").0, 2, "--sync end fsyncs each file");
    let r = phase(t, "random");
    let (opens, _) = op(r, "open");
    let (reads, read_p50) = op(r, "read");
    let (writes, write_p50) = op(r, "write");
    let (fsyncs, fsync_p50) = op(r, "fsync");
    assert_eq!((opens, reads), (5, 100));
    assert!(
        writes > 0 && writes < 60,
        "{writes} write-backs of 100 reads"
    );
    assert_eq!(fsyncs, writes);
    assert!(read_p50 > 0.0 && write_p50 > 0.0 && fsync_p50 > 0.0);
    assert_eq!(u(&r["ops"]), opens + reads + 2 * writes);
    assert_eq!(u(&r["bytes_written"]), writes * 16384);
    let tries_per_s = r["extra"]["tries_per_s"].as_f64().unwrap();
    let wall_s = r["wall_s"].as_f64().unwrap();
    assert!((tries_per_s * wall_s - 100.0).abs() < 1e-6);
    assert!(r["extra"]["growth_bytes"].as_f64().is_some());
    if on_loop {
        // Every write-back was fsynced, so it reached the device.
        assert!(u(&r["dev_write_bytes"]) >= writes * 16384, "{r}");
        assert!(fsync_p50 > write_p50, "an ext4 fsync commits the journal");
    }
}

fn check_smallfiles(t: &Value) {
    assert_eq!(names(t), ["create", "stat", "read", "delete"]);
    let dirs = 20; // 2000 files, 100 per directory
    let create = phase(t, "create");
    assert_eq!(op(create, "create").0, 2000);
    assert_eq!(op(create, "mkdir").0, dirs);
    assert_eq!(u(&create["ops"]), 2000 + dirs);
    let written = u(&create["bytes"]);
    assert!(written > 2000 * 1024 && written < 2000 * 3072, "{written}");
    let files_per_s = create["extra"]["files_per_s"].as_f64().unwrap();
    let wall_s = create["wall_s"].as_f64().unwrap();
    assert!((files_per_s * wall_s - 2000.0).abs() < 1e-6);
    assert_eq!(u(&phase(t, "stat")["ops"]), 2000 + dirs - 1);
    let read = phase(t, "read");
    assert_eq!((u(&read["ops"]), u(&read["bytes"])), (2000, written));
    let delete = phase(t, "delete");
    assert_eq!(
        (op(delete, "delete").0, op(delete, "rmdir").0),
        (2000, dirs)
    );
}

fn end_to_end(fs: &str, size: &str) {
    let dir = common::image_dir();
    let v = run_json(
        &[
            DBRANDOM, SMALLFILES, "--fs", fs, "--size", size, "--reps", "1", "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(v["status"], "complete");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    for t in trials {
        assert_eq!(t["status"], "ok", "{t}");
        match t["workload"].as_str().unwrap() {
            "dbrandom" => check_dbrandom(t, fs != "tmpfs"),
            "smallfiles" => check_smallfiles(t),
            w => panic!("unexpected workload {w}"),
        }
    }
    let summaries = v["summaries"].as_array().unwrap();
    let has = |w: &str, phase: &str, metric: &str| {
        summaries
            .iter()
            .any(|s| s["workload"] == w && s["phase"] == phase && s["metric"] == metric)
    };
    assert!(has("dbrandom", "random", "tries_per_s"));
    assert!(has("smallfiles", "create", "files_per_s"));
    common::assert_clean(dir.path());
}

#[test]
fn dbrandom_and_smallfiles_on_tmpfs() {
    if common::skip_without_loop("dbrandom_and_smallfiles_on_tmpfs") {
        return;
    }
    end_to_end("tmpfs", "128MiB");
}

#[test]
fn dbrandom_and_smallfiles_on_ext4() {
    let test = "dbrandom_and_smallfiles_on_ext4";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    end_to_end("ext4", "256MiB");
}

#[test]
fn dbrandom_fill_scales_one_file_to_the_free_space() {
    let test = "dbrandom_fill_scales_one_file_to_the_free_space";
    let args = ["dbrandom:fill=50,cycles=5,tries=20"];
    let Some((dir, v, _)) = common::run_once_on(test, &args, "tmpfs", "128MiB") else {
        return;
    };
    let create = phase(common::ok_trial(&v, 0), "create");
    let (size, free) = (
        create["extra"]["file_bytes"].as_f64().unwrap(),
        create["extra"]["free_bytes_before"].as_f64().unwrap(),
    );
    // Half the free space of a 128 MiB tmpfs, rounded down to whole MiB, written whole.
    assert!(free > 120e6 && free <= 134_217_728.0, "{free}");
    assert!((size - free / 2.0).abs() <= 1_048_576.0, "{size} of {free}");
    assert_eq!(create["bytes_written"].as_f64().unwrap(), size);
    common::assert_clean(dir.path());
}

#[test]
fn bad_parameters_exit_2_before_touching_a_disk() {
    let dir = common::image_dir();
    for bad in [
        "dbrandom:files=1,scale=0.001",
        "dbrandom:write_pct=200",
        "dbrandom:fill=95",
        "smallfiles:fanout=0",
        "smallfiles:size_min=8KiB,size_max=4KiB",
    ] {
        let out = Command::new(common::bin())
            .args(["run", bad, "--fs", "tmpfs", "--image-dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        let name = bad.split(':').next().unwrap();
        assert!(err.contains(name), "{bad}: {err}");
    }
    common::assert_clean(dir.path());
}
