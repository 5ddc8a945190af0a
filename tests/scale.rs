//! Scale at CI size: fsarena's own memory does not grow with the number of files it works
//! on (issue 7). 200,000 empty files are created, stat-ed and deleted on tmpfs, and the
//! trial's peak RSS (VmHWM, reset at trial start) must stay under 64 MiB, the limit the
//! full-size check (`bench/scale.sh`, millions of files) holds to. A workload that kept a
//! path, a name or even 64 bytes per file would pass 64 MiB only above ~1 million files,
//! so the test also bounds the growth: 200,000 files may cost at most 8 MiB more than
//! 1,000 files (40 bytes a file). The `job` workload with nrfiles=100,000, at most
//! openfiles=1,000 of them open at once (the hard limit of open files may be far lower than
//! 100,000), must stay under the same limit and within 8 MiB of nrfiles=100.

mod common;

const LIMIT_BYTES: u64 = 64 << 20;

/// Runs `spec` on a tmpfs of `size`; returns the trial.
fn trial(spec: &str, size: &str, image_dir: &std::path::Path) -> serde_json::Value {
    let (v, _) = common::run_json(
        &[
            spec, "--fs", "tmpfs", "--size", size, "--reps", "1", "--sync", "none", "--cache",
            "keep", "--quiet",
        ],
        image_dir,
    );
    let trial = v["trials"][0].clone();
    assert_eq!(trial["status"], "ok", "{trial}");
    trial
}

/// Runs smallfiles with `files` empty files on a tmpfs; returns the trial's peak RSS.
fn peak_rss(files: u64, image_dir: &std::path::Path) -> u64 {
    let trial = trial(&format!("smallfiles:files={files}"), "256MiB", image_dir);
    let created = common::phase(&trial, "create")["ops"].as_u64().unwrap();
    assert!(created >= files, "created {created} entries");
    trial["peak_rss_bytes"].as_u64().expect("peak_rss_bytes")
}

#[test]
fn smallfiles_200k_files_stay_under_64_mib() {
    if !fsarena::probe::sys::is_root() {
        eprintln!("SKIP smallfiles_200k_files_stay_under_64_mib: needs root to mount tmpfs");
        return;
    }
    let dir = common::image_dir();
    let small = peak_rss(1_000, dir.path());
    let large = peak_rss(200_000, dir.path());
    eprintln!("peak RSS: 1,000 files {small} bytes, 200,000 files {large} bytes");
    assert!(small > 0 && large > 0);
    assert!(large < LIMIT_BYTES, "200,000 files: peak RSS {large} bytes");
    assert!(
        large < small + (8 << 20),
        "peak RSS grows with files: {small} bytes for 1,000, {large} for 200,000"
    );
    common::assert_clean(dir.path());
}

/// Runs a 1-second random-read job over `nrfiles` 4 KiB files, at most 1,000 open at
/// once; returns its peak RSS.
fn job_peak_rss(nrfiles: u64, image_dir: &std::path::Path) -> u64 {
    let spec = format!(
        "job:engine=psync,rw=randread,nrfiles={nrfiles},openfiles=1000,size={}KiB,runtime=1",
        nrfiles * 4
    );
    // 100,000 files take 400 MB of tmpfs pages.
    let trial = trial(&spec, "1GiB", image_dir);
    assert!(common::phase(&trial, "run")["ops"].as_u64().unwrap() > 0);
    trial["peak_rss_bytes"].as_u64().expect("peak_rss_bytes")
}

#[test]
fn job_with_many_files_stays_under_64_mib() {
    if !fsarena::probe::sys::is_root() {
        eprintln!("SKIP job_with_many_files_stays_under_64_mib: needs root to mount tmpfs");
        return;
    }
    let n = 100_000;
    let dir = common::image_dir();
    let small = job_peak_rss(100, dir.path());
    let large = job_peak_rss(n, dir.path());
    eprintln!("job peak RSS: nrfiles=100 {small} bytes, nrfiles={n} {large} bytes");
    assert!(large < LIMIT_BYTES, "nrfiles={n}: peak RSS {large} bytes");
    assert!(
        large < small + (8 << 20),
        "peak RSS grows with files: {small} bytes for 100, {large} for {n}"
    );
    common::assert_clean(dir.path());
}
