//! End-to-end runs of the `provision` workload (mkfs, mount, populate, umount, mount again,
//! read-only fsck, smallest mkfs size) on ext4, xfs and btrfs loop images at small size;
//! its refusal of tmpfs and directory targets; and that the target's tools leave nothing
//! mounted, attached or on disk whatever state a trial stops in.

mod common;

use common::phase;
use fsarena::provision::{self, fs::FsType, Env, TargetSpec};
use fsarena::state::State;
use std::process::Command;
use std::sync::Arc;

const TOOL_PHASES: [&str; 5] = ["mkfs", "mount", "umount", "mount_populated", "fsck"];

fn check(fs: &str, size: &str) {
    let test = format!("provision_{fs}");
    let args = ["provision:scale=0.02,min_size=true"];
    let Some((dir, v, table)) = common::run_once_on(&test, &args, fs, size) else {
        return;
    };
    let t = common::ok_trial(&v, 0);
    assert_eq!(
        common::phase_names(t),
        [
            "mkfs",
            "mount",
            "populate",
            "umount",
            "mount_populated",
            "fsck"
        ]
    );
    for name in TOOL_PHASES {
        let p = phase(t, name);
        assert_eq!(p["primary"], "wall_s", "{name}");
        assert_eq!(p["ops"], 1, "{name}");
        assert!(p["wall_s"].as_f64().unwrap() > 0.0, "{name}");
    }
    // mkfs wrote to the device and the check read the populated filesystem from it.
    assert!(phase(t, "mkfs")["dev_write_bytes"].as_u64().unwrap() > 0);
    let fsck_read = phase(t, "fsck")["dev_read_bytes"].as_u64().unwrap();
    assert!(
        fsck_read >= 64 << 10,
        "fsck read {fsck_read} bytes from the device"
    );
    let populate = phase(t, "populate");
    let corpus = fsarena::corpus::Corpus::new("source-tree", 0.02, 42).unwrap();
    assert_eq!(populate["bytes_written"], corpus.totals().bytes);
    let mkfs = phase(t, "mkfs");
    let accepted = mkfs["extra"]["min_size_bytes"].as_f64().unwrap();
    let refused = mkfs["extra"]["min_size_refused_bytes"].as_f64().unwrap();
    let size = fsarena::size::parse_size(size).unwrap() as f64;
    assert!(
        refused < accepted && accepted <= size,
        "{refused} {accepted}"
    );
    if fs == "ext4" {
        assert!(
            accepted <= 8.0 * 1048576.0,
            "ext4 fits in a few MiB: {accepted}"
        );
    } else {
        assert!(refused >= 1048576.0, "{fs} refuses 1 MiB: {refused}");
    }
    assert!(table.contains("mount_populated"), "{table}");
    common::assert_clean(dir.path());
}

#[test]
fn provision_on_ext4() {
    check("ext4", "256MiB");
}

#[test]
fn provision_on_xfs() {
    // mkfs.xfs (xfsprogs ≥ 5.19) refuses filesystems under 300 MB.
    check("xfs", "320MiB");
}

#[test]
fn provision_on_btrfs() {
    check("btrfs", "256MiB");
}

/// A provision trial that fails half way (the corpus does not fit) leaves nothing behind,
/// and the run goes on to report it.
#[test]
fn provision_that_fails_cleans_up() {
    let test = "provision_that_fails_cleans_up";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let out = common::run_any(
        &[
            "provision:scale=0.5",
            "--fs",
            "ext4",
            "--size",
            "64MiB",
            "--reps",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    assert_ne!(out.code, Some(0));
    let v = out.json.expect("json written");
    let t = &v["trials"][0];
    assert_eq!(t["status"], "failed");
    let err = t["error"].as_str().unwrap();
    assert!(err.contains("filesystem full"), "{err}");
    assert!(t["phases"].as_array().unwrap().len() >= 2, "{t}");
    common::assert_clean(dir.path());
}

/// tmpfs and directories have no device to make a filesystem on: the plan is refused
/// before anything is touched, saying what is needed.
#[test]
fn provision_refuses_tmpfs_and_dir_targets() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(common::bin())
            .args(["run", "provision", "--image-dir"])
            .arg(dir.path().join("img"))
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let d = dir.path().to_str().unwrap();
    let (code, stderr) = run(&["--dir", d]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("provision needs a loop target"), "{stderr}");
    if common::loop_unavailable().is_none() {
        let (code, stderr) = run(&["--fs", "tmpfs"]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("tmpfs is a tmpfs target"), "{stderr}");
    }
    assert!(
        !dir.path().join("img").exists(),
        "the refused plan touched nothing"
    );
}

/// The target's tools in every state a workload can leave them: teardown undoes all.
#[test]
fn tools_teardown_from_any_state() {
    let test = "tools_teardown_from_any_state";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let env = Env {
        run_id: "tools".into(),
        image_dir: dir.path().to_path_buf(),
        state: Arc::new(State::create(&dir.path().join("state"), "tools").unwrap()),
    };
    let spec = TargetSpec::Loop {
        fs: FsType::Ext4,
        mkfs_opts: Vec::new(),
        mount_opts: String::new(),
        size_bytes: 64 << 20,
    };
    let mut t = provision::build(&spec, &env);
    // Unmounted, after a new mkfs.
    t.prepare().unwrap();
    let tools = t.tools().unwrap();
    let err = tools.mkfs().unwrap_err().to_string();
    assert!(err.contains("needs the filesystem unmounted"), "{err}");
    tools.unmount().unwrap();
    tools.mkfs().unwrap();
    tools.fsck().unwrap();
    assert!(!tools.mkfs_accepts(4096).unwrap());
    t.teardown().unwrap();
    common::assert_clean(dir.path());
    // Mounted again by the tools; then dropped without teardown (a panic's unwinding).
    let work = t.prepare().unwrap();
    let tools = t.tools().unwrap();
    tools.unmount().unwrap();
    tools.mount().unwrap();
    assert!(common::mounts_under(dir.path()).len() == 1);
    assert!(work.is_dir(), "the prepared filesystem is mounted again");
    drop(t);
    common::assert_clean(dir.path());
}
