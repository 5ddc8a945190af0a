//! Faults isolated to their trial, end to end: a loop filesystem that fills up mid-workload
//! and a mkfs option mkfs rejects each fail only their own target's trials (with "filesystem
//! full" and the figures measured before, or mkfs's own message), the other target is still
//! measured, the run exits 1 with a summary of the failures, and nothing is left behind.
//! (A failing workload: tests/command.rs; SIGINT and kill -9: tests/signals.rs.)

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `fsarena run ARGS` with a database and JSON output in `dir`; returns the output,
/// the JSON the run wrote and the run as stored in the database.
fn run(args: &[&str], dir: &Path) -> (Output, Value, Value) {
    let db = dir.join("r.db");
    let json = dir.join("out.json");
    let out = Command::new(common::bin())
        .arg("run")
        .args(args)
        .arg("--image-dir")
        .arg(dir)
        .arg("--db")
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run fsarena");
    let text = || {
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let v: Value = common::run_document(
        &std::fs::read(&json).unwrap_or_else(|_| panic!("json written: {}", text())),
    );
    let stored = Command::new(common::bin())
        .args(["export", "last", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let s: Value = common::run_document(&stored.stdout);
    (out, v, s)
}

fn trials<'a>(v: &'a Value, target: &str) -> Vec<&'a Value> {
    v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["target"] == target)
        .collect()
}

#[test]
fn a_full_filesystem_fails_its_trial_keeps_earlier_phases_and_the_run_goes_on() {
    let test = "a_full_filesystem_fails_its_trial";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    // 60 MiB of block writes: more than a 64 MiB ext4 holds after its journal and inode
    // tables (~55 MiB free), less than a 64 MiB tmpfs. The 4 MiB per-char write comes first.
    let (out, v, stored) = run(
        &[
            "bonnie:size=60MiB,char_size=4MiB,seeks=100",
            "--fs",
            "ext4,tmpfs",
            "--size",
            "64MiB",
            "--reps",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    for run in [&v, &stored] {
        assert_eq!(run["status"], "failed");
        let ext4 = trials(run, "ext4");
        assert_eq!(ext4.len(), 1);
        assert_eq!(ext4[0]["status"], "failed");
        let err = ext4[0]["error"].as_str().unwrap();
        assert!(err.starts_with("filesystem full"), "{err}");
        let done = common::phase(ext4[0], "write_char");
        assert_eq!(
            done["bytes"],
            4u64 << 20,
            "the phase before the fault is kept"
        );
        assert!(done["mb_per_s"].as_f64().unwrap() > 0.0);
        let tmpfs = trials(run, "tmpfs");
        assert_eq!(tmpfs[0]["status"], "ok", "{}", tmpfs[0]);
        assert_eq!(common::phase(tmpfs[0], "write_block")["bytes"], 60u64 << 20);
    }
    // The terminal shows what ext4 measured before the fault, marked f (failed trial), and
    // `failed` for the phases it never reached; the HTML report's table says the same.
    let mb = common::phase(trials(&v, "ext4")[0], "write_char")["mb_per_s"]
        .as_f64()
        .unwrap();
    let cells = |phase: &str| -> Vec<String> {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("│ {phase} ")))
            .unwrap_or_else(|| panic!("no {phase} row: {stdout}"));
        line.split(['│', '┆'])
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    let ext4 = cells("write_char")[1].clone();
    let (figure, marks) = ext4.split_once(' ').unwrap_or((&ext4, ""));
    let shown: f64 = figure
        .parse()
        .unwrap_or_else(|_| panic!("{ext4}: {stdout}"));
    assert!((shown - mb).abs() <= mb * 0.01, "{ext4} vs {mb}: {stdout}");
    assert!(marks.contains('f'), "{ext4}: {stdout}");
    assert!(
        stdout.contains("  f  failed trial: no repetition completed"),
        "{stdout}"
    );
    for phase in ["write_block", "rewrite", "read_char", "read_block", "seeks"] {
        assert_eq!(cells(phase)[1], "failed", "{phase}: {stdout}");
    }
    let html = dir.path().join("r.html");
    let report = Command::new(common::bin())
        .args(["report", "last", "--db"])
        .arg(dir.path().join("r.db"))
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(report.status.success(), "{report:?}");
    let html = std::fs::read_to_string(&html).unwrap();
    // write_char's table: ext4's row holds its figure (human units, 3 digits) and the flag.
    let at = html
        .find("bonnie · write_char")
        .and_then(|c| html[c..].find("<tr><th>ext4</th><td>").map(|r| c + r))
        .unwrap_or_else(|| panic!("no ext4 row under write_char in the HTML report"));
    let row = &html[at..at + html[at..].find("</tr>").unwrap()];
    let cell = row.split("<td>").nth(1).unwrap().split('<').next().unwrap();
    let figure: f64 = cell.split('\u{a0}').next().unwrap().parse().unwrap();
    assert!((figure - mb).abs() <= mb * 0.01, "{row} vs {mb}");
    assert!(row.contains("failed-trial"), "{row}");
    // The summary at the end: one line per failed trial with target, workload, rep, cause.
    let tail = stdout
        .split("1 of 2 trial(s) did not succeed:")
        .nth(1)
        .unwrap_or_else(|| panic!("no failure summary: {stdout}"));
    assert!(
        tail.contains("ext4 bonnie rep 1: failed: filesystem full"),
        "{tail}"
    );
    assert!(
        stderr.contains("1 of 2 trial(s) did not succeed"),
        "{stderr}"
    );
    common::assert_clean(dir.path());
    common::assert_no_records(dir.path());
}

#[test]
fn a_rejected_mkfs_option_fails_that_target_with_mkfs_message_only() {
    let test = "a_rejected_mkfs_option_fails_that_target";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let (out, v, stored) = run(
        &[
            "bonnie-files:files=1,max_size=4KiB,min_size=1KiB",
            "--fs",
            "ext4,tmpfs",
            "--size",
            "64MiB",
            "--reps",
            "2",
            "--mkfs-opt",
            // mke2fs 1.47 rounds `-b 3000` down to 2048 and accepts it; 128 it rejects.
            "ext4=-b 128",
            "--quiet",
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    for run in [&v, &stored] {
        let ext4 = trials(run, "ext4");
        assert_eq!(ext4.len(), 2, "every repetition tried");
        for t in ext4 {
            assert_eq!(t["status"], "failed");
            let err = t["error"].as_str().unwrap();
            // mke2fs: "mkfs.ext4: invalid block size - 128".
            assert!(
                err.contains("mkfs failed")
                    && err.contains("mkfs.ext4")
                    && err.contains("invalid block size - 128"),
                "{err}"
            );
        }
        for t in trials(run, "tmpfs") {
            assert_eq!(t["status"], "ok", "{t}");
        }
    }
    assert!(
        stdout.contains("2 of 4 trial(s) did not succeed")
            && stdout.contains("ext4 bonnie-files rep 2: failed: mkfs failed"),
        "{stdout}"
    );
    common::assert_clean(dir.path());
    common::assert_no_records(dir.path());
}

#[test]
fn a_rejected_mount_option_fails_its_trials_and_leaves_no_mount_point_or_record() {
    let test = "a_rejected_mount_option_fails_its_trials";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let (out, v, _) = run(
        &[
            "bonnie-files:files=1,max_size=4KiB,min_size=1KiB",
            "--fs",
            "ext4,tmpfs",
            "--size",
            "64MiB",
            "--reps",
            "1",
            "--mount-opt",
            "ext4=no_such_option",
            "--quiet",
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let ext4 = trials(&v, "ext4");
    assert_eq!(ext4[0]["status"], "failed");
    let err = ext4[0]["error"].as_str().unwrap();
    assert!(
        err.contains("mount") && err.contains("no_such_option"),
        "{err}"
    );
    assert_eq!(trials(&v, "tmpfs")[0]["status"], "ok");
    common::assert_clean(dir.path());
    // The failed mount's mount point and its record went with it: no state file is kept
    // for `fsarena cleanup` to replay, no empty directory is left in mnt/.
    common::assert_no_records(dir.path());
}

/// The image directory's own filesystem fills up in the middle of a trial (the state file
/// can no longer be rewritten at the cold-cache remount): teardown still undoes every
/// mount, loop device and image, and says what it could not.
#[test]
fn a_full_image_directory_leaks_nothing() {
    let test = "a_full_image_directory_leaks_nothing";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let top = common::image_dir();
    let small = top.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=200m,mode=0700",
            "fsarena-test-fill",
        ])
        .arg(&small)
        .status()
        .unwrap()
        .success();
    assert!(mounted);
    let img = small.join("img");
    let child = Command::new(common::bin())
        .args([
            "run",
            "smallfiles:files=20000",
            "--fs",
            "ext4",
            "--size",
            "128MiB",
        ])
        .args(["--reps", "2", "--quiet", "--image-dir"])
        .arg(&img)
        .arg("--db")
        .arg(top.path().join("r.db"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first image exists, whatever room is left goes to a file of zeros.
    let started = std::time::Instant::now();
    while !std::fs::read_dir(&img).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "img"))
    }) {
        assert!(started.elapsed().as_secs() < 60, "no image was made");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "status=none"])
        .arg(format!("of={}", small.join("filler").display()))
        .status();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let leaks = (common::mounts_under(&img), common::loops_under(&img));
    let images = common::images_under(&img);
    let _ = std::fs::remove_file(small.join("filler"));
    if !leaks.0.is_empty() || !leaks.1.is_empty() {
        let _ = common::cleanup(&img);
    }
    let _ = Command::new("umount").arg(&small).status();
    assert_eq!(leaks, (vec![], vec![]), "left mounted or attached: {err}");
    assert!(images.is_empty(), "images left: {images:?}\n{err}");
}
