//! `crash:pattern=ace`, generated workloads (issue 55, item 7), from the command line on
//! real filesystems: every one-step workload keeps every promise on ext4, xfs and btrfs;
//! the negative controls — the workloads leaving out their fsyncs (`forget=1`), ext4
//! without barriers — lose promised contents, names and metadata. The old-kernel bug
//! (btrfs before 6.1.191, fstests' generic/789) is in tests/guest.rs.

mod common;

use serde_json::Value;

fn n(x: &Value, key: &str) -> u64 {
    x[key].as_f64().unwrap_or_else(|| panic!("no {key} in {x}")) as u64
}

/// The `ace` phase's crash figures of a run of `args` on `fs`, or `None` after a SKIP.
fn ace(test: &str, args: &[&str], fs: &str, size: &str) -> Option<Value> {
    let (dir, run, _) = common::run_once_on(test, args, fs, size)?;
    let phase = common::phase(common::ok_trial(&run, 0), "ace").clone();
    common::assert_clean(dir.path());
    Some(phase)
}

/// Every one-step workload (54), every flush point checked: no promise broken.
fn every_promise_kept(test: &str, fs: &str, size: &str) {
    // Every flush point, 10 reordered states (the suite's time; 40 by default).
    let Some(phase) = ace(test, &["crash:pattern=ace,reorder=10"], fs, size) else {
        return;
    };
    assert_eq!(phase["ops"], 54, "{fs}: {phase}");
    let x = &phase["extra"];
    for key in [
        "crash_bad_states",
        "crash_unmountable",
        "crash_lost",
        "crash_empty",
        "crash_garbage",
        "crash_reappeared",
        "crash_metadata",
        "crash_promises_broken",
    ] {
        assert_eq!(n(x, key), 0, "{fs}: {key} in {x}");
    }
    assert_eq!(
        n(x, "crash_flush_points_checked"),
        n(x, "crash_flush_points"),
        "{x}"
    );
    // Each workload's starting files (two names, two versions) and what its fsyncs
    // promised.
    assert!(n(x, "crash_promises") >= 216, "{fs}: {x}");
}

#[test]
fn generated_workloads_keep_every_promise_on_ext4() {
    every_promise_kept(
        "generated_workloads_keep_every_promise_on_ext4",
        "ext4",
        "256MiB",
    );
}

#[test]
fn generated_workloads_keep_every_promise_on_xfs() {
    every_promise_kept(
        "generated_workloads_keep_every_promise_on_xfs",
        "xfs",
        "320MiB",
    );
}

#[test]
fn generated_workloads_keep_every_promise_on_btrfs() {
    every_promise_kept(
        "generated_workloads_keep_every_promise_on_btrfs",
        "btrfs",
        "256MiB",
    );
}

/// The negative control: the same workloads leaving out every fsync, their promises
/// recorded all the same: contents, names, unlinks and metadata must all be found broken.
#[test]
fn generated_workloads_that_forget_their_fsyncs_lose_promises() {
    let test = "generated_workloads_that_forget_their_fsyncs_lose_promises";
    let args = ["crash:pattern=ace,forget=1,states=60"];
    let Some(phase) = ace(test, &args, "ext4", "256MiB") else {
        return;
    };
    let x = &phase["extra"];
    for key in [
        "crash_lost",
        "crash_reappeared",
        "crash_metadata",
        "crash_promises_broken",
    ] {
        assert!(n(x, key) > 0, "{key} in {x}");
    }
}

/// The negative control of the device: ext4 without barriers loses what the workloads'
/// fsyncs promised.
#[test]
fn generated_workloads_on_ext4_without_barriers_lose_promises() {
    let test = "generated_workloads_on_ext4_without_barriers_lose_promises";
    let args = [
        "crash:pattern=ace,states=60",
        "--mount-opt",
        "ext4=barrier=0",
    ];
    let Some(phase) = ace(test, &args, "ext4", "256MiB") else {
        return;
    };
    let x = &phase["extra"];
    assert!(n(x, "crash_promises_broken") > 0, "{x}");
    assert!(n(x, "crash_bad_states") > 0, "{x}");
}

/// A workload that cannot run, a name that is none, or a parameter for other patterns is
/// refused before anything runs.
#[test]
fn a_workload_that_cannot_run_is_refused() {
    for bad in [
        "crash:pattern=ace,only=unlink:fsync+rename:fsync",
        "crash:pattern=ace,only=nope:fsync",
        "crash:pattern=fsync-write,only=append:fsync",
        "crash:pattern=ace,seq=3",
        "crash:pattern=fsync-write,synchronous=full",
    ] {
        let out = std::process::Command::new(common::bin())
            .args(["run", bad, "--fs", "tmpfs", "--reps", "1", "--quiet"])
            .output()
            .expect("run fsarena");
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
}
