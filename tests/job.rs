//! End-to-end runs of `job` on an ext4 loop image and on tmpfs: every engine writes with
//! `verify=true` and reads everything back; O_DIRECT through io_uring on ext4.

mod common;

use common::phase;

fn io_uring_available() -> bool {
    // The same check the workload makes; a SKIP line says why when it fails.
    match std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        Ok(v) if v.trim() != "0" => {
            eprintln!("SKIP io_uring cases: io_uring_disabled={}", v.trim());
            false
        }
        _ => true,
    }
}

fn check(fs: &str) {
    let test = format!("job_{fs}");
    if common::skip_without_loop(&test) || !common::fs_available_or_tmpfs(&test, fs) {
        return;
    }
    let mut engines = vec!["psync", "mmap"];
    if io_uring_available() {
        engines.push("io_uring");
    }
    for engine in engines {
        let depth = if engine == "io_uring" { 16 } else { 1 };
        let direct = engine == "io_uring" && fs == "ext4";
        let spec = format!(
            "job:engine={engine},rw=randrw,iodepth={depth},direct={direct},size=4MiB,\
             nrfiles=2,numjobs=2,verify=true"
        );
        let dir = common::image_dir();
        let (v, _) = common::run_json(
            &[
                &spec, "--fs", fs, "--size", "256MiB", "--reps", "1", "--quiet",
            ],
            dir.path(),
        );
        let t = &v["trials"][0];
        assert_eq!(t["status"], "ok", "{spec} on {fs}: {t}");
        let run = phase(t, "run");
        assert_eq!(run["bytes"], 2 * (4 << 20), "{spec}");
        assert_eq!(run["workers"], 2);
        assert_eq!(
            phase(t, "verify")["ops"],
            2 * 1024,
            "{spec}: 4 KiB blocks checked"
        );
        assert_eq!(phase(t, "layout")["bytes"], 2 * (4 << 20));
        common::assert_clean(dir.path());
    }
}

#[test]
fn job_on_ext4() {
    check("ext4");
}

#[test]
fn job_on_tmpfs() {
    check("tmpfs");
}

#[test]
fn null_engine_needs_no_files() {
    let dir = common::image_dir();
    let work = tempfile::tempdir().unwrap();
    let (v, _) = common::run_json(
        &[
            "job:engine=null,size=1MiB,numjobs=2",
            "--dir",
            work.path().to_str().unwrap(),
            "--reps",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    let t = &v["trials"][0];
    let run = phase(t, "run");
    assert_eq!(run["ops"], 512);
    assert!(t["phases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["name"] != "layout"));
}

/// `shared_file=true` through the binary on tmpfs: two jobs write their interleaved
/// segments of one file and read them back with no mismatch.
#[test]
fn job_shared_file_on_tmpfs() {
    let test = "job_shared_file_on_tmpfs";
    if common::skip_without_loop(test) || !common::fs_available_or_tmpfs(test, "tmpfs") {
        return;
    }
    let spec = "job:rw=write,bs=47008,size=4700800,nrfiles=4,numjobs=2,verify=true,\
                shared_file=true";
    let dir = common::image_dir();
    let (v, _) = common::run_json(
        &[
            spec, "--fs", "tmpfs", "--size", "64MiB", "--reps", "1", "--quiet",
        ],
        dir.path(),
    );
    let t = &v["trials"][0];
    assert_eq!(t["status"], "ok", "{t}");
    assert_eq!(
        phase(t, "layout")["bytes"],
        2 * 4_700_800,
        "verify pattern laid out"
    );
    assert_eq!(phase(t, "run")["bytes"], 2 * 4_700_800);
    assert_eq!(phase(t, "verify")["bytes"], 2 * 4_700_800);
    common::assert_clean(dir.path());
}
