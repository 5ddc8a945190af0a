//! End-to-end runs of the `compile` workload (compilebench and kernel-build modes) on tmpfs
//! and an ext4 loop image, at small scale.

mod common;

use common::phase;

fn check(fs: &str, size: &str) {
    let test = format!("compile_{fs}");
    if common::skip_without_loop(&test) || !common::fs_available_or_tmpfs(&test, fs) {
        return;
    }
    let dir = common::image_dir();
    let (v, table) = common::run_json(
        &[
            "compile:scale=0.005,initial_dirs=3,runs=20",
            "compile:mode=kernel-build,scale=0.01",
            "--fs",
            fs,
            "--size",
            size,
            "--reps",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(v["status"], "complete");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    let cb = &trials[0];
    assert_eq!(cb["status"], "ok", "{cb}");
    let initial = phase(cb, "initial_create");
    assert!(initial["bytes_written"].as_u64().unwrap() > 3 * 1_000_000);
    let runs: f64 = cb["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["extra"]["runs"].as_f64())
        .sum();
    assert_eq!(runs, 20.0);
    assert!(table.contains("compilebench_mb_per_s"), "{table}");
    let kb = &trials[1];
    assert_eq!(kb["status"], "ok", "{kb}");
    let copy = phase(kb, "copy");
    let build = phase(kb, "build");
    assert_eq!(build["bytes_read"], copy["bytes_written"]);
    assert!(phase(kb, "delete")["ops"].as_u64().unwrap() > 200);
    common::assert_clean(dir.path());
}

#[test]
fn compile_on_tmpfs() {
    check("tmpfs", "256MiB");
}

#[test]
fn compile_on_ext4() {
    check("ext4", "512MiB");
}
