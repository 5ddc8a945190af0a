//! The `crash` workload from the command line on real filesystems: every pattern that
//! fsyncs as it must keeps every promise in every crash state checked (ext4, xfs, btrfs);
//! the recorder saw at least one flush per fsync that wrote; the known case shows — on
//! ext4, replacing a file by rename without fsync under `noauto_da_alloc` leaves empty
//! files in some crash states, under the default `auto_da_alloc` none; and nothing is left
//! behind. The negative controls: the same ext4 without barriers (`barrier=0`), and with
//! `fsync` made a no-op (libeatmydata), must lose promised data; with barriers none.
//! (Killed runs: tests/fault_injection.rs, kind `Crash`.)

mod common;

use serde_json::Value;
use std::path::Path;

/// The crash figures of phase `name` of the first trial.
fn crash<'a>(run: &'a Value, name: &str) -> &'a Value {
    &common::phase(common::ok_trial(run, 0), name)["extra"]
}

fn n(x: &Value, key: &str) -> u64 {
    x[key].as_f64().unwrap_or_else(|| panic!("no {key} in {x}")) as u64
}

/// Runs every pattern on `fs` with a few states each and checks that none broke a
/// promise, that the states were checked, and what the recorder saw.
fn every_promise_kept(test: &str, fs: &str, size: &str) {
    let args = ["crash:ops=12,states=10"];
    let Some((dir, run, _)) = common::run_once_on(test, &args, fs, size) else {
        return;
    };
    for pattern in &fsarena::workload::crash::PATTERNS[..fsarena::workload::crash::ALL] {
        let x = crash(&run, pattern);
        assert_eq!(n(x, "crash_states"), 10, "{fs} {pattern}: {x}");
        // Without fsync nothing new is promised: what it loses is counted apart
        // (`crash_unpromised_lost`, docs/durability.md), not as a broken promise.
        let keys = [
            "crash_bad_states",
            "crash_unmountable",
            "crash_lost",
            "crash_empty",
            "crash_garbage",
            "crash_leftover",
            "crash_reappeared",
            "crash_metadata",
        ];
        for key in keys {
            assert_eq!(n(x, key), 0, "{fs} {pattern}: {key} in {x}");
        }
        assert!(n(x, "crash_flushes") > 0, "{fs} {pattern}: {x}");
        // The coverage: every state checked is a flush point or a reordered one, and
        // neither count exceeds what the recording had.
        let (points, checked) = (
            n(x, "crash_flush_points"),
            n(x, "crash_flush_points_checked"),
        );
        let reordered = n(x, "crash_reordered");
        assert_eq!(checked + reordered, 10, "{fs} {pattern}: {x}");
        assert!(points >= 2 && checked <= points, "{fs} {pattern}: {x}");
        assert!(
            reordered as f64 <= x["crash_reorderings"].as_f64().unwrap(),
            "{fs} {pattern}: {x}"
        );
        if let Some(fsyncs) = x.get("crash_fsyncs").and_then(Value::as_f64) {
            // Each fsync that wrote ends with a flush; a directory fsync right after its
            // file's may write nothing (ext4, xfs), so half the calls at least.
            assert!(
                n(x, "crash_flushes") as f64 >= fsyncs / 2.0,
                "{fs} {pattern}: {x}"
            );
        }
        // The pessimistic log: the block trace read and matched, and the filesystem's
        // FUA writes (journal commits, log writes, superblocks) seen among its writes.
        if traced() {
            assert!(n(x, "crash_fua_writes") > 0, "{fs} {pattern}: {x}");
            let uncovered = n(x, "crash_in_flight") + n(x, "crash_beside_fua");
            assert!(uncovered <= n(x, "crash_writes"), "{fs} {pattern}: {x}");
        }
        let phase = common::phase(common::ok_trial(&run, 0), pattern);
        assert_eq!(phase["ops"], 12, "{fs} {pattern}");
    }
    common::assert_clean(dir.path());
    no_trace_left();
}

/// Whether the kernel's tracing filesystem lets fsarena trace a recording here.
fn traced() -> bool {
    Path::new(INSTANCES).is_dir()
}

const INSTANCES: &str = "/sys/kernel/tracing/instances";

/// No tracing instance of a finished fsarena process is left: each `fsarena-PID-N` names
/// a live process (other tests' runs may be tracing meanwhile).
fn no_trace_left() {
    let Ok(dir) = std::fs::read_dir(INSTANCES) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("fsarena-")
            .and_then(|r| r.split('-').next())
        else {
            continue;
        };
        assert!(Path::new("/proc").join(pid).exists(), "{name} left behind");
    }
}

#[test]
fn every_promise_is_kept_on_ext4() {
    every_promise_kept("every_promise_is_kept_on_ext4", "ext4", "256MiB");
}

#[test]
fn every_promise_is_kept_on_xfs() {
    every_promise_kept("every_promise_is_kept_on_xfs", "xfs", "320MiB");
}

#[test]
fn every_promise_is_kept_on_btrfs() {
    every_promise_kept("every_promise_is_kept_on_btrfs", "btrfs", "256MiB");
}

/// The known case (ALICE, and the ext4 `auto_da_alloc` heuristic that answered it): a file
/// replaced by writing a new one and renaming it over, with no fsync, may be empty after a
/// power cut under `noauto_da_alloc`; the default `auto_da_alloc` flushes the new file's
/// data before the rename commits. POSIX promises nothing there, so the loss is "not
/// promised, lost", not a broken promise.
#[test]
fn rename_without_fsync_loses_data_only_under_noauto_da_alloc() {
    let test = "rename_without_fsync_loses_data_only_under_noauto_da_alloc";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[defaults]\nsize = \"256MiB\"\nreps = 1\n\n[[matrix]]\nfs = \"ext4\"\n\
         mount = [\"\", \"noauto_da_alloc\"]\n\n[[workload]]\nkind = \"crash\"\n\
         pattern = \"rename-replace-nofsync\"\nops = 24\nstates = 30\n",
    )
    .unwrap();
    let (run, _) = common::run_json(&["--plan", plan.to_str().unwrap(), "--quiet"], dir.path());
    let of = |target: &str| {
        let t = run["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["target"] == target)
            .unwrap_or_else(|| panic!("no trial on {target}"));
        common::phase(t, "rename-replace-nofsync")["extra"].clone()
    };
    let (default, noauto) = (of("ext4"), of("ext4+noauto_da_alloc"));
    assert_eq!(n(&default, "crash_bad_states"), 0, "{default}");
    assert_eq!(n(&default, "crash_unpromised_lost"), 0, "{default}");
    // POSIX promises nothing here: the empty files are lost, but not broken promises.
    assert!(n(&noauto, "crash_unpromised_lost") > 0, "{noauto}");
    assert_eq!(n(&noauto, "crash_bad_states"), 0, "{noauto}");
    assert_eq!(n(&noauto, "crash_empty"), 0, "{noauto}");
    assert_eq!(n(&noauto, "crash_garbage"), 0, "{noauto}");
    common::assert_clean(dir.path());
}

/// The known case on xfs and btrfs: a file replaced by rename without fsync is found
/// empty in crash states (neither has ext4's `auto_da_alloc` heuristic); not promised, so
/// not a broken promise.
fn renamed_without_fsync_may_be_empty(test: &str, fs: &str, size: &str) {
    let args = ["crash:pattern=rename-replace-nofsync,ops=24,states=30"];
    let Some((dir, run, _)) = common::run_once_on(test, &args, fs, size) else {
        return;
    };
    let x = crash(&run, "rename-replace-nofsync");
    assert!(n(x, "crash_unpromised_lost") > 0, "{fs}: {x}");
    assert_eq!(n(x, "crash_bad_states"), 0, "{fs}: {x}");
    common::assert_clean(dir.path());
}

#[test]
fn xfs_may_empty_a_file_renamed_over_without_fsync() {
    renamed_without_fsync_may_be_empty(
        "xfs_may_empty_a_file_renamed_over_without_fsync",
        "xfs",
        "320MiB",
    );
}

#[test]
fn btrfs_may_empty_a_file_renamed_over_without_fsync() {
    let test = "btrfs_may_empty_a_file_renamed_over_without_fsync";
    renamed_without_fsync_may_be_empty(test, "btrfs", "256MiB");
}

/// The known case SQLite documents: in rollback-journal mode, `synchronous=FULL` does not
/// sync the directory after the journal's deletion (the commit point), so a power cut soon
/// after a COMMIT may lose it; the pattern's own `EXTRA` keeps every one (the test above).
#[test]
fn sqlite_rollback_at_synchronous_full_loses_committed_transactions() {
    let test = "sqlite_rollback_at_synchronous_full_loses_committed_transactions";
    let args = ["crash:pattern=sqlite-rollback,synchronous=full,states=20"];
    let Some((dir, run, _)) = common::run_once_on(test, &args, "ext4", "256MiB") else {
        return;
    };
    let x = crash(&run, "sqlite-rollback");
    assert!(n(x, "crash_promises_broken") > 0, "{x}");
    assert!(n(x, "crash_bad_states") > 0, "{x}");
    common::assert_clean(dir.path());
}

/// The negative control of a promise made while its write was still in flight
/// (`pattern=in-flight`: an `O_DIRECT` overwrite from another thread, taken as safe once an
/// `fdatasync` of another file returned): states after the promise lose it; where the
/// kernel's tracing filesystem is mounted, the block trace saw writes in flight at a flush.
#[test]
fn a_promise_of_a_write_still_in_flight_is_found_lost() {
    let test = "a_promise_of_a_write_still_in_flight_is_found_lost";
    let args = ["crash:pattern=in-flight,ops=16"];
    let Some((dir, run, _)) = common::run_once_on(test, &args, "ext4", "256MiB") else {
        return;
    };
    let x = crash(&run, "in-flight");
    assert_eq!(n(x, "crash_promises"), 32, "{x}");
    assert!(n(x, "crash_promises_broken") > 0, "{x}");
    assert!(n(x, "crash_lost") > 0, "{x}");
    if traced() {
        assert!(n(x, "crash_in_flight") > 0, "{x}");
    } else {
        println!("SKIP {test} (the trace half): the tracing filesystem is not mounted");
    }
    common::assert_clean(dir.path());
}

/// On a target without a device of fsarena's (tmpfs) the patterns are timed and no crash
/// state is claimed: no crash figure, and a message says why.
#[test]
fn on_tmpfs_only_the_speed_is_measured() {
    let Some((_dir, run, _)) = common::run_once_on(
        "on_tmpfs_only_the_speed_is_measured",
        &["crash:pattern=append-log,ops=8"],
        "tmpfs",
        "64MiB",
    ) else {
        return;
    };
    let x = crash(&run, "append-log");
    assert!(x.get("crash_states").is_none(), "{x}");
    assert_eq!(
        common::phase(common::ok_trial(&run, 0), "append-log")["ops"],
        8
    );
}

/// `--crash-states` without a crash workload would be ignored: refused (exit 2), before
/// anything runs.
#[test]
fn crash_states_without_a_crash_workload_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["run", "smallfiles:files=10", "--crash-states", "3", "--dir"])
        .arg(dir.path())
        .arg("--db")
        .arg(dir.path().join("r.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!dir.path().join("r.db").exists());
}

/// `fsync-write` with 20 crash states on a 256 MiB ext4, mounted with `mount_opt` when
/// given and run under the program `wrapper` when given; the pattern's crash figures, or
/// `None` after a SKIP line.
fn fsync_write_on_ext4(
    test: &str,
    mount_opt: Option<&str>,
    wrapper: Option<&str>,
) -> Option<Value> {
    fsync_write_on_ext4_with(test, "", mount_opt, wrapper)
}

/// [`fsync_write_on_ext4`] with more of the workload's parameters (`,forget=1`).
fn fsync_write_on_ext4_with(
    test: &str,
    params: &str,
    mount_opt: Option<&str>,
    wrapper: Option<&str>,
) -> Option<Value> {
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return None;
    }
    let dir = common::image_dir();
    let json = dir.path().join("out.json");
    let mut cmd = match wrapper {
        Some(w) => {
            let mut c = std::process::Command::new(w);
            c.arg(common::bin());
            c
        }
        None => std::process::Command::new(common::bin()),
    };
    let workload = format!("crash:pattern=fsync-write,states=20{params}");
    cmd.args(["run", &workload, "--fs", "ext4"])
        .args(["--size", "256MiB", "--reps", "1", "--quiet"]);
    if let Some(o) = mount_opt {
        cmd.args(["--mount-opt", &format!("ext4={o}")]);
    }
    let out = cmd
        .arg("--image-dir")
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .arg("--html")
        .arg(dir.path().join("report.html"))
        .arg("--db")
        .arg(dir.path().join("results.db"))
        .output()
        .expect("run fsarena");
    assert!(
        out.status.success(),
        "{test}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = common::run_document(&std::fs::read(&json).expect("json written"));
    assert_eq!(run["status"], "complete", "{run}");
    let x = crash(&run, "fsync-write").clone();
    assert_eq!(n(&x, "crash_states"), 20, "{x}");
    // One target has no ranking, but its HTML report still says what a power cut costs.
    let html = std::fs::read_to_string(dir.path().join("report.html")).expect("html written");
    assert!(html.contains("id=\"power-cut\""), "no power-cut section");
    common::assert_clean(dir.path());
    Some(x)
}

/// The negative control: without barriers an `fsync` returns with no flush sent, so a
/// power cut after it may lose what it promised; the crash states after the promises must
/// show it (before the promise rule counted every state that could crash after them,
/// none did: issue 55).
#[test]
fn ext4_without_barriers_loses_promised_files() {
    let test = "ext4_without_barriers_loses_promised_files";
    let Some(x) = fsync_write_on_ext4(test, Some("barrier=0"), None) else {
        return;
    };
    assert!(n(&x, "crash_lost") > 0, "{x}");
    assert!(n(&x, "crash_bad_states") > 0, "{x}");
    // Counted per promise too: some of the 64 files promised were lost in some state.
    let (made, broken) = (n(&x, "crash_promises"), n(&x, "crash_promises_broken"));
    assert!(made == 64 && broken > 0 && broken <= made, "{x}");
    // The pattern's 129 fsync calls sent (almost) no flush: the control is the one meant.
    assert!(n(&x, "crash_flushes") < n(&x, "crash_fsyncs") / 4, "{x}");
    // A power cut after the first promise loses data until the unmount's flush: most of
    // the pattern's recorded time.
    assert!(n(&x, "crash_exposed_pct") >= 50, "{x}");
    assert!(
        x["crash_recorded_s"].as_f64().is_some_and(|s| s > 0.0),
        "{x}"
    );
}

/// The negative control of a program that forgets its `fsync`: with barriers, the pattern
/// itself leaves out every `fsync` (`forget=1`) and records its promises all the same;
/// they must be found broken.
#[test]
fn a_pattern_that_forgets_its_fsync_loses_promised_files() {
    let test = "a_pattern_that_forgets_its_fsync_loses_promised_files";
    let Some(x) = fsync_write_on_ext4_with(test, ",forget=1", None, None) else {
        return;
    };
    assert!(n(&x, "crash_lost") > 0, "{x}");
    assert_eq!(n(&x, "crash_promises"), 64, "{x}");
    assert!(n(&x, "crash_promises_broken") > 0, "{x}");
    // The pattern called no fsync (the one counted syncs the recording's top directory
    // before it): what reached the disk came from the filesystem's own commits and the
    // unmount.
    assert!(n(&x, "crash_fsyncs") <= 1, "{x}");
    assert!(n(&x, "crash_exposed_pct") >= 50, "{x}");
}

/// The positive twin of the control: the same pattern with barriers loses nothing and
/// needs no repair.
#[test]
fn ext4_with_barriers_keeps_every_promised_file() {
    let test = "ext4_with_barriers_keeps_every_promised_file";
    let Some(x) = fsync_write_on_ext4(test, None, None) else {
        return;
    };
    for key in [
        "crash_bad_states",
        "crash_lost",
        "crash_empty",
        "crash_garbage",
        "crash_unmountable",
        "crash_repaired",
        "crash_promises_broken",
        "crash_exposed_pct",
    ] {
        assert_eq!(n(&x, key), 0, "{key} in {x}");
    }
    assert_eq!(n(&x, "crash_promises"), 64, "{x}");
}

/// The negative control of a lying `fsync`: under libeatmydata's `eatmydata` (an
/// `LD_PRELOAD` that makes `fsync` and `fdatasync` return at once) the promises are broken
/// in the states after them.
#[test]
fn ext4_with_fsync_a_no_op_loses_promised_files() {
    let test = "ext4_with_fsync_a_no_op_loses_promised_files";
    let found = std::process::Command::new("eatmydata")
        .arg("true")
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("SKIP {test}: needs eatmydata (the Debian package eatmydata)");
        return;
    }
    let Some(x) = fsync_write_on_ext4(test, None, Some("eatmydata")) else {
        return;
    };
    assert!(n(&x, "crash_lost") > 0, "{x}");
    assert!(n(&x, "crash_promises_broken") > 0, "{x}");
    assert!(n(&x, "crash_flushes") < n(&x, "crash_fsyncs") / 4, "{x}");
}

/// Torn writes (`tear=N`): the states are built and checked, counted in the coverage, and
/// a filesystem whose journal survives a write torn at 4 KiB blocks loses nothing.
#[test]
fn torn_writes_are_checked_and_ext4_keeps_its_promises() {
    let test = "torn_writes_are_checked_and_ext4_keeps_its_promises";
    let args = ["crash:pattern=fsync-write,ops=8,tear=5"];
    let Some((dir, run, _)) = common::run_once_on(test, &args, "ext4", "256MiB") else {
        return;
    };
    let x = crash(&run, "fsync-write");
    assert_eq!(n(x, "crash_torn"), 5, "{x}");
    // 16 KiB files: every file's data write has four blocks.
    assert!(n(x, "crash_tearable") >= 8, "{x}");
    for key in [
        "crash_bad_states",
        "crash_promises_broken",
        "crash_repaired",
    ] {
        assert_eq!(n(x, key), 0, "{key} in {x}");
    }
    common::assert_clean(dir.path());
}

/// The torn states' negative control: an overwrite in place torn at 4 KiB blocks leaves a
/// file mixed from its old and new contents, which the checker must find ("not promised,
/// lost": no write is atomic) — and without tearing, ext4 writes each 16 KiB overwrite as
/// one request, so no state mixes them.
#[test]
fn a_torn_overwrite_is_found_mixed_and_breaks_no_promise() {
    let test = "a_torn_overwrite_is_found_mixed_and_breaks_no_promise";
    let args = ["crash:pattern=overwrite,ops=16,states=200,tear=40"];
    let Some((dir, run, _)) = common::run_once_on(test, &args, "ext4", "256MiB") else {
        return;
    };
    let x = crash(&run, "overwrite");
    assert_eq!(n(x, "crash_torn"), 40, "{x}");
    assert!(
        n(x, "crash_unpromised_lost") > 0,
        "torn overwrites found mixed: {x}"
    );
    for key in ["crash_bad_states", "crash_promises_broken", "crash_lost"] {
        assert_eq!(n(x, key), 0, "{key} in {x}");
    }
    common::assert_clean(dir.path());
    let args = ["crash:pattern=overwrite,ops=16,states=200"];
    let Some((dir, run, _)) = common::run_once_on(test, &args, "ext4", "256MiB") else {
        return;
    };
    let x = crash(&run, "overwrite");
    assert_eq!(n(x, "crash_torn"), 0, "{x}");
    assert_eq!(n(x, "crash_unpromised_lost"), 0, "untorn: {x}");
    common::assert_clean(dir.path());
}

/// The JSON verdict on a pattern's time carries, for each target, what a power cut cost it
/// (`verdicts[].places[].loss`): speed and loss read side by side by a program too.
#[test]
fn the_time_verdict_carries_each_targets_loss() {
    let test = "the_time_verdict_carries_each_targets_loss";
    if common::skip_without_loop(test)
        || !common::fs_available(test, "ext4")
        || !common::fs_available(test, "xfs")
    {
        return;
    }
    let dir = common::image_dir();
    let args = [
        "crash:pattern=fsync-write,ops=8,states=8",
        "--fs",
        "ext4,xfs",
        "--size",
        "320MiB",
        "--reps",
        "2",
        "--quiet",
    ];
    let (run, _) = common::run_json(&args, dir.path());
    let v = run["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["phase"] == "fsync-write" && v["figure"] == "time")
        .unwrap_or_else(|| panic!("no time verdict: {}", run["verdicts"]));
    let places = v["places"].as_array().unwrap();
    assert_eq!(places.len(), 2, "{v}");
    for p in places {
        let loss = &p["loss"];
        // 8 files promised in each of 2 trials; 8 states each, none bad with barriers.
        assert_eq!(loss["promises"], 16, "{p}");
        assert_eq!(loss["promises_broken"], 0, "{p}");
        assert_eq!(loss["states"], 16, "{p}");
        assert_eq!(loss["bad_states"], 0, "{p}");
    }
    common::assert_clean(dir.path());
}
