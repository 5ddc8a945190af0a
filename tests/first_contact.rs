//! What a newcomer meets first: programs found whatever PATH cron or `env -i` gives, every
//! refusal that can be known before provisioning made up front (exit 2, nothing made, no
//! command run), and `setup`, which installs what the default run needs.

mod common;

use std::path::Path;
use std::process::{Command, Output};

/// `fsarena ARGS` with `FSARENA_LOG=1`, which logs every external command it runs.
fn fsarena_logged(args: &[&str]) -> Output {
    Command::new(common::bin())
        .args(args)
        .env("FSARENA_LOG", "1")
        .output()
        .expect("fsarena runs")
}

/// Asserts a refusal: exit 2, `want` in stderr, no external command run, nothing made in
/// `image_dir`.
fn assert_refused_up_front(out: &Output, want: &str, image_dir: &Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(want), "wanted '{want}' in: {err}");
    assert!(
        !err.contains("fsarena: $ "),
        "a command ran before the refusal: {err}"
    );
    assert!(!image_dir.exists(), "{} was made", image_dir.display());
}

#[test]
fn a_size_below_what_mkfs_xfs_accepts_is_refused_before_anything_is_made() {
    let test = "a_size_below_what_mkfs_xfs_accepts_is_refused_before_anything_is_made";
    if common::skip_without_loop(test) || !common::fs_available(test, "xfs") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("img");
    let db = tmp.path().join("r.db");
    let out = fsarena_logged(&[
        "run",
        "smallfiles:files=100",
        "--fs",
        "ext4,xfs",
        "--size",
        "256MiB",
        "--reps",
        "3",
        "--image-dir",
        img.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_refused_up_front(&out, "mkfs.xfs needs at least 300MiB", &img);
    assert!(!db.exists());
}

#[test]
fn a_tmpfs_larger_than_memory_is_refused() {
    let test = "a_tmpfs_larger_than_memory_is_refused";
    if common::skip_without_loop(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("img");
    let out = fsarena_logged(&[
        "run",
        "smallfiles:files=100",
        "--fs",
        "tmpfs",
        "--size",
        "1000TiB",
        "--image-dir",
        img.to_str().unwrap(),
        "--db",
        tmp.path().join("r.db").to_str().unwrap(),
    ]);
    assert_refused_up_front(&out, "lives in memory", &img);
}

#[test]
fn a_read_only_image_dir_is_called_read_only_by_run_and_doctor() {
    let test = "a_read_only_image_dir_is_called_read_only_by_run_and_doctor";
    if common::skip_without_loop(test) {
        return;
    }
    let tmp = common::image_dir();
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=16m", "fsarena-test-ro"])
        .arg(&ro)
        .status()
        .unwrap();
    assert!(mounted.success());
    let img = ro.join("img");
    let run = fsarena_logged(&[
        "run",
        "smallfiles:files=100",
        "--fs",
        "ext4",
        "--size",
        "128MiB",
        "--image-dir",
        img.to_str().unwrap(),
        "--db",
        tmp.path().join("r.db").to_str().unwrap(),
    ]);
    let doctor = fsarena_logged(&["doctor", "--image-dir", img.to_str().unwrap()]);
    let umounted = Command::new("umount").arg(&ro).status().unwrap();
    assert!(umounted.success());
    assert_refused_up_front(&run, "read-only", &img);
    let text = String::from_utf8_lossy(&doctor.stdout);
    // The space check's line with its continuation lines (wrapped to the width, indented).
    let start = text
        .find("  space")
        .unwrap_or_else(|| panic!("no space line: {text}"));
    let start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let mut lines = text[start..].lines();
    let mut space = lines.next().unwrap().to_string();
    for more in lines.take_while(|l| l.starts_with("    ")) {
        space = space + " " + more.trim_start();
    }
    assert!(
        space.contains("FAIL") && space.contains("read-only"),
        "{space}"
    );
    assert_eq!(doctor.status.code(), Some(1));
}

#[test]
fn runs_with_cron_s_path_find_losetup_and_mkfs_in_sbin() {
    let test = "runs_with_cron_s_path_find_losetup_and_mkfs_in_sbin";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let out = Command::new(common::bin())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .args([
            "run",
            "smallfiles:files=1000",
            "--fs",
            "ext4",
            "--reps",
            "1",
        ])
        .args(["--size", "128MiB", "--quiet", "--image-dir"])
        .arg(dir.path())
        .arg("--db")
        .arg(dir.path().join("r.db"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doctor = Command::new(common::bin())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .args(["doctor", "--image-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    let loop_line = text.lines().find(|l| l.contains(" loop")).unwrap_or("");
    assert!(loop_line.contains("OK"), "{text}");
    common::assert_clean(dir.path());
}

#[test]
fn setup_says_what_it_would_install() {
    let out = Command::new(common::bin())
        .args(["setup", "--dry-run", "--fs", "ext4,tmpfs"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // Either everything is there, or the exact apt-get line is printed.
    assert!(
        text.contains("the programs for ext4, tmpfs are installed")
            || text.contains("would run: apt-get install"),
        "{text}"
    );
    let out = Command::new(common::bin())
        .args(["setup", "--fs", "zfs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown filesystem 'zfs'"));
}
