//! fio's JSON written by fsarena read by a real consumer: `fio_jsonplus_clat2csv` (Debian's
//! fio package) turns each job's latency bins into a CSV file, which it then validates
//! against the JSON. Runs a small `job` on a temporary directory (no root).

mod common;

use std::path::Path;
use std::process::Command;

const TOOL: &str = "fio_jsonplus_clat2csv";

/// The tool's path, or `None` after a SKIP line when it or python3 (its interpreter, with
/// the `six` module it imports) is missing.
fn tool() -> Option<std::path::PathBuf> {
    let Some(path) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(TOOL))
            .find(|f| f.is_file())
    }) else {
        eprintln!("SKIP fio_json: {TOOL} is not installed (Debian package fio)");
        return None;
    };
    let six = Command::new("python3").args(["-c", "import six"]).output();
    if !six.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP fio_json: python3 with its six module is missing ({TOOL} needs both)");
        return None;
    }
    Some(path)
}

/// Runs the tool on `json` writing `dir/lat_jobN.csv`; returns its standard output after
/// asserting that it succeeded.
fn clat2csv(tool: &Path, json: &Path, dir: &Path, validate: bool) -> String {
    let mut cmd = Command::new("python3");
    cmd.arg(tool).arg(json).arg(dir.join("lat.csv"));
    if validate {
        cmd.arg("--validate");
    }
    let out = cmd.output().expect("run python3");
    assert!(
        out.status.success(),
        "{TOOL} failed on {}: {}",
        json.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn fio_jsonplus_clat2csv_reads_the_fio_json() {
    let Some(tool) = tool() else { return };
    let dir = common::image_dir();
    let work = tempfile::tempdir().unwrap();
    let fio = dir.path().join("fio.json");
    let (v, _) = common::run_json(
        &[
            "job:engine=psync,rw=randrw,size=1MiB,numjobs=2",
            "--dir",
            work.path().to_str().unwrap(),
            "--reps",
            "2",
            "--quiet",
            "--fio-json",
            fio.to_str().unwrap(),
        ],
        dir.path(),
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&fio).unwrap()).unwrap();
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "one fio job per repetition");
    let mut total = 0;
    for j in jobs {
        let ios = |d: &str| j[d]["total_ios"].as_u64().unwrap();
        assert_eq!(ios("read") + ios("write"), 512, "2 × 1 MiB in 4 KiB blocks");
        total += ios("read") + ios("write");
    }

    let out = clat2csv(&tool, &fio, dir.path(), false);
    assert_eq!(out.lines().count(), 2, "one CSV per job: {out}");
    let mut rows = 0;
    for n in 0..2 {
        let csv = std::fs::read_to_string(dir.path().join(format!("lat_job{n}.csv"))).unwrap();
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("nsec, read_slat_ns_count"));
        for line in lines {
            let ns: u64 = line.split(',').next().unwrap().trim().parse().unwrap();
            assert!(ns > 0, "{line}");
            rows += 1;
        }
    }
    assert!(
        rows > 0 && rows <= 2 * total as usize,
        "{rows} latency rows"
    );
    let checked = clat2csv(&tool, &fio, dir.path(), true);
    assert_eq!(checked.matches("validated").count(), 2, "{checked}");

    // The same document from the stored run.
    let exported = Command::new(common::bin())
        .arg("--db")
        .arg(dir.path().join("results.db"))
        .args(["export", v["run_id"].as_str().unwrap(), "--fio-json"])
        .output()
        .unwrap();
    assert!(exported.status.success(), "{exported:?}");
    let again: serde_json::Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(again["jobs"], doc["jobs"]);
}
