//! End-to-end runs of the binary on real targets: tmpfs, ext4/xfs/btrfs loop images, and an
//! existing directory; JSON output checked field by field; nothing left behind.

mod common;

use serde_json::Value;
use std::process::Command;

const BONNIE: &str = "bonnie:size=16MiB,chunk=8KiB,seeks=400,seekers=2";
const FILES: &str = "bonnie-files:files=1,max_size=4KiB,min_size=1KiB";

use common::phase;

/// Checks the documented JSON fields and that the figures add up.
fn check_run(v: &Value, targets: &[&str], reps: u64) {
    for key in [
        "fsarena_version",
        "run_id",
        "started_at",
        "host",
        "policy",
        "targets",
        "trials",
        "summaries",
    ] {
        assert!(!v[key].is_null(), "missing {key}");
    }
    for key in ["hostname", "kernel", "cpu_model", "cores", "mem_bytes"] {
        assert!(!v["host"][key].is_null(), "missing host.{key}");
    }
    assert_eq!(v["policy"]["reps"], reps);
    assert_eq!(v["status"], "complete");
    let names: Vec<_> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, targets);
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len() as u64, targets.len() as u64 * reps * 2);
    for t in trials {
        assert_eq!(t["status"], "ok", "{t}");
        for p in t["phases"].as_array().unwrap() {
            for key in [
                "wall_s",
                "cpu_user_s",
                "cpu_sys_s",
                "cpu_pct",
                "ops",
                "bytes",
                "ops_per_s",
                "mb_per_s",
                "series",
                "dirty_bytes_end",
                "flags",
            ] {
                assert!(!p[key].is_null(), "phase {} lacks {key}", p["name"]);
            }
            assert!(p["wall_s"].as_f64().unwrap() > 0.0);
            let series_ops: u64 = p["series"]["ops"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .sum();
            assert_eq!(
                series_ops,
                p["ops"].as_u64().unwrap(),
                "series of {} adds up to ops",
                p["name"]
            );
        }
    }
    let bonnie = trials.iter().find(|t| t["workload"] == "bonnie").unwrap();
    assert_eq!(phase(bonnie, "write_block")["bytes"], 16u64 << 20);
    assert_eq!(phase(bonnie, "read_block")["bytes"], 16u64 << 20);
    assert_eq!(phase(bonnie, "seeks")["ops"], 400);
    assert!(
        phase(bonnie, "read_block")["lat_us"]["p99"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let files = trials
        .iter()
        .find(|t| t["workload"] == "bonnie-files")
        .unwrap();
    for name in [
        "seq_create",
        "seq_stat",
        "seq_delete",
        "rand_create",
        "rand_stat",
        "rand_delete",
    ] {
        assert_eq!(phase(files, name)["ops"], 1024, "{name}");
    }
    let s = v["summaries"].as_array().unwrap();
    let med = s
        .iter()
        .find(|x| {
            x["workload"] == "bonnie" && x["phase"] == "write_block" && x["metric"] == "mb_per_s"
        })
        .expect("summary of write_block");
    for key in [
        "n",
        "median",
        "mean",
        "stddev",
        "min",
        "max",
        "ci95_low",
        "ci95_high",
        "cv",
        "noisy",
    ] {
        assert!(med.get(key).is_some(), "summary lacks {key}");
    }
    assert_eq!(med["n"], reps);
}

/// A "cold" read on tmpfs is a memory read no test can check: every output says so beside
/// the figure — the JSON's and the CSV's flags, the terminal's `u` with its legend, the
/// HTML's flag list — and only on the read phases.
fn check_cold_unverifiable(v: &Value, table: &str, html: &std::path::Path, dir: &std::path::Path) {
    const FLAG: &str = "cold-unverifiable";
    let has = |p: &Value| p["flags"].as_array().unwrap().iter().any(|f| f == FLAG);
    for t in v["trials"].as_array().unwrap() {
        if t["workload"] == "bonnie" {
            assert!(has(phase(t, "read_block")), "{}", phase(t, "read_block"));
            assert!(!has(phase(t, "write_block")), "not on a write phase");
        }
    }
    // The tmpfs row, or the read_block row where the table is transposed (phases as rows).
    let read_block = table
        .lines()
        .find(|l| (l.starts_with("│ tmpfs") || l.starts_with("│ read_block")) && l.contains('u'))
        .unwrap_or_else(|| panic!("no u mark on the tmpfs or read_block row:\n{table}"));
    assert!(
        read_block
            .split(['│', '┆'])
            // The marks follow the figure: `2455 ±58.2% ~u`, or `~ub` on a busy machine.
            .any(|c| c
                .trim()
                .rsplit(' ')
                .next()
                .is_some_and(|m| m.contains('u') && m.chars().all(|x| "~sncudwb".contains(x)))),
        "{read_block}"
    );
    assert!(table.contains("  u  cold not verifiable"), "{table}");
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains(&format!("<span class=\"flag\">{FLAG}</span> on tmpfs")));
    let out = std::process::Command::new(common::bin())
        .arg("--db")
        .arg(dir.join("results.db"))
        .args(["export", v["run_id"].as_str().unwrap(), "--csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.contains(",read_block,") && l.contains(FLAG)),
        "{csv}"
    );
}

#[test]
fn tmpfs_end_to_end() {
    if common::skip_without_loop("tmpfs_end_to_end") {
        return;
    }
    let dir = common::image_dir();
    let html = dir.path().join("report.html");
    let html_arg = html.to_str().unwrap();
    let (v, table) = common::run_json(
        &[
            BONNIE, FILES, "--fs", "tmpfs", "--size", "128MiB", "--reps", "2", "--quiet", "--html",
            html_arg,
        ],
        dir.path(),
    );
    check_run(&v, &["tmpfs"], 2);
    check_cold_unverifiable(&v, &table, &html, dir.path());
    assert_eq!(v["targets"][0]["kind"], "tmpfs");
    assert!(v["targets"][0]["mount_opts"]
        .as_str()
        .unwrap()
        .contains("size="));
    assert!(
        table.contains("write_block") && table.contains("seq_create"),
        "{table}"
    );
    common::assert_clean(dir.path());
}

fn loop_end_to_end(fs: &str) {
    let test = format!("loop_end_to_end_{fs}");
    if common::skip_without_loop(&test) || !common::fs_available(&test, fs) {
        return;
    }
    let dir = common::image_dir();
    let (v, _) = common::run_json(
        &[
            BONNIE, FILES, "--fs", fs, "--size", "512MiB", "--reps", "2", "--quiet",
        ],
        dir.path(),
    );
    check_run(&v, &[fs], 2);
    let t = &v["targets"][0];
    assert_eq!(t["kind"], "loop");
    assert!(t["device_read_mb_per_s"].as_f64().unwrap() > 1.0);
    assert!(!t["mount_opts"].as_str().unwrap().is_empty());
    for trial in v["trials"].as_array().unwrap() {
        let p = &trial["provision"];
        assert!(p["mkfs_s"].as_f64().unwrap() > 0.0, "{p}");
        assert!(p["mount_s"].as_f64().unwrap() > 0.0);
        assert!(p["umount_s"].as_f64().is_some());
        assert!(p["capacity_bytes"].as_u64().unwrap() > 256 << 20);
        // Device counters: a synced block write reaches the loop device.
        if trial["workload"] == "bonnie" {
            let wb = phase(trial, "write_block");
            assert!(wb["dev_write_bytes"].as_u64().unwrap() >= 16 << 20, "{wb}");
            // The counters and the calibrated rate check a cold read here.
            let rb = phase(trial, "read_block");
            let flags = rb["flags"].as_array().unwrap();
            assert!(!flags.iter().any(|f| f == "cold-unverifiable"), "{rb}");
            // The filesystem is quiesced around each phase's work: the access time the
            // first read of the file changes (relatime) is written, with its journal
            // commit and flush, in that phase's counters, not whenever the journal's
            // timer fires.
            if fs == "ext4" {
                let rc = phase(trial, "read_char");
                assert!(rc["dev_write_bytes"].as_u64().unwrap() > 0, "{rc}");
                assert!(rc["dev_flushes"].as_u64().unwrap() >= 1, "{rc}");
            }
        }
    }
    common::assert_clean(dir.path());
}

#[test]
fn ext4_end_to_end() {
    loop_end_to_end("ext4");
}

#[test]
fn xfs_end_to_end() {
    loop_end_to_end("xfs");
}

#[test]
fn btrfs_end_to_end() {
    loop_end_to_end("btrfs");
}

#[test]
fn mkfs_and_mount_options_are_applied_and_recorded() {
    let test = "mkfs_and_mount_options_are_applied_and_recorded";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let (v, _) = common::run_json(
        &[
            "bonnie:size=4MiB,seeks=10,char_size=0",
            "bonnie-files:files=1",
            "--fs",
            "ext4",
            "--size",
            "256MiB",
            "--reps",
            "1",
            "--mkfs-opt",
            "ext4=-b 1024 -L fsarena-t",
            "--mount-opt",
            "ext4=noatime,data=writeback",
            "--quiet",
        ],
        dir.path(),
    );
    let t = &v["targets"][0];
    let mkfs: Vec<_> = t["mkfs_opts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(mkfs.contains(&"-b") && mkfs.contains(&"1024"), "{mkfs:?}");
    let mo = t["mount_opts"].as_str().unwrap();
    assert!(
        mo.contains("noatime") && mo.contains("data=writeback"),
        "{mo}"
    );
    common::assert_clean(dir.path());
}

#[test]
fn existing_directory_end_to_end_leaves_it_as_it_was() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::write(dir.path().join("keep.txt"), b"mine").unwrap();
    let img = common::image_dir();
    let d = dir.path().to_str().unwrap();
    let (v, _) = common::run_json(
        &[
            BONNIE, FILES, "--dir", d, "--reps", "1", "--cache", "keep", "--quiet",
        ],
        img.path(),
    );
    assert_eq!(v["targets"][0]["kind"], "dir");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("keep.txt")]);
}

#[test]
fn sync_none_is_flagged_not_synced() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = common::image_dir();
    let d = dir.path().to_str().unwrap();
    let (v, table) = common::run_json(
        &[
            "bonnie:size=4MiB,seeks=10,char_size=0",
            "bonnie-files:files=1",
            "--dir",
            d,
            "--reps",
            "1",
            "--sync",
            "none",
            "--cache",
            "keep",
        ],
        img.path(),
    );
    let wb = phase(&v["trials"][0], "write_block");
    assert!(
        wb["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "not-synced"),
        "{wb}"
    );
    let rb = phase(&v["trials"][0], "read_block");
    assert!(!rb["flags"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "not-synced"));
    assert!(table.contains("not synced"), "{table}");
}

#[test]
fn running_out_of_inodes_fails_the_trial_with_a_clear_cause_and_cleans_up() {
    let test = "running_out_of_inodes_fails_the_trial_with_a_clear_cause_and_cleans_up";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let out = Command::new(common::bin())
        .args([
            "run",
            "bonnie-files:files=8",
            "--fs",
            "ext4",
            "--size",
            "128MiB",
            "--reps",
            "1",
            "--quiet",
        ])
        .args(["--mkfs-opt", "ext4=-N 2048", "--image-dir"])
        .arg(dir.path())
        .arg("--db")
        .arg(dir.path().join("results.db"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("filesystem full") && text.contains("out of inodes"),
        "{text}"
    );
    common::assert_clean(dir.path());
}

/// The targets of each repetition run in the order of a Williams design (docs/compare.md,
/// "Order"), and the JSON lists the trials in the order they ran: over six repetitions of
/// three targets, every target ran in every position twice and right after every other
/// target twice.
#[test]
fn targets_run_in_a_balanced_order_that_the_json_keeps() {
    let dirs: Vec<tempfile::TempDir> = (0..3)
        .map(|_| tempfile::tempdir_in("/var/tmp").unwrap())
        .collect();
    let img = common::image_dir();
    let mut args = vec![
        "job:rw=read,bs=4KiB,size=64KiB",
        "--reps",
        "6",
        "--cache",
        "keep",
        "--sync",
        "none",
        "--quiet",
    ];
    for d in &dirs {
        args.extend(["--dir", d.path().to_str().unwrap()]);
    }
    let (v, _) = common::run_json(&args, img.path());
    let names: Vec<&str> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let ran: Vec<(u64, usize)> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["target"].as_str().unwrap();
            let i = names.iter().position(|n| *n == name).unwrap();
            (t["rep"].as_u64().unwrap(), i)
        })
        .collect();
    let order = |rep: u64| -> Vec<usize> {
        ran.iter()
            .filter(|(r, _)| *r == rep)
            .map(|(_, i)| *i)
            .collect()
    };
    let reps: Vec<u64> = ran.iter().map(|(r, _)| *r).collect();
    assert!(reps.windows(2).all(|w| w[0] <= w[1]), "{ran:?}");
    for rep in 1..=6 {
        assert_eq!(
            order(rep),
            fsarena::run::target_order(3, rep as u32),
            "rep {rep}"
        );
    }
    let mut after = [[0; 3]; 3];
    for rep in 1..=6 {
        for w in order(rep).windows(2) {
            after[w[0]][w[1]] += 1;
        }
    }
    assert_eq!(after, [[0, 2, 2], [2, 0, 2], [2, 2, 0]]);
}
